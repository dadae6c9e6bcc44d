//===- Sweep.h - The batch sizes measure() tries, run by run ----*- C++ -*-===//
//
// measure()'s sweep as an object: the sizes it tries, each size's timing and
// breakdown runs, the timing runs repeated over the sizes and the run with
// glibc's own malloc thresholds. Every run goes through a RunLauncher:
// ProcessLauncher starts the instrumented program, and a unit test gives the
// sweep prepared results instead.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_SWEEP_H
#define SKYLINE_SWEEP_H

#include "skyline/Measure.h"
#include "skyline/Process.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <functional>

namespace skyline {

struct Analysis;
struct MeasuredGain;
struct ModelOptions;

/// One run the sweep asks for.
struct RunRequest {
  int64_t BatchSize = 0;
  RunMode Mode = RunMode::Timing;
  /// A timing run's limit (SKYLINE_TIME_LIMIT); 0: none.
  double TimeLimitSeconds = 0;
  /// A probe's measured iterations, the fewest and the most alike; 0: the
  /// options' (a probe is a timing run far past the decision, for its
  /// memory and a first time: probeIterations). A probe warms up for one
  /// iteration (ProbeWarmup).
  unsigned ProbeIterations = 0;
  /// Above 1: a repeated timing run, with its own log and result file.
  unsigned Pass = 1;
  /// Names a run of another kind the same way ("dynamic-malloc").
  std::string Tag;
  /// glibc's malloc thresholds the run gets.
  MallocThresholds Malloc = MallocThresholds::Pinned;
  /// Variables an experiment's trial adds ("NAME=value").
  std::vector<std::string> Env;
};

/// One run's figures, or why there are none.
struct RunOutcome {
  std::optional<MeasuredRun> Run;
  std::string Problem; // when there is no Run
  double Seconds = 0;
  /// Where the program returned (exit 0) before its first measured
  /// iteration, its result file (how far it got, the dataset it saw): at a
  /// larger batch size its data may last fewer iterations, and what it says
  /// of the data bounds the sizes after it (firstEpochDataLimit).
  std::optional<MeasuredRun> Unmeasured;
};

/// Makes the sweep's runs. A run that fails is an outcome with a Problem;
/// an error ends the sweep.
class RunLauncher {
public:
  virtual ~RunLauncher() = default;
  virtual llvm::Expected<RunOutcome> run(const RunRequest &Request) = 0;
  /// The runs the sweep will ask for next, none of which depends on
  /// another's outcome (a pass of repeats): a launcher that can run several
  /// at once may start them together and answer run() from what they gave.
  /// The sweep may still leave some out (its budget).
  virtual void expect(llvm::ArrayRef<RunRequest> Requests) {}
};

/// Where a run's output goes: RunsDir/batch-8[-breakdown][-runN][-Tag] with
/// .log (the program's output) and .yaml (its result file).
struct RunFiles {
  std::string Log, Result;
};
RunFiles runFiles(llvm::StringRef RunsDir, const RunRequest &Request);

/// The variables the runtime reads ("NAME=value"), with ResultPath as
/// SKYLINE_RESULT; GLIBC_TUNABLES only where the run does not keep this
/// process's.
std::vector<std::string> runEnvironment(const RunRequest &Request,
                                        const MeasureOptions &Options,
                                        llvm::StringRef ResultPath);

/// The malloc setting of this process's environment and Choice.
MallocSetting runsMallocSetting(MallocThresholds Choice);

/// "the run at batch size 8" (a timing run), "the breakdown run at ...".
std::string runName(RunMode Mode, int64_t BatchSize);

/// What the result file of a program that finished (exit 0, or out of
/// memory) means: Run, with its wall time and Log, or, where the program
/// returned before its first measured iteration, why there is none.
RunOutcome finishedRunOutcome(const RunRequest &Request, MeasuredRun Run,
                              const ProcessResult &Process,
                              llvm::StringRef Log);

/// A program that failed or wrote no result: why, with the end of its log.
/// Reached: the iterations its result says it reached, where it wrote one.
RunOutcome failedRunOutcome(const RunRequest &Request,
                            const ProcessResult &Process, const RunFiles &Files,
                            std::optional<unsigned> Reached);

/// What the ended process of a run means: an out-of-memory run where its
/// output says so, a failed run (Problem), or the run its result file holds,
/// which Annotate (where given) sees first. An error where --device=cuda and
/// the run used no GPU. Every launcher reads its runs' ends with it.
llvm::Expected<RunOutcome>
outcomeOfRun(const RunRequest &Request, const ProcessResult &Process,
             const RunFiles &Files, const MeasureOptions &Options,
             llvm::function_ref<void(MeasuredRun &)> Annotate = {});

/// Runs the instrumented program, a process a run, with the environment the
/// runtime reads; logs and result files go to RunsDir.
class ProcessLauncher : public RunLauncher {
public:
  ProcessLauncher(llvm::StringRef Executable, const MeasureOptions &Options,
                  std::string RunsDir);
  llvm::Expected<RunOutcome> run(const RunRequest &Request) override;

private:
  std::string Executable;
  MeasureOptions Options;
  std::string RunsDir;
};

/// What one batch size's runs gave: its timing runs and its breakdown run,
/// merged into a MeasuredRun.
struct SizeRuns {
  int64_t BatchSize = 0;           // asked for
  std::vector<MeasuredRun> Timing; // in the order they ran; never empty
  std::optional<MeasuredRun> Breakdown;
  double WallSeconds = 0;  // every process at this size
  bool Repeatable = false; // its timing run measured and did not run out
  /// Its first timing run was a probe (a few iterations, no breakdown run):
  /// the size lies far past the decision.
  bool Probed = false;

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
  /// A probe's single iterations are kept only until a whole timing run
  /// joins them: the fastest of a few iterations is the luckiest.
  const MeasuredRun &fastest() const {
    return *llvm::min_element(
        wholeRuns(), [](const MeasuredRun &A, const MeasuredRun &B) {
          return A.IterationMs.Median < B.IterationMs.Median;
        });
  }
  /// The timing runs but a probe, where whole runs followed it.
  llvm::ArrayRef<MeasuredRun> wholeRuns() const {
    llvm::ArrayRef<MeasuredRun> Runs = Timing;
    return Probed && Runs.size() > 1 ? Runs.drop_front() : Runs;
  }
};

/// The repeatable size of the best throughput by its fastest run; none
/// before one measured. The first of equals, in the order they ran.
const SizeRuns *bestMeasured(const std::vector<SizeRuns> &Sizes);

/// The sizes a suggestion's gain is measured between, whose timing runs are
/// repeated: the declared size, the measured size of the best throughput,
/// and around Decision (the size the model would suggest; 0: none, and
/// then the best measured size) the largest measured size up to it and the
/// smallest past it (where a slow first run might hide a gain), each only
/// where Repeatable. The other sizes
/// shape the curve and the memory line, and one timing run serves them: a
/// size away from the decision changes the suggestion little, and its
/// repeats were most of a sweep's time (the largest sizes' iterations are
/// the longest). In batch-size order.
std::vector<int64_t> decisionSizes(const std::vector<SizeRuns> &Sizes,
                                   int64_t DeclaredBatchSize, int64_t Decision);

/// What a timing run at BatchSize is predicted to cost before it is
/// launched, in seconds: a process's start (the least any size's first run
/// spent outside its iterations) and its warm-up and fewest measured
/// iterations, at the time a sample took at the nearest measured size. 0
/// before any size measured.
double predictedTimingRunSeconds(const std::vector<SizeRuns> &Sizes,
                                 int64_t BatchSize, unsigned Iterations);

/// A size far past where the decision lies gets a probe instead of a timed
/// burst and a breakdown run: what it adds is its peak memory (exact after
/// one iteration: the same bytes as a longer run's) and a first time for the
/// curve's far end. Far past: more than this times the largest of the
/// declared size, the best measured throughput's size and the size the
/// model would suggest where measured sizes bound it (one past them all is
/// an extrapolation), and no further than a size only probed so far (one
/// iteration is no reason to time the sizes past it in full), but for the
/// run at such a bounded pick itself (within DecisionNearness). Where a
/// probe's time turns out the best, the size is a decision size, and its
/// repeats are whole timing runs.
inline constexpr double ProbePastTheDecision = 4.0;
/// A probe measures as many iterations as this holds at the predicted time
/// an iteration, at least 1 and at most --min-iterations.
inline constexpr double ProbeIterationSeconds = 0.5;
/// A probe's warm-up, at most --warmup: one iteration makes every tensor
/// that lives across iterations (the gradients, the optimizer's state), so
/// the next has the peak; a second would only cost time, the most at the
/// largest sizes (mnist at 15,000: 1.5 s).
inline constexpr unsigned ProbeWarmup = 1;

/// The iterations a probe at BatchSize measures: ProbeIterationSeconds at
/// the time an iteration predicted from the nearest measured size (as
/// predictedTimingRunSeconds), between 1 and MinIterations.
unsigned probeIterations(const std::vector<SizeRuns> &Sizes, int64_t BatchSize,
                         unsigned MinIterations);

/// The largest size whose data gives a measured iteration in the first
/// epoch: the training data over a warm-up, one measured iteration and the
/// loop start that ends it (mnist: 60,000 / 4 = 15,000). Past it a program
/// that ends within its first epoch measures nothing (mnist at 23,828 and
/// 30,000: 7 to 12 s each for nothing), and one that goes on measures an
/// iteration or two an epoch. Until a run (Unmeasured: or one that returned
/// before measuring) sees a second epoch begin, the sweep takes the first
/// kind; 0 once one did, or where no run saw the dataset.
int64_t firstEpochDataLimit(const std::vector<SizeRuns> &Sizes,
                            llvm::ArrayRef<MeasuredRun> Unmeasured,
                            unsigned Warmup);

/// Settling an unsure decision: where the model's pick gains --min-gain but
/// its interval reaches below it (Analysis::Unsure), the pick is measured if
/// it was not (once), then the declared size and the pick get a timing run
/// each a round, in alternating order, for as many rounds as
/// roundsToSettle plans, at most this times --timing-runs. "Measured before
/// suggested": the answer then rests on the sizes themselves, not on the
/// curve between them.
inline constexpr unsigned SettlingRoundsPerTimingRun = 2;
/// The share of --time-budget settling may spend, the pick's runs and the
/// rounds together: a decision that needs more stays unsure. Settling is
/// for decisions a few cheap runs can make; unbounded, it cost mnist's
/// default run 20 to 27 s more (utils/bench-overhead, 2-core machine). While
/// the decision so far is unsure, the sizes and their repeats leave it.
inline constexpr double SettlingBudgetShare = 0.15;

/// The fewest rounds (a timing run at each size), up to MostRounds, after
/// which the gain's interval as the runs' means would give it clears
/// MinGain: ln(1 + MinGain) <= LogRatio - t(Dof + 2R) x RunSigma x
/// sqrt(1 / (FromRuns + R) + 1 / (ToRuns + R)), the means and the spread
/// taken as they are now. None where no number of rounds up to MostRounds
/// would. Planned before the first round and not revised: looking again
/// after every round and stopping at the first look that clears would make
/// a 90% interval clear by chance more often than one time in twenty.
std::optional<unsigned> roundsToSettle(const MeasuredGain &Gain, double MinGain,
                                       unsigned MostRounds);

/// Seconds on steady_clock: the sweep's clock outside tests.
double steadyClockSeconds();

/// The sweep, made once by run(): the declared batch size first, then sizes
/// toward the capacity (nextBatchSize), each a timing run and, where asked,
/// a breakdown run; then the timing runs repeated, interleaved over the
/// sizes the decision rests on (decisionSizes); then an unsure decision
/// settled (SettlingRoundsPerTimingRun); then, with the thresholds pinned,
/// a timing run with glibc's own.
/// What the sweep knows so far is its members, which each step reads and
/// changes; its progress goes to Progress as it runs.
class Sweep {
public:
  /// Seconds on a clock that never goes back: the time budget is counted
  /// on it from run()'s start.
  using Clock = std::function<double()>;

