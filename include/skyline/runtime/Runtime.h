//===- Runtime.h - What an instrumented program calls -----------*- C++ -*-===//
//
// The only header the instrumented copy of a user's program includes. It
// declares a handful of functions with a do-nothing default: when the
// program runs outside skyline-check (no SKYLINE_RESULT in the environment)
// every call returns at once and batch_size() returns the declared value.
// Nothing here throws into the user's program.
//
// It is included before the program's own headers, so it cannot include
// LibTorch's: it forward-declares what it names, and the templates that
// need complete types are instantiated in the program, where they are.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_RUNTIME_H
#define SKYLINE_RUNTIME_RUNTIME_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace torch::nn {
class Module;
} // namespace torch::nn

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

/// A loader's dataset holds Samples samples: the training loader's
/// (Training) is reported as dataset_size, and the greatest common divisor
/// of it and the other loaders' given the same batch size as datasets_gcd.
/// A program that shapes tensors by the batch size fails on an epoch's
/// short last batch, so sizes that divide them are the safe ones.
void dataset_size(int64_t Samples, bool Training = true) noexcept;

namespace detail {
template <typename T, typename = void> struct HasSize : std::false_type {};
/// A torch::data dataset: size() gives an optional<size_t>, empty for a
/// stream.
template <typename T>
struct HasSize<T, std::void_t<decltype(bool(std::declval<T &>().size())),
                              decltype(*std::declval<T &>().size())>>
    : std::true_type {};
} // namespace detail

/// Wraps a loader's dataset argument: notes its size, and hands it on
/// unchanged (moved, copied or referenced as the program wrote it).
template <typename Dataset>
Dataset &&observe_dataset(Dataset &&Data, bool Training = true) {
  if constexpr (detail::HasSize<std::remove_reference_t<Dataset>>::value) {
    auto Size = Data.size();
    if (Size)
      dataset_size(static_cast<int64_t>(*Size), Training);
  }
  return std::forward<Dataset>(Data);
}

/// The worker threads the training loader gets: the loader workers
/// experiment's (SKYLINE_LOADER_WORKERS) in its trial, else Own, the
/// program's.
std::size_t loader_workers(std::size_t Own) noexcept;

namespace detail {
template <typename T, typename = void> struct HasWorkers : std::false_type {};
/// torch::data::DataLoaderOptions: a workers() getter and setter.
template <typename T>
struct HasWorkers<
    T, std::void_t<decltype(std::size_t(std::declval<const T &>().workers())),
                   decltype(std::declval<T &>().workers(std::size_t(1)))>>
    : std::true_type {};
} // namespace detail

/// Wraps the training loader's options argument (Options is
/// torch::data::DataLoaderOptions, named by the instrumented copy): a batch
/// size becomes Options(size), as make_data_loader would convert it, and
/// the options get loader_workers() workers. Anything else is handed on.
template <typename Options, typename Arg>
decltype(auto) loader_options(Arg &&Given) {
  using Plain = std::remove_cv_t<std::remove_reference_t<Arg>>;
  if constexpr (std::is_integral_v<Plain>) {
    Options Made(static_cast<std::size_t>(Given));
    Made.workers(loader_workers(Made.workers()));
    return Made;
  } else if constexpr (detail::HasWorkers<Plain>::value) {
    Plain Copy(std::forward<Arg>(Given));
    Copy.workers(loader_workers(Copy.workers()));
    return Copy;
  } else {
    return std::forward<Arg>(Given);
  }
}

/// Whether this run skips training to time the evaluation loops (the
/// no-grad evaluation experiment's trial, SKYLINE_EVALUATION): the
/// instrumented copy starts each training loop's body with
/// `if (skyline::rt::training_skipped()) break;`, so the program goes on to
/// its evaluation at once.
bool training_skipped() noexcept;

