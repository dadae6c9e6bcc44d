//===- MemoryTracker.cpp - Every allocation, counted ----------------------===//
//
// The CPU allocator wrapper, the device reporter, and the tagged counts both
// keep (TaggedBytes).
//
//===----------------------------------------------------------------------===//

#include "skyline/runtime/MemoryTracker.h"
#include "skyline/runtime/DeviceMemoryReporter.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <cstring>
#include <thread>

namespace skyline::rt {
namespace {

/// In front of each block: what release() needs. 64 bytes keep the user's
/// data at LibTorch's 64-byte alignment.
struct alignas(64) BlockHeader {
  void *BaseContext;
  c10::DeleterFnPtr BaseDeleter;
  int64_t Bytes;
  AllocationTag Tag;
};
static_assert(sizeof(BlockHeader) == 64);

// Above the default allocator's priority (0) and the mobile one's.
constexpr uint8_t TrackerPriority = 100;

MemoryTracker *Installed = nullptr; // the tracker LibTorch allocates with now
MemoryTracker *Singleton = nullptr; // frees its blocks even after uninstall()

std::atomic<uint8_t> CurrentPhase{uint8_t(Phase::Construction)};
thread_local int ThreadScope = -1;
std::atomic<int> CurrentSetup{-1};

void raiseTo(std::atomic<int> &Value, int AtLeast) {
  int Old = Value.load(std::memory_order_relaxed);
  while (Old < AtLeast &&
         !Value.compare_exchange_weak(Old, AtLeast, std::memory_order_relaxed))
    ;
}

} // namespace

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

void MemoryTracker::setBudget(int64_t Bytes, OutOfMemoryHandler Handler) {
  OnOutOfMemory.store(Handler);
  Budget.store(Bytes);
}

c10::DataPtr MemoryTracker::allocate(size_t Bytes) {
  int64_t Limit = Budget.load(std::memory_order_relaxed);
  int64_t NowLive = liveBytes();
  if (Limit > 0 && NowLive + int64_t(Bytes) > Limit)
    if (OutOfMemoryHandler Handler = OnOutOfMemory.load())
      Handler(Bytes, NowLive, Limit);

  c10::DataPtr Block = Base->allocate(Bytes + sizeof(BlockHeader));
  auto *Header = static_cast<BlockHeader *>(Block.get());
  Header->BaseContext = Block.get_context();
  Header->BaseDeleter = Block.get_deleter();
  Header->Bytes = int64_t(Bytes);
  Header->Tag = tagNow();
  c10::Device Device = Block.device();
  // The base's context now belongs to our header; release() hands it back.
  Block.release_context();
  add(Header->Tag, Header->Bytes);
  // The context is the data pointer itself, as raw_allocate() requires
  // (oneDNN's convolutions allocate through it); release() finds the header.
  return {Header + 1, Header + 1, &MemoryTracker::release, Device};
}

void MemoryTracker::release(void *Data) {
  auto *Header = static_cast<BlockHeader *>(Data) - 1;
  Singleton->remove(Header->Tag, Header->Bytes);
  Header->BaseDeleter(Header->BaseContext);
}

const AllocationTag *MemoryTracker::tagOf(const void *Data,
                                          c10::DeleterFnPtr Deleter) {
  if (!Data || Deleter != &MemoryTracker::release)
    return nullptr;
  return &(static_cast<const BlockHeader *>(Data) - 1)->Tag;
}

void MemoryTracker::copy_data(void *Dest, const void *Src,
                              std::size_t Count) const {
  std::memcpy(Dest, Src, Count);
}

void TaggedBytes::setPhase(Phase P) {
  CurrentPhase.store(uint8_t(P), std::memory_order_relaxed);
}

Phase TaggedBytes::phase() {
  return Phase(CurrentPhase.load(std::memory_order_relaxed));
}

void TaggedBytes::setThreadScope(int ScopeId) { ThreadScope = ScopeId; }

void TaggedBytes::setSetupStatement(int StatementId) {
  CurrentSetup.store(StatementId, std::memory_order_relaxed);
}

AllocationTag TaggedBytes::tagNow() {
  AllocationTag Tag;
  Tag.Phase = CurrentPhase.load(std::memory_order_relaxed);
  if (Tag.Phase == uint8_t(Phase::Forward)) {
    int Scope = ThreadScope;
    bool Scoped = Scope >= 0 && Scope < MaxScopes;
    Tag.ScopeSlot = Scoped ? Scope : UnscopedSlot;
    if (Scoped)
      raiseTo(ScopeSlotsUsed, Scope + 1);
  } else if (Tag.Phase == uint8_t(Phase::Construction)) {
    int Setup = CurrentSetup.load(std::memory_order_relaxed);
    if (Setup >= 0 && Setup < MaxSetupStatements) {
      Tag.SetupSlot = int16_t(Setup);
      raiseTo(SetupSlotsUsed, Setup + 1);
    }
  }
  return Tag;
}

void TaggedBytes::add(AllocationTag Tag, int64_t Bytes) {
  int64_t After = Live.fetch_add(Bytes, std::memory_order_relaxed) + Bytes;
  LivePerPhase[Tag.Phase].fetch_add(Bytes, std::memory_order_relaxed);
  if (Tag.ScopeSlot >= 0)
    LivePerScope[Tag.ScopeSlot].fetch_add(Bytes, std::memory_order_relaxed);
  if (Tag.SetupSlot >= 0)
    LivePerSetup[Tag.SetupSlot].fetch_add(Bytes, std::memory_order_relaxed);
  recordPeak(After);
}

void TaggedBytes::remove(AllocationTag Tag, int64_t Bytes) {
  Live.fetch_sub(Bytes, std::memory_order_relaxed);
  LivePerPhase[Tag.Phase].fetch_sub(Bytes, std::memory_order_relaxed);
  if (Tag.ScopeSlot >= 0)
    LivePerScope[Tag.ScopeSlot].fetch_sub(Bytes, std::memory_order_relaxed);
  if (Tag.SetupSlot >= 0)
    LivePerSetup[Tag.SetupSlot].fetch_sub(Bytes, std::memory_order_relaxed);
}

void TaggedBytes::recordPeak(int64_t NowLive) {
  int64_t Old = Peak.load(std::memory_order_relaxed);
  while (NowLive > Old)
    if (Peak.compare_exchange_weak(Old, NowLive, std::memory_order_relaxed)) {
      snapshotPeak();
      return;
    }
}

void TaggedBytes::snapshotPeak() {
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
  int SetupUsed = SetupSlotsUsed.load(std::memory_order_relaxed);
  for (int I = 0; I < SetupUsed; ++I)
    PeakPerSetup[I].store(LivePerSetup[I].load(std::memory_order_relaxed),
                          std::memory_order_relaxed);
}

PhaseBytes TaggedBytes::liveByPhase() const {
  PhaseBytes Result{};
  for (size_t I = 0; I < NumPhases; ++I)
    Result[I] = LivePerPhase[I].load(std::memory_order_relaxed);
  return Result;
}

PhaseBytes TaggedBytes::peakByPhase() const {
  PhaseBytes Result{};
  for (size_t I = 0; I < NumPhases; ++I)
    Result[I] = PeakPerPhase[I].load(std::memory_order_relaxed);
  return Result;
}

ScopeBytes TaggedBytes::liveForwardByScope() const {
  ScopeBytes Result{};
  for (size_t I = 0; I < Result.size(); ++I)
    Result[I] = LivePerScope[I].load(std::memory_order_relaxed);
  return Result;
}

ScopeBytes TaggedBytes::peakForwardByScope() const {
  ScopeBytes Result{};
  for (size_t I = 0; I < Result.size(); ++I)
    Result[I] = PeakPerScope[I].load(std::memory_order_relaxed);
  return Result;
}

SetupBytes TaggedBytes::peakBySetupStatement() const {
  SetupBytes Result{};
  for (size_t I = 0; I < Result.size(); ++I)
    Result[I] = PeakPerSetup[I].load(std::memory_order_relaxed);
  return Result;
}

void TaggedBytes::resetPeak() {
  Peak.store(Live.load(std::memory_order_relaxed), std::memory_order_relaxed);
  snapshotPeak();
}

//===----------------------------------------------------------------------===//
// DeviceMemoryReporter
//===----------------------------------------------------------------------===//

namespace {
size_t roundUpToPowerOfTwo(size_t N) {
  size_t P = 16;
  while (P < N)
    P <<= 1;
  return P;
}
} // namespace

DeviceMemoryReporter::DeviceMemoryReporter(c10::DeviceType Handles,
                                           size_t TableSlots)
#ifdef SKYLINE_REPORTER_IS_PROFILER_STATE
    : MemoryReporterBase(torch::profiler::impl::ProfilerConfig(
          torch::profiler::impl::ProfilerState::Disabled)),
      Handles(Handles),
#else
    : Handles(Handles),
#endif
      Table(roundUpToPowerOfTwo(TableSlots)), Mask(Table.size() - 1) {
  while ((size_t(1) << (64 - Shift)) < Table.size())
    --Shift;
}

void DeviceMemoryReporter::pushOnThisThread(
    std::shared_ptr<DeviceMemoryReporter> Reporter) {
  c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE,
                                   std::move(Reporter));
}

