//===- Runtime.cpp - The runtime inside an instrumented program ----------===//
//
// Configured from the environment by skyline-check's Measure stage:
//   SKYLINE_RESULT         where to write the run's result; unset = inactive
//   SKYLINE_BATCH_SIZE     the batch size to use instead of the declared one
//   SKYLINE_WARMUP         iterations not measured (default 2)
//   SKYLINE_ITERATIONS     iterations measured (default 8, at most 4096)
//   SKYLINE_MEMORY_BUDGET  bytes of CPU memory the run may hold (0 = none)
// After warm-up plus the measured iterations the result is written and the
// process ends (exit 0); crossing the budget writes an OOM result and exits
// with ExitOutOfMemory. Nothing throws into the user's program.
//
//===----------------------------------------------------------------------===//

#include "skyline/runtime/Runtime.h"
#include "skyline/runtime/MemoryTracker.h"
#include "skyline/runtime/RunResult.h"
#include "skyline/runtime/TensorAccounting.h"

#include <ATen/record_function.h>
#include <torch/optim/optimizer.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace skyline::rt {
namespace {

constexpr int MaxIterations = 4096;

struct Config {
  bool Active = false;
  int64_t BatchSize = 0; // 0: keep the declared one
  int Warmup = 2;
  int Iterations = 8;
  int64_t MemoryBudget = 0;
  std::string ResultPath;
};

int64_t envInteger(const char *Name, int64_t Default) {
  const char *Text = std::getenv(Name);
  if (!Text || !*Text)
    return Default;
  char *End = nullptr;
  long long Value = std::strtoll(Text, &End, 10);
  return End && *End == '\0' && Value >= 0 ? Value : Default;
}

Config readConfig() {
  Config C;
  const char *Result = std::getenv("SKYLINE_RESULT");
  C.Active = Result && *Result;
  if (!C.Active)
    return C;
  C.ResultPath = Result;
  C.BatchSize = envInteger("SKYLINE_BATCH_SIZE", 0);
  C.Warmup = int(std::min<int64_t>(envInteger("SKYLINE_WARMUP", 2), MaxIterations));
  C.Iterations =
      int(std::clamp<int64_t>(envInteger("SKYLINE_ITERATIONS", 8), 1, MaxIterations));
  C.MemoryBudget = envInteger("SKYLINE_MEMORY_BUDGET", 0);
  return C;
}

const Config &config() {
  static const Config C = readConfig();
  return C;
}

/// Iteration start times; preallocated, so the loop's hot path allocates
/// nothing.
struct IterationClock {
  std::array<int64_t, MaxIterations * 2 + 2> StartNs{};
  int Count = 0;
  int64_t EffectiveBatchSize = 0;
} Clock;

/// Inside a measured iteration: after warm-up, before the last boundary.
bool measuring() {
  return Clock.Count > config().Warmup && Clock.Count <= config().Warmup + config().Iterations;
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Time per phase over the measured iterations (data, forward, backward,
/// optimizer): a phase's clock runs from the switch into it to the next one.
struct PhaseClock {
  std::array<std::atomic<int64_t>, NumPhases> Ns{};
  std::atomic<int64_t> LastSwitchNs{0};
} PhaseTime;

/// Moves the run into phase P: memory is tagged with it from now on, and the
/// time since the last switch is added to the phase left.
void switchPhase(Phase P) {
  MemoryTracker &Tracker = MemoryTracker::install();
  Phase Previous = Tracker.phase();
  if (Previous == P)
    return; // backward ops arrive by the hundred: one check, no clock read
  int64_t Now = nowNs();
  int64_t Last = PhaseTime.LastSwitchNs.exchange(Now, std::memory_order_relaxed);
  if (measuring() && Last > 0)
    PhaseTime.Ns[size_t(Previous)].fetch_add(Now - Last, std::memory_order_relaxed);
  Tracker.setPhase(P);
}

/// Module-call scopes: forward self time per scope id over the measured
/// iterations. Fixed-size, so entering a scope allocates nothing.
constexpr int MaxScopes = 4096;
std::array<std::atomic<int64_t>, MaxScopes> ForwardNs{};

struct ScopeFrame {
  int Id;
  int64_t StartNs;
  int64_t ChildNs;
};
/// Module calls run on the thread that calls forward(); one stack per thread.
thread_local struct {
  std::array<ScopeFrame, 64> Frames;
  size_t Depth = 0;
} ScopeStack;

/// The optimizers of the program (a GAN has two); fixed, so tracking one
/// allocates nothing.
struct TrackedOptimizers {
  std::array<const torch::optim::Optimizer *, 8> List{};
  size_t Count = 0;
} Optimizers;

std::atomic<bool> InOptimizerStep{false};

/// RecordFunction start callback for backward ops: what they allocate is
/// gradients or temporaries, not activations.
std::unique_ptr<at::ObserverContext> onBackwardOp(const at::RecordFunction &) {
  if (!InOptimizerStep.load(std::memory_order_relaxed))
    switchPhase(Phase::Backward);
  return nullptr;
}

RunResult::Breakdown breakdownAtPeak(const PhaseBytes &AtPeak) {
  std::vector<at::Tensor> Parameters, State;
  for (size_t I = 0; I < Optimizers.Count; ++I) {
    for (const auto &Group : Optimizers.List[I]->param_groups())
      Parameters.insert(Parameters.end(), Group.params().begin(), Group.params().end());
    auto OptimizerState = optimizerStateTensors(*Optimizers.List[I]);
    State.insert(State.end(), OptimizerState.begin(), OptimizerState.end());
  }
  return breakDown(AtPeak, uniqueStorageBytes(Parameters), gradientBytes(Parameters),
                   uniqueStorageBytes(State));
}

RunResult collect(bool OutOfMemory) {
  const Config &C = config();
  RunResult R;
  R.BatchSize = Clock.EffectiveBatchSize;
  R.OutOfMemory = OutOfMemory;
  std::vector<double> Ms;
  for (int I = C.Warmup; I + 1 < Clock.Count && int(Ms.size()) < C.Iterations; ++I)
    Ms.push_back(double(Clock.StartNs[I + 1] - Clock.StartNs[I]) / 1e6);
  R.Iterations = int(Ms.size());
  R.IterationMs = summarize(Ms);
  R.Throughput = R.IterationMs.Median > 0 ? double(R.BatchSize) * 1000.0 / R.IterationMs.Median
                                          : 0;
  MemoryTracker &Tracker = MemoryTracker::install();
  R.PeakBytes = Tracker.peakBytes();
  R.PeakByPhase = Tracker.peakByPhase();
  R.Memory = breakdownAtPeak(R.PeakByPhase);
  if (R.Iterations)
    for (size_t I = 0; I < NumPhases; ++I)
      R.TimeSplitMs[I] = double(PhaseTime.Ns[I].load()) / 1e6 / R.Iterations;
  for (int Id = 0; Id < MaxScopes; ++Id)
    if (int64_t Ns = ForwardNs[Id].load(std::memory_order_relaxed); Ns > 0 && R.Iterations)
      R.Layers.push_back({Id, double(Ns) / 1e6 / R.Iterations});
  return R;
}

[[noreturn]] void finish(bool OutOfMemory) {
  const RunResult R = collect(OutOfMemory);
  bool Written = writeRunResult(R, config().ResultPath);
  std::fflush(nullptr);
  std::_Exit(!Written ? ExitResultNotWritten : OutOfMemory ? ExitOutOfMemory : 0);
}

[[noreturn]] void onOutOfMemory(size_t, int64_t, int64_t) { finish(true); }

/// Installs the memory tracker before the program's own static
/// constructors and main build the model, so weights are seen.
struct Activation {
  Activation() {
    if (!config().Active)
      return;
    MemoryTracker &Tracker = MemoryTracker::install();
    if (config().MemoryBudget > 0)
      Tracker.setBudget(config().MemoryBudget, &onOutOfMemory);
    at::addGlobalCallback(at::RecordFunctionCallback(&onBackwardOp)
                              .scopes({at::RecordScope::BACKWARD_FUNCTION}));
  }
} const ActivateAtLoad;

} // namespace

int64_t batch_size(int64_t Declared) noexcept {
  int64_t Override = config().BatchSize;
  int64_t Effective = Override > 0 ? Override : Declared;
  Clock.EffectiveBatchSize = Effective;
  return Effective;
}

const char *batch_size_text(const char *Declared) noexcept {
  static char Text[24];
  int64_t Override = config().BatchSize;
  if (Override <= 0) {
    Clock.EffectiveBatchSize = std::strtoll(Declared, nullptr, 10);
    return Declared;
  }
  std::snprintf(Text, sizeof(Text), "%lld", static_cast<long long>(Override));
  Clock.EffectiveBatchSize = Override;
  return Text;
}

void iteration_begin() noexcept {
  const Config &C = config();
  if (!C.Active)
    return;
  int Index = Clock.Count;
  if (Index >= int(Clock.StartNs.size()))
    return;
  int64_t Now = nowNs();
  // Close the previous iteration's last phase at the boundary itself.
  int64_t Last = PhaseTime.LastSwitchNs.exchange(Now, std::memory_order_relaxed);
  MemoryTracker &Tracker = MemoryTracker::install();
  if (measuring() && Last > 0)
    PhaseTime.Ns[size_t(Tracker.phase())].fetch_add(Now - Last, std::memory_order_relaxed);
  Clock.StartNs[Index] = Now;
  Clock.Count = Index + 1;
  Tracker.setPhase(Phase::Data);
  if (Index == C.Warmup)
    Tracker.resetPeak(); // the measured iterations' peak, not the warm-up's
  if (Index == C.Warmup + C.Iterations)
    finish(false);
}

void track_optimizer(const torch::optim::Optimizer &Optimizer) noexcept {
  if (!config().Active)
    return;
  for (size_t I = 0; I < Optimizers.Count; ++I)
    if (Optimizers.List[I] == &Optimizer)
      return;
  if (Optimizers.Count < Optimizers.List.size())
    Optimizers.List[Optimizers.Count++] = &Optimizer;
}

void optimizer_phase_begin() noexcept {
  if (!config().Active)
    return;
  InOptimizerStep.store(true, std::memory_order_relaxed);
  switchPhase(Phase::Optimizer);
}

void optimizer_phase_end() noexcept {
  if (!config().Active)
    return;
  InOptimizerStep.store(false, std::memory_order_relaxed);
  // What follows a step is the next batch being loaded (a range-for over a
  // DataLoader fetches it before the body starts), unless a module call or a
  // backward op says otherwise first.
  switchPhase(Phase::Data);
}

void scope_enter(int ScopeId) noexcept {
  if (!config().Active)
    return;
  switchPhase(Phase::Forward);
  if (ScopeStack.Depth < ScopeStack.Frames.size())
    ScopeStack.Frames[ScopeStack.Depth] = {ScopeId, nowNs(), 0};
  ++ScopeStack.Depth;
}
// A GAN's generator runs again after the discriminator's step: its module
// calls put the phase back to forward, as they should.

void scope_exit(int ScopeId) noexcept {
  if (!config().Active || ScopeStack.Depth == 0)
    return;
  size_t Depth = --ScopeStack.Depth;
  if (Depth >= ScopeStack.Frames.size())
    return;
  const ScopeFrame &Frame = ScopeStack.Frames[Depth];
  int64_t Elapsed = nowNs() - Frame.StartNs;
  // Self time: a layer's row excludes the layers it calls, so rows add up.
  if (Depth > 0)
    ScopeStack.Frames[Depth - 1].ChildNs += Elapsed;
  if (measuring() && ScopeId >= 0 && ScopeId < MaxScopes && Frame.Id == ScopeId)
    ForwardNs[ScopeId].fetch_add(Elapsed - Frame.ChildNs, std::memory_order_relaxed);
}

} // namespace skyline::rt
