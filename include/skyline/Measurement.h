//===- Measurement.h - What the runs measured -------------------*- C++ -*-===//
//
// The measured runs as every stage after Measure sees them: Model fits them,
// the rules read them, the reports write them and read them back, the gate
// compares two of them. Measure fills them from the result files the
// runtime writes (RunResultFile.h); the names of the phases, memory kinds,
// stop reasons and devices are the runtime's (runtime/RunFormat.h), so a
// name is written and read from one table.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_MEASUREMENT_H
#define SKYLINE_MEASUREMENT_H

#include "skyline/runtime/RunFormat.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace skyline {

using rt::allOf;
using rt::DeviceType;
using rt::fromName;
using rt::GpuTimeSource;
using rt::MemoryKind;
using rt::nameOf;
using rt::Phase;
using rt::RunMode;
using rt::StopReason;
using rt::TimePart;

/// One module call site the runtime attributes time and memory to: the
/// scope table the instrumented copy is built with.
struct ScopeEntry {
  int Id = 0;
  std::string Module;
  std::string File;
  unsigned Line = 0;
};

/// One statement before the training loop the runtime attributes the
/// allocations it made to: the table the instrumented copy is built with.
struct SetupEntry {
  int Id = 0;
  std::string File;
  unsigned Line = 0;
  std::string Text; // the statement, on one line, cut at 60 characters
};

/// One host sync in a training loop's body (ProgramModel's HostSyncSite)
/// the instrumented copy times: the table it is built with.
struct HostSyncEntry {
  int Id = 0;
  std::string File;
  unsigned Line = 0;
  std::string Kind; // item, cpu, to-cpu, print
  std::string Text; // the expression, on one line, cut at 60 characters
};

/// What one statement before the loop made and the peak still held, its
/// weights left out (they are the weights kind). Measure fills Statement
/// and Bytes; the driver the rest from the table.
struct SetupMeasure {
  int Statement = -1; // SetupEntry::Id
  std::string File, Text;
  unsigned Line = 0;
  int64_t Bytes = 0;
};

/// One host sync's time in a run: Measure fills Sync (HostSyncEntry::Id),
/// its calls and ms per measured iteration; the driver the rest from the
/// instrumented copy's table.
struct HostSyncMeasure {
  int Sync = -1;
  std::string File, Kind, Text;
  unsigned Line = 0;
  double Calls = 0;
  double Ms = 0;
};

struct TimeSummary {
  double Median = 0, Mean = 0, Stddev = 0, Min = 0, Max = 0;
};

/// One module call site's share of an iteration. Measure fills the numbers
/// by scope id; the driver names the row from the scope table and the model.
struct LayerMeasure {
  int Scope = -1; // ScopeEntry::Id; -1 is the (unscoped) row
  std::string Name, Type, File;
  unsigned Line = 0;
  double ForwardMs = 0;        // self time per iteration
  double BackwardMs = 0;       // its backward ops, by sequence number
  double GpuMs = -1;           // kernel time on CUDA; -1: not measured
  int64_t ActivationBytes = 0; // allocated in its forward, live at the peak
  int64_t WeightBytes = 0;     // parameters and buffers of the module it calls
};

/// The breakdown run behind a MeasuredRun's split, kinds and layers.
struct BreakdownRun {
  unsigned Iterations = 0;
  double IterationMs = 0; // its mean, the hooks' cost included
  double WallSeconds = 0;
  bool EndedEarly = false;
};

/// The node a scheduler ran a run on (--launcher=slurm), as the launcher's
/// wrapper found it there before the program started.
struct RunNode {
  std::string Name;           // the node's name (SLURMD_NODENAME)
  std::string JobStep;        // "12" (a job of its own) or "12.3" (a step)
  std::string CpuModel;       // empty: not found
  unsigned Cores = 0;         // the node's online CPUs
  unsigned CpusAllocated = 0; // of those, the job's (SLURM_CPUS_ON_NODE)
  std::string GpuModel;       // empty: no GPU there
  /// Where Slurm's memory limit killed the run: the limit; 0: none did.
  int64_t MemoryLimitBytes = 0;
};

