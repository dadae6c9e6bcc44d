//===- RunFormat.h - What the tool and a measured run say -------*- C++ -*-===//
//
// The contract between skyline-check and the runtime in the measured
// program: the environment a run is started with, and the names the result
// file holds. The runtime writes the file with a small writer of its own
// (it depends on LibTorch alone) and the tool reads it back; both take every
// variable, key and name from here, so the two cannot drift apart. No
// dependencies, like ExitCodes.h.
//
// Each enumeration has one name table, indexed by the enumerator, and a
// static_assert that the table covers the last enumerator.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_RUNFORMAT_H
#define SKYLINE_RUNTIME_RUNFORMAT_H

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace skyline::rt {

/// The environment variables a run reads.
namespace env {
inline constexpr char Result[] = "SKYLINE_RESULT"; // the result file's path
inline constexpr char BatchSize[] = "SKYLINE_BATCH_SIZE";
inline constexpr char Mode[] = "SKYLINE_MODE"; // a RunMode name
inline constexpr char Warmup[] = "SKYLINE_WARMUP";
inline constexpr char Iterations[] = "SKYLINE_ITERATIONS";
inline constexpr char MinIterations[] = "SKYLINE_MIN_ITERATIONS";
inline constexpr char MemoryBudget[] = "SKYLINE_MEMORY_BUDGET";
inline constexpr char Tolerance[] = "SKYLINE_TOLERANCE";
inline constexpr char TimeLimit[] = "SKYLINE_TIME_LIMIT";
/// The threads experiment's trial: intra-op threads set at the first
/// iteration, after the program's own setting.
inline constexpr char IntraOpThreads[] = "SKYLINE_INTRA_OP_THREADS";
/// The loader workers experiment's trial: worker threads of the training
/// loader, set on its options as the program makes it.
inline constexpr char LoaderWorkers[] = "SKYLINE_LOADER_WORKERS";
/// The cuDNN benchmark experiment's trial ("1"): cuDNN's benchmark mode
/// turned on at the first iteration, after the program's own setting.
inline constexpr char CudnnBenchmark[] = "SKYLINE_CUDNN_BENCHMARK";
/// The autocast experiment's trial ("bf16"): CUDA autocast to bfloat16
/// turned on at the first iteration, on the thread that trains.
inline constexpr char Autocast[] = "SKYLINE_AUTOCAST";
/// The channels-last experiment's trial ("1"): the optimizers' 4-d
/// parameters (convolution weights) made channels-last at the first
/// iteration.
inline constexpr char ChannelsLast[] = "SKYLINE_CHANNELS_LAST";
/// The pinned memory experiment's trial ("1"): each copy of a CPU tensor
/// to a CUDA device in the training loop (skyline::rt::to_device) from
/// pinned memory, without blocking.
inline constexpr char PinnedCopies[] = "SKYLINE_PINNED_COPIES";
/// The no-grad evaluation experiment's trial ("1"): the training loops are
/// skipped, and the evaluation loops' passes are timed, alternately without
/// and with the guard.
inline constexpr char Evaluation[] = "SKYLINE_EVALUATION";
/// The user's: "events" times layers with CUDA events instead of CUPTI.
inline constexpr char GpuTimer[] = "SKYLINE_GPU_TIMER";
inline constexpr char CuptiLibrary[] = "SKYLINE_CUPTI_LIBRARY";
} // namespace env

/// A timing run keeps the iteration boundaries and the memory tracker (the
/// peak, and the budget that makes an out-of-memory run); a breakdown run
/// adds what splits the time and memory: RecordFunction callbacks, scope
/// and phase clocks, the weights' walk.
enum class RunMode : uint8_t { Timing, Breakdown };

enum class StopReason : uint8_t {
  Continue,    // keep measuring (never written)
  Count,       // MaxIterations measured
  Stable,      // the median is within the tolerance
  TimeLimit,   // the run's time is spent
  EndedEarly,  // the program returned before the run stopped it
  OutOfMemory, // the run crossed the budget
};

/// What an allocation or a stretch of time belongs to; construction is
/// everything before the first iteration.
enum class Phase : uint8_t { Construction, Data, Forward, Backward, Optimizer };
constexpr size_t NumPhases = 5;

/// The parts an iteration's time is split into: the phases after
/// construction, and what none of them covers.
enum class TimePart : uint8_t { Data, Forward, Backward, Optimizer, Other };
constexpr size_t NumTimeParts = 5;

/// The peak's bytes by what holds them; they add up to the peak.
enum class MemoryKind : uint8_t {
  Weights,
  Gradients,
  OptimizerState,
  Activations,
  Data,
  Temporaries,
  /// Made before training by a statement before the loop (a dataset held in
  /// memory), not weights; setup_statements says which.
  Setup,
  Untracked, // made before training, no such statement's, no weights
  /// On CUDA: made in a forward or backward phase of warm-up and held
  /// through every measured iteration (cuBLAS's workspaces): no layer's
  /// activations. Written only where there is some.
  Workspace,
};
constexpr size_t NumMemoryKinds = 9;

/// Statements before the training loop the runs tell apart (the ids the
/// instrumented copy gives them run from 0 to this less one).
constexpr int MaxSetupStatements = 1024;

/// Host syncs in the training loops the runs time (ids 0 to this less one).
constexpr int MaxHostSyncs = 256;

enum class DeviceType : uint8_t { CPU, CUDA };

/// What the run saw of CUDA: whether the program could and did use a GPU
/// (--device=cuda fails clearly on anything but Used).
enum class CudaUse : uint8_t {
  Unknown,  // not decided (the program ended before its first iteration)
  NotBuilt, // the program's LibTorch has no CUDA
  Hidden,   // CUDA_VISIBLE_DEVICES set and empty (--device=cpu)
  NoDevice, // torch::cuda::is_available() is false
  Unused,   // a device was there; the program allocated nothing on it
  Used,     // a CUDA run
};

/// Where a CUDA run's per-layer GPU time came from.
enum class GpuTimeSource : uint8_t {
  None,
  Cupti,      // CUPTI's kernel records
  CudaEvents, // a scope's span on the stream, gaps included
};

template <typename Enum> struct EnumNames;
template <> struct EnumNames<RunMode> {
  static constexpr const char *Names[] = {"timing", "breakdown"};
  static constexpr RunMode Last = RunMode::Breakdown;
};
template <> struct EnumNames<StopReason> {
  static constexpr const char *Names[] = {"continue",    "count",
                                          "stable",      "time_limit",
                                          "ended_early", "out_of_memory"};
  static constexpr StopReason Last = StopReason::OutOfMemory;
};
template <> struct EnumNames<Phase> {
  static constexpr const char *Names[] = {"construction", "data", "forward",
                                          "backward", "optimizer"};
  static constexpr Phase Last = Phase::Optimizer;
};
template <> struct EnumNames<TimePart> {
  static constexpr const char *Names[] = {"data", "forward", "backward",
                                          "optimizer", "other"};
  static constexpr TimePart Last = TimePart::Other;
};
template <> struct EnumNames<MemoryKind> {
  static constexpr const char *Names[] = {
      "weights",     "gradients", "optimizer_state", "activations", "data",
      "temporaries", "setup",     "untracked",       "workspace"};
  static constexpr MemoryKind Last = MemoryKind::Workspace;
};
template <> struct EnumNames<DeviceType> {
  static constexpr const char *Names[] = {"cpu", "cuda"};
  static constexpr DeviceType Last = DeviceType::CUDA;
};
template <> struct EnumNames<CudaUse> {
  static constexpr const char *Names[] = {"unknown",   "not_built", "hidden",
                                          "no_device", "unused",    "used"};
  static constexpr CudaUse Last = CudaUse::Used;
};
template <> struct EnumNames<GpuTimeSource> {
  static constexpr const char *Names[] = {"none", "cupti", "cuda_events"};
  static constexpr GpuTimeSource Last = GpuTimeSource::CudaEvents;
};

/// A table that misses an enumerator, or names one too many, fails here.
template <typename Enum> constexpr bool coversEveryEnumerator() {
  return std::size(EnumNames<Enum>::Names) ==
         static_cast<size_t>(EnumNames<Enum>::Last) + 1;
}
static_assert(coversEveryEnumerator<RunMode>());
static_assert(coversEveryEnumerator<StopReason>());
static_assert(coversEveryEnumerator<Phase>());
static_assert(coversEveryEnumerator<TimePart>());
static_assert(coversEveryEnumerator<MemoryKind>());
static_assert(coversEveryEnumerator<DeviceType>());
static_assert(coversEveryEnumerator<GpuTimeSource>());
static_assert(coversEveryEnumerator<CudaUse>());
static_assert(std::size(EnumNames<Phase>::Names) == NumPhases);
static_assert(std::size(EnumNames<TimePart>::Names) == NumTimeParts);
static_assert(std::size(EnumNames<MemoryKind>::Names) == NumMemoryKinds);

template <typename Enum> constexpr const char *nameOf(Enum Value) {
  return EnumNames<Enum>::Names[static_cast<size_t>(Value)];
}

/// The enumerator named Name; none for a name the table does not hold.
template <typename Enum>
constexpr std::optional<Enum> fromName(std::string_view Name) {
  for (size_t I = 0; I < std::size(EnumNames<Enum>::Names); ++I)
    if (Name == EnumNames<Enum>::Names[I])
      return static_cast<Enum>(I);
  return std::nullopt;
}

/// Every enumerator in order, for loops over a table's names.
template <typename Enum> struct AllOf {
  struct Iterator {
    size_t I;
    Enum operator*() const { return static_cast<Enum>(I); }
    Iterator &operator++() {
      ++I;
      return *this;
    }
    bool operator!=(const Iterator &Other) const { return I != Other.I; }
  };
  Iterator begin() const { return {0}; }
  Iterator end() const { return {std::size(EnumNames<Enum>::Names)}; }
};
template <typename Enum> constexpr AllOf<Enum> allOf() { return {}; }

/// The keys of the result file (docs/report.md lists the report's; a
/// report's run repeats many of these).
namespace key {
inline constexpr char SchemaVersion[] = "schema_version";
inline constexpr char BatchSize[] = "batch_size";
/// {size, scope}: the batch the iterations showed (RunResult.h).
inline constexpr char ObservedBatchSize[] = "observed_batch_size";
inline constexpr char Size[] = "size";
inline constexpr char OutOfMemory[] = "oom";
/// In a report's run: out of memory before the training loop's first
/// iteration (what runs before the loop took it); only where true.
inline constexpr char OutOfMemoryBeforeLoop[] = "oom_before_loop";
inline constexpr char Iterations[] = "iterations";
inline constexpr char Mode[] = "mode";
inline constexpr char Stopped[] = "stopped";
inline constexpr char EndedEarly[] = "ended_early";
inline constexpr char Warmup[] = "warmup";
inline constexpr char IterationsAsked[] = "iterations_asked";
inline constexpr char MinIterations[] = "min_iterations";
inline constexpr char IterationsReached[] = "iterations_reached";
/// Whether a training loop's start was marked (its first batch loaded);
/// only where true.
inline constexpr char LoopBegan[] = "loop_began";
inline constexpr char EpochEndIterations[] = "epoch_end_iterations";
inline constexpr char EveryIterationAnEpoch[] = "every_iteration_an_epoch";
inline constexpr char EpochIterations[] = "epoch_iterations";
inline constexpr char DatasetSize[] = "dataset_size";
inline constexpr char DatasetsGcd[] = "datasets_gcd";
inline constexpr char TorchVersion[] = "torch_version";
inline constexpr char Threads[] = "threads";
inline constexpr char Device[] = "device"; // {type, name, cuda}
inline constexpr char Cuda[] = "cuda";     // a CudaUse name
inline constexpr char Type[] = "type";
inline constexpr char Name[] = "name";
inline constexpr char IterationMs[] = "iteration_ms"; // {median, mean, ...}
inline constexpr char Median[] = "median";
inline constexpr char Mean[] = "mean";
inline constexpr char Stddev[] = "stddev";
inline constexpr char Min[] = "min";
inline constexpr char Max[] = "max";
inline constexpr char Throughput[] = "throughput";
inline constexpr char PeakBytes[] = "peak_bytes";
inline constexpr char PeakBytesByPhase[] = "peak_bytes_by_phase"; // Phase
inline constexpr char Memory[] = "memory";                        // MemoryKind
inline constexpr char TimeSplitMs[] = "time_split_ms";            // TimePart
inline constexpr char Layers[] = "layers";
inline constexpr char Scope[] = "scope";
inline constexpr char ForwardMs[] = "forward_ms";
inline constexpr char BackwardMs[] = "backward_ms";
inline constexpr char ActivationBytes[] = "activation_bytes";
inline constexpr char WeightBytes[] = "weight_bytes";
inline constexpr char GpuMs[] = "gpu_ms";
inline constexpr char Gpu[] = "gpu"; // a CUDA run's device memory and CUPTI
inline constexpr char MemoryCapacityBytes[] = "memory_capacity_bytes";
inline constexpr char GpuMsSource[] = "gpu_ms_source"; // GpuTimeSource
/// Why a CUDA run's GPU figures are missing or low: the result's gpu.note,
/// a report's run's gpu_note.
inline constexpr char Note[] = "note";
inline constexpr char GpuNote[] = "gpu_note";
/// A CUDA run's gpu.clock: cuda_events or cpu.
inline constexpr char Clock[] = "clock";
/// The setup kind by statement: [{statement, bytes}] (the report adds file,
/// line and text).
inline constexpr char SetupStatements[] = "setup_statements";
inline constexpr char Statement[] = "statement";
/// The host syncs' time: [{sync, calls, ms}], calls and ms per measured
/// iteration (the report adds file, line, kind and text).
inline constexpr char HostSyncs[] = "host_syncs";
inline constexpr char Sync[] = "sync";
inline constexpr char Calls[] = "calls";
inline constexpr char Ms[] = "ms";
inline constexpr char Bytes[] = "bytes";
/// Whether the program had cuDNN's benchmark mode on at its first
/// iteration (before a trial's setting).
inline constexpr char CudnnBenchmark[] = "cudnn_benchmark";
/// Whether the program had CUDA autocast on at its first iteration.
inline constexpr char Autocast[] = "autocast";
/// Whether the program's optimizers' 4-d parameters were all channels-last
/// at its first iterations (a breakdown run reads them); only where true.
inline constexpr char ChannelsLast[] = "channels_last";
/// Why a trial's setting changed nothing in the run (no weight it applies
/// to); absent where it applied, or no trial ran.
inline constexpr char TrialNotApplied[] = "trial_not_applied";
/// An evaluation trial's passes: {unguarded_ms: [..], guarded_ms: [..],
/// unguarded_peak_bytes, guarded_peak_bytes}.
inline constexpr char Evaluation[] = "evaluation";
inline constexpr char UnguardedMs[] = "unguarded_ms";
inline constexpr char GuardedMs[] = "guarded_ms";
inline constexpr char UnguardedPeakBytes[] = "unguarded_peak_bytes";
inline constexpr char GuardedPeakBytes[] = "guarded_peak_bytes";
} // namespace key

/// Whether Text (an exception's message, the end of a run's output) says
/// that a device ran out of memory: the caching allocator's
/// c10::OutOfMemoryError ("CUDA out of memory"), the CUDA runtime's
/// cudaErrorMemoryAllocation ("CUDA error: out of memory"), or cuBLAS and
/// cuDNN failing to allocate their handles or workspaces outside the
/// caching allocator (CUBLAS_STATUS_ALLOC_FAILED,
/// CUDNN_STATUS_ALLOC_FAILED). The runtime asks it of an exception that
/// ends the program, the launcher of a failed run's output.
constexpr bool saysOutOfMemory(std::string_view Text) {
  for (std::string_view Sign :
       {"CUDA out of memory", "CUDA error: out of memory",
        "CUBLAS_STATUS_ALLOC_FAILED", "CUDNN_STATUS_ALLOC_FAILED",
        "cudaErrorMemoryAllocation", "OutOfMemoryError"})
    if (Text.find(Sign) != std::string_view::npos)
      return true;
  return false;
}

} // namespace skyline::rt

#endif // SKYLINE_RUNTIME_RUNFORMAT_H