  Sweep(RunLauncher &Launcher, int64_t DeclaredBatchSize,
        const MeasureOptions &Options, llvm::raw_ostream &Progress,
        Clock Now = steadyClockSeconds);

  llvm::Expected<Measurement> run();

private:
  // The sizes, one at a time.
  llvm::Error measureSizes();
  llvm::Expected<bool> measureSize(unsigned Index);
  enum class NewSize { Kept, NotKept, BreakdownFailed };
  llvm::Expected<NewSize> timeNewSize(const RunRequest &Request,
                                      bool WithBreakdown, bool Probe,
                                      unsigned Index);
  bool farPastTheDecision(unsigned Index) const;
  /// Past this size a run is a probe, Decision the model's pick so far.
  int64_t probesPast(int64_t Decision) const;
  int64_t largestMeasured() const;
  /// Whether sizes measured in full lie on both sides of Size.
  bool betweenMeasuredSizes(int64_t Size) const;
  void keepFailedSize(const RunOutcome &Timing);
  void leaveOutPastTheDataset(const MeasuredRun &Timing, std::string Problem);
  llvm::Expected<bool> keepSize(MeasuredRun Timing, bool WithBreakdown,
                                bool Probed, unsigned Index);
  llvm::Expected<bool> addBreakdownRun(SizeRuns &Size, unsigned Index);
  void reportIterations(const MeasuredRun &Run);

