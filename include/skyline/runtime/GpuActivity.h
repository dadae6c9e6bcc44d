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
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_GPUACTIVITY_H
#define SKYLINE_RUNTIME_GPUACTIVITY_H

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
};

/// The aggregation: records in, times per scope out. Records arrive on
/// CUPTI's thread, so they are kept under a lock; nothing here runs on the
/// hot path.
class GpuScopeTimes final : public ActivitySink {
public:
  void onKernel(const KernelRecord &Kernel) override;
  void onExternalCorrelation(const ExternalCorrelationRecord &Ext) override;
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

/// CUPTI record layout (CUpti_ActivityKernel4..10 share it; checked against
/// cupti.h by the unit test where the header is installed).
namespace cupti_layout {
constexpr uint32_t KindConcurrentKernel = 10;
constexpr uint32_t KindExternalCorrelation = 39;
constexpr uint32_t ExternalKindCustom0 = 3;
constexpr size_t KernelStart = 16, KernelEnd = 24, KernelCorrelationId = 92;
constexpr size_t ExternalKind = 4, ExternalId = 8, ExternalCorrelationId = 16;
} // namespace cupti_layout

} // namespace skyline::rt

#endif // SKYLINE_RUNTIME_GPUACTIVITY_H
