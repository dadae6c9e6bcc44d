//===- Sweep.cpp - The batch sizes measure() tries, run by run ------------===//
//
// The Sweep object's steps in the order run() takes them: the sizes one at a
// time, the repeated timing runs, settling an unsure decision, the run with
// glibc's own malloc thresholds. What the sizes measured so far say of the
// runs to come (decisionSizes, probeIterations, roundsToSettle, ...) is
// SweepPlan.cpp's.
//
//===----------------------------------------------------------------------===//

#include "skyline/Sweep.h"

#include "SweepDetail.h"
#include "skyline/Model.h"
#include "skyline/OtherWork.h"
#include "skyline/Units.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace skyline {
namespace {

/// "28 iterations", and those left out at an epoch's end when there are.
std::string describeIterations(const MeasuredRun &Run) {
  std::string Text = std::to_string(Run.Iterations) +
                     (Run.Iterations == 1 ? " iteration" : " iterations");
  if (Run.EpochEndIterations)
    Text += " (" + std::to_string(Run.EpochEndIterations) +
            " more across an epoch's end, left out)";
  return Text;
}

/// A failed run's Problem, with what it means for the sweep and the
/// suggestion put before the program's output.
std::string failedSizeProblem(llvm::StringRef Problem, int64_t BatchSize) {
  std::string Bound = "the sweep stays below " + std::to_string(BatchSize) +
                      " and suggests no size from it on";
  size_t Output = Problem.find("; the end of its output");
  if (Output == llvm::StringRef::npos)
    return (Problem + "; " + Bound).str();
  return (Problem.take_front(Output) + "; " + Bound +
          Problem.drop_front(Output))
      .str();
}

std::string describeEndedEarly(const MeasuredRun &Run, RunMode Mode) {
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

/// The first run says where the program ran; older results say nothing and
/// leave the defaults.
void describeDevice(const MeasuredRun &Run, Measurement &Result) {
  if (Run.Device)
    Result.Device = *Run.Device;
  if (!Run.DeviceName.empty())
    Result.DeviceName = Run.DeviceName;
  Result.TorchVersion = Run.TorchVersion;
  Result.Threads = Run.Threads;
  // On a GPU the capacity is the device's, not the CPU budget.
  if (Run.Device == DeviceType::CUDA && Run.DeviceCapacityBytes > 0)
    Result.MemoryCapacityBytes = Run.DeviceCapacityBytes;
}

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

/// A run out of memory before its training loop's first iteration: what
/// the program does before the loop (its data read, its model built) took
/// the memory, whatever the batch size.
std::string outOfMemoryBeforeTheLoop(const MeasuredRun &Run, bool First) {
  return runName(RunMode::Timing, Run.BatchSize) +
         " ran out of memory before its training loop's first iteration: "
         "what the program does before the loop (reading its data, building "
         "its model) took the memory, not batches of that size" +
         (First ? ", so no batch size can be measured" : "") +
         "; look at what runs before the loop (a reader that does not stop "
         "at a file that did not open?)" +
         (Run.Device == DeviceType::CUDA ? " or use a GPU with more memory"
                                         : " or raise --memory-budget");
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
  Run.Probed = Size.Probed;
  return Run;
}

/// Whether a size's first timing run or its breakdown run ran out of
/// memory: that is the size's answer.
bool ranOutOfMemory(const SizeRuns &Size) {
  return Size.first().OutOfMemory ||
         (Size.Breakdown && Size.Breakdown->OutOfMemory);
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
                       detail::agreementPercent())
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
  std::optional<std::string> Why =
      detail::whyAnotherRun(Size, Passes, MinIterations);
  return "timing run " + std::to_string(Pass) + Where +
         (Why ? " (" + *Why + ")" : "");
}

/// Without a batch size literal to change (DeclaredBatchSize 0: none was
/// found, or the program reads it at run time), the program runs at its
/// own size only: one size, with the repeats and the breakdown run any size
/// gets, and no other is tried.
MeasureOptions sweepOptions(MeasureOptions Options, int64_t DeclaredBatchSize) {
  if (DeclaredBatchSize == 0)
    Options.MaxRuns = 1;
  return Options;
}

} // namespace

double steadyClockSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Sweep::Sweep(RunLauncher &Launcher, int64_t DeclaredBatchSize,
             const MeasureOptions &Options, llvm::raw_ostream &Progress,
             Clock Now)
    : Launcher(Launcher), DeclaredBatchSize(DeclaredBatchSize),
      Options(sweepOptions(Options, DeclaredBatchSize)), Progress(Progress),
      Now(std::move(Now)), TimingRuns(std::max(Options.TimingRuns, 1u)),
      MostPasses(detail::mostTimingRuns(TimingRuns)),
      MinIterations(std::min(Options.MinIterations, Options.Iterations)),
      BatchSize(DeclaredBatchSize) {}

llvm::Expected<Measurement> Sweep::run() {
  Result.MemoryCapacityBytes = Options.MemoryBudget;
  Result.TimeBudgetSeconds = Options.TimeBudgetSeconds;
  Result.AtOwnBatchSize = DeclaredBatchSize == 0;
  MallocSetting Malloc = runsMallocSetting(Options.Malloc);
  Result.MallocThresholdsUsed = Malloc.Thresholds;
  Result.GlibcTunables = Malloc.GlibcTunables.value_or("");
  Start = Now();
  KeepForSettling = TimingRuns >= 2;
  if (llvm::Error E = measureSizes())
    return std::move(E);
  repeatTimingRuns();
  KeepForSettling = false;
  settleTheDecision();
  noteUnconfirmedSizes();
  if (llvm::Error E = timeWithDynamicMalloc())
    return std::move(E);
  if (llvm::Error E = runTrials())
    return std::move(E);
  warnOfOtherWork();
  return std::move(Result);
}

/// Said at once, as the load before the sweep is: the user can measure again
/// on a quieter machine before reading the numbers.
void Sweep::warnOfOtherWork() {
  std::vector<std::pair<int64_t, double>> SizeCores;
  for (const MeasuredRun &Run : Result.Runs)
    if (Run.OtherWorkCores >= 0)
      SizeCores.push_back({Run.BatchSize, Run.OtherWorkCores});
  unsigned Cores = std::max(1u, std::thread::hardware_concurrency());
  if (auto Busy = busyDuringRunsWarning(SizeCores, Cores))
    Progress << "skyline-check: warning: " << *Busy << "\n";
  std::vector<std::pair<int64_t, double>> SizeSteal;
  for (const MeasuredRun &Run : Result.Runs)
    if (Run.StealCores >= 0)
      SizeSteal.push_back({Run.BatchSize, Run.StealCores});
  if (auto Steal = stealDuringRunsWarning(SizeSteal, Cores))
    Progress << "skyline-check: warning: " << *Steal << "\n";
  if (auto Threads = threadsWarning(Result.Threads, usableCpus()))
    Progress << "skyline-check: warning: " << *Threads << "\n";
}