bool DeviceMemoryReporter::memoryProfilingEnabled() const {
  // Turns on the CPU allocator's reports (and its own size table): wanted
  // only when the CPU is what this reporter counts.
  return Handles == c10::DeviceType::CPU;
}

size_t DeviceMemoryReporter::home(uintptr_t Ptr) const {
  // Fibonacci hashing (the product's top bits): blocks are 512- (CUDA) or
  // 64-byte (CPU) aligned, so the low bits of Ptr say nothing.
  return size_t((uint64_t(Ptr) * 0x9E3779B97F4A7C15ull) >> Shift);
}

size_t DeviceMemoryReporter::find(uintptr_t Ptr) const {
  size_t Slot = home(Ptr);
  while (Table[Slot].Ptr != 0 && Table[Slot].Ptr != Ptr)
    Slot = (Slot + 1) & Mask;
  return Slot;
}

void DeviceMemoryReporter::erase(size_t Slot) {
  // Backward-shift deletion: later entries of the probe move up, so the
  // table never holds tombstones.
  size_t Hole = Slot;
  for (size_t Next = (Hole + 1) & Mask; Table[Next].Ptr != 0;
       Next = (Next + 1) & Mask) {
    size_t Home = home(Table[Next].Ptr);
    // Next may fill the hole when its home is not in (Hole, Next].
    bool HomeInRange = Hole <= Next ? Hole < Home && Home <= Next
                                    : Hole < Home || Home <= Next;
    if (!HomeInRange) {
      Table[Hole] = Table[Next];
      Hole = Next;
    }
  }
  Table[Hole] = LiveBlock();
  --Used;
}