  // Where the sweep goes next.
  bool goOnAfter(bool OutOfMemory, unsigned Index);
  bool backOff(unsigned Index);
  void stayBelow(int64_t Size);
  int64_t nextSize(unsigned Index) const;
  int64_t wholeBatchSize(int64_t Next) const;
  ModelOptions modelOptions() const;
  int64_t decisionBatchSize() const;

  // The repeated timing runs.
  void chooseDecisionSizes();
  void repeatTimingRuns();
  /// Why, where set, names a run outside the passes (settling), with
  /// RunsLeft the runs planned from it on; else the pass's plan counts them.
  bool repeatTimingRun(unsigned Pass, size_t Index,
                       std::optional<std::string> Why = std::nullopt,
                       unsigned RunsLeft = 0);
  void noteUnconfirmedSizes();
  void expectPass(unsigned Pass);

  // Settling an unsure decision.
  struct Settling;
  void settleTheDecision();
  void announceSettling(Settling &S);
  bool measureUnsurePick(Settling &S);
  std::optional<unsigned> settlingRounds(const Settling &S, size_t At,
                                         const MeasuredGain &Gain);
  void runSettlingRounds(const Settling &S, size_t At, unsigned Rounds);
  bool canMeasurePick(int64_t Size,
                      llvm::function_ref<bool(double)> BeyondShare) const;
  bool withinTheSweepsRules(int64_t Size) const;
  double predictedPickSeconds(int64_t Size) const;
  bool settlingCouldUseItsShare(const Analysis &A) const;
  bool measurePick(int64_t Size, const std::string &Why);
  std::optional<size_t> indexOf(int64_t Size) const;
  void keepRepeat(SizeRuns &Size, MeasuredRun Run, const std::string &Name);
  bool takesPart(const SizeRuns &Size, unsigned Pass) const;
  unsigned repeatsLeft(unsigned Pass, size_t From) const;

