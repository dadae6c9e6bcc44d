//===- CudaSupport.cpp - The runtime's CUDA side -------------------------===//
//
// Compiled against any LibTorch; the parts that need c10/cuda only where
// CMake found LibTorch's CUDA libraries (SKYLINE_WITH_CUDA), so a CPU-only
// LibTorch (Debian's 1.13) builds the same runtime with no-op hooks.
//
// A run is a CUDA run when CUDA is not hidden, a device is available, and by
// the end of warm-up the caching allocator holds memory on a device whose
// primary context the program made. Only then is CUPTI loaded.
//
//===----------------------------------------------------------------------===//

#include "skyline/runtime/CudaSupport.h"
#include "skyline/runtime/GpuActivity.h"

#include <torch/version.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>

#ifdef SKYLINE_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
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

struct CudaRun {
  /// Read on the hot path (scope entry and exit, backward ops).
  std::atomic<bool> Tracing{false};
  bool Decided = false;
  bool OnCuda = false;
  bool TraceWanted = false;
  c10::DeviceIndex Device = 0;
  std::unique_ptr<ActivityApi> Cupti;
  std::unique_ptr<GpuTracer> Tracer;
  std::string CuptiProblem; // why there is no gpu_ms
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

void startTracing(CudaRun &R) {
  std::string Failure;
  R.Cupti = loadCupti(cuptiCandidates(), Failure);
  if (!R.Cupti) {
    R.CuptiProblem = Failure;
    return;
  }
  R.Tracer = std::make_unique<GpuTracer>(*R.Cupti);
  if (!R.Tracer->start()) {
    R.CuptiProblem = "CUPTI did not start: " + R.Cupti->failure();
    R.Tracer.reset();
    return;
  }
  // Release: a thread that sees Tracing sees the tracer.
  R.Tracing.store(true, std::memory_order_release);
}

void decide(CudaRun &R, int Index, int Warmup, bool Trace) {
  if (hiddenByEnvironment() || !torch::cuda::is_available()) {
    R.Decided = true;
    return;
  }
  if (!findUsedDevice(R.Device)) {
    // The model may move to the GPU inside the loop: ask until warm-up ends.
    R.Decided = Index >= Warmup;
    return;
  }
  R.Decided = R.OnCuda = true;
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
  if (Trace)
    startTracing(R);
}

} // namespace

void iterationBegin(int Index, int Warmup, bool Trace,
                    MemoryTracker::OutOfMemoryHandler OnOutOfMemory) noexcept {
  CudaRun &R = run();
  try {
    R.OnOutOfMemory = OnOutOfMemory;
    R.TraceWanted = Trace;
    if (!R.Decided)
      decide(R, Index, Warmup, Trace);
    if (!R.OnCuda)
      return;
    // Kernels run asynchronously: the boundary is where the last one ended.
    torch::cuda::synchronize(R.Device);
    if (Index == Warmup) {
      c10::cuda::CUDACachingAllocator::resetPeakStats(R.Device);
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

void scopeEnter(int ScopeId) noexcept {
  CudaRun &R = run();
  if (R.Tracing.load(std::memory_order_acquire))
    R.Tracer->enterScope(ScopeId);
}

void scopeExit() noexcept {
  CudaRun &R = run();
  if (R.Tracing.load(std::memory_order_acquire))
    R.Tracer->exitScope();
}

void describeDevice(RunResult &Result) noexcept {
  CudaRun &R = run();
  if (!R.OnCuda)
    return;
  RunResult::GpuInfo &Gpu = Result.Gpu;
  Gpu.Used = true;
  Result.DeviceType = "cuda";
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
    Gpu.Note = (Gpu.Note.empty() ? "" : Gpu.Note + "; ") +
               "the CUDA caching allocator ran out of memory";
  if (R.TraceWanted && !R.Tracer)
    Gpu.Note = (Gpu.Note.empty() ? "" : Gpu.Note + "; ") +
               "no gpu_ms: " + R.CuptiProblem;
}

void completeLayers(RunResult &Result) noexcept {
  CudaRun &R = run();
  if (!R.OnCuda)
    return;
  // The kinds come from the CPU allocator's tags, which see no device
  // memory: until a CUDA reporter tags it, the device's peak is untracked.
  Result.Memory = RunResult::Breakdown();
  Result.Memory.Untracked = Result.PeakBytes;
  for (RunResult::Layer &Layer : Result.Layers)
    Layer.ActivationBytes = 0;
  R.Tracing.store(false, std::memory_order_relaxed);
  if (!R.Tracer || Result.EndedEarly) // CUPTI is not flushed after main
    return;
  RunResult::GpuInfo &Gpu = Result.Gpu;
  try {
    GpuTimes Times = R.Tracer->finish(Result.Iterations);
    Gpu.CuptiLoaded = true;
    Gpu.Kernels = Times.Kernels;
    Gpu.DroppedRecords = Times.DroppedRecords;
    for (RunResult::Layer &Layer : Result.Layers) {
      auto It = Times.ScopeMs.find(Layer.ScopeId);
      Layer.GpuMs = Layer.ScopeId < 0           ? Times.UnscopedMs
                    : It == Times.ScopeMs.end() ? 0
                                                : It->second;
    }
    if (Times.DroppedRecords)
      Gpu.Note = "CUPTI dropped " + std::to_string(Times.DroppedRecords) +
                 " records: gpu_ms is low";
  } catch (...) {
    Gpu.Note = "CUPTI's records could not be read";
  }
}

#else // !SKYLINE_WITH_CUDA: a LibTorch without CUDA runs on the CPU only.

void iterationBegin(int, int, bool,
                    MemoryTracker::OutOfMemoryHandler) noexcept {}
bool cuptiStarted() noexcept { return false; }
void scopeEnter(int) noexcept {}
void scopeExit() noexcept {}
void describeDevice(RunResult &) noexcept {}
void completeLayers(RunResult &) noexcept {}

#endif

} // namespace skyline::rt::cuda