/// One pass of an evaluation loop's body starts: EvaluationGuarded where it
/// runs under the guard (after warm-up, the passes alternate U G G U U G
/// ..., so neither arm always runs first), EvaluationNotTimed outside a
/// trial or inside a pass already open (a nested loop, another thread).
/// evaluation_end(what evaluation_begin said) closes the pass it opened.
enum EvaluationPass : int {
  EvaluationNotTimed = -1,
  EvaluationUnguarded = 0,
  EvaluationGuarded = 1
};
EvaluationPass evaluation_begin() noexcept;
void evaluation_end(EvaluationPass Pass) noexcept;

/// Declared at the start of an evaluation loop's body by the instrumented
/// copy (`auto skyline_eval = evaluation_iteration<torch::NoGradGuard>();`):
/// holds a Guard for the pass where evaluation_begin says so, and times the
/// pass to the body's end, however it leaves (continue, break, return).
template <typename Guard> class EvaluationIteration {
public:
  explicit EvaluationIteration(EvaluationPass Pass) : Pass(Pass) {
    if (Pass == EvaluationGuarded)
      Held.emplace();
  }
  EvaluationIteration(const EvaluationIteration &) = delete;
  EvaluationIteration &operator=(const EvaluationIteration &) = delete;
  ~EvaluationIteration() {
    Held.reset();
    evaluation_end(Pass);
  }

private:
  EvaluationPass Pass;
  std::optional<Guard> Held;
};

/// A prvalue, so the declaration holds it where it is made: a copy's
/// destructor would end the guard (and the pass) early.
template <typename Guard> EvaluationIteration<Guard> evaluation_iteration() {
  return EvaluationIteration<Guard>(evaluation_begin());
}

/// Marks the start of a statement before the training loop (its id in the
/// instrumented copy's table): what it allocates, and still holds at the
/// peak, is reported by its line. The training loop's start ends the last.
void setup_statement(int StatementId) noexcept;

/// Marks a start of the training loop itself (an epoch's). The iteration
/// that spans it holds the last, often smaller, batch of an epoch and what
/// the program does between epochs: it is left out of the iteration time.
void loop_begin() noexcept;

/// The batch an iteration trains on, as the run sees it: the first
/// dimension of what the iteration's first outermost module call returned
/// (a tensor, or the first tensor of a tuple or pair). The runs read it
/// where no batch size literal could be changed (the front end found none,
/// or the program reads it at run time): the program then runs at its own
/// size, and this says which. Not the loader's options: a loop may batch
/// by hand or make its batch (a GAN's noise), and every training loop calls
/// its model; not the call's arguments: the instrumented copy wraps whole
/// calls, and rewriting arguments could break the user's code. A model's
/// answer is batch-first wherever its input is (LibTorch's layers keep the
/// batch dimension first); a sequence-first model's is not, and the report
/// names the call the size was read from.
/// batch_wanted: whether the call ending now on this thread is an outermost
/// one whose iteration has no size yet (cheap: no result is looked at
/// otherwise); observe_batch keeps FirstDimension for the iteration.
bool batch_wanted() noexcept;
void observe_batch(int ScopeId, int64_t FirstDimension) noexcept;

/// Module is the module the call site calls, or null when unknown; the
/// first time a scope calls a module, its parameters and buffers count as
/// the layer's weights.
void scope_enter(int ScopeId,
                 const torch::nn::Module *Module = nullptr) noexcept;
void scope_exit(int ScopeId) noexcept;

