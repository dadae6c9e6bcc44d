//===- CudaSupport.cpp - The runtime's CUDA side -------------------------===//
//
// Compiled against any LibTorch; the parts that need c10/cuda only where
// CMake found LibTorch's CUDA libraries (SKYLINE_WITH_CUDA), so a CPU-only
// LibTorch (Debian's 1.13) builds the same runtime with no-op hooks.
//
// A run is a CUDA run when CUDA is not hidden, a device is available, and by
// the end of warm-up the caching allocator holds memory on a device whose
// primary context the program made. Only then is CUPTI loaded; where it
// cannot be, CUDA events time the scopes instead.
//
// A breakdown run pushes a DeviceMemoryReporter for CUDA on the main thread
// at program start, so the caching allocator's blocks are tagged with their
// phase and scope from the model's first tensor on.
//
//===----------------------------------------------------------------------===//

#include "skyline/runtime/CudaSupport.h"
#include "skyline/runtime/DeviceMemoryReporter.h"
#include "skyline/runtime/GpuActivity.h"
#include "skyline/runtime/RunFormat.h"

#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_set>

#ifdef SKYLINE_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <torch/cuda.h>
#endif

namespace skyline::rt::cuda {

bool hiddenByEnvironment() {
  const char *Visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return Visible && !*Visible;
}

#ifdef SKYLINE_WITH_CUDA

namespace {

/// CUDA events on the current stream of one device: the fallback timer's
/// API when CUPTI is unavailable.
class CudaEvents final : public EventApi {
public:
  explicit CudaEvents(c10::DeviceIndex Device) : Device(Device) {}
  ~CudaEvents() override = default; // destroy() is called while CUDA lives

  bool create(size_t Count) override {
    c10::cuda::CUDAGuard Guard(Device);
    Events.reserve(Count);
    while (Events.size() < Count) {
      cudaEvent_t Event = nullptr;
      cudaError_t Status = cudaEventCreate(&Event);
      if (Status != cudaSuccess) {
        (void)cudaGetLastError();
        Failure = std::string("cudaEventCreate: ") + cudaGetErrorString(Status);
        destroy();
        return false;
      }
      Events.push_back(Event);
    }
    return true;
  }

  void record(size_t Index) noexcept override {
    // The calling thread's current stream of the device: the forward
    // thread's, or the one autograd runs a backward op on.
    if (Index >= Events.size() ||
        cudaEventRecord(Events[Index],
                        c10::cuda::getCurrentCUDAStream(Device).stream()) !=
            cudaSuccess)
      (void)cudaGetLastError(); // LibTorch checks the last error after kernels
  }

  double elapsedMs(size_t Begin, size_t End) noexcept override {
    float Ms = 0;
    if (Begin >= Events.size() || End >= Events.size() ||
        cudaEventElapsedTime(&Ms, Events[Begin], Events[End]) != cudaSuccess) {
      (void)cudaGetLastError();
      return -1;
    }
    return Ms;
  }

  void destroy() noexcept override {
    for (cudaEvent_t Event : Events)
      (void)cudaEventDestroy(Event);
    Events.clear();
    (void)cudaGetLastError();
  }

