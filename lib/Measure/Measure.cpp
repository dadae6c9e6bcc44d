//===- Measure.cpp - Training bursts at several batch sizes ---------------===//

#include "skyline/Measure.h"

#include "skyline/OtherWork.h"
#include "skyline/SlurmLauncher.h"
#include "skyline/Sweep.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace skyline {

std::optional<int64_t> parseByteSize(llvm::StringRef Text) {
  Text = Text.trim();
  size_t Digits = 0;
  while (Digits < Text.size() && (isdigit(Text[Digits]) || Text[Digits] == '.'))
    ++Digits;
  double Number = 0;
  if (Digits == 0 || Text.take_front(Digits).getAsDouble(Number))
    return std::nullopt;
  llvm::StringRef Unit = Text.drop_front(Digits).trim();
  struct {
    const char *Name;
    double Scale;
  } Units[] = {{"", 1},
               {"B", 1},
               {"KiB", 1024.0},
               {"MiB", 1048576.0},
               {"GiB", 1073741824.0},
               {"KB", 1e3},
               {"MB", 1e6},
               {"GB", 1e9}};
  for (const auto &U : Units) {
    if (!Unit.equals_insensitive(U.Name) || (Unit != U.Name && Unit.size() < 2))
      continue;
    // Past int64_t the conversion is undefined (found by test/fuzz).
    double Bytes = Number * U.Scale;
    if (!(Bytes < 0x1p63))
      return std::nullopt;
    return int64_t(Bytes);
  }
  return std::nullopt;
}

namespace {

/// Where the time line bends and a segment spans the most: of the segments
/// next to a measured size where the slopes on either side differ by more
/// than MinChange (relatively), or one falls (a busy machine's noise) or
/// only one is flat, the one whose ends are the furthest apart in
/// ratio gets a size at its geometric middle; of two within 5% of each other
/// the smaller sizes', nearer the declared size and the knee. A segment
/// whose middle is past Limit (the data's, when known), or that has no
/// size between its ends, is passed over. Where no bend gives a size, the
/// widest segment spanning more than UnmeasuredSpanLimit, the same way. 0
/// when there is none.
int64_t whereTheTimeBends(llvm::ArrayRef<SweepPoint> Sorted, double MinChange,
                          int64_t Limit) {
  auto Slope = [&](size_t I) { // of the segment from point I - 1 to I
    return (Sorted[I].IterationMs - Sorted[I - 1].IterationMs) /
           double(Sorted[I].BatchSize - Sorted[I - 1].BatchSize);
  };
  // Interpolation errs with the change of the time per sample over a
  // segment, which grows with its ratio, not its length: a segment from
  // 10,000 to 1,600,000 samples crosses the caches a 64..10,000 one does
  // not, and the longest one in samples is always the last.
  auto Span = [&](size_t I) {
    return std::log(double(Sorted[I].BatchSize) /
                    double(Sorted[I - 1].BatchSize));
  };
  auto Middle = [&](size_t I) {
    return std::llround(std::sqrt(double(Sorted[I - 1].BatchSize) *
                                  double(Sorted[I].BatchSize)));
  };
  double Widest = 0;
  size_t Segment = 0;
  auto Consider = [&](size_t I) {
    int64_t Size = Middle(I);
    if (Span(I) > Widest * 1.05 && !(Limit > 0 && Size > Limit) &&
        Size > Sorted[I - 1].BatchSize && Size < Sorted[I].BatchSize) {
      Widest = Span(I);
      Segment = I;
    }
  };
  for (size_t I = 1; I + 1 < Sorted.size(); ++I) {
    double Before = Slope(I), After = Slope(I + 1);
    // A time that falls as the batch grows is noise no straight line can
    // be told from, and flat turning to rising is a knee: only two rising
    // slopes alike, or two flat ones, are straight.
    bool Straight =
        (Before == 0 && After == 0) ||
        (Before > 0 && After > 0 &&
         std::fabs(std::log(After / Before)) <= std::log1p(MinChange));
    if (Straight)
      continue;
    Consider(I);
    Consider(I + 1);
  }
  // Where no bend gives a size, a segment wider than UnmeasuredSpanLimit is
  // not known to be straight: its ends' first runs vary by a quarter on a
  // shared machine, as much as a knee between them changes the slope
  // (mnist: 128 and 2,586 on one line, the throughput's peak at 416 to 575
  // between them).
  if (Segment == 0) {
    const double MinSpan = std::log(UnmeasuredSpanLimit);
    for (size_t I = 1; I < Sorted.size(); ++I)
      if (Span(I) > MinSpan)
        Consider(I);
  }
  return Segment == 0 ? 0 : Middle(Segment);
}

} // namespace