namespace detail {

template <typename T, typename = void>
struct IsModuleHolder : std::false_type {};
/// torch::nn::Linear, TORCH_MODULE(Net): a ModuleHolder, which may be empty.
template <typename T>
struct IsModuleHolder<
    T, std::void_t<typename T::ContainedType,
                   decltype(std::declval<const T &>().is_empty())>>
    : std::true_type {};

template <typename T> struct IsSmartPointer : std::false_type {};
template <typename T>
struct IsSmartPointer<std::shared_ptr<T>> : std::true_type {};
template <typename T, typename D>
struct IsSmartPointer<std::unique_ptr<T, D>> : std::true_type {};

/// The torch::nn::Module behind a callee: a module object, a pointer to one,
/// a ModuleHolder or a smart pointer; null for anything else.
template <typename T>
const torch::nn::Module *moduleOf(const T &Callee) noexcept {
  if constexpr (std::is_pointer_v<T>) {
    if constexpr (std::is_convertible_v<T, const torch::nn::Module *>)
      return Callee;
    else
      return nullptr;
  } else if constexpr (std::is_convertible_v<const T *,
                                             const torch::nn::Module *>) {
    return &Callee;
  } else if constexpr (IsModuleHolder<T>::value) {
    return Callee.is_empty() ? nullptr : moduleOf(Callee.get());
  } else if constexpr (IsSmartPointer<T>::value) {
    return moduleOf(Callee.get());
  } else {
    return nullptr;
  }
}

/// A tensor: dim() and size(int64_t) (at::Tensor; named by its members,
/// since this header cannot include LibTorch's).
template <typename T, typename = void>
struct HasBatchDimension : std::false_type {};
template <typename T>
struct HasBatchDimension<
    T,
    std::void_t<decltype(int64_t(std::declval<const T &>().dim())),
                decltype(int64_t(std::declval<const T &>().size(int64_t(0)))),
                decltype(bool(std::declval<const T &>().defined()))>>
    : std::true_type {};

/// The first element of a std::tuple or std::pair (an LSTM's output and
/// state), where the result is one.
template <typename T, typename = void> struct FirstElement {
  using Type = void;
};
template <typename T>
struct FirstElement<T, std::void_t<decltype(std::get<0>(std::declval<T &>())),
                                   typename std::tuple_size<T>::type>> {
  using Type = std::remove_cv_t<
      std::remove_reference_t<decltype(std::get<0>(std::declval<T &>()))>>;
};

template <typename T> constexpr bool observable() {
  using Plain = std::remove_cv_t<std::remove_reference_t<T>>;
  if constexpr (HasBatchDimension<Plain>::value)
    return true;
  else if constexpr (!std::is_void_v<typename FirstElement<Plain>::Type>)
    return HasBatchDimension<typename FirstElement<Plain>::Type>::value;
  else
    return false;
}

/// Keeps the batch dimension of Result, an outermost call's, for the
/// iteration (batch_wanted); nothing escapes into the program.
template <typename T>
void noteBatchDimension(int ScopeId, const T &Result) noexcept {
  if (!batch_wanted())
    return;
  try {
    if constexpr (HasBatchDimension<T>::value) {
      if (Result.defined() && Result.dim() >= 1)
        observe_batch(ScopeId, int64_t(Result.size(int64_t(0))));
    } else {
      noteBatchDimension(ScopeId, std::get<0>(Result));
    }
  } catch (...) {
    // No size for this iteration rather than an exception in the program.
  }
}

template <typename Callable>
decltype(auto) runInScope(int ScopeId, const torch::nn::Module *Module,
                          Callable &&Call) {
  struct Guard {
    int Id;
    Guard(int Id, const torch::nn::Module *Module) : Id(Id) {
      scope_enter(Id, Module);
    }
    ~Guard() { scope_exit(Id); }
  } ScopeGuard(ScopeId, Module);
  using Result = decltype(std::forward<Callable>(Call)());
  // A result held by value or by lvalue reference is looked at and handed
  // on as it came (moved, or the same reference); anything else untouched.
  if constexpr (observable<Result>() && !std::is_rvalue_reference_v<Result>) {
    decltype(auto) Value = std::forward<Callable>(Call)();
    noteBatchDimension(ScopeId, Value);
    return Value;
  } else {
    return std::forward<Callable>(Call)();
  }
}

} // namespace detail

