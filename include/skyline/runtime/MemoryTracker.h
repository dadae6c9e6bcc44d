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
// in front of each block, and the counters are relaxed atomics. The tagging
// and the peak's snapshot (TaggedBytes) are shared with the device reporter
// (DeviceMemoryReporter.h), which tags CUDA memory the same way.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_MEMORYTRACKER_H
#define SKYLINE_RUNTIME_MEMORYTRACKER_H

#include "skyline/runtime/RunFormat.h"

#include <c10/core/Allocator.h>

#include <array>
#include <atomic>
#include <cstdint>

namespace skyline::rt {

using PhaseBytes = std::array<int64_t, NumPhases>;

/// Module-call scope ids run from 0 to MaxScopes - 1; slot MaxScopes counts
/// forward allocations made outside every scope.
constexpr int MaxScopes = 4096;
constexpr int UnscopedSlot = MaxScopes;
using ScopeBytes = std::array<int64_t, MaxScopes + 1>;

/// Setup statement ids (the statements before the training loop) run from 0
/// to MaxSetupStatements - 1 (RunFormat.h).
using SetupBytes = std::array<int64_t, MaxSetupStatements>;

/// Bytes held from warm-up through the measured iterations (the workspace
/// kind, DeviceMemoryReporter::workspace): in all, by the phase they were
/// tagged with, the forward ones by scope slot.
struct WorkspaceBytes {
  int64_t Bytes = 0;
  PhaseBytes ByPhase{};
  ScopeBytes ForwardByScope{};
};

/// What an allocation is tagged with: the phase it was made in and, for a
/// forward-phase one, its scope slot (else -1); for a construction-phase
/// one, the setup statement running then (else -1).
struct AllocationTag {
  int32_t ScopeSlot = -1;
  int16_t SetupSlot = -1;
  uint8_t Phase = 0;
};

/// Live bytes per tag, and their snapshot at the peak of the live total:
/// the accounting that the CPU allocator wrapper (MemoryTracker) and the
/// device reporter (DeviceMemoryReporter) share. Relaxed atomics; nothing
/// here allocates.
class TaggedBytes {
public:
  /// The run's phase (one for the process) and the calling thread's
  /// innermost scope (-1: none): what allocations made now are tagged with,
  /// by every allocator the run watches.
  static void setPhase(Phase P);
  static Phase phase();
  static void setThreadScope(int ScopeId);
  /// The setup statement running now (-1: none), on every thread: what
  /// construction-phase allocations are tagged with.
  static void setSetupStatement(int StatementId);

  /// The tag of an allocation the calling thread makes now.
  AllocationTag tagNow();
  /// An allocation of Bytes with Tag is live (a new peak is snapshotted) or
  /// no longer.
  void add(AllocationTag Tag, int64_t Bytes);
  void remove(AllocationTag Tag, int64_t Bytes);

  int64_t liveBytes() const { return Live.load(std::memory_order_relaxed); }
  int64_t peakBytes() const { return Peak.load(std::memory_order_relaxed); }
  /// Live bytes per phase of allocation, now and at the last peak.
  PhaseBytes liveByPhase() const;
  PhaseBytes peakByPhase() const;
  /// Forward-phase bytes per scope slot, now and at the last peak.
  ScopeBytes liveForwardByScope() const;
  ScopeBytes peakForwardByScope() const;
  /// Construction-phase bytes per setup statement at the last peak.
  SetupBytes peakBySetupStatement() const;
  /// Starts a new peak from the live bytes (after warm-up).
  void resetPeak();

private:
  void recordPeak(int64_t NowLive);
  void snapshotPeak();

  std::atomic<int64_t> Live{0};
  std::atomic<int64_t> Peak{0};
  std::array<std::atomic<int64_t>, NumPhases> LivePerPhase{};
  std::array<std::atomic<int64_t>, NumPhases> PeakPerPhase{};
  std::array<std::atomic<int64_t>, MaxScopes + 1> LivePerScope{};
  std::array<std::atomic<int64_t>, MaxScopes + 1> PeakPerScope{};
  /// One past the highest scope slot used: a peak snapshot copies no more.
  std::atomic<int> ScopeSlotsUsed{0};
  std::array<std::atomic<int64_t>, MaxSetupStatements> LivePerSetup{};
  std::array<std::atomic<int64_t>, MaxSetupStatements> PeakPerSetup{};
  std::atomic<int> SetupSlotsUsed{0};
};

/// The CPU allocator wrapper; its counts are the CPU's tagged bytes.
class MemoryTracker final : public c10::Allocator, public TaggedBytes {
public:
  /// Called, instead of allocating, when an allocation would cross the
  /// budget. It exits or throws; or it returns, having lifted the budget,
  /// and the allocation goes ahead (a CUDA run: docs/gpu.md).
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

  /// The tag of a block this tracker allocated (Data is its data pointer,
  /// Deleter its deleter); null for any other block.
  static const AllocationTag *tagOf(const void *Data,
                                    c10::DeleterFnPtr Deleter);

  /// 0 means no budget.
  void setBudget(int64_t Bytes, OutOfMemoryHandler Handler);

private:
  MemoryTracker() = default;
  static void release(void *Data);

  c10::Allocator *Base = nullptr;
  std::atomic<int64_t> Budget{0};
  std::atomic<OutOfMemoryHandler> OnOutOfMemory{nullptr};
};

} // namespace skyline::rt

#endif // SKYLINE_RUNTIME_MEMORYTRACKER_H
