//===- Measure.h - Training bursts at several batch sizes -------*- C++ -*-===//
//
// The fourth stage: runs the instrumented program at the declared batch size
// first, then at larger ones toward the memory capacity (its double, then
// steps that reach the predicted largest size with the last run, and one
// step back between the last size that fit and the first that did not),
// each run a short burst that the runtime ends after its measured
// iterations.
//
// Each batch size gets a timing run (iteration boundaries and the memory
// tracker only) that measures until the median is stable, and a short
// breakdown run (every hook) for the time split, the memory kinds and the
// layers. The timing runs are then repeated, interleaved over the sizes, and
// the fastest one kept: between two runs of one program the time moves more
// than within one, and other work on the machine only ever slows a run, in
// spells that outlast a run. A time budget bounds the whole sweep.
//
// Runs pin glibc's malloc thresholds (see mallocSetting): left
// dynamic, whether a buffer goes back to the system and is faulted in again
// every iteration depends on the sizes freed before it, which makes a size's
// time jump by a quarter against its neighbours' on the CPU.
//
// Here: the options, the pure planning functions and measure(); the sweep
// that follows the plan, and the launcher its runs go through, are in
// Sweep.h.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_MEASURE_H
#define SKYLINE_MEASURE_H

#include "skyline/Measurement.h"
#include "skyline/OtherWork.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace skyline {

enum class DeviceChoice { Auto, CPU, CUDA };

/// Where the runs go (--launcher): processes here, or Slurm (SlurmLauncher.h).
enum class LauncherChoice { Local, Slurm };

/// Which batch sizes get a breakdown run besides their timing run.
enum class BreakdownRuns { All, Declared, None };

/// What the runs do with glibc's malloc thresholds (--malloc-thresholds).
enum class MallocThresholds {
  Pinned, // fixed for every run, unless the user's environment sets them
  Dynamic // glibc's own: they move with the sizes the program frees
};

/// A size's fastest timing run is kept once another run's median is within
/// this share of it; until then the size gets more timing runs (at most
/// 2 x --timing-runs).
inline constexpr double FastestAgreement = 0.05;

/// A trial an experiment asks the sweep for: one timing run at the
/// declared batch size with the variables Env added (Experiments.h).
struct TrialRequest {
  std::string Experiment;
  std::string Setting;
  int64_t Value = 0;
  std::vector<std::string> Env; // NAME=value
  /// The intra-op threads the trial sets along with its own setting (so a
  /// loader's worker has a CPU); 0: the program's.
  int64_t IntraOpThreads = 0;
  /// Why the trial cannot run here (a GPU experiment on a CPU run): it is
  /// listed with this reason, and nothing runs. Empty: it runs.
  std::string NotTried;
  /// The trial's run measures its own baseline, pass by pass (the
  /// evaluation loops without and with a guard, TrialRun::paired), rather
  /// than training iterations.
  bool Paired = false;
};

struct MeasureOptions {
  int64_t MemoryBudget = int64_t(4) << 30; // bytes the program may hold (CPU)
  unsigned MaxRuns = 6;                    // batch sizes to try, in all
  /// The sweep aims at the capacity less this (--memory-margin).
  double MemoryMargin = 0.10;
  /// The model's options the suggestion turns on (--round-to,
  /// --throughput-slack, --min-gain): the sweep measures where the report's
  /// model will decide, and settles that decision (Sweep.h).
  int64_t RoundTo = 8;
  double ThroughputSlack = 0.05;
  double MinGain = 0.05;
  unsigned Warmup = 2;
  /// Timing runs per batch size, at least 1: the fastest is kept, and with
  /// 2 or more, a size gets more until another confirms it
  /// (FastestAgreement).
  unsigned TimingRuns = 3;
  unsigned Iterations = 50;   // the most a timing run measures
  unsigned MinIterations = 5; // the fewest (at most Iterations)
  /// A timing run stops once the median's relative standard error is at
  /// most this; 0: it measures Iterations.
  double Tolerance = 0.02;
  /// All runs together; a run gets a share of what is left, and no batch
  /// size is added once it is spent. 0: no budget.
  double TimeBudgetSeconds = 120;
  /// Where other work keeps the CPUs as the sweep starts, wait up to this
  /// long for it to end (--wait-for-quiet); 0: start at once.
  double QuietWaitSeconds = 0;
  BreakdownRuns Breakdown = BreakdownRuns::All;
  unsigned BreakdownIterations = 3; // measured by a breakdown run
  unsigned RunTimeoutSeconds = 300;
  std::string RunDir; // empty: the current directory
  std::vector<std::string> RunArgs;
  DeviceChoice Device = DeviceChoice::Auto;
  MallocThresholds Malloc = MallocThresholds::Pinned;
  std::string WorkDir; // logs and results go here
  /// The training loop shapes tensors by the batch size, so a size that
  /// does not divide the dataset fails at an epoch's end: once a run has
  /// seen the dataset's size, the sweep tries its divisors.
  bool WholeBatchesOnly = false;
  LauncherChoice Launcher = LauncherChoice::Local;
  /// --slurm-args: srun's options, split as a shell would (partition,
  /// --gres=gpu:1, --time, --account).
  std::vector<std::string> SlurmArgs;
  /// The longest a run's job may wait in Slurm's queue (srun --immediate).
  unsigned QueueTimeoutSeconds = 600;
  /// Runs at once where the sweep's plan has independent ones (the repeats
  /// of a pass), through Slurm only: each run a job or step of its own.
  unsigned ParallelRuns = 1;
  /// --experiments: the experiments chosen (selectExperiments,
  /// Experiments.h); none: the default ones.
  std::optional<std::vector<std::string>> Experiments;
  /// The experiments' trials, planned from the sweep's measurement once it
  /// has measured the sizes (none: no experiment runs).
  std::function<std::vector<TrialRequest>(const Measurement &)> PlanTrials;
};