/// The sizes one at a time, until the sweep converges or runs out of runs
/// or time.
llvm::Error Sweep::measureSizes() {
  for (unsigned Index = 0; Index < Options.MaxRuns; ++Index) {
    // Checked before each run but the first size's: the sweep ends at most
    // one run past the budget.
    if (Index > 0 && budgetSpent()) {
      noteBudget("measured " + std::to_string(Index) + " of " +
                 std::to_string(Options.MaxRuns) +
                 " batch sizes; raise it to measure more");
      break;
    }
    // A size whose fewest iterations alone would overrun what is left is
    // not started: the budget is not spent on one size.
    unsigned Iterations =
        farPastTheDecision(Index)
            ? std::min(ProbeWarmup, Options.Warmup) +
                  probeIterations(Sizes, BatchSize, MinIterations)
            : Options.Warmup + MinIterations;
    double Predicted = predictedTimingRunSeconds(Sizes, BatchSize, Iterations);
    if (Index > 0 && overrunsBudget(Predicted)) {
      noteBudget(llvm::formatv("measured {0} of {1} batch sizes; the run at "
                               "{2} was predicted to take {3:f1} s, more than "
                               "the {4:f1} s left",
                               Index, Options.MaxRuns, BatchSize, Predicted,
                               budget() - spent())
                     .str(),
                 /*Predicted=*/true);
      break;
    }
    llvm::Expected<bool> GoOn = measureSize(Index);
    if (!GoOn)
      return GoOn.takeError();
    if (!*GoOn)
      break;
  }
  return llvm::Error::success();
}

/// BatchSize, the Index-th size: its timing run, then what that means for
/// the sweep. False when the sizes end here.
llvm::Expected<bool> Sweep::measureSize(unsigned Index) {
  bool Probe = farPastTheDecision(Index);
  bool WithBreakdown =
      !Probe && (Options.Breakdown == BreakdownRuns::All ||
                 (Options.Breakdown == BreakdownRuns::Declared &&
                  BatchSize == DeclaredBatchSize));
  RunRequest Request = request(BatchSize, RunMode::Timing);
  Progress << "skyline-check: run " << Index + 1 << "/" << Options.MaxRuns;
  if (BatchSize)
    Progress << " at batch size " << BatchSize;
  else
    Progress << " at the program's own batch size";
  if (Probe) {
    Request.ProbeIterations = probeIterations(Sizes, BatchSize, MinIterations);
    Progress << " (far past the decision: a probe of "
             << Request.ProbeIterations << " iteration"
             << (Request.ProbeIterations > 1 ? "s" : "") << ")";
  }
  Progress << "...";
  Progress.flush();
  Request.TimeLimitSeconds = timingRunSeconds(
      budget(), spent(), (Options.MaxRuns - Index) * TimingRuns, WithBreakdown);
  llvm::Expected<NewSize> Outcome =
      timeNewSize(Request, WithBreakdown, Probe, Index);
  if (!Outcome)
    return Outcome.takeError();
  if (*Outcome == NewSize::NotKept)
    return backOff(Index);
  if (*Outcome == NewSize::BreakdownFailed)
    return false;
  return goOnAfter(ranOutOfMemory(Sizes.back()), Index);
}

/// A new size's timing run (Request; its progress line begun), then its
/// breakdown run, and the size kept, or why not: its run failed (said,
/// unless it is the first size's: then the sweep cannot start), or its
/// batches were smaller than asked.
llvm::Expected<Sweep::NewSize> Sweep::timeNewSize(const RunRequest &Request,
                                                  bool WithBreakdown,
                                                  bool Probe, unsigned Index) {
  auto Timing = launch(Request);
  if (!Timing)
    return Timing.takeError();
  Progress << llvm::format(" %.1f s", Timing->Seconds);
  if (!Timing->Run) {
    // Said on its line (the warning after the table says why): the line
    // used to end with the time alone, like a run that measured.
    Progress << (Timing->Unmeasured ? ", nothing measured" : ", failed")
             << "\n";
    if (Result.Runs.empty())
      return llvm::createStringError(std::errc::invalid_argument, "%s",
                                     Timing->Problem.c_str());
    keepFailedSize(*Timing);
    return NewSize::NotKept;
  }
  if (std::optional<std::string> Past = pastTheDataset(*Timing->Run, Sizes)) {
    leaveOutPastTheDataset(*Timing->Run, std::move(*Past));
    return NewSize::NotKept;
  }
  llvm::Expected<bool> Kept =
      keepSize(std::move(*Timing->Run), WithBreakdown, Probe, Index);
  if (!Kept)
    return Kept.takeError();
  return *Kept ? NewSize::Kept : NewSize::BreakdownFailed;
}

/// Whether the Index-th size lies far past the decision
/// (ProbePastTheDecision), so that a probe serves it. The declared size and
/// the next never do: they are where a decision starts.
bool Sweep::farPastTheDecision(unsigned Index) const {
  if (Index < 2 || BatchSize == DeclaredBatchSize)
    return false;
  int64_t Decision = decisionBatchSize();
  if (BatchSize <= probesPast(Decision))
    return false;
  // The run placed at a pick measured sizes bound (atTheCapacity) is the
  // decision's own, past a size only probed or not: timed in full.
  bool AtThePick = Decision > 0 && Decision <= largestMeasured() &&
                   withinDecisionNearness(BatchSize, Decision);
  return !AtThePick;
}

int64_t Sweep::largestMeasured() const {
  int64_t Largest = 0;
  for (const SizeRuns &Size : Sizes)
    if (Size.Repeatable)
      Largest = std::max(Largest, Size.BatchSize);
  return Largest;
}

bool Sweep::betweenMeasuredSizes(int64_t Size) const {
  bool Below = false, Above = false;
  for (const SizeRuns &Measured : Sizes) {
    if (!Measured.Repeatable)
      continue;
    Below |= Measured.BatchSize < Size;
    Above |= Measured.BatchSize > Size;
  }
  return Below && Above;
}