void DeviceMemoryReporter::lock() {
  for (int Spins = 0; Busy.test_and_set(std::memory_order_acquire); ++Spins)
    if (Spins > 64)
      std::this_thread::yield();
}

void DeviceMemoryReporter::unlock() { Busy.clear(std::memory_order_release); }

void DeviceMemoryReporter::reportMemoryUsage(void *Ptr, int64_t Size,
                                             AllocatorTotal, AllocatorTotal,
                                             c10::Device Device) {
  if (Device.type() != Handles || !Ptr || Size == 0)
    return;
  auto Key = reinterpret_cast<uintptr_t>(Ptr);
  lock();
  size_t Slot = find(Key);
  if (Size > 0) {
    if (Table[Slot].Ptr == Key) {
      // Still live: its free was reported to a thread that does not see us.
      Bytes.remove(Table[Slot].Tag, Table[Slot].Bytes);
      erase(Slot);
      UnseenFrees.fetch_add(1, std::memory_order_relaxed);
      Slot = find(Key);
    }
    if (Used >= Table.size() / 4 * 3) {
      Untagged.fetch_add(1, std::memory_order_relaxed);
    } else {
      AllocationTag Tag = Bytes.tagNow();
      Table[Slot] = {Key, Size, Tag,
                     !Measuring.load(std::memory_order_relaxed)};
      ++Used;
      Bytes.add(Tag, Size);
    }
  } else if (Table[Slot].Ptr == Key) {
    // The entry's own size: the same block size the allocator reports.
    Bytes.remove(Table[Slot].Tag, Table[Slot].Bytes);
    erase(Slot);
  } else {
    UnknownFrees.fetch_add(1, std::memory_order_relaxed);
  }
  unlock();
}

DeviceMemoryReporter::Workspace
DeviceMemoryReporter::workspace(const std::unordered_set<uintptr_t> &Exclude) {
  Workspace W;
  lock();
  for (const LiveBlock &Block : Table) {
    if (!Block.Ptr || !Block.BeforeMeasuring ||
        (Block.Tag.Phase != uint8_t(Phase::Forward) &&
         Block.Tag.Phase != uint8_t(Phase::Backward)) ||
        Exclude.count(Block.Ptr))
      continue;
    W.Bytes += Block.Bytes;
    W.ByPhase[Block.Tag.Phase] += Block.Bytes;
    if (Block.Tag.ScopeSlot >= 0)
      W.ForwardByScope[size_t(Block.Tag.ScopeSlot)] += Block.Bytes;
  }
  unlock();
  return W;
}

} // namespace skyline::rt