struct MeasuredRun {
  int64_t BatchSize = 0;
  /// The batch the run's iterations showed: the first dimension of what the
  /// first outermost module call of each returned (runtime/Runtime.h's
  /// observe_batch), and that call's scope; 0 and -1: none seen. Where the
  /// program has no batch size literal the runs can change, BatchSize is
  /// this.
  int64_t ObservedBatchSize = 0;
  int ObservedScope = -1;
  bool OutOfMemory = false;
  /// Out of memory before the training loop's first iteration began (a
  /// result's iterations_reached 0): what runs before the loop took it.
  bool OutOfMemoryBeforeLoop = false;
  /// A training loop's start was marked (the result's loop_began).
  bool LoopBegan = false;
  /// Iterations, IterationMs and Throughput are the fastest timing run's
  /// (the only run in an older result).
  unsigned Iterations = 0;
  TimeSummary IterationMs;
  double Throughput = 0;
  /// Every timing run's median in the order they ran, the kept one among
  /// them; empty in an older result.
  std::vector<double> TimingRunMedians;
  /// The size's first timing run was a probe (Sweep.h): a few iterations
  /// and no breakdown run, at a size far past the decision.
  bool Probed = false;
  /// The program returned before the run stopped it; its figures come from
  /// the iterations it measured.
  bool EndedEarly = false;
  unsigned IterationsAsked = 0; // the most the run was to measure
  /// Why it stopped; none in an older result.
  std::optional<StopReason> Stopped;
  /// From the result file, for messages: warm-up, the fewest iterations to
  /// measure, and the loop body starts the program reached.
  unsigned Warmup = 0, MinIterations = 0, IterationsReached = 0;
  /// Measured iterations that spanned an epoch's end (a start of the
  /// training loop fell inside them), left out of IterationMs.
  unsigned EpochEndIterations = 0;
  /// Every measured iteration spanned a start of the training loop: each
  /// epoch was one batch, or the loop is entered once an iteration.
  bool EveryIterationAnEpoch = false;
  /// Iterations of the program's first epoch, where the run saw the
  /// second begin; 0 where it did not.
  unsigned EpochIterations = 0;
  /// The training loader's dataset size, where the run saw it (the
  /// instrumented loader's dataset argument); 0 where it did not.
  int64_t DatasetSamples = 0;
  /// The greatest common divisor of it and the datasets of the other
  /// loaders given the same batch size (an evaluation loader); 0: unknown.
  int64_t DatasetsGcd = 0;
  /// What a whole batch must divide: DatasetsGcd, else DatasetSamples.
  int64_t wholeBatchDivisor() const {
    return DatasetsGcd > 0 ? DatasetsGcd : DatasetSamples;
  }
  /// What the result file came from.
  RunMode Mode = RunMode::Breakdown;
  /// Where PeakBytesByPhase, Memory, TimeSplitMs and Layers come from; none
  /// when this size had no breakdown run.
  std::optional<BreakdownRun> Breakdown;
  int64_t PeakBytes = 0;
  std::vector<std::pair<Phase, int64_t>> PeakBytesByPhase;
  /// The peak by kind, in MemoryKind's order.
  std::vector<std::pair<MemoryKind, int64_t>> Memory;
  /// ms per iteration in each part, in TimePart's order.
  std::vector<std::pair<TimePart, double>> TimeSplitMs;
  std::vector<LayerMeasure> Layers;
  /// The setup kind by statement, most bytes first: they add up to it.
  std::vector<SetupMeasure> SetupStatements;
  /// The training loops' host syncs the measured iterations reached, by id;
  /// a timing run's, else its breakdown run's.
  std::vector<HostSyncMeasure> HostSyncs;
  double WallSeconds = 0;
  /// The cores other work kept busy, on average, while the (kept timing)
  /// run ran (OtherWork.h); -1 where it was not measured.
  double OtherWorkCores = -1;
  /// Of those, the cores the hypervisor took (steal); -1: not measured.
  double StealCores = -1;
  std::string Log;
  /// Where the run ran, as the runtime saw it; none, empty or 0 when not
  /// written.
  std::optional<DeviceType> Device;
  std::string DeviceName; // the CPU's model name, or the GPU's
  /// What the run saw of CUDA; none in an older result.
  std::optional<rt::CudaUse> Cuda;
  std::string TorchVersion; // the LibTorch the program was built with
  int Threads = 0;          // intra-op threads
  /// cuDNN's benchmark mode as the program set it (the result's).
  bool CudnnBenchmark = false;
  /// CUDA autocast as the program set it (the result's).
  bool Autocast = false;
  /// The program's 4-d weights all channels-last, as it made them (the
  /// result's; a breakdown run reads them).
  bool ChannelsLast = false;
  /// Why a trial's setting changed nothing in this run (the result's);
  /// empty where it applied.
  std::string TrialNotApplied;
  /// On CUDA: the device memory the program could hold (free plus the
  /// caching allocator's own); 0 on the CPU.
  int64_t DeviceCapacityBytes = 0;
  /// The median of a timing run with glibc's dynamic malloc thresholds,
  /// made at the declared size when the others had them pinned (on the
  /// CPU); 0: none.
  double DynamicMallocMs = 0;
  /// On CUDA: where the layers' GpuMs came from (CUDA events where CUPTI is
  /// unavailable); None when no layer has one.
  GpuTimeSource GpuMsSource = GpuTimeSource::None;
  /// On CUDA: why the GPU figures are missing or low (no CUPTI, dropped
  /// records, kernels no layer could be given); empty when they are whole.
  std::string GpuNote;
  /// Where a scheduler placed the run; none for a local process.
  std::optional<RunNode> Node;
  /// An evaluation trial's passes (the runtime's evaluation key), each
  /// arm's times in the order they ran and the most memory a pass held;
  /// empty in any other run.
  std::vector<double> EvaluationUnguardedMs, EvaluationGuardedMs;
  int64_t EvaluationUnguardedPeakBytes = 0, EvaluationGuardedPeakBytes = 0;
};