int64_t Sweep::probesPast(int64_t Decision) const {
  int64_t Anchor = DeclaredBatchSize;
  if (const SizeRuns *Best = bestMeasured(Sizes))
    Anchor = std::max(Anchor, Best->BatchSize);
  // A decision past every size measured is a line continued, often from two
  // sizes whose runs differ by their noise: a probe says first whether the
  // throughput goes on rising there (where it does, the probe's size is the
  // best measured, and its repeats are whole runs).
  if (Decision <= largestMeasured())
    Anchor = std::max(Anchor, Decision);
  int64_t Past = int64_t(ProbePastTheDecision * double(Anchor));
  // Nor is one probe's iteration: from a size only probed so far, the
  // sizes above are probes too.
  for (const SizeRuns &Size : Sizes)
    if (Size.Probed && Size.Timing.size() == 1)
      Past = std::min(Past, Size.BatchSize - 1);
  return Past;
}

/// A timing run without figures once a size has measured: what was
/// measured is kept. Its data lasts too few iterations at this size, or the
/// program fails at it (a last batch smaller than the size that it cannot
/// shape, a batch larger than its data): the sweep backs off as from an
/// out-of-memory run, without calling it one.
void Sweep::keepFailedSize(const RunOutcome &Timing) {
  Result.Problems.push_back(Timing.Problem);
  if (Timing.Unmeasured) {
    Unmeasured.push_back(*Timing.Unmeasured);
    return;
  }
  Result.FirstFailure = Result.FirstFailure
                            ? std::min(Result.FirstFailure, BatchSize)
                            : BatchSize;
  Result.Problems.back() = failedSizeProblem(Timing.Problem, BatchSize);
}

/// Its batches were smaller than asked: the sweep backs off as from an
/// out-of-memory run, and keeps none of its figures.
void Sweep::leaveOutPastTheDataset(const MeasuredRun &Timing,
                                   std::string Problem) {
  Progress << ", " << describeIterations(Timing) << ", each a whole epoch\n";
  Result.Problems.push_back(std::move(Problem));
  Result.LargerThanTheData = Result.LargerThanTheData
                                 ? std::min(Result.LargerThanTheData, BatchSize)
                                 : BatchSize;
}

/// A size whose timing run measured: its breakdown run, then the size is
/// kept. False when the sizes end here (its breakdown run failed).
llvm::Expected<bool> Sweep::keepSize(MeasuredRun Timing, bool WithBreakdown,
                                     bool Probed, unsigned Index) {
  // At the program's own size, the size is the one its run observed; the
  // size's other runs ask for it (the program has no literal to set).
  bool OwnSize = BatchSize == 0;
  // A first run that trained at another size than asked: the literal does
  // not decide it (an argument given to the program wins over the default
  // the runs set); the program is measured as it ran, at that size only.
  if (!OwnSize && Result.Runs.empty() && Timing.BatchSize > 0 &&
      Timing.BatchSize != BatchSize) {
    Result.Problems.push_back(
        "the run asked for batch size " + std::to_string(BatchSize) +
        " trained at " + std::to_string(Timing.BatchSize) +
        " (observed): the program does not take its batch size from the "
        "literal the runs set (is it given by an argument, --run-arg, or a "
        "configuration?); it is measured at its own size only");
    OwnSize = true;
  }
  if (OwnSize) {
    BatchSize = Timing.BatchSize;
    Result.AtOwnBatchSize = true;
  }
  // A run that ended before its loop saw a batch has none in its result:
  // it ran at the size asked for.
  if (!OwnSize && Timing.BatchSize == 0)
    Timing.BatchSize = BatchSize;
  if (Timing.OutOfMemoryBeforeLoop)
    Result.Problems.push_back(
        outOfMemoryBeforeTheLoop(Timing, Result.Runs.empty()));
  SizeRuns Size;
  Size.BatchSize = BatchSize;
  Size.Probed = Probed;
  Size.Timing.push_back(std::move(Timing));
  Size.WallSeconds = Size.first().WallSeconds;
  const MeasuredRun &Run = Size.first();
  reportIterations(Run);
  if (OwnSize && Run.BatchSize)
    Progress << ", batch size " << Run.BatchSize << " (observed)";
  if (Run.EndedEarly)
    Result.Problems.push_back(describeEndedEarly(Run, RunMode::Timing));
  // An out-of-memory timing run is that size's answer.
  bool BreakdownFailed = false;
  if (WithBreakdown && !Run.OutOfMemory) {
    llvm::Expected<bool> Measured = addBreakdownRun(Size, Index);
    if (!Measured)
      return Measured.takeError();
    BreakdownFailed = !*Measured;
  }
  Progress << "\n";

  if (Run.BatchSize != BatchSize)
    Result.Problems.push_back("the run asked for batch size " +
                              std::to_string(BatchSize) + " used " +
                              std::to_string(Run.BatchSize));
  if (Result.Runs.empty())
    describeDevice(Run, Result);
  Size.Repeatable = !ranOutOfMemory(Size) && Run.Iterations > 0;
  Result.Runs.push_back(merged(Size));
  Sizes.push_back(std::move(Size));
  // The sweep stops after a failed breakdown run as after any failed run.
  return !BreakdownFailed;
}

/// Size's breakdown run, into Size.Breakdown; none once the budget is
/// spent. False when it failed: the timing run's figures stand.
llvm::Expected<bool> Sweep::addBreakdownRun(SizeRuns &Size, unsigned Index) {
  if (Index > 0 && budgetSpent()) {
    noteBudget("no breakdown run at batch size " +
               std::to_string(Size.BatchSize));
    return true;
  }
  auto Breakdown = launch(request(Size.BatchSize, RunMode::Breakdown));
  if (!Breakdown)
    return Breakdown.takeError();
  Progress << llvm::format("; breakdown %.1f s", Breakdown->Seconds);
  Size.WallSeconds += Breakdown->Seconds;
  if (!Breakdown->Run) {
    Result.Problems.push_back(Breakdown->Problem);
    return false;
  }
  if (Breakdown->Run->EndedEarly)
    Result.Problems.push_back(
        describeEndedEarly(*Breakdown->Run, RunMode::Breakdown));
  Size.Breakdown = std::move(*Breakdown->Run);
  return true;
}

/// ", 28 iterations (stable)": after a timing run's time on its progress
/// line.
void Sweep::reportIterations(const MeasuredRun &Run) {
  Progress << ", " << describeIterations(Run);
  if (Run.Stopped)
    Progress << " (" << nameOf(*Run.Stopped) << ")";
}