/// glibc's malloc thresholds in the runs' environment.
struct MallocSetting {
  /// pinned (by skyline-check), dynamic (glibc's), or user (the environment
  /// skyline-check ran in sets them, and they are kept).
  std::string Thresholds;
  /// The GLIBC_TUNABLES the runs get; none: this process's, unchanged.
  std::optional<std::string> GlibcTunables;
};

/// The mmap threshold runs pin: glibc's largest, the one its dynamic
/// threshold ends at, so a buffer up to 32 MiB is served from the heap and
/// a larger one is mapped afresh each time at a cost that grows with it.
inline constexpr int64_t PinnedMmapThreshold = int64_t(32) << 20;
/// The trim threshold runs pin: never give the free top of the heap back,
/// so memory freed in one iteration is not faulted in again in the next.
inline constexpr int64_t PinnedTrimThreshold = int64_t(1) << 62;

/// The runs' malloc setting. UserTunables is this process's GLIBC_TUNABLES
/// (none when unset); UserThresholdVariables says MALLOC_MMAP_THRESHOLD_ or
/// MALLOC_TRIM_THRESHOLD_ is set. A threshold the user set wins over either
/// choice. Pinned appends both thresholds to the user's tunables.
MallocSetting mallocSetting(MallocThresholds Choice,
                            std::optional<llvm::StringRef> UserTunables,
                            bool UserThresholdVariables);

/// The divisor of Samples nearest Next (by ratio, within a factor of 4)
/// that is not in Measured, is below Below (when set) and at most Most
/// (when positive); 0 when none is (nothing near is left to try), or Next
/// is 0. Next itself when Samples is not known.
int64_t nearestWholeBatchSize(int64_t Next, int64_t Samples,
                              llvm::ArrayRef<int64_t> Measured,
                              std::optional<int64_t> Below, int64_t Most = 0);

/// "512MiB", "8GiB", "1.5GB", "1000000" to bytes.
std::optional<int64_t> parseByteSize(llvm::StringRef Text);

/// A batch size of the sweep that ran without running out of memory.
struct SweepPoint {
  int64_t BatchSize = 0;
  int64_t PeakBytes = 0;
  double IterationMs = 0; // its timing run's median
};

/// What the sweep knows when it picks the next batch size.
struct SweepState {
  std::vector<SweepPoint> Fitted;
  /// The smallest size that ran out of memory, or whose program returned
  /// before its first measured iteration (its data lasts fewer at that size).
  std::optional<int64_t> FirstOutOfMemory;
  /// The capacity less the margin the model keeps free; 0: unknown.
  int64_t TargetBytes = 0;
  unsigned RunsLeft = 1; // batch sizes still to try, the next one included
  /// Of those, kept for where the time bends once the capacity is reached.
  unsigned RunsForBends = 0;
  /// What one batch size may take: seconds, and the iterations its runs
  /// make at the least (warm-ups included); 0: no time limit.
  double SecondsPerSize = 0;
  unsigned IterationsPerSize = 0;
  /// At the capacity, a size is added where the slope of the time line
  /// changes by more than this at a measured size (or, where none does, in
  /// a segment spanning more than UnmeasuredSpanLimit).
  double MinTimeChange = 0.10;
  /// The largest size whose data still lasts the runs' warm-up and two
  /// measured iterations (dataLimit); 0: none known.
  int64_t DataLimit = 0;
  /// The size the model would suggest from the sizes measured so far
  /// (Analysis::ChosenBatchSize); 0: none. At the capacity the sweep
  /// measures it when no measured size is within DecisionNearness of it:
  /// there the suggestion rests on interpolation alone.
  int64_t DecisionBatchSize = 0;
  /// Past this size a run is a probe, far past the decision (Sweep.h's
  /// ProbePastTheDecision); 0: none is.
  int64_t ProbesPast = 0;
};