int64_t dataLimit(llvm::ArrayRef<RunLength> Runs, unsigned Warmup) {
  for (const RunLength &Run : Runs)
    for (const RunLength &Other : Runs)
      if (Run.EndedEarly && Other.EndedEarly &&
          Other.BatchSize > Run.BatchSize &&
          Other.IterationsReached >= Run.IterationsReached)
        return 0; // a fixed number of steps
  int64_t Limit = 0;
  for (const RunLength &Run : Runs) {
    bool DataRanOut =
        Run.EndedEarly && llvm::any_of(Runs, [&](const RunLength &Other) {
          return Other.BatchSize < Run.BatchSize &&
                 Other.IterationsReached > Run.IterationsReached;
        });
    if (!DataRanOut)
      continue;
    // Never past a size whose data ran out, whatever order the sweep took
    // the sizes in (its order hangs on the timings).
    int64_t Samples = int64_t(Run.IterationsReached) * Run.BatchSize;
    int64_t Lasts = std::min(Samples / int64_t(Warmup + 3), Run.BatchSize);
    if (Lasts > 0)
      Limit = Limit ? std::min(Limit, Lasts) : Lasts;
  }
  return Limit;
}

namespace {

/// At the capacity (or the data's limit): the size the model would suggest
/// where no measured size is near it, else where the time bends or a
/// segment is too wide to be known straight (whereTheTimeBends).
int64_t atTheCapacity(const SweepState &State,
                      llvm::ArrayRef<SweepPoint> Fitted) {
  int64_t Decision = State.DecisionBatchSize;
  bool Near = llvm::any_of(Fitted, [&](const SweepPoint &Point) {
    return withinDecisionNearness(Decision, Point.BatchSize);
  });
  bool Allowed =
      (!State.DataLimit || Decision <= State.DataLimit) &&
      (!State.FirstOutOfMemory || Decision < *State.FirstOutOfMemory);
  if (Decision > 0 && !Near && Allowed)
    return Decision;
  return whereTheTimeBends(Fitted, State.MinTimeChange, State.DataLimit);
}

/// The size whose iteration takes IterationMs, on the line from Last at
/// MsPerSample.
double affordableSize(const SweepPoint &Last, double MsPerSample,
                      double IterationMs) {
  return double(Last.BatchSize) +
         std::floor((IterationMs - Last.IterationMs) / MsPerSample);
}

/// Past the probes' start: Target, unless a probe there (a warm-up and an
/// iteration) would take more than a size's share of the time left, as
/// the time a sample at the two largest sizes says; never less than a
/// doubling.
int64_t straightToTheTarget(const SweepState &State, const SweepPoint &Last,
                            const SweepPoint &Before, double Target) {
  double MsPerSample = (Last.IterationMs - Before.IterationMs) /
                       double(Last.BatchSize - Before.BatchSize);
  if (State.SecondsPerSize <= 0 || !(MsPerSample > 0))
    return int64_t(Target);
  constexpr double ProbeRunIterations = 2; // a warm-up and an iteration
  double Affordable = affordableSize(
      Last, MsPerSample, State.SecondsPerSize * 1000 / ProbeRunIterations);
  double Double = double(Last.BatchSize) * 2;
  return int64_t(std::min(Target, std::max(Affordable, Double)));
}

/// Fitted: State.Fitted by batch size.
int64_t nextBatchSizeForTheCapacity(const SweepState &State,
                                    llvm::ArrayRef<SweepPoint> Fitted) {
  const SweepPoint &Last = Fitted.back();
  int64_t LastFit = Last.BatchSize;
  if (State.FirstOutOfMemory) {
    int64_t Halfway = LastFit + (*State.FirstOutOfMemory - LastFit) / 2;
    return Halfway > LastFit ? Halfway : 0;
  }
  int64_t Double = LastFit * 2;
  if (Fitted.size() < 2 || State.TargetBytes <= 0)
    return Double;
  // Near the capacity the largest sizes say the most about the line.
  const SweepPoint &Before = Fitted[Fitted.size() - 2];
  double Sizes = double(LastFit - Before.BatchSize);
  double BytesPerSample = double(Last.PeakBytes - Before.PeakBytes) / Sizes;
  if (Sizes <= 0 || !(BytesPerSample > 0))
    return Double;
  double Target =
      double(LastFit) +
      std::floor(double(State.TargetBytes - Last.PeakBytes) / BytesPerSample);
  // Within 5% of the capacity: the runs left go where the time bends.
  if (Target <= double(LastFit) * 1.05)
    return atTheCapacity(State, Fitted);
  Target = std::min(Target, double(int64_t(1) << 40));
  if (State.ProbesPast > 0 && LastFit > State.ProbesPast)
    return straightToTheTarget(State, Last, Before, Target);
  unsigned Steps = State.RunsLeft > State.RunsForBends
                       ? State.RunsLeft - State.RunsForBends
                       : 1u;
  double Ratio = std::pow(Target / double(LastFit), 1.0 / Steps);
  double Next = std::clamp(std::round(double(LastFit) * Ratio),
                           double(LastFit + 1), Target);
  double MsPerSample = (Last.IterationMs - Before.IterationMs) / Sizes;
  if (State.SecondsPerSize > 0 && State.IterationsPerSize > 0 &&
      MsPerSample > 0) {
    double Affordable =
        affordableSize(Last, MsPerSample,
                       State.SecondsPerSize * 1000 / State.IterationsPerSize);
    Next =
        std::min(Next, std::max(Affordable, std::min(double(Double), Target)));
  }
  return int64_t(Next);
}

} // namespace