  std::string failure() const override { return Failure; }

private:
  c10::DeviceIndex Device;
  std::vector<cudaEvent_t> Events;
  std::string Failure;
};

struct CudaRun {
  /// Read on the hot path (scope entry and exit, backward ops).
  std::atomic<bool> Tracing{false};
  bool Decided = false;
  bool OnCuda = false;
  CudaUse Use = CudaUse::Unknown; // what the decision found
  bool TraceWanted = false;
  c10::DeviceIndex Device = 0;
  std::unique_ptr<ActivityApi> Cupti;
  std::unique_ptr<GpuTracer> Tracer;
  /// The fallback: CUDA events around each scope.
  std::unique_ptr<EventApi> Events;
  std::unique_ptr<ScopeEventTimer> EventTimer;
  std::atomic<bool> TimingEvents{false}; // read on the hot path
  /// The GPU's timeline: events at boundaries and phase switches.
  std::unique_ptr<EventApi> TimelineEvents;
  std::unique_ptr<PhaseTimeline> Timeline;
  std::atomic<bool> Marking{false}; // read on the hot path
  PhaseTimeline::Times TimelineTimes;
  bool TimelineResolved = false;
  int Warmup = 0;
  std::string TimelineProblem;
  std::string CuptiProblem;  // why CUPTI gives no gpu_ms
  std::string EventsProblem; // why the events give none either
  /// Tags device memory (breakdown runs); never freed: the caching
  /// allocator may report after main returns.
  std::shared_ptr<DeviceMemoryReporter> Reporter;
  MemoryTracker::OutOfMemoryHandler OnOutOfMemory = nullptr;
  std::atomic<bool> OutOfMemory{false};
  /// The allocator's peak at the last measured boundary: at program exit the
  /// CUDA runtime may be torn down, so an early end reports this one.
  int64_t PeakAtLastBoundary = 0;
};

CudaRun &run() {
  static auto *R = new CudaRun(); // lives past static destructors
  return *R;
}

void appendNote(RunResult::GpuInfo &Gpu, const std::string &Text) {
  Gpu.Note = (Gpu.Note.empty() ? "" : Gpu.Note + "; ") + Text;
}

/// The device the program allocated on, if any. Asks nothing of a device
/// whose primary context does not exist, so it makes none.
bool findUsedDevice(c10::DeviceIndex &Used) {
  c10::DeviceIndex Count = c10::cuda::device_count();
  for (c10::DeviceIndex D = 0; D < Count; ++D) {
#if TORCH_VERSION_MAJOR >= 2
    if (!c10::cuda::hasPrimaryContext(D))
      continue;
#endif
    try {
      auto Stats = c10::cuda::CUDACachingAllocator::getDeviceStats(D);
      if (Stats.allocated_bytes[0].peak > 0) {
        Used = D;
        return true;
      }
    } catch (...) {
      // The allocator was never initialized: nothing allocated yet.
    }
  }
  return false;
}

/// The fallback when CUPTI gives no kernel records: events around scopes.
void startEventTiming(CudaRun &R) {
  R.Events = std::make_unique<CudaEvents>(R.Device);
  R.EventTimer = std::make_unique<ScopeEventTimer>(*R.Events);
  if (!R.EventTimer->start()) {
    R.EventsProblem = R.Events->failure();
    R.EventTimer.reset();
    return;
  }
  R.TimingEvents.store(true, std::memory_order_release);
}

/// SKYLINE_GPU_TIMER=events skips CUPTI (to compare the two on one GPU).
bool eventsAsked() {
  const char *Timer = std::getenv(rt::env::GpuTimer);
  return Timer && std::string(Timer) == "events";
}

void startTracing(CudaRun &R) {
  if (eventsAsked()) {
    R.CuptiProblem = "SKYLINE_GPU_TIMER=events";
    startEventTiming(R);
    return;
  }
  std::string Failure;
  R.Cupti = loadCupti(cuptiCandidates(), Failure);
  if (!R.Cupti) {
    R.CuptiProblem = Failure;
    startEventTiming(R);
    return;
  }
  R.Tracer = std::make_unique<GpuTracer>(*R.Cupti);
  if (!R.Tracer->start()) {
    R.CuptiProblem = "CUPTI did not start: " + R.Cupti->failure();
    R.Tracer.reset();
    startEventTiming(R);
    return;
  }
  // Release: a thread that sees Tracing sees the tracer.
  R.Tracing.store(true, std::memory_order_release);
}

/// Events on the current stream at boundaries (and, with Trace, phase
/// switches), enough for every iteration the run may measure.
void startTimeline(CudaRun &R, int Warmup, bool Trace, int MostIterations) {
  size_t Boundaries = size_t(Warmup) + size_t(MostIterations) + 2;
  R.TimelineEvents = std::make_unique<CudaEvents>(R.Device);
  R.Timeline = std::make_unique<PhaseTimeline>(
      *R.TimelineEvents, Trace ? Boundaries * 64 : Boundaries);
  if (!R.Timeline->start()) {
    R.TimelineProblem = R.TimelineEvents->failure();
    R.Timeline.reset();
    return;
  }
  R.Marking.store(true, std::memory_order_release);
}

void decide(CudaRun &R, int Index, int Warmup, bool Trace, int MostIterations) {
  if (hiddenByEnvironment() || !torch::cuda::is_available()) {
    R.Use = hiddenByEnvironment() ? CudaUse::Hidden : CudaUse::NoDevice;
    R.Decided = true;
    return;
  }
  if (!findUsedDevice(R.Device)) {
    // The model may move to the GPU inside the loop: ask until warm-up ends.
    R.Decided = Index >= Warmup;
    R.Use = CudaUse::Unused;
    return;
  }
  R.Decided = R.OnCuda = true;
  R.Use = CudaUse::Used;
  // The host budget stands in for a limit the CPU does not have; on a CUDA
  // run the device's own memory is the limit, and a host out-of-memory
  // must not read as the device's.
  MemoryTracker::install().setBudget(0, nullptr);
#if TORCH_VERSION_MAJOR >= 2
  // Called after the allocator let go of its lock, before it throws.
  c10::cuda::CUDACachingAllocator::attachOutOfMemoryObserver(
      [](int64_t, size_t Requested, size_t Total, size_t) {
        CudaRun &Run = run();
        Run.OutOfMemory.store(true);
        if (Run.OnOutOfMemory)
          Run.OnOutOfMemory(Requested, 0, int64_t(Total));
      });
#endif
  if (MostIterations > 0)
    startTimeline(R, Warmup, Trace, MostIterations);
  if (Trace)
    startTracing(R);
}

} // namespace

void iterationBegin(int Index, int Warmup, bool Trace,
                    MemoryTracker::OutOfMemoryHandler OnOutOfMemory,
                    int MostIterations) noexcept {
  CudaRun &R = run();
  try {
    R.OnOutOfMemory = OnOutOfMemory;
    R.TraceWanted = Trace;
    R.Warmup = Warmup;
    if (!R.Decided)
      decide(R, Index, Warmup, Trace, MostIterations);
    if (!R.OnCuda)
      return;
    // A breakdown run waits for the last iteration's kernels: CUPTI's window
    // and the scope events need every earlier kernel done. A timing run
    // does not: the program's own overlap of CPU and GPU stays, and its
    // times come from the boundary events.
    if (Trace)
      torch::cuda::synchronize(R.Device);
    if (R.Marking.load(std::memory_order_relaxed))
      R.Timeline->boundary(Index);
    // Every event recorded so far is complete: the last iteration's scopes.
    if (R.EventTimer)
      R.EventTimer->boundary(Index > Warmup);
    if (Index == Warmup) {
      c10::cuda::CUDACachingAllocator::resetPeakStats(R.Device);
      if (R.Reporter) {
        R.Reporter->bytes().resetPeak();
        R.Reporter->startMeasuring();
      }
      if (R.Tracer)
        R.Tracer->beginMeasured();
    } else if (Index > Warmup) {
      R.PeakAtLastBoundary =
          c10::cuda::CUDACachingAllocator::getDeviceStats(R.Device)
              .allocated_bytes[0]
              .peak;
      // The stopping rule may end the run at any boundary from here on.
      if (R.Tracer)
        R.Tracer->endMeasured();
    }
  } catch (...) {
    // A run without GPU figures rather than an exception in the program.
  }
}

bool cuptiStarted() noexcept { return run().Tracer != nullptr; }

bool evaluationBoundary(bool Start, int64_t &Peak) noexcept {
  try {
    if (hiddenByEnvironment() || !torch::cuda::is_available())
      return false;
    c10::DeviceIndex Device = 0;
    if (!findUsedDevice(Device))
      return false;
    torch::cuda::synchronize(Device);
    if (Start) {
      c10::cuda::CUDACachingAllocator::resetPeakStats(Device);
      return true;
    }
    Peak = c10::cuda::CUDACachingAllocator::getDeviceStats(Device)
               .allocated_bytes[0]
               .peak;
    return true;
  } catch (...) {
    return false; // the host's figures rather than an exception
  }
}

bool mayUseDevice() noexcept {
  try {
    return !hiddenByEnvironment() && torch::cuda::is_available();
  } catch (...) {
    return false;
  }
}

bool decided() noexcept { return run().Decided; }
bool onDevice() noexcept { return run().OnCuda; }

void phaseBegin(uint8_t P) noexcept {
  CudaRun &R = run();
  if (R.Marking.load(std::memory_order_acquire))
    R.Timeline->phase(P);
}

bool resolveTimeline() noexcept {
  CudaRun &R = run();
  if (!R.OnCuda || !R.Timeline)
    return false;
  if (!R.TimelineResolved) {
    try {
      R.Marking.store(false, std::memory_order_relaxed);
      torch::cuda::synchronize(R.Device);
      R.TimelineTimes = R.Timeline->resolve(R.Warmup);
      R.TimelineResolved = true;
    } catch (...) {
      R.TimelineProblem = "the timeline's events could not be read";
      return false;
    }
  }
  return R.TimelineTimes.Dropped == 0;
}

double iterationMs(int Index) noexcept {
  const CudaRun &R = run();
  if (!R.TimelineResolved || R.TimelineTimes.Dropped || Index < 0 ||
      size_t(Index) >= R.TimelineTimes.IterationMs.size())
    return -1;
  return R.TimelineTimes.IterationMs[size_t(Index)];
}

bool phaseSplitMs(std::array<double, NumPhases> &Split) noexcept {
  const CudaRun &R = run();
  const PhaseTimeline::Times &T = R.TimelineTimes;
  // Only a breakdown run marks its phases.
  if (!R.TimelineResolved || T.Dropped || !R.TraceWanted ||
      T.PhaseIterations <= 0)
    return false;
  for (size_t P = 0; P < NumPhases; ++P)
    Split[P] = P < T.PhaseMs.size() ? T.PhaseMs[P] / T.PhaseIterations : 0;
  return true;
}

void programStart(bool Breakdown) noexcept {
  if (!Breakdown || hiddenByEnvironment())
    return;
  try {
    CudaRun &R = run();
    R.Reporter = std::make_shared<DeviceMemoryReporter>(c10::DeviceType::CUDA);
    DeviceMemoryReporter::pushOnThisThread(R.Reporter);
  } catch (...) {
    // No memory kinds on CUDA rather than an exception in the program.
  }
}

const TaggedBytes *deviceMemory() noexcept {
  CudaRun &R = run();
  return R.OnCuda && R.Reporter ? &R.Reporter->bytes() : nullptr;
}

void scopeEnter(int ScopeId) noexcept {
  CudaRun &R = run();
  if (R.Tracing.load(std::memory_order_acquire))
    R.Tracer->enterScope(ScopeId);
  else if (R.TimingEvents.load(std::memory_order_acquire))
    R.EventTimer->enterScope(ScopeId);
}

void scopeExit() noexcept {
  CudaRun &R = run();
  if (R.Tracing.load(std::memory_order_acquire))
    R.Tracer->exitScope();
  else if (R.TimingEvents.load(std::memory_order_acquire))
    R.EventTimer->exitScope();
}

void describeDevice(RunResult &Result) noexcept {
  CudaRun &R = run();
  // An out-of-memory in the first iterations (cuBLAS making its handle)
  // comes before the boundary that decides: decide now, while CUDA lives.
  if (!R.Decided && !Result.EndedEarly && !hiddenByEnvironment()) {
    try {
      decide(R, /*Index=*/1, /*Warmup=*/0, /*Trace=*/false,
             /*MostIterations=*/0);
    } catch (...) {
    }
  }
  Result.Cuda = R.Decided || R.Use == CudaUse::Unused ? R.Use
                : hiddenByEnvironment()               ? CudaUse::Hidden
                                                      : CudaUse::Unknown;
  if (!R.OnCuda)
    return;
  RunResult::GpuInfo &Gpu = Result.Gpu;
  Gpu.Used = true;
  Result.DeviceType = rt::nameOf(rt::DeviceType::CUDA);
  Gpu.HostPeakBytes = Result.PeakBytes;
  if (Result.EndedEarly) {
    // After main returned: no call into CUDA, whose runtime may be gone.
    Result.PeakBytes = R.PeakAtLastBoundary;
    Gpu.Note = "the program ended before the run did: the peak is the "
               "allocator's at the last measured iteration, and the device "
               "was not asked for its name and memory";
    return;
  }
  try {
    torch::cuda::synchronize(R.Device);
    c10::cuda::CUDAGuard Guard(R.Device);
    cudaDeviceProp Properties;
    if (cudaGetDeviceProperties(&Properties, R.Device) == cudaSuccess)
      Result.DeviceName = Properties.name;
    size_t Free = 0, Total = 0;
    if (cudaMemGetInfo(&Free, &Total) == cudaSuccess) {
      Gpu.MemoryFreeBytes = int64_t(Free);
      Gpu.MemoryTotalBytes = int64_t(Total);
    }
    auto Stats = c10::cuda::CUDACachingAllocator::getDeviceStats(R.Device);
    Gpu.AllocatorPeakBytes = Stats.allocated_bytes[0].peak;
    Gpu.AllocatorPeakReservedBytes = Stats.reserved_bytes[0].peak;
    Gpu.AllocatorReservedBytes = Stats.reserved_bytes[0].current;
    // What the program could hold: free memory and its own cache.
    Gpu.MemoryCapacityBytes = Gpu.MemoryFreeBytes + Gpu.AllocatorReservedBytes;
    Result.PeakBytes = Gpu.AllocatorPeakBytes;
  } catch (...) {
    Gpu.Note = "the CUDA allocator's statistics could not be read";
  }
  if (R.OutOfMemory.load())
    appendNote(Gpu, "the CUDA caching allocator ran out of memory");
  if (!R.TimelineProblem.empty())
    appendNote(Gpu,
               "iteration times from the CPU's clock: " + R.TimelineProblem);
  else if (R.TimelineResolved && R.TimelineTimes.Dropped)
    appendNote(Gpu, "iteration times from the CPU's clock: " +
                        std::to_string(R.TimelineTimes.Dropped) +
                        " timeline events dropped (the pool was spent)");
  if (R.TraceWanted && !R.Tracer)
    appendNote(Gpu, (R.EventTimer ? "gpu_ms from CUDA events, not CUPTI: "
                                  : "no gpu_ms: ") +
                        R.CuptiProblem +
                        (R.EventTimer || R.EventsProblem.empty()
                             ? ""
                             : "; CUDA events: " + R.EventsProblem));
}

namespace {

/// The memory kinds come from the reporter's tags; what the allocator's
/// peak holds beyond them (blocks it never saw) is untracked.
void completeMemory(CudaRun &R, RunResult &Result,
                    const std::vector<uintptr_t> &GradientBlocks) {
  RunResult::GpuInfo &Gpu = Result.Gpu;
  if (!R.Reporter) {
    // No tags on the device: its whole peak is untracked.
    Result.Memory = RunResult::Breakdown();
    Result.Memory.Untracked = Result.PeakBytes;
    for (RunResult::Layer &Layer : Result.Layers)
      Layer.ActivationBytes = 0;
    return;
  }
  const DeviceMemoryReporter &Reporter = *R.Reporter;
  Gpu.TaggedPeakBytes = Reporter.bytes().peakBytes();
  if (Reporter.untaggedBlocks())
    appendNote(Gpu, std::to_string(Reporter.untaggedBlocks()) +
                        " device blocks untagged (the reporter's table was "
                        "full)");
  if (!Result.HasMemoryBreakdown)
    return;
  // Blocks held from warm-up through the window (cuBLAS's workspaces): a
  // kind of their own, out of the activations, temporaries and layers.
  takeOutWorkspace(Result, R.Reporter->workspace(std::unordered_set<uintptr_t>(
                               GradientBlocks.begin(), GradientBlocks.end())));
  RunResult::Breakdown &M = Result.Memory;
  int64_t Kinds = M.Weights + M.Gradients + M.OptimizerState + M.Activations +
                  M.Data + M.Temporaries + M.Setup + M.Untracked + M.Workspace;
  if (Kinds <= Result.PeakBytes)
    M.Untracked += Result.PeakBytes - Kinds;
  else
    appendNote(Gpu, "the tagged device bytes exceed the allocator's peak by " +
                        std::to_string(Kinds - Result.PeakBytes) +
                        " (frees the reporter did not see)");
}

/// gpu_ms per row from CUPTI's kernels or the events' scope times.
void completeGpuTimes(CudaRun &R, RunResult &Result) {
  RunResult::GpuInfo &Gpu = Result.Gpu;
  GpuTimes Times;
  const char *Source = nullptr;
  // The kernels and scope events cover the whole window, epoch ends too.
  int Window = windowIterations(Result);
  try {
    if (R.Tracer) {
      Times = R.Tracer->finish(Window);
      Gpu.CuptiLoaded = true;
      Source = rt::nameOf(rt::GpuTimeSource::Cupti);
      // A call that failed after the start (one API kind refused, the
      // final flush): what the figures below may lack.
      if (std::string Failure = R.Cupti->failure(); !Failure.empty())
        appendNote(Gpu, "CUPTI: " + Failure);
      if (Times.DroppedRecords)
        appendNote(Gpu, "CUPTI dropped " +
                            std::to_string(Times.DroppedRecords) +
                            " records: gpu_ms is low");
    } else if (R.EventTimer) {
      Times = R.EventTimer->times(Window);
      R.EventTimer->stop();
      Source = rt::nameOf(rt::GpuTimeSource::CudaEvents);
      if (Times.DroppedRecords)
        appendNote(Gpu, std::to_string(Times.DroppedRecords) +
                            " scope events dropped (the pool was spent): "
                            "gpu_ms is low");
    }
  } catch (...) {
    appendNote(Gpu, R.Tracer ? "CUPTI's records could not be read"
                             : "the CUDA events could not be read");
    return;
  }
  if (!Source)
    return;
  Gpu.GpuMsSource = Source;
  Gpu.Kernels = Times.Kernels;
  Gpu.DroppedRecords = Times.DroppedRecords;
  bool ScopesRan = false;
  for (const RunResult::Layer &Layer : Result.Layers)
    ScopesRan |= Layer.ScopeId >= 0;
  // Kernels that ran but none of which found its scope: the layers' time is
  // unknown, which a 0 would hide.
  std::string Unattributed =
      R.Tracer ? unattributedNote(Times, ScopesRan) : std::string();
  if (!Unattributed.empty())
    appendNote(Gpu, Unattributed);
  // No kernel at all: the (unscoped) row's 0 is as unknown as the others.
  bool NoKernels = !Unattributed.empty() && Times.Kernels == 0;
  for (RunResult::Layer &Layer : Result.Layers) {
    auto It = Times.ScopeMs.find(Layer.ScopeId);
    Layer.GpuMs = NoKernels                   ? -1
                  : Layer.ScopeId < 0         ? Times.UnscopedMs
                  : !Unattributed.empty()     ? -1
                  : It == Times.ScopeMs.end() ? 0
                                              : It->second;
  }
}

} // namespace

void completeLayers(RunResult &Result,
                    const std::vector<uintptr_t> &GradientBlocks) noexcept {
  CudaRun &R = run();
  if (!R.OnCuda)
    return;
  R.Tracing.store(false, std::memory_order_relaxed);
  R.TimingEvents.store(false, std::memory_order_relaxed);
  try {
    completeMemory(R, Result, GradientBlocks);
  } catch (...) {
    appendNote(Result.Gpu, "the device memory kinds could not be completed");
  }
  // After main returned neither CUPTI nor the events are read: the CUDA
  // runtime may be gone.
  if (!Result.EndedEarly)
    completeGpuTimes(R, Result);
}

#else // !SKYLINE_WITH_CUDA: a LibTorch without CUDA runs on the CPU only.

void iterationBegin(int, int, bool, MemoryTracker::OutOfMemoryHandler,
                    int) noexcept {}
void phaseBegin(uint8_t) noexcept {}
bool resolveTimeline() noexcept { return false; }
double iterationMs(int) noexcept { return -1; }
bool phaseSplitMs(std::array<double, NumPhases> &) noexcept { return false; }
bool cuptiStarted() noexcept { return false; }
bool evaluationBoundary(bool, int64_t &) noexcept { return false; }
bool mayUseDevice() noexcept { return false; }
bool decided() noexcept { return true; }
bool onDevice() noexcept { return false; }
void programStart(bool) noexcept {}
const TaggedBytes *deviceMemory() noexcept { return nullptr; }
void scopeEnter(int) noexcept {}
void scopeExit() noexcept {}
void describeDevice(RunResult &Result) noexcept {
  Result.Cuda = CudaUse::NotBuilt;
}
void completeLayers(RunResult &, const std::vector<uintptr_t> &) noexcept {}

#endif

} // namespace skyline::rt::cuda