/// After a size that was kept: the next size to try; false when there is
/// none.
bool Sweep::goOnAfter(bool OutOfMemory, unsigned Index) {
  if (Result.AtOwnBatchSize) // no other size can be asked for
    return false;
  if (OutOfMemory)
    stayBelow(BatchSize);
  else
    LastFit = std::max(LastFit, BatchSize);
  if (!LastFit) // even the declared size does not fit
    return false;
  BatchSize = nextSize(Index);
  return BatchSize != 0; // 0: converged
}

/// After a size too large for a reason other than memory: the sweep stays
/// below it; false when nothing is left to try.
bool Sweep::backOff(unsigned Index) {
  stayBelow(BatchSize);
  BatchSize = nextSize(Index);
  return BatchSize != 0;
}

void Sweep::stayBelow(int64_t Size) {
  FirstTooLarge = FirstTooLarge ? std::min(*FirstTooLarge, Size) : Size;
}

/// The size after the Index-th: 0 when the sweep has converged.
int64_t Sweep::nextSize(unsigned Index) const {
  SweepState State = detail::sweepState(
      Sizes, Unmeasured, FirstTooLarge, Result.MemoryCapacityBytes, Options,
      Options.MaxRuns - Index - 1, budget() - spent());
  State.DecisionBatchSize = decisionBatchSize();
  State.ProbesPast = Index >= 1 ? probesPast(State.DecisionBatchSize) : 0;
  int64_t Next = nextBatchSize(State);
  if (Options.WholeBatchesOnly)
    Next = wholeBatchSize(Next);
  bool Measured = llvm::any_of(
      Sizes, [&](const SizeRuns &Size) { return Size.BatchSize == Next; });
  if (Next <= 0 || Measured || (FirstTooLarge && Next >= *FirstTooLarge))
    return 0;
  return Next;
}

/// The report's model options, as far as the sweep has them.
ModelOptions Sweep::modelOptions() const {
  ModelOptions Model;
  Model.MemoryMargin = Options.MemoryMargin;
  Model.RoundTo = Options.RoundTo;
  Model.ThroughputSlack = Options.ThroughputSlack;
  Model.MinGain = Options.MinGain;
  Model.WholeBatchesOnly = Options.WholeBatchesOnly;
  return Model;
}

/// The size the model would suggest from the runs so far: where the
/// decision lies. 0: none.
int64_t Sweep::decisionBatchSize() const {
  return analyze(Result, DeclaredBatchSize, modelOptions())
      .ChosenBatchSize.value_or(0);
}

/// The divisor of the dataset nearest Next: a size that does not divide the
/// dataset fails at an epoch's end. Every loader given the size (a test
/// loader) fails on a short batch too, and no batch is larger than its
/// dataset.
int64_t Sweep::wholeBatchSize(int64_t Next) const {
  int64_t Samples = 0, Training = 0;
  std::vector<int64_t> Measured;
  for (const SizeRuns &Size : Sizes) {
    const MeasuredRun &Run = Size.first();
    Samples = std::max(Samples, Run.wholeBatchDivisor());
    Training = std::max(Training, Run.DatasetSamples);
    Measured.push_back(Size.BatchSize);
  }
  int64_t Most = Training > 1 ? std::min(Samples, Training / 2) : Samples;
  return nearestWholeBatchSize(Next, Samples, Measured, FirstTooLarge, Most);
}

/// Passes 2 to TimingRuns over the sizes that measured, interleaved so that
/// a slow spell of the machine touches every size alike, then more passes
/// for the sizes whose runs measured too few iterations together or whose
/// fastest run no other confirms; each size keeps its fastest timing run.
/// Problems are kept, never fatal: the first pass's figures stand.
void Sweep::repeatTimingRuns() {
  chooseDecisionSizes();
  // The sizes whose repeats were left out, and what was kept for settling
  // when the last was: a size may run in a later pass where the decision
  // became sure and the share was freed.
  std::vector<int64_t> TooLong;
  double KeptWhenLeftOut = 0;
  auto NoteTooLong = [&] {
    if (TooLong.empty())
      return;
    std::vector<std::string> Names;
    for (int64_t Size : TooLong)
      Names.push_back(std::to_string(Size));
    noteBudget("the repeated timing runs at batch size" +
                   std::string(Names.size() > 1 ? "s " : " ") +
                   llvm::join(Names, ", ") +
                   " were left out (--timing-runs): each was predicted to "
                   "take longer than what was left",
               /*Predicted=*/true, KeptWhenLeftOut);
  };
  for (unsigned Pass = 2; Pass <= MostPasses; ++Pass) {
    expectPass(Pass);
    for (size_t I = 0; I < Sizes.size(); ++I) {
      if (!takesPart(Sizes[I], Pass))
        continue;
      // Its own runs say what a repeat costs; a smaller size's may still fit.
      if (!budgetSpent() && overrunsBudget(Sizes[I].first().WallSeconds)) {
        if (!llvm::is_contained(TooLong, Sizes[I].BatchSize))
          TooLong.push_back(Sizes[I].BatchSize);
        KeptWhenLeftOut = keptForSettling();
        continue;
      }
      llvm::erase(TooLong, Sizes[I].BatchSize);
      if (!repeatTimingRun(Pass, I)) {
        NoteTooLong();
        return;
      }
    }
  }
  NoteTooLong();
}

/// The pass's repeats do not depend on each other: a launcher that runs
/// several at once (--parallel-runs) may start them together.
void Sweep::expectPass(unsigned Pass) {
  if (Options.ParallelRuns < 2)
    return;
  std::vector<RunRequest> Requests;
  for (size_t I = 0; I < Sizes.size(); ++I)
    if (takesPart(Sizes[I], Pass) &&
        !overrunsBudget(Sizes[I].first().WallSeconds)) {
      Requests.push_back(request(Sizes[I].BatchSize, RunMode::Timing));
      Requests.back().Pass = Pass;
    }
  Launcher.expect(Requests);
}

/// Said once the repeats and the settling are done: a size whose fastest
/// run no other confirmed.
void Sweep::noteUnconfirmedSizes() {
  for (const SizeRuns &Size : Sizes)
    if (Size.Repeatable && TimingRuns >= 2 && Size.Timing.size() >= 2 &&
        !detail::fastestIsConfirmed(Size))
      Result.Problems.push_back(describeUnconfirmed(Size));
}

