//===- RunResult.h - What one measured run produced -------------*- C++ -*-===//
//
// Written by the runtime at the end of a run with a small writer of its own
// (the runtime depends on LibTorch alone), read back by the tool; the keys
// and names are RunFormat.h's.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_RUNRESULT_H
#define SKYLINE_RUNTIME_RUNRESULT_H

#include "skyline/runtime/ExitCodes.h"
#include "skyline/runtime/MemoryTracker.h"
#include "skyline/runtime/RunFormat.h"

#include <array>
#include <string>
#include <vector>

namespace skyline::rt {

struct Summary {
  double Median = 0, Mean = 0, Stddev = 0, Min = 0, Max = 0;
};
Summary summarize(std::vector<double> Values);

/// The most iterations a run measures.
constexpr int MaxMeasuredIterations = 4096;

/// When a run stops measuring: after MaxIterations, or once it has
/// MinIterations and the median is known well enough (Tolerance) or its
/// time is spent (TimeLimitSeconds, counted from the program's start).
struct StoppingRule {
  int MinIterations = 5;
  int MaxIterations = 8;
  /// The most the median's relative standard error may be; 0: measure
  /// MaxIterations.
  double Tolerance = 0;
  double TimeLimitSeconds = 0; // 0: no limit
};

/// The standard error of the median relative to it, 1.2533 s / sqrt(n) /
/// median (normal noise), of N values (at most MaxMeasuredIterations), s
/// the larger of 1.4826 x the median absolute deviation and the
/// interquartile range / 1.349 (each the sd where the noise is normal;
/// iterations held up by other work count no further than their number,
/// and times that alternate still spread); allocates nothing.
double relativeMedianError(const double *Values, int N);

/// Whether a run that has measured the Measured iteration times in
/// IterationMs, ElapsedSeconds after the program started, stops now.
/// Spent, when larger, counts the iterations used up, those left out of
/// the times (an epoch's end) included: MaxIterations bounds it.
StopReason whenToStop(const StoppingRule &Rule, const double *IterationMs,
                      int Measured, double ElapsedSeconds, int Spent = 0);

struct RunResult {
  /// The size the run used: the literal's (SKYLINE_BATCH_SIZE or the
  /// declared one), else, where the program has none the runs can change,
  /// ObservedBatchSize.
  int64_t BatchSize = 0;
  /// The first dimension of what the iterations' first outermost module
  /// call returned (observe_batch), the most frequent one; 0: none seen.
  int64_t ObservedBatchSize = 0;
  int ObservedScope = -1; // the call it was read from

