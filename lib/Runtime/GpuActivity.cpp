//===- GpuActivity.cpp - Kernel records to time per scope ----------------===//
//
// Plain C++ (no CUDA): the joining of kernel records with the external ids
// pushed at scope entry, tested on the CPU with a fake ActivityApi.
//
//===----------------------------------------------------------------------===//

#include "skyline/runtime/GpuActivity.h"

namespace skyline::rt {

void GpuScopeTimes::onKernel(const KernelRecord &Kernel) {
  std::lock_guard<std::mutex> Hold(Lock);
  Kernels.push_back(Kernel);
}

void GpuScopeTimes::onExternalCorrelation(
    const ExternalCorrelationRecord &Ext) {
  std::lock_guard<std::mutex> Hold(Lock);
  External[Ext.CorrelationId] = Ext.ExternalId;
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
  std::map<int, uint64_t> ScopeNs;
  uint64_t UnscopedNs = 0;
  for (const KernelRecord &K : Kernels) {
    if (K.StartNs < WindowBegin || K.StartNs >= WindowEnd ||
        K.EndNs < K.StartNs)
      continue;
    ++T.Kernels;
    uint64_t Ns = K.EndNs - K.StartNs;
    auto It = External.find(K.CorrelationId);
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

} // namespace skyline::rt
