//===- GpuActivity.h - GPU kernel time per scope, behind a seam -*- C++ -*-===//
//
// Kernel time per module-call scope on CUDA. Every call into CUPTI sits
// behind ActivityApi (libkineto's CuptiActivityApi is the model), so tests
// replace it with a fake fed hand-made records and CPU-only CI checks the
// attribution. Plain C++: no CUDA, CUPTI or LibTorch header.
//
// Attribution: at scope entry the runtime pushes an external correlation id
// (scope id + 1) on the calling thread, and pops it at exit; CUPTI stamps
// each kernel launch with the innermost id of its thread. Kernels whose
// start lies in the measured window count; a kernel with no id (or id 0) is
// unscoped.
//
// Where CUPTI cannot be loaded or started, ScopeEventTimer times each scope
// with CUDA events instead, behind the EventApi seam.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_GPUACTIVITY_H
#define SKYLINE_RUNTIME_GPUACTIVITY_H

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace skyline::rt {

struct KernelRecord {
  uint32_t CorrelationId = 0;
  uint64_t StartNs = 0, EndNs = 0;
};

/// CUPTI's correlation id of a launch -> the external id pushed around it.
struct ExternalCorrelationRecord {
  uint32_t CorrelationId = 0;
  uint64_t ExternalId = 0;
};

/// Receives records, on whichever thread the API delivers them (CUPTI's
/// buffer thread, or the flushing one).
class ActivitySink {
public:
  virtual ~ActivitySink() = default;
  virtual void onKernel(const KernelRecord &Kernel) = 0;
  virtual void onExternalCorrelation(const ExternalCorrelationRecord &Ext) = 0;
  /// A DRIVER or RUNTIME API record (the launch a kernel's correlation id
  /// names); counted, to tell why kernels found no scope.
  virtual void onApi(uint32_t CorrelationId) { (void)CorrelationId; }
  /// Records the API had to drop (its buffers were all in use).
  virtual void onDropped(uint64_t Count) = 0;
};

/// The activity API: CUPTI in a run, a fake in tests.
class ActivityApi {
public:
  virtual ~ActivityApi() = default;
  /// Starts collecting kernels and external correlations into Sink; false
  /// when it cannot, with failure() saying why.
  virtual bool start(ActivitySink &Sink) = 0;
  /// Delivers every record so far to the sink and stops collecting.
  virtual void stop() = 0;
  /// Delivers every record so far to the sink.
  virtual void flush() = 0;
  /// The hot path: scope entry and exit. Must not allocate.
  virtual void pushExternalCorrelation(uint64_t Id) noexcept = 0;
  virtual void popExternalCorrelation() noexcept = 0;
  /// Now, on the clock of the records.
  virtual uint64_t timestampNs() noexcept = 0;
  virtual std::string failure() const = 0;
};

/// CUPTI's C entry points that the runtime calls, as plain function pointers:
/// resolved with dlsym from libcupti in a run, a fake CUPTI's in tests (so the
/// tests drive the real enabling of kinds, buffer handling and record
/// parsing of Cupti.cpp). The signatures are cupti_activity.h's, with ints
/// for its enums.
namespace cupti {
using Result = int; // CUptiResult
constexpr Result Success = 0;
constexpr Result ErrorMaxLimitReached = 12; // CUPTI_ERROR_MAX_LIMIT_REACHED
using BufferRequestFn = void (*)(uint8_t **Buffer, size_t *Size,
                                 size_t *MaxRecords);
using BufferCompleteFn = void (*)(void *Context, uint32_t StreamId,
                                  uint8_t *Buffer, size_t Size,
                                  size_t ValidSize);
struct Functions {
  Result (*ActivityEnable)(uint32_t Kind);
  Result (*ActivityDisable)(uint32_t Kind);
  Result (*ActivityRegisterCallbacks)(BufferRequestFn, BufferCompleteFn);
  Result (*ActivityGetNextRecord)(uint8_t *Buffer, size_t ValidSize,
                                  void **Record);
  Result (*ActivityGetNumDroppedRecords)(void *Context, uint32_t StreamId,
                                         size_t *Dropped);
  Result (*ActivityFlushAll)(uint32_t Flag);
  Result (*ActivityPushExternalCorrelationId)(uint32_t Kind, uint64_t Id);
  Result (*ActivityPopExternalCorrelationId)(uint32_t Kind, uint64_t *LastId);
  Result (*GetTimestamp)(uint64_t *Timestamp);
  Result (*GetResultString)(Result Status, const char **Text);
};
} // namespace cupti

/// The ActivityApi over CUPTI's entry points Fns (Library: the handle they
/// came from, kept open). start() enables the API record kinds (RUNTIME and
/// DRIVER), EXTERNAL_CORRELATION and CONCURRENT_KERNEL: CUPTI writes an
/// external-correlation record only in front of an API record, so without
/// an API kind no kernel could be attributed to a scope.
std::unique_ptr<ActivityApi> makeCuptiActivityApi(const cupti::Functions &Fns,
                                                  void *Library = nullptr);

/// Opens CUPTI with dlopen, trying each of Candidates (a file name for the
/// loader's search path, or a full path) in turn. Null, with Failure saying
/// what each candidate gave, when none loads or a symbol is missing.
std::unique_ptr<ActivityApi>
loadCupti(const std::vector<std::string> &Candidates, std::string &Failure);

/// Where CUPTI is looked for: $SKYLINE_CUPTI_LIBRARY, then the loader's
/// search path, then the CUDA toolkit ($CUDA_HOME, /usr/local/cuda).
std::vector<std::string> cuptiCandidates();

/// Kernel time per scope over the measured iterations.
struct GpuTimes {
  std::map<int, double> ScopeMs; // ms per measured iteration
  double UnscopedMs = 0;
  uint64_t Kernels = 0; // counted in the window
  uint64_t DroppedRecords = 0;
  /// CUPTI only: kernels of the window whose launch had an external
  /// correlation record (scoped, or a backward op of no known scope), and
  /// the API and external-correlation records seen in all.
  uint64_t CorrelatedKernels = 0;
  uint64_t ApiRecords = 0, ExternalRecords = 0;
};

/// The note for a CUPTI run whose kernels found no scope although scopes
/// ran (ScopesRan): every kernel would land in (unscoped) silently; or
/// that timed no kernel at all (CUPTI delivered none), where every row's 0
/// would be wrong. Empty when some kernel was correlated, or no scope ran.
std::string unattributedNote(const GpuTimes &Times, bool ScopesRan);

/// The aggregation: records in, times per scope out. Records arrive on
/// CUPTI's thread, so they are kept under a lock; nothing here runs on the
/// hot path.
class GpuScopeTimes final : public ActivitySink {
public:
  void onKernel(const KernelRecord &Kernel) override;
  void onExternalCorrelation(const ExternalCorrelationRecord &Ext) override;
  void onApi(uint32_t CorrelationId) override;
  void onDropped(uint64_t Count) override;

  /// Kernels that start in [Begin, End) count.
  void setWindow(uint64_t BeginNs, uint64_t EndNs);
  /// Sums per scope, divided by Iterations.
  GpuTimes times(int Iterations) const;

  static uint64_t externalId(int ScopeId) { return uint64_t(ScopeId + 1); }

private:
  mutable std::mutex Lock;
  std::vector<KernelRecord> Kernels;
  std::unordered_map<uint32_t, uint64_t> External;
  uint64_t Dropped = 0;
  uint64_t ApiRecords = 0, ExternalRecords = 0;
  uint64_t WindowBegin = 0, WindowEnd = UINT64_MAX;
};

/// What the runtime drives: pushes and pops on each thread, the measured
/// window, the times at the end.
class GpuTracer {
public:
  explicit GpuTracer(ActivityApi &Api) : Api(Api) {}
  bool start() { return Api.start(Times); }
  /// Scope entry and exit on the calling thread; an exit with no entry of
  /// this thread (tracing began inside a scope) pops nothing.
  void enterScope(int ScopeId) noexcept;
  void exitScope() noexcept;
  /// The measured iterations begin and end (after a device synchronize,
  /// so every earlier kernel has ended and none later has started).
  void beginMeasured() noexcept;
  void endMeasured() noexcept;
  /// Stops collecting and sums.
  GpuTimes finish(int Iterations);

private:
  ActivityApi &Api;
  GpuScopeTimes Times;
  uint64_t BeginNs = 0, EndNs = UINT64_MAX;
};

//===----------------------------------------------------------------------===//
// The fallback without CUPTI: CUDA events around each scope
//===----------------------------------------------------------------------===//

/// CUDA events, by index into a pool made once: cudaEvent* in a run, a fake
/// in tests.
class EventApi {
public:
  virtual ~EventApi() = default;
  /// Makes Count events; false when it cannot, with failure() saying why.
  virtual bool create(size_t Count) = 0;
  /// Records event Index on the calling thread's current stream. The hot
  /// path: must not allocate.
  virtual void record(size_t Index) noexcept = 0;
  /// Milliseconds from event Begin to event End on the device, both recorded
  /// and complete (after a device synchronize); negative when unknown.
  virtual double elapsedMs(size_t Begin, size_t End) noexcept = 0;
  virtual void destroy() noexcept = 0;
  virtual std::string failure() const = 0;
};

/// GPU time per scope from an event recorded at each scope entry and exit
/// (and around each backward op, under its forward's scope). A scope's time
/// is the stream's time from its entry event to its exit event, less that
/// of the scopes nested in it on the same thread (self time, so rows add
/// up). Unlike CUPTI's kernel sum it includes the gaps between the scope's
/// kernels (the stream waiting on the CPU to launch them), and what runs
/// outside every scope (the loss, the optimizer step, copies) is not
/// measured: the (unscoped) row gets only marks of no known scope (-1).
///
/// Marks take events from a pool made at start(), so the hot path allocates
/// nothing; when the pool is spent within an iteration, later marks of that
/// iteration are dropped (counted). At each iteration boundary, after the
/// device is synchronized, the marks are resolved and the pool reused.
class ScopeEventTimer {
public:
  /// Threads that may record marks (the forward thread, autograd's).
  static constexpr int MaxThreads = 16;

  explicit ScopeEventTimer(EventApi &Api, size_t PoolSize = 16384);
  /// Makes the pool; false when the API cannot.
  bool start();
  /// Scope entry and exit on the calling thread. The hot path: one atomic
  /// increment and one event record; nothing allocates.
  void enterScope(int ScopeId) noexcept { mark(ScopeId, true); }
  void exitScope() noexcept { mark(-1, false); }
  /// An iteration boundary, after a device synchronize: the marks since the
  /// last one are resolved, and added when they belong to a measured
  /// iteration; the pool starts over.
  void boundary(bool Measured);
  /// Sums per scope (self time), divided by Iterations. Kernels is the
  /// number of scope intervals timed.
  GpuTimes times(int Iterations) const;
  /// Frees the pool.
  void stop() noexcept { Api.destroy(); }

private:
  struct Mark {
    int32_t Scope = -1;
    bool Enter = false;
    uint8_t Thread = 0;
  };
  void mark(int ScopeId, bool Enter) noexcept;
  int threadSlot() noexcept;

  EventApi &Api;
  /// Tells this timer's thread slots from those of an earlier one.
  const uint64_t Generation;
  std::vector<Mark> Marks; // one per event of the pool
  std::atomic<size_t> Next{0};
  std::atomic<int> Threads{0};
  std::atomic<uint64_t> DroppedNow{0}; // this iteration's
  // Only the boundary's thread touches what follows.
  struct Open {
    int Scope;
    size_t Event;
    double ChildMs;
  };
  std::vector<std::vector<Open>> Stacks; // per thread slot, reused
  std::map<int, double> ScopeMs;
  uint64_t Dropped = 0;
  double UnscopedMs = 0;
  uint64_t Intervals = 0;
};

/// The GPU's own timeline of the iterations: a CUDA event recorded on the
/// calling thread's current stream at each iteration boundary and, in a
/// breakdown run, at each switch of phase. The stream reaches an event when
/// the work enqueued before it is done, so the time from one mark to the
/// next is the stream's time in the phase (or iteration) the first opens:
/// where the CPU waits for the GPU (a synchronize, .item()) does not move
/// it, unlike the CPU's clock, and no synchronize has to be added to read
/// an iteration's time. The marks are read once, after the run's end has
/// synchronized the device.
///
/// Marks take events from a pool made at start(); a mark past its end is
/// dropped and counted (the times then come from the CPU's clock).
class PhaseTimeline {
public:
  explicit PhaseTimeline(EventApi &Api, size_t PoolSize);
  bool start() { return Api.create(Marks.size()); }
  /// Iteration Index begins (its data phase). The hot path: one atomic
  /// increment and one event record.
  void boundary(int Index) noexcept { mark(Index, 1 /*Data*/, true); }
  /// Phase (a Phase value) begins, in the current iteration.
  void phase(uint8_t Phase) noexcept {
    mark(Current.load(std::memory_order_relaxed), Phase, false);
  }

  struct Times {
    /// Per iteration index, the time from its boundary to the next; -1
    /// where not known.
    std::vector<double> IterationMs;
    /// Per Phase value, summed over iterations [Warmup, the last boundary).
    std::vector<double> PhaseMs;
    int PhaseIterations = 0; // the iterations PhaseMs covers
    uint64_t Dropped = 0;
  };
  /// After a device synchronize: what the marks say.
  Times resolve(int Warmup) const;
  void stop() noexcept { Api.destroy(); }

private:
  struct Mark {
    int32_t Iteration = -1;
    uint8_t Phase = 0;
    bool Boundary = false;
  };
  void mark(int Iteration, uint8_t Phase, bool Boundary) noexcept;

  EventApi &Api;
  std::vector<Mark> Marks; // one per event of the pool
  std::atomic<size_t> Next{0};
  std::atomic<int> Current{-1};
  std::atomic<uint64_t> Dropped{0};
};

/// CUPTI record layout (CUpti_ActivityKernel4..10 share it; checked against
/// cupti.h by the unit test where the header is installed).
namespace cupti_layout {
constexpr uint32_t KindDriver = 4;  // CUpti_ActivityAPI records
constexpr uint32_t KindRuntime = 5; // CUpti_ActivityAPI records
constexpr uint32_t KindConcurrentKernel = 10;
constexpr uint32_t KindExternalCorrelation = 39;
constexpr uint32_t ExternalKindCustom0 = 3;
constexpr size_t KernelStart = 16, KernelEnd = 24, KernelCorrelationId = 92;
constexpr size_t ExternalKind = 4, ExternalId = 8, ExternalCorrelationId = 16;
constexpr size_t ApiStart = 8, ApiEnd = 16, ApiCorrelationId = 32;
} // namespace cupti_layout

} // namespace skyline::rt

#endif // SKYLINE_RUNTIME_GPUACTIVITY_H
