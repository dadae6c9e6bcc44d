//===- Runtime.h - What an instrumented program calls -----------*- C++ -*-===//
//
// The only header the instrumented copy of a user's program includes. It
// declares a handful of functions with a do-nothing default: when the
// program runs outside skyline-check (no SKYLINE_RESULT in the environment)
// every call returns at once and batch_size() returns the declared value.
// Nothing here throws into the user's program.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_RUNTIME_H
#define SKYLINE_RUNTIME_RUNTIME_H

#include <cstdint>
#include <utility>

namespace torch::optim {
class Optimizer;
} // namespace torch::optim

namespace skyline::rt {

/// The batch size in effect: SKYLINE_BATCH_SIZE when set, else Declared.
int64_t batch_size(int64_t Declared) noexcept;
/// The same for a batch size written as text (a command-line default).
const char *batch_size_text(const char *Declared) noexcept;

/// Marks the start of one pass of the training loop body.
void iteration_begin() noexcept;

void scope_enter(int ScopeId) noexcept;
void scope_exit(int ScopeId) noexcept;

/// Runs Call inside the scope of one module call site; keeps its value
/// category (the wrapper is `[&]() -> decltype(auto) { return call; }`).
template <typename Callable> decltype(auto) scoped(int ScopeId, Callable &&Call) {
  struct Guard {
    int Id;
    explicit Guard(int Id) : Id(Id) { scope_enter(Id); }
    ~Guard() { scope_exit(Id); }
  } ScopeGuard(ScopeId);
  return std::forward<Callable>(Call)();
}

/// Counts the optimizer's parameters as weights, their .grad() as gradients
/// and its state as optimizer state in the run's memory breakdown.
void track_optimizer(const torch::optim::Optimizer &Optimizer) noexcept;

void optimizer_phase_begin() noexcept;
void optimizer_phase_end() noexcept;

/// Runs an optimizer's step() in the optimizer phase.
template <typename Callable> decltype(auto) optimizer_step(Callable &&Step) {
  struct Guard {
    Guard() { optimizer_phase_begin(); }
    ~Guard() { optimizer_phase_end(); }
  } PhaseGuard;
  return std::forward<Callable>(Step)();
}

/// Stands in for torch::save in a measured run: a burst must never overwrite
/// the user's checkpoints.
template <typename... Args> void skipped_save(Args &&...) noexcept {}

} // namespace skyline::rt

#endif // SKYLINE_RUNTIME_RUNTIME_H
