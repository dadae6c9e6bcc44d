//===- GpuActivity.cpp - Kernel records to time per scope ----------------===//
//
// Plain C++ (no CUDA): the joining of kernel records with the external ids
// pushed at scope entry, tested on the CPU with a fake ActivityApi; and the
// pairing of scope entry and exit events, with a fake EventApi.
//
//===----------------------------------------------------------------------===//

#include "skyline/runtime/GpuActivity.h"

#include <algorithm>

namespace skyline::rt {

void GpuScopeTimes::onKernel(const KernelRecord &Kernel) {
  std::lock_guard<std::mutex> Hold(Lock);
  Kernels.push_back(Kernel);
}

void GpuScopeTimes::onExternalCorrelation(
    const ExternalCorrelationRecord &Ext) {
  std::lock_guard<std::mutex> Hold(Lock);
  External[Ext.CorrelationId] = Ext.ExternalId;
  ++ExternalRecords;
}

void GpuScopeTimes::onApi(uint32_t) {
  std::lock_guard<std::mutex> Hold(Lock);
  ++ApiRecords;
}

void GpuScopeTimes::onDropped(uint64_t Count) {
  std::lock_guard<std::mutex> Hold(Lock);
  Dropped += Count;
}

void GpuScopeTimes::setWindow(uint64_t BeginNs, uint64_t EndNs) {
  std::lock_guard<std::mutex> Hold(Lock);
  WindowBegin = BeginNs;
  WindowEnd = EndNs;
}

GpuTimes GpuScopeTimes::times(int Iterations) const {
  std::lock_guard<std::mutex> Hold(Lock);
  GpuTimes T;
  T.DroppedRecords = Dropped;
  T.ApiRecords = ApiRecords;
  T.ExternalRecords = ExternalRecords;
  std::map<int, uint64_t> ScopeNs;
  uint64_t UnscopedNs = 0;
  for (const KernelRecord &K : Kernels) {
    if (K.StartNs < WindowBegin || K.StartNs >= WindowEnd ||
        K.EndNs < K.StartNs)
      continue;
    ++T.Kernels;
    uint64_t Ns = K.EndNs - K.StartNs;
    auto It = External.find(K.CorrelationId);
    if (It != External.end())
      ++T.CorrelatedKernels;
    // Id 0 is pushed for backward ops of no known scope.
    if (It == External.end() || It->second == 0 || It->second > INT32_MAX)
      UnscopedNs += Ns;
    else
      ScopeNs[int(It->second) - 1] += Ns;
  }
  if (Iterations <= 0)
    return T;
  double PerIteration = 1e6 * Iterations;
  for (const auto &[Scope, Ns] : ScopeNs)
    T.ScopeMs[Scope] = double(Ns) / PerIteration;
  T.UnscopedMs = double(UnscopedNs) / PerIteration;
  return T;
}

std::string unattributedNote(const GpuTimes &Times, bool ScopesRan) {
  if (!ScopesRan || Times.CorrelatedKernels > 0)
    return "";
  // A CUDA run whose layers ran launched kernels: none in the window means
  // CUPTI delivered none (a failed flush, kernel records not written), and
  // every row's 0 would be silently wrong.
  if (Times.Kernels == 0)
    return "CUPTI delivered no kernel records for the measured iterations (" +
           std::to_string(Times.ApiRecords) + " API records, " +
           std::to_string(Times.ExternalRecords) +
           " external-correlation records, " +
           std::to_string(Times.DroppedRecords) +
           " dropped): every row's gpu_ms is unknown, not 0";
  return "CUPTI timed " + std::to_string(Times.Kernels) +
         " kernels but none could be attributed to a layer (" +
         std::to_string(Times.ApiRecords) + " API records, " +
         std::to_string(Times.ExternalRecords) +
         " external-correlation records): the layers' gpu_ms is unknown, "
         "not 0, and the (unscoped) row holds every kernel";
}

namespace {
/// Pushes of the calling thread not yet popped, so pops match pushes even
/// when tracing begins or ends inside a scope.
thread_local int PushedOnThread = 0;
} // namespace

void GpuTracer::enterScope(int ScopeId) noexcept {
  Api.pushExternalCorrelation(GpuScopeTimes::externalId(ScopeId));
  ++PushedOnThread;
}

void GpuTracer::exitScope() noexcept {
  if (PushedOnThread <= 0)
    return;
  --PushedOnThread;
  Api.popExternalCorrelation();
}

void GpuTracer::beginMeasured() noexcept { BeginNs = Api.timestampNs(); }

void GpuTracer::endMeasured() noexcept { EndNs = Api.timestampNs(); }

GpuTimes GpuTracer::finish(int Iterations) {
  Api.stop();
  Times.setWindow(BeginNs, EndNs);
  return Times.times(Iterations);
}

//===----------------------------------------------------------------------===//
// ScopeEventTimer
//===----------------------------------------------------------------------===//

namespace {
std::atomic<uint64_t> TimerGenerations{0};

/// The calling thread's slot in the timer it last marked for.
thread_local struct {
  uint64_t Generation = 0;
  int Slot = -1;
} EventThread;
} // namespace

ScopeEventTimer::ScopeEventTimer(EventApi &Api, size_t PoolSize)
    : Api(Api), Generation(++TimerGenerations), Marks(PoolSize) {}

bool ScopeEventTimer::start() {
  Stacks.assign(MaxThreads, {});
  for (std::vector<Open> &Stack : Stacks)
    Stack.reserve(64);
  return Api.create(Marks.size());
}

int ScopeEventTimer::threadSlot() noexcept {
  if (EventThread.Generation != Generation) {
    int Slot = Threads.fetch_add(1, std::memory_order_relaxed);
    EventThread.Generation = Generation;
    EventThread.Slot = Slot < MaxThreads ? Slot : -1;
  }
  return EventThread.Slot;
}

void ScopeEventTimer::mark(int ScopeId, bool Enter) noexcept {
  int Thread = threadSlot();
  size_t Index =
      Thread < 0 ? Marks.size() : Next.fetch_add(1, std::memory_order_relaxed);
  if (Index >= Marks.size()) {
    DroppedNow.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Marks[Index] = {ScopeId, Enter, uint8_t(Thread)};
  Api.record(Index);
}

void ScopeEventTimer::boundary(bool Measured) {
  size_t Count = std::min(Next.load(std::memory_order_relaxed), Marks.size());
  if (Stacks.size() < size_t(MaxThreads))
    Stacks.resize(MaxThreads);
  uint64_t Lost = DroppedNow.exchange(0, std::memory_order_relaxed);
  if (Measured) {
    Dropped += Lost;
    for (size_t I = 0; I < Count; ++I) {
      const Mark &M = Marks[I];
      std::vector<Open> &Stack = Stacks[M.Thread];
      if (M.Enter) {
        Stack.push_back({M.Scope, I, 0});
        continue;
      }
      if (Stack.empty()) // entered before this iteration's marks began
        continue;
      Open Frame = Stack.back();
      Stack.pop_back();
      double Inclusive = Api.elapsedMs(Frame.Event, I);
      if (Inclusive < 0) {
        Dropped += 2;
        continue;
      }
      // Self time: the nested scopes' time is theirs. Event times have a
      // resolution of about half a microsecond: no negative remainders.
      double Self = std::max(0.0, Inclusive - Frame.ChildMs);
      if (!Stack.empty())
        Stack.back().ChildMs += Inclusive;
      if (Frame.Scope >= 0)
        ScopeMs[Frame.Scope] += Self;
      else
        UnscopedMs += Self;
      ++Intervals;
    }
  }
  for (std::vector<Open> &Stack : Stacks) {
    // Entries whose exit was dropped (the pool ran out) are not timed.
    if (Measured)
      Dropped += Stack.size();
    Stack.clear();
  }
  Next.store(0, std::memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// PhaseTimeline
//===----------------------------------------------------------------------===//

PhaseTimeline::PhaseTimeline(EventApi &Api, size_t PoolSize)
    : Api(Api), Marks(PoolSize) {}

void PhaseTimeline::mark(int Iteration, uint8_t Phase, bool Boundary) noexcept {
  if (Boundary)
    Current.store(Iteration, std::memory_order_relaxed);
  size_t Index = Next.fetch_add(1, std::memory_order_relaxed);
  if (Index >= Marks.size()) {
    Dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Marks[Index] = {Iteration, Phase, Boundary};
  Api.record(Index);
}

PhaseTimeline::Times PhaseTimeline::resolve(int Warmup) const {
  Times T;
  T.Dropped = Dropped.load(std::memory_order_relaxed);
  size_t Count = std::min(Next.load(std::memory_order_relaxed), Marks.size());
  uint8_t MaxPhase = 0;
  int LastBoundary = -1;
  for (size_t I = 0; I < Count; ++I) {
    MaxPhase = std::max(MaxPhase, Marks[I].Phase);
    if (Marks[I].Boundary)
      LastBoundary = std::max(LastBoundary, Marks[I].Iteration);
  }
  T.PhaseMs.assign(size_t(MaxPhase) + 1, 0.0);
  if (LastBoundary >= 0)
    T.IterationMs.assign(size_t(LastBoundary), -1.0);
  // Iterations: boundary to boundary.
  size_t Previous = Count;
  for (size_t I = 0; I < Count; ++I) {
    if (!Marks[I].Boundary)
      continue;
    if (Previous < Count &&
        Marks[I].Iteration == Marks[Previous].Iteration + 1) {
      double Ms = Api.elapsedMs(Previous, I);
      T.IterationMs[size_t(Marks[Previous].Iteration)] = Ms < 0 ? -1 : Ms;
    }
    Previous = I;
  }
  // Phases: each mark to the next, within the measured iterations.
  for (size_t I = 0; I + 1 < Count; ++I) {
    const Mark &M = Marks[I];
    if (M.Iteration < Warmup || M.Iteration >= LastBoundary)
      continue;
    double Ms = Api.elapsedMs(I, I + 1);
    if (Ms >= 0)
      T.PhaseMs[M.Phase] += Ms;
  }
  T.PhaseIterations = std::max(0, LastBoundary - Warmup);
  return T;
}

GpuTimes ScopeEventTimer::times(int Iterations) const {
  GpuTimes T;
  T.Kernels = Intervals;
  T.DroppedRecords = Dropped;
  if (Iterations <= 0)
    return T;
  for (const auto &[Scope, Ms] : ScopeMs)
    T.ScopeMs[Scope] = Ms / Iterations;
  T.UnscopedMs = UnscopedMs / Iterations;
  return T;
}

} // namespace skyline::rt