int64_t nextBatchSize(const SweepState &State) {
  if (State.Fitted.empty())
    return 0;
  std::vector<SweepPoint> Fitted = State.Fitted;
  llvm::sort(Fitted, [](const SweepPoint &A, const SweepPoint &B) {
    return A.BatchSize < B.BatchSize;
  });
  int64_t Next = nextBatchSizeForTheCapacity(State, Fitted);
  if (!State.DataLimit || Next <= State.DataLimit)
    return Next;
  // Past the data's limit a run measures too few iterations, or none: as
  // far as the data lasts, then where the time bends.
  if (double(State.DataLimit) > double(Fitted.back().BatchSize) * 1.05)
    return State.DataLimit;
  return atTheCapacity(State, Fitted);
}

int64_t nearestWholeBatchSize(int64_t Next, int64_t Samples,
                              llvm::ArrayRef<int64_t> Measured,
                              std::optional<int64_t> Below, int64_t Most) {
  if (Next <= 0 || Samples <= 0)
    return Next;
  int64_t Nearest = 0;
  double NearestRatio = std::log(4.0);
  auto Consider = [&](int64_t Size) {
    if (llvm::is_contained(Measured, Size) || (Below && Size >= *Below) ||
        (Most > 0 && Size > Most))
      return;
    double Ratio = std::fabs(std::log(double(Size) / double(Next)));
    if (Ratio <= NearestRatio) {
      Nearest = Size;
      NearestRatio = Ratio;
    }
  };
  for (int64_t D = 1; D * D <= Samples; ++D)
    if (Samples % D == 0) {
      Consider(D);
      Consider(Samples / D);
    }
  return Nearest;
}

double timingRunSeconds(double BudgetSeconds, double SpentSeconds,
                        unsigned RunsLeft, bool WithBreakdown) {
  if (BudgetSeconds <= 0)
    return 0;
  double Share =
      std::max(BudgetSeconds - SpentSeconds, 0.0) / std::max(RunsLeft, 1u);
  // A breakdown run measures a few iterations: a quarter of the size's share.
  if (WithBreakdown)
    Share *= 0.75;
  // Spent: the run still measures its fewest iterations (0 is no limit).
  return std::max(Share, 0.001);
}

MeasuredRun mergeRuns(MeasuredRun Timing, const MeasuredRun &Breakdown) {
  MeasuredRun Run = std::move(Timing);
  Run.Breakdown = BreakdownRun{Breakdown.Iterations, Breakdown.IterationMs.Mean,
                               Breakdown.WallSeconds, Breakdown.EndedEarly};
  Run.OutOfMemory = Run.OutOfMemory || Breakdown.OutOfMemory;
  Run.ChannelsLast = Run.ChannelsLast || Breakdown.ChannelsLast;
  Run.WallSeconds += Breakdown.WallSeconds;
  // The hooks slow the breakdown run down; its shares of an iteration are
  // what it measures, the timing run says how long the iteration is.
  double Scale = Run.IterationMs.Mean > 0 && Breakdown.IterationMs.Mean > 0
                     ? Run.IterationMs.Mean / Breakdown.IterationMs.Mean
                     : 1;
  Run.PeakBytesByPhase = Breakdown.PeakBytesByPhase;
  Run.Memory = Breakdown.Memory;
  Run.SetupStatements = Breakdown.SetupStatements;
  // The timing run's syncs are the program's own pace; a breakdown run's
  // are slowed by its hooks, as its layers are.
  if (Run.HostSyncs.empty()) {
    Run.HostSyncs = Breakdown.HostSyncs;
    for (HostSyncMeasure &Sync : Run.HostSyncs)
      Sync.Ms *= Scale;
  }
  // The kinds add up to the breakdown run's peak.
  if (!Breakdown.Memory.empty())
    Run.PeakBytes = Breakdown.PeakBytes;
  Run.TimeSplitMs = Breakdown.TimeSplitMs;
  for (auto &[Phase, Ms] : Run.TimeSplitMs)
    Ms *= Scale;
  Run.Layers = Breakdown.Layers;
  Run.GpuMsSource = Breakdown.GpuMsSource; // a timing run times no layers
  if (!Breakdown.GpuNote.empty())          // the layers' GPU time is its
    Run.GpuNote = Run.GpuNote.empty() || Run.GpuNote == Breakdown.GpuNote
                      ? Breakdown.GpuNote
                      : Run.GpuNote + "; " + Breakdown.GpuNote;
  for (LayerMeasure &Layer : Run.Layers) {
    Layer.ForwardMs *= Scale;
    Layer.BackwardMs *= Scale;
  }
  return Run;
}

