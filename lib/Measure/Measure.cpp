//===- Measure.cpp - Training bursts at several batch sizes ---------------===//

#include "skyline/Measure.h"

#include "skyline/InputFile.h"
#include "skyline/MeasuredRunYAML.h"
#include "skyline/Process.h"
#include "skyline/Units.h"
#include "skyline/YamlFields.h"
#include "skyline/runtime/ExitCodes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace skyline {
namespace {

/// The runtime's SKYLINE_MODE (its own header needs LibTorch's).
enum class RunKind { Timing, Breakdown };

/// "the run at batch size 8" (the timing run), "the breakdown run at ...".
std::string runName(RunKind Mode, int64_t BatchSize) {
  return std::string(Mode == RunKind::Breakdown ? "the breakdown run"
                                                : "the run") +
         " at batch size " + std::to_string(BatchSize);
}

/// What, then the end of the process's output; where the log was cut (a
/// program that printed megabytes) it says so: the end shown follows a gap.
std::string withLogTail(std::string What, llvm::StringRef Log,
                        const ProcessResult &R) {
  std::string Tail = failureOfOutput(Log, 12);
  if (Tail.empty())
    return What;
  std::string Cut;
  if (R.OutputBytesCut) {
    uint64_t Head = std::min<uint64_t>(R.OutputBytes, LogHeadBytes);
    uint64_t Kept = R.OutputBytes - R.OutputBytesCut - Head;
    Cut = ", cut to its first " + formatBytes(int64_t(Head)) + " and last " +
          formatBytes(int64_t(Kept)) + " of " +
          formatBytes(int64_t(R.OutputBytes));
  }
  return What + "; the end of its output (" + Log.str() + Cut + "):\n" + Tail;
}

/// The runtime could not write the result: say why when the program is to
/// blame.
std::string describeResultNotWritten(llvm::StringRef ResultPath) {
  llvm::StringRef Dir = llvm::sys::path::parent_path(ResultPath);
  if (!llvm::sys::fs::is_directory(Dir))
    return " could not write its result file: its directory " + Dir.str() +
           " is gone (does the program delete it, or its work directory?)";
  return " could not write its result file (is the work directory writable?)";
}

/// "28 iterations", and those left out at an epoch's end when there are.
std::string describeIterations(const MeasuredRun &Run) {
  std::string Text = std::to_string(Run.Iterations) + " iterations";
  if (Run.EpochEndIterations)
    Text += " (" + std::to_string(Run.EpochEndIterations) +
            " more across an epoch's end, left out)";
  return Text;
}

/// A program that returned before its first measured iteration.
std::string describeNoIterations(const MeasuredRun &Run, RunKind Mode,
                                 const ProcessResult &R, llvm::StringRef Log) {
  int ExitCode = R.ExitCode;
  std::string What =
      runName(Mode, Run.BatchSize) + " ended with exit code " +
      std::to_string(ExitCode) + " after " +
      std::to_string(Run.IterationsReached) +
      " iteration(s), before its first measured one (it asks for " +
      std::to_string(Run.Warmup) + " warm-up and " +
      (Run.MinIterations < Run.IterationsAsked
           ? std::to_string(Run.MinIterations) + " to "
           : std::string()) +
      std::to_string(Run.IterationsAsked) +
      " measured; does it reach optimizer.step() often enough? see --warmup "
      "and --iterations)";
  return withLogTail(What, Log, R);
}

std::string describeFailure(const ProcessResult &R, int64_t BatchSize,
                            llvm::StringRef Log, llvm::StringRef ResultPath,
                            RunKind Mode = RunKind::Timing,
                            std::optional<unsigned> Reached = std::nullopt) {
  std::string What = runName(Mode, BatchSize);
  if (!R.Error.empty() && !R.Crashed)
    What += " could not start: " + R.Error;
  else if (R.TimedOut)
    What += " " + describeProcessEnd(R) +
            " (a hang, or iterations too slow: see --run-timeout)";
  else if (R.Crashed)
    What += " crashed (" + R.Error + ")";
  else if (R.End == ProcessEnd::Interrupted)
    What += " " + describeProcessEnd(R);
  else if (R.ExitCode == rt::ExitResultNotWritten)
    What += describeResultNotWritten(ResultPath);
  else if (R.ExitCode != 0 && Reached)
    What += " ended with exit code " + std::to_string(R.ExitCode) + " after " +
            std::to_string(*Reached) +
            " iteration(s): a program that exits non-zero is a failure";
  else
    What +=
        " ended with exit code " + std::to_string(R.ExitCode) +
        " before its measured iterations (does it reach optimizer.step() often "
        "enough? see --iterations)";
  return withLogTail(What, Log, R);
}

/// A failed run's Problem, with what it means for the sweep and the
/// suggestion put before the program's output.
std::string failedSizeProblem(llvm::StringRef Problem, int64_t BatchSize) {
  std::string Bound = "the sweep stays below " + std::to_string(BatchSize) +
                      " and suggests no size from it on";
  size_t Output = Problem.find("; the end of its output");
  if (Output == llvm::StringRef::npos)
    return (Problem + "; " + Bound).str();
  return (Problem.take_front(Output) + "; " + Bound + Problem.drop_front(Output))
      .str();
}

std::string describeEndedEarly(const MeasuredRun &Run, RunKind Mode) {
  std::string LeftOut = Run.EpochEndIterations
                            ? " (and " +
                                  std::to_string(Run.EpochEndIterations) +
                                  " across an epoch's end, left out)"
                            : "";
  return runName(Mode, Run.BatchSize) + " ended after " +
         std::to_string(Run.Iterations) + " of " +
         std::to_string(Run.IterationsAsked) + " measured iterations" +
         LeftOut +
         ": its figures come from those; the program ran out of data? lower "
         "--iterations or give it more";
}

/// The malloc setting of this process's environment and Choice.
MallocSetting runsMallocSetting(MallocThresholds Choice) {
  const char *Tunables = std::getenv("GLIBC_TUNABLES");
  return mallocSetting(Choice,
                       Tunables ? std::optional<llvm::StringRef>(Tunables)
                                : std::nullopt,
                       std::getenv("MALLOC_MMAP_THRESHOLD_") ||
                           std::getenv("MALLOC_TRIM_THRESHOLD_"));
}

/// The first run says where the program ran; older results say nothing and
/// leave the defaults.
void describeDevice(const MeasuredRun &Run, Measurement &Result) {
  if (!Run.DeviceType.empty())
    Result.DeviceType = Run.DeviceType;
  if (!Run.DeviceName.empty())
    Result.DeviceName = Run.DeviceName;
  Result.TorchVersion = Run.TorchVersion;
  Result.Threads = Run.Threads;
  // On a GPU the capacity is the device's, not the CPU budget.
  if (Run.DeviceType == "cuda" && Run.DeviceCapacityBytes > 0)
    Result.MemoryCapacityBytes = Run.DeviceCapacityBytes;
}

} // namespace

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
/// whose middle is past Limit (the data's, when known) is passed over. 0
/// when no slope changes by more than MinChange, or the segment has no size
/// between.
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
    for (size_t Side : {I, I + 1})
      if (Span(Side) > Widest * 1.05 && !(Limit > 0 && Middle(Side) > Limit)) {
        Widest = Span(Side);
        Segment = Side;
      }
  }
  if (Segment == 0)
    return 0;
  int64_t Low = Sorted[Segment - 1].BatchSize, High = Sorted[Segment].BatchSize;
  int64_t Size = Middle(Segment);
  return Size > Low && Size < High ? Size : 0;
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
    return whereTheTimeBends(Fitted, State.MinTimeChange, State.DataLimit);
  Target = std::min(Target, double(int64_t(1) << 40));
  unsigned Steps = State.RunsLeft > State.RunsForBends
                       ? State.RunsLeft - State.RunsForBends
                       : 1u;
  double Ratio = std::pow(Target / double(LastFit), 1.0 / Steps);
  double Next = std::clamp(std::round(double(LastFit) * Ratio),
                           double(LastFit + 1), Target);
  double MsPerSample = (Last.IterationMs - Before.IterationMs) / Sizes;
  if (State.SecondsPerSize > 0 && State.IterationsPerSize > 0 &&
      MsPerSample > 0) {
    double AffordableMs = State.SecondsPerSize * 1000 / State.IterationsPerSize;
    double Affordable =
        double(LastFit) +
        std::floor((AffordableMs - Last.IterationMs) / MsPerSample);
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
  return whereTheTimeBends(Fitted, State.MinTimeChange, State.DataLimit);
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

namespace {

/// A result file's times, bytes and layers, each checked: the program under
/// measurement writes this file, and a value no run gives (NaN, a negative
/// time) would reach the fits and the gate.
void readRunFigures(const YamlFields &Root, MeasuredRun &Run) {
  readIterationTimes(Root, Run);
  Run.PeakBytes = Root.number<int64_t>("peak_bytes", Least::Zero);
  Root.forEachEntry("peak_bytes_by_phase", [&](const std::string &Phase,
                                               const YAML::Node &Bytes,
                                               const std::string &Key) {
    Run.PeakBytesByPhase.push_back(
        {Phase, checkedNumber<int64_t>(Bytes, Key, Least::Zero)});
  });
  YamlFields Memory = Root.sub("memory");
  for (const char *Kind : {"weights", "gradients", "optimizer_state",
                           "activations", "data", "temporaries", "untracked"})
    if (Memory[Kind])
      Run.Memory.push_back({Kind, Memory.number<int64_t>(Kind, Least::Zero)});
  YamlFields Split = Root.sub("time_split_ms");
  for (const char *Phase :
       {"data", "forward", "backward", "optimizer", "other"})
    if (Split[Phase])
      Run.TimeSplitMs.push_back(
          {Phase, Split.number<double>(Phase, Least::Zero)});
  Root.forEach("layers", [&](const YAML::Node &Node, const std::string &Key) {
    YamlFields Layer(Node, Key);
    LayerMeasure Row;
    if (!Layer["scope"])
      throw BadValue{Layer.key("scope"), "is missing; every layer has one"};
    Row.Scope = Layer.get<int>("scope");
    Row.ForwardMs = Layer.number<double>("forward_ms", Least::Zero);
    Row.BackwardMs = Layer.number<double>("backward_ms", Least::Zero);
    Row.GpuMs = Layer.number<double>("gpu_ms", Least::Zero, -1);
    Row.ActivationBytes =
        Layer.number<int64_t>("activation_bytes", Least::Zero);
    Row.WeightBytes = Layer.number<int64_t>("weight_bytes", Least::Zero);
    Run.Layers.push_back(Row);
  });
}

MeasuredRun readRunFields(const YAML::Node &Node) {
  if (!Node.IsMap())
    throw BadValue{"the document",
                   "is " + quotedValue(Node) + "; it must be a mapping"};
  YamlFields Root(Node, "");
  for (const char *Key : {"batch_size", "oom", "iterations", "iteration_ms",
                          "throughput", "peak_bytes"})
    if (!Root[Key])
      throw BadValue{Key, "is missing; the runtime writes it in every result"};
  MeasuredRun Run;
  Run.BatchSize = Root.number<int64_t>("batch_size", Least::One);
  Run.OutOfMemory = Root.get<bool>("oom");
  Run.Iterations = Root.get<unsigned>("iterations");
  Run.Mode = Root.get<std::string>("mode");
  Run.Stopped = Root.get<std::string>("stopped");
  Run.EndedEarly = Root.get<bool>("ended_early");
  Run.Warmup = Root.get<unsigned>("warmup");
  Run.IterationsAsked = Root.get<unsigned>("iterations_asked");
  Run.MinIterations = Root.get<unsigned>("min_iterations");
  Run.IterationsReached = Root.get<unsigned>("iterations_reached");
  Run.EpochEndIterations = Root.get<unsigned>("epoch_end_iterations");
  Run.EveryIterationAnEpoch = Root.get<bool>("every_iteration_an_epoch");
  Run.EpochIterations = Root.get<unsigned>("epoch_iterations");
  Run.DatasetSamples = Root.number<int64_t>("dataset_size", Least::Zero);
  Run.DatasetsGcd = Root.number<int64_t>("datasets_gcd", Least::Zero);
  readRunFigures(Root, Run);
  Run.TorchVersion = Root.get<std::string>("torch_version");
  Run.Threads = Root.number<int>("threads", Least::Zero);
  YamlFields Device = Root.sub("device");
  Run.DeviceType = Device.get<std::string>("type");
  Run.DeviceName = Device.get<std::string>("name");
  YamlFields Gpu = Root.sub("gpu");
  Run.DeviceCapacityBytes =
      Gpu.number<int64_t>("memory_capacity_bytes", Least::Zero);
  Run.GpuMsSource = Gpu.get<std::string>("gpu_ms_source");
  if (Run.GpuMsSource == "none")
    Run.GpuMsSource.clear();
  return Run;
}

} // namespace

llvm::Expected<MeasuredRun> readRunResult(llvm::StringRef Path) {
  auto Root = loadYamlInput(Path, "run result", RunResultLimits);
  if (!Root)
    return Root.takeError();
  try {
    return readRunFields(*Root);
  } catch (const BadValue &Bad) {
    return llvm::createStringError(
        std::errc::invalid_argument,
        "run result '%s': %s %s; the measured program wrote this file "
        "(skyline-check's runtime never writes such a value): check that the "
        "program does not write to $SKYLINE_RESULT itself, and measure again",
        Path.str().c_str(), Bad.Key.c_str(), Bad.Problem.c_str());
  } catch (const std::exception &E) {
    return llvm::createStringError(std::errc::invalid_argument,
                                   "unreadable run result '%s': %s",
                                   Path.str().c_str(), E.what());
  }
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
  Run.WallSeconds += Breakdown.WallSeconds;
  // The hooks slow the breakdown run down; its shares of an iteration are
  // what it measures, the timing run says how long the iteration is.
  double Scale = Run.IterationMs.Mean > 0 && Breakdown.IterationMs.Mean > 0
                     ? Run.IterationMs.Mean / Breakdown.IterationMs.Mean
                     : 1;
  Run.PeakBytesByPhase = Breakdown.PeakBytesByPhase;
  Run.Memory = Breakdown.Memory;
  // The kinds add up to the breakdown run's peak.
  if (!Breakdown.Memory.empty())
    Run.PeakBytes = Breakdown.PeakBytes;
  Run.TimeSplitMs = Breakdown.TimeSplitMs;
  for (auto &[Phase, Ms] : Run.TimeSplitMs)
    Ms *= Scale;
  Run.Layers = Breakdown.Layers;
  Run.GpuMsSource = Breakdown.GpuMsSource; // a timing run times no layers
  for (LayerMeasure &Layer : Run.Layers) {
    Layer.ForwardMs *= Scale;
    Layer.BackwardMs *= Scale;
  }
  return Run;
}

namespace {

/// One process of the sweep: its result, or why there is none.
struct Attempt {
  std::optional<MeasuredRun> Run;
  std::string Problem;
  double Seconds = 0;
  /// The program returned (exit 0) before its first measured iteration:
  /// at a larger batch size its data may last fewer iterations.
  bool EndedBeforeMeasuring = false;
};

/// Pass > 1: a repeated timing run, with its own log and result file; a
/// Tag names a run of another kind the same way.
llvm::Expected<Attempt> runOnce(llvm::StringRef Executable, int64_t BatchSize,
                                RunKind Mode, double TimeLimitSeconds,
                                const MeasureOptions &Options,
                                const std::string &RunsDir, unsigned Pass = 1,
                                llvm::StringRef Tag = "") {
  bool Breakdown = Mode == RunKind::Breakdown;
  std::string Stem = RunsDir + "/batch-" + std::to_string(BatchSize) +
                     (Breakdown ? "-breakdown" : "") +
                     (Pass > 1 ? "-run" + std::to_string(Pass) : "") +
                     (Tag.empty() ? "" : "-" + Tag.str());
  std::string Log = Stem + ".log", ResultPath = Stem + ".yaml";
  // Again at each run: the last program may have deleted it.
  llvm::sys::fs::create_directories(RunsDir);
  llvm::sys::fs::remove(ResultPath);
  unsigned Most =
      Breakdown ? std::min(Options.BreakdownIterations, Options.Iterations)
                : Options.Iterations;
  unsigned Fewest = Breakdown ? Most : std::min(Options.MinIterations, Most);
  std::vector<std::string> Env = {
      "SKYLINE_RESULT=" + ResultPath,
      "SKYLINE_BATCH_SIZE=" + std::to_string(BatchSize),
      "SKYLINE_MODE=" + std::string(Breakdown ? "breakdown" : "timing"),
      "SKYLINE_WARMUP=" + std::to_string(Options.Warmup),
      "SKYLINE_ITERATIONS=" + std::to_string(std::max(Most, 1u)),
      "SKYLINE_MIN_ITERATIONS=" + std::to_string(std::max(Fewest, 1u)),
      "SKYLINE_MEMORY_BUDGET=" + std::to_string(Options.MemoryBudget)};
  if (!Breakdown) {
    Env.push_back("SKYLINE_TOLERANCE=" + std::to_string(Options.Tolerance));
    if (TimeLimitSeconds > 0)
      Env.push_back("SKYLINE_TIME_LIMIT=" + std::to_string(TimeLimitSeconds));
  }
  if (Options.Device == DeviceChoice::CPU)
    Env.push_back("CUDA_VISIBLE_DEVICES=");
  if (auto Tunables = runsMallocSetting(Options.Malloc).GlibcTunables)
    Env.push_back("GLIBC_TUNABLES=" + *Tunables);
  std::vector<std::string> Args = {Executable.str()};
  Args.insert(Args.end(), Options.RunArgs.begin(), Options.RunArgs.end());
  ProcessResult Process =
      runProcess(Args, Options.RunDir, Env, Log, Options.RunTimeoutSeconds);

  Attempt A;
  A.Seconds = Process.Seconds;
  bool Finished =
      Process.ExitCode == 0 || Process.ExitCode == rt::ExitOutOfMemory;
  bool HasResult = llvm::sys::fs::exists(ResultPath);
  if (!Finished || !HasResult) {
    // What a program that returned non-zero reached, from its exit result.
    std::optional<unsigned> Reached;
    if (HasResult)
      if (auto Partial = readRunResult(ResultPath))
        Reached = Partial->IterationsReached;
      else
        llvm::consumeError(Partial.takeError());
    A.Problem =
        describeFailure(Process, BatchSize, Log, ResultPath, Mode, Reached);
    return A;
  }
  auto Run = readRunResult(ResultPath);
  if (!Run) {
    // The runtime writes it whole (a temporary renamed): the program, or
    // something else, wrote over it.
    A.Problem = runName(Mode, BatchSize) +
                " left a result file that cannot be read (does the program "
                "write to the file that SKYLINE_RESULT names?): " +
                llvm::toString(Run.takeError());
    return A;
  }
  Run->WallSeconds = Process.Seconds;
  Run->Log = Log;
  if (Run->EndedEarly && Run->Iterations == 0 && !Run->OutOfMemory) {
    A.Problem = describeNoIterations(*Run, Mode, Process, Log);
    A.EndedBeforeMeasuring = Process.ExitCode == 0;
    return A;
  }
  A.Run = std::move(*Run);
  return A;
}

/// What one batch size's runs gave: its timing runs and its breakdown run,
/// merged into a MeasuredRun.
struct SizeRuns {
  int64_t BatchSize = 0;           // asked for
  std::vector<MeasuredRun> Timing; // in the order they ran; never empty
  std::optional<MeasuredRun> Breakdown;
  double WallSeconds = 0;  // every process at this size
  bool Repeatable = false; // its timing run measured and did not run out

  const MeasuredRun &first() const { return Timing.front(); }
  /// The breakdown run's peak, whose kinds add up to it; else the
  /// kept timing run's, as mergeRuns does.
  int64_t peakBytes() const {
    return Breakdown && !Breakdown->Memory.empty() ? Breakdown->PeakBytes
                                                   : fastest().PeakBytes;
  }
  /// The run with the smallest median. Other work on the machine only ever
  /// slows a run, and in spells longer than a run: of 25 runs of mnist at
  /// 128 in a row, the medians went from 8.8 to 13.0 ms and back in
  /// stretches of several runs, so that a middle run is a slow one as often
  /// as not, where the fastest of three rarely is. The gate compares the
  /// fastest too.
  const MeasuredRun &fastest() const {
    return *llvm::min_element(
        Timing, [](const MeasuredRun &A, const MeasuredRun &B) {
          return A.IterationMs.Median < B.IterationMs.Median;
        });
  }
};

/// Why Run's figures are not its size's: every iteration was a whole epoch
/// where a smaller size had several an epoch, so the dataset holds fewer
/// samples than the size and each batch was all of them. None otherwise
/// (a loop entered once an iteration is so at every size).
std::optional<std::string> pastTheDataset(const MeasuredRun &Run,
                                          const std::vector<SizeRuns> &Sizes) {
  if (!Run.EveryIterationAnEpoch)
    return std::nullopt;
  const SizeRuns *Several = nullptr;
  for (const SizeRuns &Size : Sizes)
    if (Size.BatchSize < Run.BatchSize && Size.first().Iterations > 0 &&
        !Size.first().EveryIterationAnEpoch &&
        (!Several || Size.BatchSize > Several->BatchSize))
      Several = &Size;
  if (!Several)
    return std::nullopt;
  return "the run at batch size " + std::to_string(Run.BatchSize) +
         ": each of its " + std::to_string(Run.Iterations) +
         " iterations was a whole epoch, where batch size " +
         std::to_string(Several->BatchSize) +
         " had several an epoch: the dataset holds fewer samples than " +
         std::to_string(Run.BatchSize) +
         ", so every batch was all of them, smaller than asked; the size is "
         "left out and the sweep stays below it";
}

MeasuredRun merged(const SizeRuns &Size) {
  const MeasuredRun &Kept = Size.fastest();
  MeasuredRun Run = Size.Breakdown ? mergeRuns(Kept, *Size.Breakdown) : Kept;
  for (const MeasuredRun &Timing : Size.Timing) {
    if (!Timing.OutOfMemory)
      Run.TimingRunMedians.push_back(Timing.IterationMs.Median);
    // Whichever run reached the second epoch saw the first's length.
    Run.EpochIterations = std::max(Run.EpochIterations, Timing.EpochIterations);
    Run.DatasetSamples = std::max(Run.DatasetSamples, Timing.DatasetSamples);
    Run.DatasetsGcd = std::max(Run.DatasetsGcd, Timing.DatasetsGcd);
  }
  Run.WallSeconds = Size.WallSeconds;
  return Run;
}

SweepState sweepState(const std::vector<SizeRuns> &Sizes,
                      std::optional<int64_t> FirstOutOfMemory,
                      int64_t CapacityBytes, const MeasureOptions &Options,
                      unsigned RunsLeft, double SpentSeconds) {
  SweepState State;
  for (const SizeRuns &Size : Sizes)
    if (Size.Repeatable)
      State.Fitted.push_back({Size.BatchSize, Size.peakBytes(),
                              Size.fastest().IterationMs.Median});
  State.FirstOutOfMemory = FirstOutOfMemory;
  std::vector<RunLength> Lengths;
  for (const SizeRuns &Size : Sizes)
    Lengths.push_back({Size.BatchSize, Size.first().IterationsReached,
                       Size.first().EndedEarly});
  State.DataLimit = dataLimit(Lengths, Options.Warmup);
  // Where a run saw the loader's dataset, a batch of half of it is the
  // largest with an iteration an epoch that spans no epoch's end; where
  // every batch must be whole, no batch outgrows another loader given the
  // size (a test set) either.
  for (const SizeRuns &Size : Sizes) {
    const MeasuredRun &Run = Size.first();
    int64_t Limit = Run.DatasetSamples / 2;
    if (Options.WholeBatchesOnly && Run.DatasetsGcd > 0)
      Limit = std::min(Limit, Run.DatasetsGcd);
    if (Limit > 0)
      State.DataLimit = State.DataLimit ? std::min(State.DataLimit, Limit)
                                        : Limit;
  }
  State.TargetBytes = int64_t(double(CapacityBytes) *
                              (1 - std::clamp(Options.MemoryMargin, 0.0, 1.0)));
  State.RunsLeft = std::max(RunsLeft, 1u);
  // After the declared size and its double, half the runs reach the
  // capacity and half go where the time bends.
  State.RunsForBends = (Options.MaxRuns - std::min(Options.MaxRuns, 2u)) / 2;
  if (Options.TimeBudgetSeconds > 0) {
    State.SecondsPerSize =
        std::max(Options.TimeBudgetSeconds - SpentSeconds, 0.0) /
        State.RunsLeft;
    bool Breakdown = Options.Breakdown == BreakdownRuns::All;
    State.IterationsPerSize =
        std::max(Options.TimingRuns, 1u) *
            (Options.Warmup +
             std::min(Options.MinIterations, Options.Iterations)) +
        (Breakdown ? Options.Warmup + Options.BreakdownIterations : 0);
  }
  return State;
}

/// The iterations a size's timing runs measured, all together.
unsigned measuredIterations(const SizeRuns &Size) {
  unsigned Total = 0;
  for (const MeasuredRun &Run : Size.Timing)
    Total += Run.Iterations;
  return Total;
}

/// Whether another run confirms a size's fastest one: its median within
/// FastestAgreement of the fastest's. The kept run is the fastest; alone,
/// it could be a run that caught the machine at its quietest, or the only
/// one outside a slow spell that caught the rest.
bool fastestIsConfirmed(const SizeRuns &Size) {
  double Bound = Size.fastest().IterationMs.Median * (1 + FastestAgreement);
  return llvm::count_if(Size.Timing, [&](const MeasuredRun &Run) {
           return Run.IterationMs.Median <= Bound;
         }) >= 2; // the fastest and another
}

/// "5%": FastestAgreement as the messages say it.
std::string agreementPercent() {
  return std::to_string(std::lround(FastestAgreement * 100)) + "%";
}

/// Why a size gets a timing run past --timing-runs, if it does: its data
/// gives its runs fewer iterations than --min-iterations together (a median
/// of single iterations is a median of runs of one), or no second run
/// confirms its fastest (with --timing-runs of 2 or more).
std::optional<std::string> whyAnotherRun(const SizeRuns &Size,
                                         unsigned TimingRuns,
                                         unsigned MinIterations) {
  if (measuredIterations(Size) < MinIterations)
    return std::string("few iterations a run");
  if (TimingRuns >= 2 && !fastestIsConfirmed(Size))
    return "no other run within " + agreementPercent() + " of the fastest";
  return std::nullopt;
}

/// Why a size's time is less sure than the others': no two of its timing
/// runs agreed, however many it got.
std::string describeUnconfirmed(const SizeRuns &Size) {
  double Fastest = Size.fastest().IterationMs.Median, Slowest = Fastest;
  for (const MeasuredRun &Run : Size.Timing)
    Slowest = std::max(Slowest, Run.IterationMs.Median);
  return llvm::formatv("no two of the {0} timing runs at batch size {1} were "
                       "within {4} of each other ({2:F2} to {3:F2} ms): the "
                       "machine's speed changed under them, and the time kept "
                       "(the fastest) carries that; measure on a quieter "
                       "machine",
                       Size.Timing.size(), Size.BatchSize, Fastest, Slowest,
                       agreementPercent())
      .str();
}

/// "timing run 2/3 at batch size 8": the repeats' progress and problems;
/// a run past Passes says why the size gets it.
std::string repeatName(unsigned Pass, unsigned Passes, const SizeRuns &Size,
                       unsigned MinIterations) {
  std::string Where = " at batch size " + std::to_string(Size.BatchSize);
  if (Pass <= Passes)
    return "timing run " + std::to_string(Pass) + "/" + std::to_string(Passes) +
           Where;
  std::optional<std::string> Why = whyAnotherRun(Size, Passes, MinIterations);
  return "timing run " + std::to_string(Pass) + Where +
         (Why ? " (" + *Why + ")" : "");
}

/// The most timing runs a size gets: --timing-runs, and as many again
/// twice over for the sizes whyAnotherRun gives a reason.
unsigned mostTimingRuns(unsigned TimingRuns) {
  return 3 * std::max(TimingRuns, 1u);
}

/// Whether a size takes part in pass Pass: every size up to TimingRuns;
/// past it, up to MostPasses, a size whyAnotherRun gives a reason.
bool takesPart(const SizeRuns &Size, unsigned Pass, unsigned TimingRuns,
               unsigned MostPasses, unsigned MinIterations) {
  if (!Size.Repeatable)
    return false;
  if (Pass <= TimingRuns)
    return true;
  return Pass <= MostPasses &&
         whyAnotherRun(Size, TimingRuns, MinIterations).has_value();
}

/// Passes 2 to TimingRuns over the sizes that measured, interleaved so that
/// a slow spell of the machine touches every size alike, then more passes
/// for the sizes whose runs measured too few iterations together or whose
/// fastest run no other confirms; each size keeps its fastest timing run.
/// Problems are kept, never fatal: the first pass's figures stand.
void repeatTimingRuns(
    llvm::StringRef Executable, const MeasureOptions &Options,
    unsigned TimingRuns, const std::string &RunsDir,
    std::vector<SizeRuns> &Sizes, Measurement &Result,
    llvm::raw_ostream &Progress, llvm::function_ref<double()> Spent,
    llvm::function_ref<bool()> BudgetSpent,
    llvm::function_ref<void(const std::string &)> NoteBudget) {
  unsigned MostPasses = mostTimingRuns(TimingRuns);
  unsigned MinIterations = std::min(Options.MinIterations, Options.Iterations);
  // The runs planned from here: the extra ones only where a size already
  // has its --timing-runs and still a reason (whyAnotherRun).
  auto RunsLeftFrom = [&](unsigned Pass, size_t From) {
    unsigned Left = 0;
    for (unsigned P = Pass; P <= MostPasses; ++P)
      for (size_t I = P == Pass ? From : 0; I < Sizes.size(); ++I)
        Left += takesPart(Sizes[I], P, TimingRuns, MostPasses, MinIterations) &&
                (P <= TimingRuns || Sizes[I].Timing.size() >= TimingRuns);
    return Left;
  };
  for (unsigned Pass = 2; Pass <= MostPasses; ++Pass) {
    for (size_t I = 0; I < Sizes.size(); ++I) {
      SizeRuns &Size = Sizes[I];
      if (!takesPart(Size, Pass, TimingRuns, MostPasses, MinIterations))
        continue;
      unsigned RunsLeft = RunsLeftFrom(Pass, I);
      if (BudgetSpent()) {
        NoteBudget(std::to_string(RunsLeft) +
                   " repeated timing run(s) left out (--timing-runs)");
        return;
      }
      std::string Name = repeatName(Pass, TimingRuns, Size, MinIterations);
      Progress << "skyline-check: " << Name << "...";
      Progress.flush();
      auto Repeat = runOnce(
          Executable, Size.BatchSize, RunKind::Timing,
          timingRunSeconds(Options.TimeBudgetSeconds, Spent(), RunsLeft, false),
          Options, RunsDir, Pass);
      if (!Repeat) {
        Progress << "\n";
        Result.Problems.push_back(llvm::toString(Repeat.takeError()));
        return;
      }
      Progress << llvm::format(" %.1f s", Repeat->Seconds);
      Size.WallSeconds += Repeat->Seconds;
      if (!Repeat->Run) {
        // A program that fails now and then: what was measured stands.
        Progress << "\n";
        Result.Problems.push_back(Repeat->Problem);
        Result.Runs[I] = merged(Size);
        return;
      }
      MeasuredRun &Run = *Repeat->Run;
      Progress << ", " << describeIterations(Run);
      if (!Run.Stopped.empty())
        Progress << " (" << Run.Stopped << ")";
      Progress << "\n";
      if (Run.OutOfMemory) {
        Result.Problems.push_back(
            Name +
            " ran out of memory, the first did not: its time is left out");
        Size.Repeatable = false;
      } else if (Run.Iterations == 0) {
        // Its median of nothing would be the fastest.
        Result.Problems.push_back(
            Name + " measured no iteration, the first did: it is left out");
      } else {
        Size.Timing.push_back(std::move(Run));
      }
      Result.Runs[I] = merged(Size);
    }
  }
  for (const SizeRuns &Size : Sizes)
    if (Size.Repeatable && TimingRuns >= 2 && !fastestIsConfirmed(Size))
      Result.Problems.push_back(describeUnconfirmed(Size));
}

} // namespace

std::optional<std::string> busyMachineWarning(double OtherRunnable,
                                              unsigned Cores) {
  if (OtherRunnable < 1.0)
    return std::nullopt;
  return llvm::formatv("the machine was busy ({0:f1} other tasks running on "
                       "{1} cores): times include waiting for a CPU; measure "
                       "on a quiet machine, or fix OMP_NUM_THREADS",
                       OtherRunnable, Cores)
      .str();
}

std::optional<unsigned> runnableTasks(llvm::StringRef LoadavgText) {
  llvm::SmallVector<llvm::StringRef, 5> Fields;
  LoadavgText.split(Fields, ' ', -1, /*KeepEmpty=*/false);
  if (Fields.size() < 4)
    return std::nullopt;
  unsigned Running = 0;
  if (Fields[3].split('/').first.getAsInteger(10, Running))
    return std::nullopt;
  return Running;
}

namespace {

/// The other tasks runnable now, on average over half a second: not the
/// one-minute load average, which still counts the instrumented build that
/// has just ended. nullopt where /proc/loadavg is not there.
std::optional<double> otherRunnableTasks() {
  constexpr int Samples = 5;
  unsigned Others = 0;
  for (int I = 0; I < Samples; ++I) {
    if (I)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto Text = llvm::MemoryBuffer::getFileAsStream("/proc/loadavg");
    if (!Text)
      return std::nullopt;
    std::optional<unsigned> Running = runnableTasks((*Text)->getBuffer());
    if (!Running)
      return std::nullopt;
    Others += *Running > 0 ? *Running - 1 : 0; // less this reader
  }
  return double(Others) / Samples;
}

} // namespace

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

llvm::Expected<Measurement> measure(llvm::StringRef Executable,
                                    int64_t DeclaredBatchSize,
                                    const MeasureOptions &Options,
                                    llvm::raw_ostream &Progress) {
  Measurement Result;
  // Said at once, not kept with the problems: the load of the moment, which
  // the user can act on before the numbers come.
  if (std::optional<double> Others = otherRunnableTasks())
    if (auto Busy = busyMachineWarning(
            *Others, std::max(1u, std::thread::hardware_concurrency())))
      Progress << "skyline-check: warning: " << *Busy << "\n";
  Result.MemoryCapacityBytes = Options.MemoryBudget;
  Result.TimeBudgetSeconds = Options.TimeBudgetSeconds;
  MallocSetting Malloc = runsMallocSetting(Options.Malloc);
  Result.MallocThresholdsUsed = Malloc.Thresholds;
  Result.GlibcTunables = Malloc.GlibcTunables.value_or("");
  std::string RunsDir = Options.WorkDir + "/runs";
  llvm::sys::fs::create_directories(RunsDir);
  auto Start = std::chrono::steady_clock::now();
  auto Spent = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         Start)
        .count();
  };
  // Checked before each run but the first size's: the sweep ends at most
  // one run past the budget.
  auto BudgetSpent = [&] {
    return Options.TimeBudgetSeconds > 0 &&
           Spent() >= Options.TimeBudgetSeconds;
  };
  auto NoteBudget = [&](const std::string &What) {
    Result.TimeBudgetSpent = true;
    std::string Seconds;
    llvm::raw_string_ostream(Seconds)
        << llvm::format("%g", Options.TimeBudgetSeconds);
    Result.Problems.push_back("the time budget (" + Seconds +
                              " s, --time-budget) is spent: " + What);
  };

  unsigned TimingRuns = std::max(Options.TimingRuns, 1u);
  std::vector<SizeRuns> Sizes; // in the order of Result.Runs
  int64_t BatchSize = DeclaredBatchSize;
  int64_t LastFit = 0;
  // The smallest size that ran out of memory, or whose program returned
  // before a measured iteration: the sweep stays below it.
  std::optional<int64_t> FirstTooLarge;
  // The size after Index: 0 when the sweep has converged.
  auto NextSize = [&](unsigned Index) -> int64_t {
    int64_t Next = nextBatchSize(
        sweepState(Sizes, FirstTooLarge, Result.MemoryCapacityBytes, Options,
                   Options.MaxRuns - Index - 1, Spent()));
    if (Options.WholeBatchesOnly) {
      // A size that does not divide the dataset fails at an epoch's end.
      // Every loader given the size (a test loader) fails on a short batch
      // too, and no batch is larger than its dataset.
      int64_t Samples = 0, Training = 0;
      std::vector<int64_t> Measured;
      for (const SizeRuns &Size : Sizes) {
        const MeasuredRun &Run = Size.first();
        Samples = std::max(Samples, Run.wholeBatchDivisor());
        Training = std::max(Training, Run.DatasetSamples);
        Measured.push_back(Size.BatchSize);
      }
      int64_t Most = Training > 1 ? std::min(Samples, Training / 2) : Samples;
      Next = nearestWholeBatchSize(Next, Samples, Measured, FirstTooLarge, Most);
    }
    bool Measured = llvm::any_of(
        Sizes, [&](const SizeRuns &Size) { return Size.BatchSize == Next; });
    if (Next <= 0 || Measured || (FirstTooLarge && Next >= *FirstTooLarge))
      return 0;
    return Next;
  };
  // After a size too large for a reason other than memory: the sweep stays
  // below it; false when nothing is left to try.
  auto BackOff = [&](unsigned Index) {
    FirstTooLarge =
        FirstTooLarge ? std::min(*FirstTooLarge, BatchSize) : BatchSize;
    BatchSize = NextSize(Index);
    return BatchSize != 0;
  };
  for (unsigned Index = 0; Index < Options.MaxRuns; ++Index) {
    if (Index > 0 && BudgetSpent()) {
      NoteBudget("measured " + std::to_string(Index) + " of " +
                 std::to_string(Options.MaxRuns) +
                 " batch sizes; raise it to measure more");
      break;
    }
    bool WithBreakdown = Options.Breakdown == BreakdownRuns::All ||
                         (Options.Breakdown == BreakdownRuns::Declared &&
                          BatchSize == DeclaredBatchSize);
    Progress << "skyline-check: run " << Index + 1 << "/" << Options.MaxRuns
             << " at batch size " << BatchSize << "...";
    Progress.flush();
    auto Timing = runOnce(
        Executable, BatchSize, RunKind::Timing,
        timingRunSeconds(Options.TimeBudgetSeconds, Spent(),
                         (Options.MaxRuns - Index) * TimingRuns, WithBreakdown),
        Options, RunsDir);
    if (!Timing)
      return Timing.takeError();
    Progress << llvm::format(" %.1f s", Timing->Seconds);
    if (!Timing->Run) {
      Progress << "\n";
      if (Result.Runs.empty())
        return llvm::createStringError(std::errc::invalid_argument, "%s",
                                       Timing->Problem.c_str());
      // Keep what was measured. Its data lasts too few iterations at this
      // size, or the program fails at it (a last batch smaller than the
      // size that it cannot shape, a batch larger than its data): back off
      // as from an out-of-memory run, without calling it one.
      std::string Problem = Timing->Problem;
      if (!Timing->EndedBeforeMeasuring) {
        Result.FirstFailure = Result.FirstFailure
                                  ? std::min(Result.FirstFailure, BatchSize)
                                  : BatchSize;
        Problem = failedSizeProblem(Problem, BatchSize);
      }
      Result.Problems.push_back(std::move(Problem));
      if (!BackOff(Index))
        break;
      continue;
    }
    if (std::optional<std::string> Past = pastTheDataset(*Timing->Run, Sizes)) {
      // Its batches were smaller than asked: back off as from an
      // out-of-memory run, and keep none of its figures.
      Progress << ", " << describeIterations(*Timing->Run)
               << ", each a whole epoch\n";
      Result.Problems.push_back(*Past);
      Result.LargerThanTheData =
          Result.LargerThanTheData
              ? std::min(Result.LargerThanTheData, BatchSize)
              : BatchSize;
      if (!BackOff(Index))
        break;
      continue;
    }
    SizeRuns Size;
    Size.BatchSize = BatchSize;
    Size.Timing.push_back(std::move(*Timing->Run));
    Size.WallSeconds = Size.first().WallSeconds;
    const MeasuredRun &Run = Size.first();
    Progress << ", " << describeIterations(Run);
    if (!Run.Stopped.empty())
      Progress << " (" << Run.Stopped << ")";
    if (Run.EndedEarly)
      Result.Problems.push_back(describeEndedEarly(Run, RunKind::Timing));

    // An out-of-memory timing run is that size's answer.
    bool Failed = false;
    bool OutOfMemory = Run.OutOfMemory;
    if (WithBreakdown && !Run.OutOfMemory) {
      if (Index > 0 && BudgetSpent()) {
        NoteBudget("no breakdown run at batch size " +
                   std::to_string(BatchSize));
      } else {
        auto Breakdown = runOnce(Executable, BatchSize, RunKind::Breakdown, 0,
                                 Options, RunsDir);
        if (!Breakdown)
          return Breakdown.takeError();
        Progress << llvm::format("; breakdown %.1f s", Breakdown->Seconds);
        Size.WallSeconds += Breakdown->Seconds;
        if (!Breakdown->Run) {
          // The timing run's figures stand; the sweep stops as after any
          // failed run.
          Result.Problems.push_back(Breakdown->Problem);
          Failed = true;
        } else {
          if (Breakdown->Run->EndedEarly)
            Result.Problems.push_back(
                describeEndedEarly(*Breakdown->Run, RunKind::Breakdown));
          OutOfMemory = OutOfMemory || Breakdown->Run->OutOfMemory;
          Size.Breakdown = std::move(*Breakdown->Run);
        }
      }
    }
    Progress << "\n";

    if (Run.BatchSize != BatchSize)
      Result.Problems.push_back("the run asked for batch size " +
                                std::to_string(BatchSize) + " used " +
                                std::to_string(Run.BatchSize));
    if (Result.Runs.empty())
      describeDevice(Run, Result);
    Size.Repeatable = !OutOfMemory && Run.Iterations > 0;
    Result.Runs.push_back(merged(Size));
    Sizes.push_back(std::move(Size));
    if (Failed)
      break;
    if (OutOfMemory)
      FirstTooLarge =
          FirstTooLarge ? std::min(*FirstTooLarge, BatchSize) : BatchSize;
    else
      LastFit = std::max(LastFit, BatchSize);
    if (!LastFit) // even the declared size does not fit
      break;
    BatchSize = NextSize(Index);
    if (!BatchSize)
      break; // converged
  }
  repeatTimingRuns(Executable, Options, TimingRuns, RunsDir, Sizes, Result,
                   Progress, Spent, BudgetSpent, NoteBudget);
  // With the thresholds pinned, how the program runs as the user runs it:
  // one more timing run at the declared size with glibc's own
  // (skyline-malloc-thresholds compares the two).
  if (Result.MallocThresholdsUsed == "pinned" && Result.DeviceType == "cpu" &&
      !Sizes.empty() && Sizes.front().Repeatable &&
      Sizes.front().BatchSize == DeclaredBatchSize) {
    if (BudgetSpent()) {
      if (!Result.TimeBudgetSpent) // else the user knows already
        NoteBudget("no run with glibc's dynamic malloc thresholds");
      return Result;
    }
    MeasureOptions Dynamic = Options;
    Dynamic.Malloc = MallocThresholds::Dynamic;
    Progress << "skyline-check: timing run with glibc's dynamic malloc "
                "thresholds at batch size "
             << DeclaredBatchSize << "...";
    Progress.flush();
    auto Run =
        runOnce(Executable, DeclaredBatchSize, RunKind::Timing,
                timingRunSeconds(Options.TimeBudgetSeconds, Spent(), 1, false),
                Dynamic, RunsDir, 1, "dynamic-malloc");
    if (!Run)
      return Run.takeError();
    Progress << llvm::format(" %.1f s\n", Run->Seconds);
    if (!Run->Run || Run->Run->OutOfMemory || Run->Run->Iterations == 0)
      Result.Problems.push_back(
          Run->Run ? "the run with glibc's dynamic malloc thresholds at batch "
                     "size " +
                         std::to_string(DeclaredBatchSize) +
                         " measured nothing; see its log " + Run->Run->Log
                   : Run->Problem);
    else
      Result.Runs.front().DynamicMallocMs = Run->Run->IterationMs.Median;
  }
  return Result;
}

} // namespace skyline
