//===- MemoryTracker.cpp - Every CPU allocation, counted ------------------===//

#include "skyline/runtime/MemoryTracker.h"

#include <c10/core/CPUAllocator.h>

#include <cstring>

namespace skyline::rt {
namespace {

/// In front of each block: what release() needs. 64 bytes keep the user's
/// data at LibTorch's 64-byte alignment.
struct alignas(64) BlockHeader {
  void *BaseContext;
  c10::DeleterFnPtr BaseDeleter;
  int64_t Bytes;
  int32_t ScopeSlot; // forward allocations only; -1 otherwise
  uint8_t AllocatedIn;
};
static_assert(sizeof(BlockHeader) == 64);

// Above the default allocator's priority (0) and the mobile one's.
constexpr uint8_t TrackerPriority = 100;

MemoryTracker *Installed = nullptr; // the tracker LibTorch allocates with now
MemoryTracker *Singleton = nullptr; // frees its blocks even after uninstall()

thread_local int ThreadScope = -1;

void raiseTo(std::atomic<int> &Value, int AtLeast) {
  int Old = Value.load(std::memory_order_relaxed);
  while (Old < AtLeast &&
         !Value.compare_exchange_weak(Old, AtLeast, std::memory_order_relaxed))
    ;
}

} // namespace

const char *phaseName(Phase P) {
  switch (P) {
  case Phase::Construction:
    return "construction";
  case Phase::Data:
    return "data";
  case Phase::Forward:
    return "forward";
  case Phase::Backward:
    return "backward";
  case Phase::Optimizer:
    return "optimizer";
  }
  return "unknown";
}

MemoryTracker &MemoryTracker::install() {
  // Lives past static destructors.
  static MemoryTracker *Tracker = new MemoryTracker();
  Singleton = Tracker;
  if (Installed != Tracker) {
    Tracker->Base = c10::GetCPUAllocator();
    c10::SetCPUAllocator(Tracker, TrackerPriority);
    Installed = Tracker;
  }
  return *Tracker;
}

void MemoryTracker::uninstall() {
  if (Installed != this)
    return;
  // SetCPUAllocator refuses a lower priority: give the base the same one.
  c10::SetCPUAllocator(Base, TrackerPriority);
  Installed = nullptr;
}

void MemoryTracker::setThreadScope(int ScopeId) { ThreadScope = ScopeId; }

void MemoryTracker::setBudget(int64_t Bytes, OutOfMemoryHandler Handler) {
  OnOutOfMemory.store(Handler);
  Budget.store(Bytes);
}

c10::DataPtr MemoryTracker::allocate(size_t Bytes) {
  int64_t Limit = Budget.load(std::memory_order_relaxed);
  int64_t NowLive = Live.load(std::memory_order_relaxed);
  if (Limit > 0 && NowLive + int64_t(Bytes) > Limit)
    if (OutOfMemoryHandler Handler = OnOutOfMemory.load())
      Handler(Bytes, NowLive, Limit);

  c10::DataPtr Block = Base->allocate(Bytes + sizeof(BlockHeader));
  auto *Header = static_cast<BlockHeader *>(Block.get());
  Header->BaseContext = Block.get_context();
  Header->BaseDeleter = Block.get_deleter();
  Header->Bytes = int64_t(Bytes);
  Header->AllocatedIn = CurrentPhase.load(std::memory_order_relaxed);
  Header->ScopeSlot = -1;
  if (Header->AllocatedIn == uint8_t(Phase::Forward)) {
    int Scope = ThreadScope;
    bool Scoped = Scope >= 0 && Scope < MaxScopes;
    Header->ScopeSlot = Scoped ? Scope : UnscopedSlot;
    if (Scoped)
      raiseTo(ScopeSlotsUsed, Scope + 1);
  }
  c10::Device Device = Block.device();
  // The base's context now belongs to our header; release() hands it back.
  Block.release_context();

  int64_t After = Live.fetch_add(int64_t(Bytes), std::memory_order_relaxed) +
                  int64_t(Bytes);
  LivePerPhase[Header->AllocatedIn].fetch_add(int64_t(Bytes),
                                              std::memory_order_relaxed);
  if (Header->ScopeSlot >= 0)
    LivePerScope[Header->ScopeSlot].fetch_add(int64_t(Bytes),
                                              std::memory_order_relaxed);
  recordPeak(After);
  // The context is the data pointer itself, as raw_allocate() requires
  // (oneDNN's convolutions allocate through it); release() finds the header.
  return {Header + 1, Header + 1, &MemoryTracker::release, Device};
}

void MemoryTracker::release(void *Data) {
  auto *Header = static_cast<BlockHeader *>(Data) - 1;
  MemoryTracker &Tracker = *Singleton;
  Tracker.Live.fetch_sub(Header->Bytes, std::memory_order_relaxed);
  Tracker.LivePerPhase[Header->AllocatedIn].fetch_sub(
      Header->Bytes, std::memory_order_relaxed);
  if (Header->ScopeSlot >= 0)
    Tracker.LivePerScope[Header->ScopeSlot].fetch_sub(
        Header->Bytes, std::memory_order_relaxed);
  Header->BaseDeleter(Header->BaseContext);
}

void MemoryTracker::copy_data(void *Dest, const void *Src,
                              std::size_t Count) const {
  std::memcpy(Dest, Src, Count);
}

void MemoryTracker::recordPeak(int64_t NowLive) {
  int64_t Old = Peak.load(std::memory_order_relaxed);
  while (NowLive > Old)
    if (Peak.compare_exchange_weak(Old, NowLive, std::memory_order_relaxed)) {
      snapshotPeak();
      return;
    }
}

void MemoryTracker::snapshotPeak() {
  // Racy against other threads by a few blocks at most: a snapshot.
  for (size_t I = 0; I < NumPhases; ++I)
    PeakPerPhase[I].store(LivePerPhase[I].load(std::memory_order_relaxed),
                          std::memory_order_relaxed);
  int Used = ScopeSlotsUsed.load(std::memory_order_relaxed);
  for (int I = 0; I < Used; ++I)
    PeakPerScope[I].store(LivePerScope[I].load(std::memory_order_relaxed),
                          std::memory_order_relaxed);
  PeakPerScope[UnscopedSlot].store(
      LivePerScope[UnscopedSlot].load(std::memory_order_relaxed),
      std::memory_order_relaxed);
}

PhaseBytes MemoryTracker::liveByPhase() const {
  PhaseBytes Result{};
  for (size_t I = 0; I < NumPhases; ++I)
    Result[I] = LivePerPhase[I].load(std::memory_order_relaxed);
  return Result;
}

PhaseBytes MemoryTracker::peakByPhase() const {
  PhaseBytes Result{};
  for (size_t I = 0; I < NumPhases; ++I)
    Result[I] = PeakPerPhase[I].load(std::memory_order_relaxed);
  return Result;
}

ScopeBytes MemoryTracker::liveForwardByScope() const {
  ScopeBytes Result{};
  for (size_t I = 0; I < Result.size(); ++I)
    Result[I] = LivePerScope[I].load(std::memory_order_relaxed);
  return Result;
}

ScopeBytes MemoryTracker::peakForwardByScope() const {
  ScopeBytes Result{};
  for (size_t I = 0; I < Result.size(); ++I)
    Result[I] = PeakPerScope[I].load(std::memory_order_relaxed);
  return Result;
}

void MemoryTracker::resetPeak() {
  Peak.store(Live.load(std::memory_order_relaxed), std::memory_order_relaxed);
  snapshotPeak();
}

} // namespace skyline::rt