/// At the capacity, where no bend gives a size, a segment spanning more
/// than this ratio still gets a size at its geometric middle: its ends say
/// nothing of where between them the throughput peaks.
inline constexpr double UnmeasuredSpanLimit = 8;

/// A size within this ratio of a measured one is measured enough for the
/// decision: the interval there is close to the measured size's.
inline constexpr double DecisionNearness = 1.10;

/// Whether two sizes are within DecisionNearness of each other.
inline bool withinDecisionNearness(int64_t Size, int64_t Other) {
  double Ratio = double(Size) / double(Other);
  return Ratio < DecisionNearness && Ratio > 1 / DecisionNearness;
}

/// How far a size's first timing run got: the loop body starts it reached
/// (warm-up included), and whether its program returned first.
struct RunLength {
  int64_t BatchSize = 0;
  unsigned IterationsReached = 0;
  bool EndedEarly = false;
};

/// The largest batch size the sweep may try once a program ran out of data:
/// no more than a size whose data ran out, nor than where it still reaches
/// Warmup + 3 iterations (two measured intervals), the samples it went
/// through at an ended-early size (reached x size) shared out. Only a
/// size that reached fewer iterations than a smaller one did says the data
/// ran out; where a larger size that ended early reached as many as a
/// smaller one, the program counts steps, not samples, and there is no
/// limit (0). The smallest limit of the runs; 0 without any.
int64_t dataLimit(llvm::ArrayRef<RunLength> Runs, unsigned Warmup);

/// The next batch size to try; 0 when there is nothing left to try. After
/// an out-of-memory run: halfway back toward the last size that fit. Before
/// two sizes fit, or without a known capacity or a rising memory line:
/// double. Else toward the largest size predicted to fit under TargetBytes
/// (the line through the two largest sizes that fit) in equal ratios over
/// the runs left but RunsForBends, so that the model interpolates up to the
/// capacity; no further than a run's predicted time allows (never less than
/// a doubling). Once the largest size is a probe (past ProbesPast), the
/// next is the capacity's itself, as far as a probe's warm-up and iteration
/// fit SecondsPerSize: the sizes between would be probes too, a peak and a
/// first time each, far from the decision, which the line and the run at
/// the capacity give. At the capacity, the runs left go where the time line
/// bends (a cache the activations outgrow makes a sample dearer): first the
/// size the model would suggest (DecisionBatchSize) where no measured size
/// is near it, so that the decision is measured, not interpolated; then, of
/// the segments next to a measured size where the slope changes by more
/// than MinTimeChange, or where one falls (noise no straight line can be
/// told from) or only one is flat, the one spanning the largest ratio, at
/// its geometric middle (the smaller sizes' of two within 5%); where no
/// bend gives a size, the widest segment spanning more than
/// UnmeasuredSpanLimit, the same way (a size there far past the decision
/// is a probe, as any). Never past DataLimit: at it, or where the time bends
/// once the sweep stands at it.
int64_t nextBatchSize(const SweepState &State);

/// The time limit of the next timing run: what is left of the budget,
/// shared equally among the timing runs still to make, less a quarter for
/// the size's breakdown run. 0 (no limit) without a budget.
double timingRunSeconds(double BudgetSeconds, double SpentSeconds,
                        unsigned RunsLeft, bool WithBreakdown);

/// A timing run's figures with a breakdown run's split, kinds and layers.
/// The breakdown run's times are scaled by the ratio of the two runs' mean
/// iterations, so they still add up to the (timing) iteration.
MeasuredRun mergeRuns(MeasuredRun Timing, const MeasuredRun &Breakdown);

/// Says first whether other work keeps the CPUs, then sweeps Executable's
/// batch sizes from DeclaredBatchSize (a Sweep whose runs are processes,
/// their logs and results under Options.WorkDir/runs). DeclaredBatchSize 0:
/// the program has no batch size literal the runs can set, and runs at its
/// own size only (Measurement::AtOwnBatchSize).
llvm::Expected<Measurement> measure(llvm::StringRef Executable,
                                    int64_t DeclaredBatchSize,
                                    const MeasureOptions &Options,
                                    llvm::raw_ostream &Progress);

} // namespace skyline

#endif // SKYLINE_MEASURE_H