/// DecisionSizes, from the sizes' first runs; said when it leaves sizes out.
void Sweep::chooseDecisionSizes() {
  DecisionSizes = decisionSizes(Sizes, DeclaredBatchSize, decisionBatchSize());
  if (TimingRuns < 2)
    return;
  std::vector<std::string> Repeated, Once;
  for (const SizeRuns &Size : Sizes)
    if (Size.Repeatable)
      (llvm::is_contained(DecisionSizes, Size.BatchSize) ? Repeated : Once)
          .push_back(std::to_string(Size.BatchSize));
  if (Once.empty() || Repeated.empty())
    return;
  Progress << "skyline-check: repeating the timing runs at batch size"
           << (Repeated.size() > 1 ? "s " : " ") << llvm::join(Repeated, ", ")
           << " (the declared size and those around the decision); one run "
              "serves "
           << llvm::join(Once, ", ") << "\n";
}

/// The Index-th size's timing run of pass Pass. False when the repeats end
/// here: the budget is spent, or the run failed.
bool Sweep::repeatTimingRun(unsigned Pass, size_t Index,
                            std::optional<std::string> Why, unsigned RunsLeft) {
  SizeRuns &Size = Sizes[Index];
  if (!Why)
    RunsLeft = repeatsLeft(Pass, Index);
  if (budgetSpent()) {
    noteBudget(std::to_string(RunsLeft) +
               " repeated timing run(s) left out (--timing-runs)");
    return false;
  }
  std::string Name = Why ? "timing run at batch size " +
                               std::to_string(Size.BatchSize) + " (" + *Why +
                               ")"
                         : repeatName(Pass, TimingRuns, Size, MinIterations);
  Progress << "skyline-check: " << Name << "...";
  Progress.flush();
  RunRequest Request = request(Size.BatchSize, RunMode::Timing);
  Request.TimeLimitSeconds =
      timingRunSeconds(budget(), spent(), RunsLeft, false);
  Request.Pass = Pass;
  auto Repeat = launch(Request);
  if (!Repeat) {
    Progress << "\n";
    Result.Problems.push_back(llvm::toString(Repeat.takeError()));
    return false;
  }
  Progress << llvm::format(" %.1f s", Repeat->Seconds);
  Size.WallSeconds += Repeat->Seconds;
  bool Measured = Repeat->Run.has_value();
  if (Measured) {
    keepRepeat(Size, std::move(*Repeat->Run), Name);
  } else {
    // A program that fails now and then: what was measured stands.
    Progress << "\n";
    Result.Problems.push_back(Repeat->Problem);
  }
  Result.Runs[Index] = merged(Size);
  return Measured;
}

/// A repeated timing run's figures join its size's, unless it ran out of
/// memory or measured nothing.
void Sweep::keepRepeat(SizeRuns &Size, MeasuredRun Run,
                       const std::string &Name) {
  reportIterations(Run);
  Progress << "\n";
  if (Run.OutOfMemory) {
    Result.Problems.push_back(
        Name + " ran out of memory, the first did not: its time is left out");
    Size.Repeatable = false;
  } else if (Run.Iterations == 0) {
    // Its median of nothing would be the fastest.
    Result.Problems.push_back(
        Name + " measured no iteration, the first did: it is left out");
  } else {
    // A probe asks too few iterations to meet the data's end: the first
    // whole run of a probed size is where the user learns of it.
    if (Run.EndedEarly && Size.Probed && Size.Timing.size() == 1)
      Result.Problems.push_back(describeEndedEarly(Run, RunMode::Timing));
    Size.Timing.push_back(std::move(Run));
  }
}

/// Whether a size takes part in pass Pass: every size up to TimingRuns;
/// past it, up to MostPasses, a size whyAnotherRun gives a reason.
bool Sweep::takesPart(const SizeRuns &Size, unsigned Pass) const {
  if (!Size.Repeatable || !llvm::is_contained(DecisionSizes, Size.BatchSize))
    return false;
  if (Pass <= TimingRuns)
    return true;
  return Pass <= MostPasses &&
         detail::whyAnotherRun(Size, TimingRuns, MinIterations).has_value();
}

/// The repeats planned from the Index-th size of pass Pass on: the extra
/// ones only where a size already has its --timing-runs and still a reason
/// (whyAnotherRun).
unsigned Sweep::repeatsLeft(unsigned Pass, size_t From) const {
  unsigned Left = 0;
  for (unsigned P = Pass; P <= MostPasses; ++P)
    for (size_t I = P == Pass ? From : 0; I < Sizes.size(); ++I)
      Left += takesPart(Sizes[I], P) &&
              (P <= TimingRuns || Sizes[I].Timing.size() >= TimingRuns);
  return Left;
}

std::optional<size_t> Sweep::indexOf(int64_t Size) const {
  for (size_t I = 0; I < Sizes.size(); ++I)
    if (Sizes[I].BatchSize == Size)
      return I;
  return std::nullopt;
}

/// Whether the sweep's rules allow measuring the unsure pick: below a size
/// that ran out of memory or failed, within the first epoch's data, and
/// within the budget.
bool Sweep::canMeasurePick(int64_t Size,
                           llvm::function_ref<bool(double)> BeyondShare) const {
  double Predicted = predictedPickSeconds(Size);
  return withinTheSweepsRules(Size) && !overrunsBudget(Predicted) &&
         !BeyondShare(Predicted);
}

/// Below a size that ran out of memory or failed, and within the first
/// epoch's data.
bool Sweep::withinTheSweepsRules(int64_t Size) const {
  int64_t DataLimit =
      detail::sweepState(Sizes, Unmeasured, FirstTooLarge,
                         Result.MemoryCapacityBytes, Options, 1, 0)
          .DataLimit;
  return !(FirstTooLarge && Size >= *FirstTooLarge) &&
         !(DataLimit > 0 && Size > DataLimit);
}

/// The pick's timing run and, as every size of the sweep gets, its
/// breakdown run.
double Sweep::predictedPickSeconds(int64_t Size) const {
  double Predicted =
      predictedTimingRunSeconds(Sizes, Size, Options.Warmup + MinIterations);
  if (Options.Breakdown == BreakdownRuns::All)
    Predicted += predictedTimingRunSeconds(
        Sizes, Size, Options.Warmup + Options.BreakdownIterations);
  return Predicted;
}