  llvm::Error timeWithDynamicMalloc();
  llvm::Error runTrials();
  void warnOfOtherWork();

  RunRequest request(int64_t Size, RunMode Mode) const;
  /// Launcher.run, its process's seconds counted in Result.RunSeconds.
  llvm::Expected<RunOutcome> launch(const RunRequest &Request);
  double spent() const;
  double keptForSettling() const;
  /// --time-budget less keptForSettling(): what the step running now may
  /// spend.
  double budget() const;
  bool budgetSpent() const;
  bool overrunsBudget(double PredictedSeconds) const;
  /// Says the budget ended something: spent, or (Predicted) too little of
  /// it left for a run predicted to take longer; with what was kept for
  /// settling then (KeptThen; else now).
  void noteBudget(const std::string &What, bool Predicted = false,
                  std::optional<double> KeptThen = std::nullopt);

  RunLauncher &Launcher;
  const int64_t DeclaredBatchSize;
  const MeasureOptions Options;
  llvm::raw_ostream &Progress;
  Clock Now;
  double Start = 0; // Now() when run() began
  /// Whether the step running now leaves settleTheDecision its share of the
  /// budget (keptForSettling): the sizes and their repeats do.
  bool KeepForSettling = false;
  /// What settlingCouldUseItsShare said, and of which runs (their sizes'
  /// medians and what bounds the sweep).
  mutable std::optional<std::pair<std::vector<double>, bool>> SettlingCache;
  const unsigned TimingRuns;    // --timing-runs, at least 1
  const unsigned MostPasses;    // the most timing runs a size gets
  const unsigned MinIterations; // --min-iterations, at most --iterations

  Measurement Result;
  std::vector<SizeRuns> Sizes; // in the order of Result.Runs
  int64_t BatchSize;           // the size to measure next
  int64_t LastFit = 0;         // the largest size that fit
  /// The smallest size that ran out of memory, or whose program returned
  /// before a measured iteration: the sweep stays below it.
  std::optional<int64_t> FirstTooLarge;
  /// The sizes whose timing runs are repeated (chooseDecisionSizes).
  std::vector<int64_t> DecisionSizes;
  /// The timing runs whose program returned before a measured iteration.
  std::vector<MeasuredRun> Unmeasured;
};

} // namespace skyline

#endif // SKYLINE_SWEEP_H