MallocSetting mallocSetting(MallocThresholds Choice,
                            std::optional<llvm::StringRef> UserTunables,
                            bool UserThresholdVariables) {
  bool UserSetsThresholds =
      UserThresholdVariables ||
      (UserTunables && (UserTunables->contains("glibc.malloc.mmap_threshold") ||
                        UserTunables->contains("glibc.malloc.trim_threshold")));
  if (UserSetsThresholds)
    return {"user", std::nullopt};
  if (Choice == MallocThresholds::Dynamic)
    return {"dynamic", std::nullopt};
  std::string Tunables =
      UserTunables && !UserTunables->empty() ? UserTunables->str() + ":" : "";
  Tunables +=
      "glibc.malloc.mmap_threshold=" + std::to_string(PinnedMmapThreshold) +
      ":glibc.malloc.trim_threshold=" + std::to_string(PinnedTrimThreshold);
  return {"pinned", Tunables};
}

/// The sweep with its runs through Slurm: the load of this machine says
/// nothing of the nodes', so there is no waiting for quiet here; what Slurm
/// did to the runs joins the problems.
static llvm::Expected<Measurement>
measureThroughSlurm(llvm::StringRef Executable, int64_t DeclaredBatchSize,
                    const MeasureOptions &Options, std::string RunsDir,
                    llvm::raw_ostream &Progress) {
  auto Launcher = SlurmLauncher::create(Executable, Options, RunsDir);
  if (!Launcher)
    return Launcher.takeError();
  Progress << "skyline-check: runs go through Slurm ("
           << (*Launcher)->describe() << ")\n";
  (*Launcher)->sayTo(Progress);
  if (llvm::Error E = (*Launcher)->checkBeforeTheRuns())
    return std::move(E);
  llvm::Expected<Measurement> Result =
      Sweep(**Launcher, DeclaredBatchSize, Options, Progress).run();
  if (Result)
    llvm::append_range(Result->Problems, (*Launcher)->notes());
  return Result;
}

llvm::Expected<Measurement> measure(llvm::StringRef Executable,
                                    int64_t DeclaredBatchSize,
                                    const MeasureOptions &Options,
                                    llvm::raw_ostream &Progress) {
  std::string RunsDir = Options.WorkDir + "/runs";
  if (Options.Launcher == LauncherChoice::Slurm)
    return measureThroughSlurm(Executable, DeclaredBatchSize, Options, RunsDir,
                               Progress);
  // Said at once, not kept with the problems: the load of the moment, which
  // the user can act on before the numbers come.
  std::optional<double> Others = otherRunnableTasks();
  if (Others && *Others >= 1.0 && Options.QuietWaitSeconds > 0) {
    Progress << llvm::format("skyline-check: waiting up to %g s for other "
                             "work to end (%.1f other tasks running)...",
                             Options.QuietWaitSeconds, *Others);
    Progress.flush();
    QuietWait Wait = waitForQuiet(otherRunnableTasks, Options.QuietWaitSeconds,
                                  steadyClockSeconds);
    Progress << llvm::format(Wait.Quiet ? " quiet after %.1f s\n"
                                        : " still busy after %.1f s\n",
                             Wait.WaitedSeconds);
    Others = Wait.OtherRunnable;
  }
  if (Others)
    if (auto Busy = busyMachineWarning(
            *Others, std::max(1u, std::thread::hardware_concurrency())))
      Progress << "skyline-check: warning: " << *Busy << "\n";
  llvm::sys::fs::create_directories(RunsDir);
  ProcessLauncher Launcher(Executable, Options, RunsDir);
  return Sweep(Launcher, DeclaredBatchSize, Options, Progress).run();
}

} // namespace skyline