/// The unsure pick, measured: a timing run (and a breakdown run, as the
/// sweep's sizes get). False where the run did not measure.
bool Sweep::measurePick(int64_t Size, const std::string &Why) {
  bool WithBreakdown = Options.Breakdown == BreakdownRuns::All;
  BatchSize = Size;
  Progress << "skyline-check: timing run 1 at batch size " << Size << " ("
           << Why << ")...";
  Progress.flush();
  RunRequest Request = request(Size, RunMode::Timing);
  Request.TimeLimitSeconds =
      timingRunSeconds(budget(), spent(), TimingRuns, WithBreakdown);
  llvm::Expected<NewSize> Outcome = timeNewSize(
      Request, WithBreakdown, /*Probe=*/false, unsigned(Sizes.size()));
  if (!Outcome) {
    Progress << "\n";
    Result.Problems.push_back(llvm::toString(Outcome.takeError()));
    return false;
  }
  return *Outcome == NewSize::Kept && Sizes.back().Repeatable;
}

/// "16 is predicted to train 11.1% faster than 8, 90% interval 4.1% to
/// 18.6%, which reaches below the min gain 5.0%".
static std::string describeUnsurePick(const Suggestion &Pick, int64_t Declared,
                                      double MinGain) {
  auto Percent = [](double Fraction) {
    if (std::optional<std::string> Far = formatFarShare(Fraction))
      return *Far;
    return llvm::formatv("{0:f1}%", Fraction * 100).str();
  };
  return llvm::formatv("{0} is predicted to train {1} faster than {2}, 90% "
                       "interval {3} to {4}, which reaches below the min gain "
                       "{5}",
                       Pick.BatchSize, Percent(Pick.Gain), Declared,
                       Percent(Pick.GainRange.Low),
                       Percent(Pick.GainRange.High), Percent(MinGain));
}

/// What settleTheDecision's steps share: the decision being settled, and
/// what the progress has said of it.
struct Sweep::Settling {
  Settling(llvm::function_ref<bool(double)> BeyondShare, Analysis A)
      : BeyondShare(BeyondShare), A(std::move(A)) {}

  /// Whether Seconds more from now would take settling past its share of
  /// the budget.
  llvm::function_ref<bool(double)> BeyondShare;
  Analysis A;
  std::optional<size_t> Declared; // the declared size's place in Sizes
  std::string Unsure;             // the unsure pick, as last described
  bool Announced = false;
  const std::string Why = "settling the decision";
};

/// Where the model's pick is unsure (SettlingRoundsPerTimingRun): the pick
/// measured if it was not, then the rounds roundsToSettle plans, if the
/// budget holds them.
void Sweep::settleTheDecision() {
  if (TimingRuns < 2)
    return;
  // What settling may spend: its share of the budget, from now on.
  const double SettleBy =
      spent() + SettlingBudgetShare * Options.TimeBudgetSeconds;
  auto BeyondShare = [&](double Seconds) {
    return Options.TimeBudgetSeconds > 0 && spent() + Seconds > SettleBy;
  };
  Settling S(BeyondShare, analyze(Result, DeclaredBatchSize, modelOptions()));
  S.Declared = indexOf(DeclaredBatchSize);
  if (!S.A.Unsure || !S.Declared || !Sizes[*S.Declared].Repeatable)
    return;
  S.Unsure =
      describeUnsurePick(*S.A.Unsure, DeclaredBatchSize, Options.MinGain);
  // Between measured sizes the curve's own error widens the interval; at
  // the size itself only the runs' spread does. Past them the pick is their
  // line continued, not a size the sweep reached: measured, it would be a
  // size the sweep's rules (--max-runs, the probes) left out.
  if (!indexOf(S.A.Unsure->BatchSize)) {
    if (!betweenMeasuredSizes(S.A.Unsure->BatchSize)) {
      Progress << "skyline-check: the decision stays unsure: " << S.Unsure
               << "; " << S.A.Unsure->BatchSize
               << " lies past the measured sizes, on their line continued, "
                  "and is not measured to settle it\n";
      return;
    }
    if (!measureUnsurePick(S))
      return;
  }
  std::optional<size_t> At = indexOf(S.A.Unsure->BatchSize);
  std::optional<MeasuredGain> Gain =
      measuredGain(S.A, DeclaredBatchSize, S.A.Unsure->BatchSize);
  if (!At || !Sizes[*At].Repeatable || !Gain)
    return; // the pick moved between the sizes: measured once is enough
  std::optional<unsigned> Rounds = settlingRounds(S, *At, *Gain);
  if (!Rounds)
    return;
  announceSettling(S);
  runSettlingRounds(S, *At, *Rounds);
}

/// Said once, before settling's first run: the decision and what settles
/// it.
void Sweep::announceSettling(Settling &S) {
  if (!S.Announced)
    Progress << "skyline-check: settling the decision: " << S.Unsure
             << "; more timing runs at both\n";
  S.Announced = true;
}

/// The unsure pick, not measured yet, measured where the sweep's rules and
/// settling's share allow, and the decision made again from it. False
/// where settling ends here: the pick was not measured, or measured it is
/// sure (or no longer worth it).
bool Sweep::measureUnsurePick(Settling &S) {
  if (!canMeasurePick(S.A.Unsure->BatchSize, S.BeyondShare))
    return false;
  announceSettling(S);
  if (!measurePick(S.A.Unsure->BatchSize, S.Why))
    return false;
  S.A = analyze(Result, DeclaredBatchSize, modelOptions());
  if (!S.A.Unsure)
    return false; // measured, the pick is sure, or no longer worth it
  S.Declared = indexOf(DeclaredBatchSize);
  // What is said next names the pick as it is now, which may have moved.
  std::string Current =
      describeUnsurePick(*S.A.Unsure, DeclaredBatchSize, Options.MinGain);
  if (Current != S.Unsure) {
    S.Unsure = std::move(Current);
    S.Announced = false;
  }
  return true;
}