  bool OutOfMemory = false;
  int Iterations = 0;
  RunMode Mode = RunMode::Breakdown;
  StopReason Stopped = StopReason::Count;
  /// The program returned before the run stopped it: its figures come from
  /// the Iterations it measured (complete start-to-start intervals).
  bool EndedEarly = false;
  int Warmup = 0;
  int IterationsAsked = 0;   // the most the run was to measure
  int MinIterations = 0;     // the fewest, unless the program ends first
  int IterationsReached = 0; // loop body starts seen, warm-up included
  bool LoopBegan = false;    // a training loop's start was marked
  /// Measured iterations that spanned a start of the training loop (an
  /// epoch's end: its last batch, often a smaller one, and what the program
  /// does between epochs), left out of IterationMs. 0 when every measured
  /// iteration did: then they are all kept.
  int EpochEndIterations = 0;
  /// Every measured iteration spanned a start of the loop: each epoch is
  /// one batch (a dataset smaller than the batch size), or the loop is
  /// entered once an iteration.
  bool EveryIterationAnEpoch = false;
  /// Iterations of the first epoch, where the run saw the second begin
  /// (0: it did not). With a batch size that divides the dataset, this
  /// times the batch size is the dataset's size.
  int EpochIterations = 0;
  /// The training loader's dataset size (observe_dataset), 0 if unknown.
  int64_t DatasetSamples = 0;
  /// The greatest common divisor of it and the other loaders' datasets
  /// given the same batch size; 0 if the training one is unknown.
  int64_t DatasetsGcd = 0;
  /// False where the memory kinds and the layers' weight bytes are not
  /// known: a timing run, or a program that ended early (its modules and
  /// optimizers are gone by then).
  bool HasMemoryBreakdown = true;
  Summary IterationMs;
  double Throughput = 0; // samples per second
  int64_t PeakBytes = 0;
  PhaseBytes PeakByPhase{};
  /// The peak by kind; the kinds add up to PeakBytes.
  struct Breakdown {
    int64_t Weights = 0, Gradients = 0, OptimizerState = 0, Activations = 0,
            Data = 0, Temporaries = 0, Setup = 0, Untracked = 0, Workspace = 0;
  } Memory;
  /// The setup kind by statement (id, bytes at the peak), most first: the
  /// construction bytes each statement before the loop made, less weights.
  std::vector<std::pair<int, int64_t>> SetupStatements;
  /// Mean ms per measured iteration spent in each phase (construction: 0).
  std::array<double, NumPhases> TimeSplitMs{};
  /// One module-call scope's share of a measured iteration; ScopeId -1 is
  /// what ran or was allocated outside every scope.
  struct Layer {
    int ScopeId = -1;
    /// Self time, ms per iteration.
    double ForwardMs = 0;
    /// Its backward ops' self time and what autograd does after each before
    /// the next, ms per iteration.
    double BackwardMs = 0;
    /// Allocated in its forward, live at the peak.
    int64_t ActivationBytes = 0;
    /// Parameters and buffers of the module it calls (each storage counted
    /// for the innermost called module that holds it).
    int64_t WeightBytes = 0;
    /// GPU time on CUDA, ms per iteration (Gpu.GpuMsSource says whether
    /// CUPTI's kernels or CUDA events); -1: not measured.
    double GpuMs = -1;
  };
  std::vector<Layer> Layers;
  /// One host sync of the training loop (its id in the instrumented copy's
  /// table): its calls and ms per measured iteration.
  struct HostSync {
    int Id = -1;
    double Calls = 0;
    double Ms = 0;
  };
  std::vector<HostSync> HostSyncs;
  /// An evaluation trial's passes (SKYLINE_EVALUATION), in the order they
  /// ran, each arm's own: their times, and the most memory a pass held.
  /// Empty in any other run.
  struct EvaluationPasses {
    std::vector<double> UnguardedMs, GuardedMs;
    int64_t UnguardedPeakBytes = 0, GuardedPeakBytes = 0;
  } Evaluation;
  /// Where the run ran.
  std::string TorchVersion;
  int Threads = 0; // intra-op threads
  /// cuDNN's benchmark mode as the program set it, at its first iteration.
  bool CudnnBenchmark = false;
  /// CUDA autocast as the program set it, at its first iteration.
  bool Autocast = false;
  /// The program's optimizers' 4-d parameters all channels-last, as it made
  /// them (read in breakdown runs and the channels-last trial).
  bool ChannelsLast = false;
  /// Why the trial's setting changed nothing; empty where it applied.
  std::string TrialNotApplied;
  std::string DeviceType = "cpu";
  std::string DeviceName;
  /// What the run saw of CUDA (CudaSupport.cpp).
  CudaUse Cuda = CudaUse::Unknown;
  /// On CUDA runs only (Used): the device's memory and what the caching
  /// allocator and CUPTI saw (CudaSupport.cpp).
  struct GpuInfo {
    bool Used = false;
    bool CuptiLoaded = false;
    int64_t MemoryTotalBytes = 0, MemoryFreeBytes = 0, MemoryCapacityBytes = 0;
    int64_t AllocatorPeakBytes = 0, AllocatorPeakReservedBytes = 0,
            AllocatorReservedBytes = 0;
    int64_t HostPeakBytes = 0; // the CPU allocator's peak
    /// Kernels (CUPTI) or scope intervals (CUDA events) timed, and records
    /// or events dropped.
    uint64_t Kernels = 0, DroppedRecords = 0;
    /// Where gpu_ms came from: "cupti", "cuda_events", or "" (none).
    std::string GpuMsSource;
    /// The device reporter's tagged bytes at their peak; -1: no reporter.
    int64_t TaggedPeakBytes = -1;
    /// What timed the iterations and the phases: "cuda_events" (the
    /// stream's timeline) or "cpu" (the CPU's clock).
    std::string Clock = "cpu";
    std::string Note; // why gpu_ms is missing or low
  } Gpu;
};

/// Splits the peak's phases into kinds, given the bytes of the weights (the
/// modules' parameters and buffers, the optimizers' parameters) and of the
/// optimizers' gradients and state: weights were made in construction,
/// gradients and optimizer state in backward and step; Setup of
/// construction's bytes were made by the statements before the loop beyond
/// their weights; the rest of each phase is what it says.
RunResult::Breakdown breakDown(const PhaseBytes &AtPeak, int64_t Weights,
                               int64_t Gradients, int64_t OptimizerState,
                               int64_t Setup = 0);

/// The iterations of R's measured window: those kept and those spanning an
/// epoch's end. Sums taken over the whole window (the phases' clocks,
/// CUPTI's kernels, the scope events) are divided by this, not by
/// R.Iterations, which leaves the epoch ends out.
inline int windowIterations(const RunResult &R) {
  return R.Iterations + R.EpochEndIterations;
}

/// Moves W into R's workspace kind: its forward bytes out of the
/// activations and the layers' activation bytes (by scope; the (unscoped)
/// row keeps the rest, so the rows still add up to the kind), its backward
/// bytes out of the temporaries. The kinds' sum is unchanged.
void takeOutWorkspace(RunResult &R, const WorkspaceBytes &W);

/// Writes R as YAML to Path (through a temporary file); false on failure.
bool writeRunResult(const RunResult &R, const std::string &Path);

} // namespace skyline::rt

#endif // SKYLINE_RUNTIME_RUNRESULT_H
