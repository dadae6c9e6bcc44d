//===- MemoryTracker.h - Every CPU allocation, counted ----------*- C++ -*-===//
//
// A CPU allocator that wraps LibTorch's default one (c10::SetCPUAllocator),
// so it sees every CPU allocation on every thread, DataLoader workers
// included. Each allocation is tagged with the phase it was made in; live
// bytes per phase are counters, snapshotted at the peak. A budget turns the
// CPU's overcommitted memory into a real limit: the allocation that would
// cross it calls the out-of-memory handler instead. Forward-phase allocations
// are also counted per module-call scope (the allocating thread's innermost
// one), which gives each layer its activation bytes.
//
// The hot path allocates nothing: the bookkeeping lives in a 64-byte header
// in front of each block, and the counters are relaxed atomics.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_MEMORYTRACKER_H
#define SKYLINE_RUNTIME_MEMORYTRACKER_H

#include <c10/core/Allocator.h>

#include <array>
#include <atomic>
#include <cstdint>

namespace skyline::rt {

enum class Phase : uint8_t { Construction, Data, Forward, Backward, Optimizer };
constexpr size_t NumPhases = 5;
const char *phaseName(Phase P);

using PhaseBytes = std::array<int64_t, NumPhases>;

/// Module-call scope ids run from 0 to MaxScopes - 1; slot MaxScopes counts
/// forward allocations made outside every scope.
constexpr int MaxScopes = 4096;
constexpr int UnscopedSlot = MaxScopes;
using ScopeBytes = std::array<int64_t, MaxScopes + 1>;

class MemoryTracker final : public c10::Allocator {
public:
  /// Called, instead of allocating, when an allocation would cross the
  /// budget. It must not return normally: exit, or throw.
  using OutOfMemoryHandler = void (*)(size_t Requested, int64_t Live,
                                      int64_t Budget);

  /// Wraps the CPU allocator in effect now and installs itself in its place.
  static MemoryTracker &install();
  /// Puts the wrapped allocator back (tests; a run ends the process instead).
  void uninstall();

  c10::DataPtr allocate(size_t Bytes) override;
  c10::DeleterFnPtr raw_deleter() const override {
    return &MemoryTracker::release;
  }
  void copy_data(void *Dest, const void *Src, std::size_t Count) const override;

  void setPhase(Phase P) {
    CurrentPhase.store(uint8_t(P), std::memory_order_relaxed);
  }
  Phase phase() const {
    return Phase(CurrentPhase.load(std::memory_order_relaxed));
  }

  /// The innermost scope of the calling thread (-1: none), which its
  /// forward-phase allocations are counted under.
  static void setThreadScope(int ScopeId);

  /// 0 means no budget.
  void setBudget(int64_t Bytes, OutOfMemoryHandler Handler);

  int64_t liveBytes() const { return Live.load(std::memory_order_relaxed); }
  int64_t peakBytes() const { return Peak.load(std::memory_order_relaxed); }
  /// Live bytes per phase of allocation, now and at the last peak.
  PhaseBytes liveByPhase() const;
  PhaseBytes peakByPhase() const;
  /// Forward-phase bytes per scope slot, now and at the last peak.
  ScopeBytes liveForwardByScope() const;
  ScopeBytes peakForwardByScope() const;
  /// Starts a new peak from the live bytes (after warm-up).
  void resetPeak();

private:
  MemoryTracker() = default;
  static void release(void *Data);
  void recordPeak(int64_t NowLive);
  void snapshotPeak();

  c10::Allocator *Base = nullptr;
  std::atomic<uint8_t> CurrentPhase{uint8_t(Phase::Construction)};
  std::atomic<int64_t> Live{0};
  std::atomic<int64_t> Peak{0};
  std::array<std::atomic<int64_t>, NumPhases> LivePerPhase{};
  std::array<std::atomic<int64_t>, NumPhases> PeakPerPhase{};
  std::array<std::atomic<int64_t>, MaxScopes + 1> LivePerScope{};
  std::array<std::atomic<int64_t>, MaxScopes + 1> PeakPerScope{};
  /// One past the highest scope slot used: a peak snapshot copies no more.
  std::atomic<int> ScopeSlotsUsed{0};
  std::atomic<int64_t> Budget{0};
  std::atomic<OutOfMemoryHandler> OnOutOfMemory{nullptr};
};

} // namespace skyline::rt

#endif // SKYLINE_RUNTIME_MEMORYTRACKER_H