/// One trial of an experiment (docs/experiments/): a timing run at the
/// declared batch size that differs from the baseline by one setting.
struct TrialRun {
  std::string Experiment; // threads
  std::string Setting;    // "2 intra-op threads"
  int64_t Value = 0;      // 2
  int64_t BatchSize = 0;
  /// Each of the trial's timing runs' median; the fastest is IterationMs.
  std::vector<double> TimingRunMedians;
  double IterationMs = 0;
  int64_t PeakBytes = 0;
  /// Why the trial measured nothing (it failed to run); empty otherwise.
  std::string Problem;
  /// The intra-op threads it set as well; 0: the program's.
  int64_t IntraOpThreads = 0;
  /// Why it was not run on this machine (TrialRequest::NotTried); empty
  /// where it ran.
  std::string NotTried;
  /// A trial that measures its own baseline in the same run, pass by pass
  /// (the no-grad evaluation experiment: evaluation passes alternately
  /// without and with the guard): each arm's passes in the order they ran.
  /// IterationMs and PeakBytes are then the trial arm's median and most
  /// memory, BaselinePeakBytes the baseline arm's. Empty otherwise.
  std::vector<double> BaselineSamplesMs, TrialSamplesMs;
  int64_t BaselinePeakBytes = 0;
  bool paired() const {
    return !BaselineSamplesMs.empty() && !TrialSamplesMs.empty();
  }
};

struct Measurement {
  /// The runs measured the program at its own batch size, the one they
  /// observed: it has no batch size literal skyline-check can change (none
  /// was found, or the program reads it at run time), so no other size was
  /// tried. ObservedBy names the call the size was read from ("'model'
  /// (train.cpp:11)"); empty where the scope is not known.
  bool AtOwnBatchSize = false;
  std::string ObservedBy;
  DeviceType Device = DeviceType::CPU;
  std::string DeviceName = "CPU";
  std::string TorchVersion; // of the LibTorch the program ran with
  int Threads = 0;          // intra-op threads the runs used
  /// MallocSetting::Thresholds of the runs; empty in an older report.
  std::string MallocThresholdsUsed;
  /// The GLIBC_TUNABLES skyline-check gave the runs; empty when it left the
  /// environment's.
  std::string GlibcTunables;
  int64_t MemoryCapacityBytes = 0;
  std::vector<MeasuredRun> Runs;
  /// Runs that failed after the first, runs that ended early, a spent time
  /// budget: each a warning on the terminal.
  std::vector<std::string> Problems;
  double TimeBudgetSeconds = 0; // 0: none
  bool TimeBudgetSpent = false; // batch sizes were left out for it
  /// Every run's process, those that measured nothing (a size that failed
  /// or whose data ended first) and the dynamic-malloc run included; 0 in
  /// an older report (totalRunSeconds then adds the runs' own).
  double RunSeconds = 0;
  /// The smallest size left out because each of its iterations was a whole
  /// epoch: the dataset holds fewer samples than this. 0: none was seen.
  int64_t LargerThanTheData = 0;
  /// The smallest size whose timing run failed (crashed, exited non-zero,
  /// timed out) once a smaller size had measured: the sweep stayed below
  /// it, and no size from it on is suggested, since a size between two
  /// that ran can fail like it (a last batch the program cannot shape).
  /// 0: none failed.
  int64_t FirstFailure = 0;
  /// The experiments' trials, in the order they ran (--experiments).
  std::vector<TrialRun> Trials;
};

/// The seconds M's runs took: RunSeconds, or in an older report the kept
/// runs' own.
inline double totalRunSeconds(const Measurement &M) {
  if (M.RunSeconds > 0)
    return M.RunSeconds;
  double Seconds = 0;
  for (const MeasuredRun &Run : M.Runs)
    Seconds += Run.WallSeconds;
  return Seconds;
}

/// The median of Values (a paired trial's arm); 0 for none.
inline double medianOf(std::vector<double> Values) {
  std::sort(Values.begin(), Values.end());
  size_t N = Values.size();
  if (N == 0)
    return 0;
  return N % 2 ? Values[N / 2] : (Values[N / 2 - 1] + Values[N / 2]) / 2;
}

} // namespace skyline

#endif // SKYLINE_MEASUREMENT_H