/// Runs Call inside the scope of one module call site; keeps its value
/// category (the wrapper is `[&]() -> decltype(auto) { return call; }`).
template <typename Callable>
decltype(auto) scoped(int ScopeId, Callable &&Call) {
  return detail::runInScope(ScopeId, nullptr, std::forward<Callable>(Call));
}

/// The same for a call of Callee (`fc1` of `fc1->forward(x)`), so the run
/// knows the layer's weights.
template <typename Callee, typename Callable>
decltype(auto) scoped(int ScopeId, const Callee &Module, Callable &&Call) {
  return detail::runInScope(ScopeId, detail::moduleOf(Module),
                            std::forward<Callable>(Call));
}

/// Counts the optimizer's parameters as weights, their .grad() as gradients
/// and its state as optimizer state in the run's memory breakdown.
void track_optimizer(const torch::optim::Optimizer &Optimizer) noexcept;

/// An optimizer read through Holder at each step, where Get gives it (null
/// while there is none): track_optimizer of a pointer.
void track_optimizer_holder(
    const void *Holder,
    const torch::optim::Optimizer *(*Get)(const void *)) noexcept;

/// The same for an optimizer held through a pointer (std::unique_ptr,
/// std::shared_ptr, a raw pointer), which may still be null where it is
/// declared and be made later (`std::unique_ptr<Optimizer> opt;` then
/// `opt = std::make_unique<torch::optim::Adam>(...)`): the holder is read at
/// each step, not here.
template <typename Pointer,
          typename = decltype(&*std::declval<const Pointer &>())>
void track_optimizer(const Pointer &Held) noexcept {
  track_optimizer_holder(
      &Held, [](const void *Holder) -> const torch::optim::Optimizer * {
        const Pointer &P = *static_cast<const Pointer *>(Holder);
        return P ? &*P : nullptr;
      });
}

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

/// When a host sync the instrumented copy times begins (a clock's ns), or
/// -1 where this run does not time it (outside the measured iterations);
/// host_sync_end adds the time since to the sync's.
int64_t host_sync_begin() noexcept;
void host_sync_end(int SyncId, int64_t StartNs) noexcept;

/// Runs Call, a host sync in the training loop (`loss.item<float>()`,
/// `std::cout << t`), timing it as the sync SyncId; keeps its value
/// category (the wrapper is `[&]() -> decltype(auto) { return expr; }`).
template <typename Callable>
decltype(auto) host_sync(int SyncId, Callable &&Call) {
  struct Timer {
    int Id;
    int64_t StartNs;
    ~Timer() { host_sync_end(Id, StartNs); }
  } Timing{SyncId, host_sync_begin()};
  return std::forward<Callable>(Call)();
}

/// Whether this run is the pinned memory experiment's trial
/// (SKYLINE_PINNED_COPIES); pinned_copy_made counts a copy it changed.
bool pinned_copies() noexcept;
void pinned_copy_made() noexcept;

/// `tensor.to(device)` in a training loop (the instrumented copy's
/// `to_device(tensor, device)`): as written, except in the pinned memory
/// trial, where a CPU tensor bound for a CUDA device is copied from pinned
/// memory without blocking, as the fix-it writes it
/// (`tensor.pin_memory().to(device, true)`). What to() throws reaches the
/// program as it would have.
template <typename TensorT, typename DeviceT>
auto to_device(const TensorT &Tensor, const DeviceT &Device)
    -> decltype(Tensor.to(Device)) {
  if (pinned_copies()) {
    auto Target = Tensor.options().device(Device).device();
    if (Tensor.is_cpu() && Target.is_cuda()) {
      pinned_copy_made();
      return Tensor.pin_memory().to(Target, /*non_blocking=*/true);
    }
  }
  return Tensor.to(Device);
}

/// Stands in for torch::save in a measured run: a burst must never overwrite
/// the user's checkpoints.
template <typename... Args> void skipped_save(Args &&...) noexcept {}

} // namespace skyline::rt

#endif // SKYLINE_RUNTIME_RUNTIME_H