/// The rounds that would settle the decision between the declared size and
/// the pick (the At-th size), as roundsToSettle plans them from Gain; none,
/// and why said, where no number of rounds would, or settling's share or
/// the budget would not hold them.
std::optional<unsigned> Sweep::settlingRounds(const Settling &S, size_t At,
                                              const MeasuredGain &Gain) {
  const unsigned MostRounds = SettlingRoundsPerTimingRun * TimingRuns;
  size_t Declared = *S.Declared;
  int64_t Pick = S.A.Unsure->BatchSize;
  std::optional<unsigned> Rounds =
      roundsToSettle(Gain, Options.MinGain, MostRounds);
  if (!Rounds) {
    Progress << "skyline-check: the decision stays unsure: "
             << (S.Announced ? "" : S.Unsure + "; ") << MostRounds
             << " more timing runs at each size would not narrow the "
                "interval past the min gain\n";
    return std::nullopt;
  }
  // The declared size's run with glibc's own thresholds comes after.
  double Round =
      Sizes[Declared].first().WallSeconds + Sizes[At].first().WallSeconds;
  double Needed = *Rounds * Round + Sizes[Declared].first().WallSeconds;
  if (S.BeyondShare(*Rounds * Round)) {
    Progress << llvm::formatv(
        "skyline-check: the decision stays unsure: {0}{1} round{2} of a "
        "timing run at {3} and at {4} would take about {5:f1} s, more than "
        "settling's {6:f0}% of --time-budget\n",
        S.Announced ? "" : S.Unsure + "; ", *Rounds, *Rounds > 1 ? "s" : "",
        DeclaredBatchSize, Pick, *Rounds * Round, SettlingBudgetShare * 100);
    return std::nullopt;
  }
  if (budgetSpent() || overrunsBudget(Needed)) {
    noteBudget(llvm::formatv("settling the decision would take {0} round{4} "
                             "of a timing run at {1} and at {2}, about "
                             "{3:f1} s",
                             *Rounds, DeclaredBatchSize, Pick, *Rounds * Round,
                             *Rounds > 1 ? "s" : "")
                   .str(),
               /*Predicted=*/!budgetSpent());
    return std::nullopt;
  }
  return Rounds;
}

/// Rounds of a timing run at the declared size and at the pick (the At-th
/// size), until the budget or settling's share ends them: what they
/// measured so far decides.
void Sweep::runSettlingRounds(const Settling &S, size_t At, unsigned Rounds) {
  size_t Declared = *S.Declared;
  for (unsigned R = 1; R <= Rounds; ++R) {
    // Alternating which goes first: neither size always follows the other.
    size_t Order[] = {R % 2 ? Declared : At, R % 2 ? At : Declared};
    for (unsigned Run = 0; Run < 2; ++Run) {
      // A run may take longer than its size's first: the budget may end
      // the rounds, and what they measured so far decides.
      unsigned RunsLeft = 2 * (Rounds - R) + 2 - Run;
      if (budgetSpent()) {
        noteBudget(llvm::formatv("settling the decision stopped in round {0} "
                                 "of {1}: {2} timing run{3} left out",
                                 R, Rounds, RunsLeft, RunsLeft > 1 ? "s" : "")
                       .str());
        return;
      }
      if (S.BeyondShare(0)) {
        Progress << llvm::formatv(
            "skyline-check: settling the decision stopped in round {0} of "
            "{1}: its runs took longer than their sizes' first, and "
            "settling's {2:f0}% of --time-budget is spent\n",
            R, Rounds, SettlingBudgetShare * 100);
        return;
      }
      if (!repeatTimingRun(MostPasses + R, Order[Run],
                           S.Why + ", round " + std::to_string(R), RunsLeft))
        return;
    }
  }
}

/// With the thresholds pinned, how the program runs as the user runs it:
/// one more timing run at the declared size with glibc's own
/// (skyline-malloc-thresholds compares the two).
llvm::Error Sweep::timeWithDynamicMalloc() {
  if (Result.MallocThresholdsUsed != "pinned" ||
      Result.Device != DeviceType::CPU || Sizes.empty() ||
      !Sizes.front().Repeatable || Sizes.front().BatchSize != DeclaredBatchSize)
    return llvm::Error::success();
  if (budgetSpent() || overrunsBudget(Sizes.front().first().WallSeconds)) {
    if (!Result.TimeBudgetSpent) // else the user knows already
      noteBudget("no run with glibc's dynamic malloc thresholds",
                 /*Predicted=*/!budgetSpent());
    return llvm::Error::success();
  }
  Progress << "skyline-check: timing run with glibc's dynamic malloc "
              "thresholds at batch size "
           << DeclaredBatchSize << "...";
  Progress.flush();
  RunRequest Request = request(DeclaredBatchSize, RunMode::Timing);
  Request.TimeLimitSeconds = timingRunSeconds(budget(), spent(), 1, false);
  Request.Tag = "dynamic-malloc";
  Request.Malloc = MallocThresholds::Dynamic;
  auto Run = launch(Request);
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
  return llvm::Error::success();
}

namespace {

/// A paired trial's run (an evaluation trial's): each arm's passes, or why
/// it measured too few to compare.
void takePairedTrial(const RunOutcome &Outcome, TrialRun &Done) {
  // A run with no pass of either kind is one that measured nothing.
  const std::optional<MeasuredRun> &Run =
      Outcome.Run ? Outcome.Run : Outcome.Unmeasured;
  if (!Run) {
    Done.Problem = Outcome.Problem;
    return;
  }
  if (Run->OutOfMemory || Run->EvaluationUnguardedMs.size() < 2 ||
      Run->EvaluationGuardedMs.size() < 2) {
    Done.Problem =
        "the trial measured " +
        std::to_string(Run->EvaluationUnguardedMs.size() +
                       Run->EvaluationGuardedMs.size()) +
        " evaluation passes after warm-up" +
        (Run->OutOfMemory ? " and ran out of memory" : "") +
        ", too few to compare (2 of each kind are needed: the program may "
        "evaluate on too few batches, or stop before it evaluates); see its "
        "log " +
        Run->Log;
    return;
  }
  Done.BaselineSamplesMs = Run->EvaluationUnguardedMs;
  Done.TrialSamplesMs = Run->EvaluationGuardedMs;
  Done.IterationMs = medianOf(Done.TrialSamplesMs);
  Done.TimingRunMedians = {Done.IterationMs};
  Done.PeakBytes = Run->EvaluationGuardedPeakBytes;
  Done.BaselinePeakBytes = Run->EvaluationUnguardedPeakBytes;
}

} // namespace

