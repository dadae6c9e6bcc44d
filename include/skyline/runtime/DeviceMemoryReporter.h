//===- DeviceMemoryReporter.h - Device memory, tagged -----------*- C++ -*-===//
//
// Tags device memory the way MemoryTracker tags the CPU's: an allocator that
// calls c10::reportMemoryUsageToProfiler() for each block it hands out (and,
// with a negative size, takes back) reaches the c10::MemoryReportingInfoBase
// of the allocating thread's debug info (DebugInfoKind::PROFILER_STATE).
// This one keeps the live blocks of one device type with their tags (phase,
// forward scope) and counts them in a TaggedBytes, snapshotted at the peak.
//
// Which allocators report (LibTorch 2.x; docs/gpu.md has the details):
// - the CUDA caching allocator, every block it hands out or takes back, the
//   block's size (rounded to 512 bytes, possibly bigger than asked: what
//   its allocated_bytes statistic counts), whatever memoryProfilingEnabled()
//   says;
// - c10's default CPU allocator, the requested size, but only while
//   memoryProfilingEnabled() is true. This reporter says true only when it
//   handles the CPU (tests): a CUDA reporter keeps the CPU side's own size
//   table off, and ignores CPU reports, which MemoryTracker counts already
//   (it wraps that allocator, so a CPU reporter in a run would count its
//   blocks twice).
//
// Threads: the debug info is thread-local. Installed on the main thread, it
// reaches autograd's worker threads (the engine applies the caller's
// at::ThreadLocalState around each node) but not DataLoader workers or
// at::parallel_for's pool; their blocks are left untagged.
//
// The hot path allocates nothing: live blocks sit in a fixed open-addressing
// table made at construction (a full table leaves new blocks untagged and
// counts them), behind a spin lock (the CUDA allocator already serializes
// its reports per device).
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_DEVICEMEMORYREPORTER_H
#define SKYLINE_RUNTIME_DEVICEMEMORYREPORTER_H

#include "skyline/runtime/MemoryTracker.h"

#include <c10/core/Allocator.h>
#include <c10/core/DeviceType.h>
#include <torch/version.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_set>
#include <vector>

// Slot PROFILER_STATE is the profiler's: code that finds something there
// casts it to ProfilerStateBase. Where that class exists the reporter is
// one, disabled, so such code sees a profiler that is off.
#if TORCH_VERSION_MAJOR >= 2 &&                                                \
    __has_include(<torch/csrc/profiler/orchestration/observer.h>)
#include <torch/csrc/profiler/orchestration/observer.h>
#define SKYLINE_REPORTER_IS_PROFILER_STATE 1
#endif

namespace skyline::rt {

#ifdef SKYLINE_REPORTER_IS_PROFILER_STATE
using MemoryReporterBase = torch::profiler::impl::ProfilerStateBase;
#else
using MemoryReporterBase = c10::MemoryReportingInfoBase;
#endif

class DeviceMemoryReporter final : public MemoryReporterBase {
public:
#if TORCH_VERSION_MAJOR >= 2
  using AllocatorTotal = size_t;
#else
  using AllocatorTotal = int64_t;
#endif

  /// Counts the blocks of devices of type Handles; room for TableSlots live
  /// blocks (rounded up to a power of two; three quarters are used).
  explicit DeviceMemoryReporter(c10::DeviceType Handles,
                                size_t TableSlots = size_t(1) << 16);

  /// Pushes the reporter on the calling thread's debug info, for the rest
  /// of the thread (the threads it hands its state to see it too); the
  /// reporter must outlive its use. A test can use c10::DebugInfoGuard.
  static void pushOnThisThread(std::shared_ptr<DeviceMemoryReporter> Reporter);

  /// The hook; a block of another device type is ignored.
  void reportMemoryUsage(void *Ptr, int64_t Bytes, AllocatorTotal Allocated,
                         AllocatorTotal Reserved, c10::Device Device) override;
  bool memoryProfilingEnabled() const override;
#ifdef SKYLINE_REPORTER_IS_PROFILER_STATE
  torch::profiler::impl::ActiveProfilerType profilerType() override {
    return torch::profiler::impl::ActiveProfilerType::NONE;
  }
#endif

  c10::DeviceType handles() const { return Handles; }

  /// The measured iterations begin (after warm-up): blocks allocated from
  /// now on are the window's, those before it warm-up's or construction's.
  void startMeasuring() { Measuring.store(true, std::memory_order_relaxed); }

  /// Workspace: blocks allocated in a forward or backward phase before the
  /// measured iterations began and still live now, at the end of the run,
  /// less Exclude (the gradients' blocks, which the gradients kind counts).
  /// A block made in warm-up and never freed through every measured
  /// iteration is no iteration's activation or temporary: it is what cuBLAS
  /// (its workspace per handle and stream, held for the process, made by
  /// the first matmul through the caching allocator), cuDNN's cached plans
  /// or a program's own caches keep. Being live from before the window to
  /// its end, it was live at the peak, so its bytes are in the peak's
  /// phases (and the forward ones in its scope's) and can be taken out.
  using Workspace = WorkspaceBytes;
  Workspace workspace(const std::unordered_set<uintptr_t> &Exclude);
  /// The tagged live bytes and their peak.
  TaggedBytes &bytes() { return Bytes; }
  const TaggedBytes &bytes() const { return Bytes; }

  /// Blocks left untagged because the table was full.
  uint64_t untaggedBlocks() const { return Untagged.load(); }
  /// Frees of blocks it never saw (allocated before it was installed, or on
  /// a thread that does not see it).
  uint64_t unknownFrees() const { return UnknownFrees.load(); }
  /// Blocks reported again while still live: their free went to a thread
  /// that does not see the reporter; the stale entry is dropped then.
  uint64_t unseenFrees() const { return UnseenFrees.load(); }

private:
  struct LiveBlock {
    uintptr_t Ptr = 0; // 0: an empty slot
    int64_t Bytes = 0;
    AllocationTag Tag;
    bool BeforeMeasuring = false;
  };

  size_t home(uintptr_t Ptr) const;
  /// The slot holding Ptr, or the empty slot that ends its probe.
  size_t find(uintptr_t Ptr) const;
  void erase(size_t Slot);
  void lock();
  void unlock();

  const c10::DeviceType Handles;
  TaggedBytes Bytes;
  std::vector<LiveBlock> Table; // made once, never grown
  size_t Mask = 0;
  int Shift = 63; // 64 - log2(Table.size())
  size_t Used = 0;
  std::atomic_flag Busy = ATOMIC_FLAG_INIT;
  std::atomic<bool> Measuring{false};
  std::atomic<uint64_t> Untagged{0}, UnknownFrees{0}, UnseenFrees{0};
};

} // namespace skyline::rt

#endif // SKYLINE_RUNTIME_DEVICEMEMORYREPORTER_H