/// The experiments' trials (Experiments.h): one timing run each at the
/// declared size with its setting. A trial that fails is kept with its
/// problem and changes nothing else.
llvm::Error Sweep::runTrials() {
  if (!Options.PlanTrials || Sizes.empty() || !Sizes.front().Repeatable ||
      Sizes.front().BatchSize != DeclaredBatchSize)
    return llvm::Error::success();
  for (const TrialRequest &Trial : Options.PlanTrials(Result)) {
    if (!Trial.NotTried.empty()) {
      TrialRun Listed{Trial.Experiment, Trial.Setting, Trial.Value,
                      DeclaredBatchSize};
      Listed.NotTried = Trial.NotTried;
      Result.Trials.push_back(std::move(Listed));
      continue;
    }
    if (budgetSpent() || overrunsBudget(Sizes.front().first().WallSeconds)) {
      if (!Result.TimeBudgetSpent)
        noteBudget("no trial of experiment " + Trial.Experiment,
                   /*Predicted=*/!budgetSpent());
      return llvm::Error::success();
    }
    Progress << "skyline-check: trial of experiment " << Trial.Experiment
             << " (" << Trial.Setting << ")";
    if (!Trial.Paired) // a paired trial's passes are the program's own
      Progress << " at batch size " << DeclaredBatchSize;
    Progress << "...";
    Progress.flush();
    RunRequest Request = request(DeclaredBatchSize, RunMode::Timing);
    Request.TimeLimitSeconds = timingRunSeconds(budget(), spent(), 1, false);
    Request.Tag = "experiment-" + Trial.Experiment;
    Request.Env = Trial.Env;
    auto Run = launch(Request);
    if (!Run)
      return Run.takeError();
    Progress << llvm::format(" %.1f s\n", Run->Seconds);
    TrialRun Done{Trial.Experiment, Trial.Setting, Trial.Value,
                  DeclaredBatchSize};
    Done.IntraOpThreads = Trial.IntraOpThreads;
    if (Trial.Paired) {
      takePairedTrial(*Run, Done);
    } else if (Run->Run && !Run->Run->OutOfMemory &&
               !Run->Run->TrialNotApplied.empty()) {
      // Its time would be the baseline's again, read as "no clear effect".
      Done.Problem = "its setting applied to nothing (" +
                     Run->Run->TrialNotApplied + "); see its log " +
                     Run->Run->Log;
    } else if (Run->Run && !Run->Run->OutOfMemory && Run->Run->Iterations > 0) {
      Done.IterationMs = Run->Run->IterationMs.Median;
      Done.TimingRunMedians = {Done.IterationMs};
      Done.PeakBytes = Run->Run->PeakBytes;
    } else {
      Done.Problem = Run->Run ? "the trial ran out of memory or measured no "
                                "iteration; see its log " + Run->Run->Log
                              : Run->Problem;
    }
    Result.Trials.push_back(std::move(Done));
  }
  return llvm::Error::success();
}

llvm::Expected<RunOutcome> Sweep::launch(const RunRequest &Request) {
  llvm::Expected<RunOutcome> Outcome = Launcher.run(Request);
  if (Outcome)
    Result.RunSeconds += Outcome->Seconds;
  return Outcome;
}

RunRequest Sweep::request(int64_t Size, RunMode Mode) const {
  RunRequest Request;
  Request.BatchSize = Size;
  Request.Mode = Mode;
  Request.Malloc = Options.Malloc;
  return Request;
}

double Sweep::spent() const { return Now() - Start; }

/// Where the decision so far is unsure, the sizes and their repeats leave
/// settling its share: else a slow program spends the budget first and its
/// decision stays unsure however few runs would settle it. Where it is
/// sure, they may spend it all.
double Sweep::keptForSettling() const {
  if (!KeepForSettling || Options.TimeBudgetSeconds <= 0 || Result.Runs.empty())
    return 0;
  // Asked before every run: the model is fitted again only when a run has
  // changed what it is fitted to.
  std::vector<double> Key = {
      double(Result.Runs.size()), double(Unmeasured.size()),
      double(FirstTooLarge.value_or(0)), double(Result.FirstFailure),
      double(Result.LargerThanTheData)};
  for (const SizeRuns &Size : Sizes) {
    Key.push_back(Size.Repeatable ? -1 : -2);
    for (const MeasuredRun &Run : Size.Timing)
      Key.push_back(Run.IterationMs.Median);
  }
  if (!SettlingCache || SettlingCache->first != Key)
    SettlingCache = {Key, settlingCouldUseItsShare(analyze(
                              Result, DeclaredBatchSize, modelOptions()))};
  return SettlingCache->second ? SettlingBudgetShare * Options.TimeBudgetSeconds
                               : 0;
}

/// Whether settleTheDecision would run on A's decision within its share of
/// the budget, as far as the runs so far say: only then is the share kept.
bool Sweep::settlingCouldUseItsShare(const Analysis &A) const {
  std::optional<size_t> Declared = indexOf(DeclaredBatchSize);
  if (!A.Unsure || !Declared || !Sizes[*Declared].Repeatable)
    return false;
  double Share = SettlingBudgetShare * Options.TimeBudgetSeconds;
  int64_t Pick = A.Unsure->BatchSize;
  std::optional<size_t> At = indexOf(Pick);
  if (!At)
    return withinTheSweepsRules(Pick) && predictedPickSeconds(Pick) <= Share;
  std::optional<MeasuredGain> Gain = measuredGain(A, DeclaredBatchSize, Pick);
  if (!Sizes[*At].Repeatable || !Gain)
    return false;
  std::optional<unsigned> Rounds = roundsToSettle(
      *Gain, Options.MinGain, SettlingRoundsPerTimingRun * TimingRuns);
  return Rounds && *Rounds * (Sizes[*Declared].first().WallSeconds +
                              Sizes[*At].first().WallSeconds) <=
                       Share;
}

double Sweep::budget() const {
  return Options.TimeBudgetSeconds - keptForSettling();
}

bool Sweep::budgetSpent() const {
  return Options.TimeBudgetSeconds > 0 && spent() >= budget();
}

bool Sweep::overrunsBudget(double PredictedSeconds) const {
  return Options.TimeBudgetSeconds > 0 && spent() + PredictedSeconds > budget();
}

void Sweep::noteBudget(const std::string &What, bool Predicted,
                       std::optional<double> KeptThen) {
  Result.TimeBudgetSpent = true;
  std::string Seconds;
  llvm::raw_string_ostream Out(Seconds);
  Out << llvm::format("%g", Options.TimeBudgetSeconds) << " s, --time-budget";
  if (double Kept = KeptThen.value_or(keptForSettling()); Kept > 0)
    Out << llvm::format(", of which the last %g s are kept for settling the "
                        "unsure decision",
                        Kept);
  Result.Problems.push_back("the time budget (" + Seconds + ") " +
                            (Predicted ? "leaves too little: " : "is spent: ") +
                            What);
}

} // namespace skyline
