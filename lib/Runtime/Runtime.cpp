//===- Runtime.cpp - The runtime inside an instrumented program ----------===//
//
// Configured from the environment by skyline-check's Measure stage:
//   SKYLINE_RESULT         where to write the run's result; unset = inactive
//   SKYLINE_BATCH_SIZE     the batch size to use instead of the declared one
//   SKYLINE_WARMUP         iterations not measured (default 2)
//   SKYLINE_ITERATIONS     the most iterations measured (default 8, at most
//                          4096)
//   SKYLINE_MIN_ITERATIONS the fewest (default: SKYLINE_ITERATIONS)
//   SKYLINE_TOLERANCE      stop once the median's relative standard error
//                          is at most this (0.02 = 2%; default 0: measure
//                          SKYLINE_ITERATIONS)
//   SKYLINE_TIME_LIMIT     seconds from the program's start after which the
//                          run stops, once it has the fewest (0 = none)
//   SKYLINE_MODE           breakdown (default: every hook) or timing (the
//                          iteration boundaries and the memory tracker only)
//   SKYLINE_MEMORY_BUDGET  bytes of CPU memory the run may hold (0 = none)
//   SKYLINE_INTRA_OP_THREADS  intra-op threads set at the first iteration,
//                          over the program's own (0 = keep them)
// After warm-up plus the measured iterations the result is written and the
// process ends (exit 0); crossing the budget writes an OOM result and exits
// with ExitOutOfMemory. A program that returns before that writes a partial
// result at exit (ended_early), with the iterations it measured, and keeps
// its own exit code. Nothing throws into the user's program.
//
// Layers: each module call site is a scope. Forward time is the scope's self
// time; backward time comes from RecordFunction: a forward op's autograd
// sequence number is mapped to the scope it ran in, and the backward node it
// made carries the same number. Activation bytes are the forward
// allocations per scope (the CPU tracker's, or on a CUDA run the device
// reporter's); weights are the called modules' parameters and buffers, taken
// the first time a scope calls each.
//
//===----------------------------------------------------------------------===//

#include "skyline/runtime/Runtime.h"
#include "skyline/runtime/CudaSupport.h"
#include "skyline/runtime/MemoryTracker.h"
#include "skyline/runtime/RunFormat.h"
#include "skyline/runtime/RunResult.h"
#include "skyline/runtime/TensorAccounting.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/version.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

namespace skyline::rt {
namespace {

constexpr int MaxIterations = MaxMeasuredIterations;

struct Config {
  bool Active = false;
  /// Active in breakdown mode: the scope, phase and RecordFunction hooks run.
  bool Hooks = false;
  RunMode Mode = RunMode::Breakdown;
  int64_t BatchSize = 0; // 0: keep the declared one
  int Warmup = 2;
  int Iterations = 8; // the most measured
  StoppingRule Stop;
  int64_t MemoryBudget = 0;
  /// The threads experiment's intra-op threads; 0: the program's own.
  int IntraOpThreads = 0;
  /// The loader workers experiment's workers; 0: the program's own.
  int LoaderWorkers = 0;
  /// The cuDNN benchmark experiment's trial: benchmark mode on.
  bool CudnnBenchmark = false;
  /// The autocast experiment's trial: CUDA autocast to bfloat16.
  bool AutocastBf16 = false;
  /// The channels-last experiment's trial: 4-d weights made channels-last.
  bool ChannelsLast = false;
  /// The pinned memory experiment's trial: copies to CUDA from pinned memory.
  bool PinnedCopies = false;
  /// The no-grad evaluation experiment's trial: training skipped, the
  /// evaluation loops' passes timed.
  bool Evaluation = false;
  std::string ResultPath;
};

double envNumber(const char *Name, double Default) {
  const char *Text = std::getenv(Name);
  if (!Text || !*Text)
    return Default;
  char *End = nullptr;
  double Value = std::strtod(Text, &End);
  return End && *End == '\0' && Value >= 0 ? Value : Default;
}

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
  const char *Result = std::getenv(env::Result);
  C.Active = Result && *Result;
  if (!C.Active)
    return C;
  C.ResultPath = Result;
  C.BatchSize = envInteger(env::BatchSize, 0);
  C.Warmup = int(std::min<int64_t>(envInteger(env::Warmup, 2), MaxIterations));
  C.Iterations = int(
      std::clamp<int64_t>(envInteger(env::Iterations, 8), 1, MaxIterations));
  C.MemoryBudget = envInteger(env::MemoryBudget, 0);
  C.IntraOpThreads = int(std::min<int64_t>(envInteger(env::IntraOpThreads, 0),
                                           1024));
  C.LoaderWorkers =
      int(std::min<int64_t>(envInteger(env::LoaderWorkers, 0), 256));
  C.Evaluation = envInteger(env::Evaluation, 0) > 0;
  C.CudnnBenchmark = envInteger(env::CudnnBenchmark, 0) > 0;
  const char *Autocast = std::getenv(env::Autocast);
  C.AutocastBf16 = Autocast && std::strcmp(Autocast, "bf16") == 0;
  C.ChannelsLast = envInteger(env::ChannelsLast, 0) > 0;
  C.PinnedCopies = envInteger(env::PinnedCopies, 0) > 0;
  const char *Mode = std::getenv(env::Mode);
  C.Mode = Mode && fromName<RunMode>(Mode) == RunMode::Timing
               ? RunMode::Timing
               : RunMode::Breakdown;
  C.Hooks = C.Mode == RunMode::Breakdown;
  C.Stop.MaxIterations = C.Iterations;
  C.Stop.MinIterations = int(std::clamp<int64_t>(
      envInteger(env::MinIterations, C.Iterations), 1, C.Iterations));
  C.Stop.Tolerance = envNumber(env::Tolerance, 0);
  C.Stop.TimeLimitSeconds = envNumber(env::TimeLimit, 0);
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
  /// The measured iterations' times so far, those across an epoch's end
  /// left out, for the stopping rule.
  std::array<double, MaxIterations> MeasuredMs{};
  int MeasuredCount = 0;
  /// Every measured iteration's time: the stopping rule's while none is
  /// kept (a loop entered once an iteration, where all are kept).
  std::array<double, MaxIterations> WindowMs{};
  /// Per iteration: a start of the training loop (loop_begin) fell inside
  /// it, so it spans an epoch's end.
  std::array<bool, MaxIterations * 2 + 2> AcrossLoopStart{};
  std::atomic<bool> LoopStarted{false};
  /// Whether a training loop's start was ever marked (its first batch being
  /// loaded counts: the loop has begun).
  std::atomic<bool> LoopBegan{false};
  /// Read by the callbacks on autograd threads too.
  std::atomic<int> Count{0};
  int64_t EffectiveBatchSize = 0;
  /// Per iteration: the batch size an outermost module call's result showed
  /// (observe_batch; 0: none), and that call's scope.
  std::array<int64_t, MaxIterations * 2 + 2> ObservedBatch{};
  std::array<int, MaxIterations * 2 + 2> ObservedScope{};
  /// The last iteration observe_batch kept a size for: one an iteration.
  std::atomic<int> ObservedIteration{-1};
  int64_t DatasetSamples = 0; // observe_dataset's, 0 where none was seen
  int64_t DatasetsGcd = 0;    // of every loader's given the batch size
  int64_t ProgramStartNs = 0; // when the runtime was loaded
  /// cuDNN's benchmark mode as the program set it (at the first iteration).
  bool ProgramCudnnBenchmark = false;
  /// Whether the program had CUDA autocast on (at the first iteration).
  bool ProgramAutocast = false;
  /// The optimizers' 4-d parameters (convolution weights), once read; of
  /// them, whether the program made every one channels-last itself, and
  /// how many the channels-last trial made so.
  int FourDimensionalWeights = 0;
  bool ProgramChannelsLast = false;
  int ChannelsLastWeights = 0;
  /// Set by the first path that writes the result (end of the run, out of
  /// memory, program exit): the result is written once.
  std::atomic<bool> Finished{false};
} Clock;

/// An evaluation trial's passes; preallocated, as the iterations' clock.
struct EvaluationClock {
  std::array<double, MaxIterations> UnguardedMs{}, GuardedMs{};
  int Unguarded = 0, Guarded = 0;
  int64_t UnguardedPeak = 0, GuardedPeak = 0;
  int Passes = 0; // evaluation_begin's, warm-up included
  /// A pass is open: one at a time, the fields below its opener's; a pass
  /// that starts while another is open (a nested loop, another thread) is
  /// not timed.
  std::atomic<bool> Open{false};
  bool PassGuarded = false;
  bool Timed = false; // after warm-up
  bool OnDevice = false; // the pass's peak is the GPU's (evaluationBoundary)
  int64_t BeginNs = 0;
  /// training_skipped calls since the last pass: a loop that is left and
  /// entered again without evaluating (a step count that never grows)
  /// would spin.
  int64_t SkipsWithoutPass = 0;
} EvalPasses;

/// Module calls open on this thread, in every mode: the outermost one's
/// result shows the batch (batch_wanted).
thread_local int CallDepth = 0;

/// Inside a measured iteration: after warm-up, before the last boundary.
/// The pinned memory trial's copies made from pinned memory.
std::atomic<int64_t> PinnedCopiesMade{0};

bool measuring() {
  int Count = Clock.Count.load(std::memory_order_relaxed);
  return Count > config().Warmup &&
         Count <= config().Warmup + config().Iterations;
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
  /// Counts the switches into the backward phase: one per backward pass.
  std::atomic<uint32_t> BackwardPasses{0};
} PhaseTime;

/// Moves the run into phase P: memory is tagged with it from now on, and the
/// time since the last switch is added to the phase left.
void switchPhase(Phase P) {
  MemoryTracker &Tracker = MemoryTracker::install();
  Phase Previous = Tracker.phase();
  if (Previous == P)
    return; // backward ops arrive by the hundred: one check, no clock read
  int64_t Now = nowNs();
  int64_t Last =
      PhaseTime.LastSwitchNs.exchange(Now, std::memory_order_relaxed);
  if (measuring() && Last > 0)
    PhaseTime.Ns[size_t(Previous)].fetch_add(Now - Last,
                                             std::memory_order_relaxed);
  if (P == Phase::Backward)
    PhaseTime.BackwardPasses.fetch_add(1, std::memory_order_relaxed);
  cuda::phaseBegin(uint8_t(P)); // the GPU's timeline of the phases
  Tracker.setPhase(P);
}

//===----------------------------------------------------------------------===//
// Scopes: forward self time, and the scope each forward op runs in
//===----------------------------------------------------------------------===//

/// Per scope id, over the measured iterations. Fixed-size, so entering a
/// scope allocates nothing.
std::array<std::atomic<int64_t>, MaxScopes> ForwardNs{};
std::array<std::atomic<int64_t>, MaxScopes> BackwardNs{};
std::atomic<int64_t> UnscopedBackwardNs{0};
std::array<std::atomic<bool>, MaxScopes> Entered{};

struct ScopeFrame {
  int Id;
  int64_t StartNs;
  int64_t ChildNs;
};
/// Module calls run on the thread that calls forward(); one stack per thread.
thread_local struct {
  std::array<ScopeFrame, 64> Frames;
  size_t Depth = 0;
  bool EverEntered = false; // this thread runs forward passes
} ScopeStack;

/// The innermost scope of this thread, or -1.
int currentScope() {
  size_t Depth = std::min(ScopeStack.Depth, ScopeStack.Frames.size());
  int Id = Depth ? ScopeStack.Frames[Depth - 1].Id : -1;
  return Id >= 0 && Id < MaxScopes ? Id : -1;
}

/// Sequence number -> scope of the forward op that made the autograd node.
/// A ring indexed by the number: an entry holds the number, the forward
/// thread and the scope in one word, so a reader on an autograd thread sees
/// a whole entry or an older one, never a torn one, without a lock. An
/// iteration makes far fewer nodes than the ring holds before its backward.
class SequenceScopes {
public:
  void record(int64_t SeqNr, uint64_t Thread, int Scope) {
    Slots[size_t(SeqNr) & (Size - 1)].store(pack(SeqNr, Thread, Scope),
                                            std::memory_order_relaxed);
  }
  /// -1 when the entry was overwritten or never made.
  int lookup(int64_t SeqNr, uint64_t Thread) const {
    if (SeqNr < 0)
      return -1;
    uint64_t Entry =
        Slots[size_t(SeqNr) & (Size - 1)].load(std::memory_order_relaxed);
    if (Entry >> ScopeAndThreadBits != (uint64_t(SeqNr) & SeqMask) ||
        ((Entry >> ScopeBits) & ThreadMask) != (Thread & ThreadMask))
      return -1;
    return int(Entry & ScopeMask) - 1;
  }

private:
  static constexpr size_t Size = size_t(1) << 16;
  static constexpr int ScopeBits = 13; // scope + 1: 0 (none) .. MaxScopes
  static constexpr int ThreadBits = 11;
  static constexpr int ScopeAndThreadBits = ScopeBits + ThreadBits;
  static constexpr uint64_t ScopeMask = (uint64_t(1) << ScopeBits) - 1;
  static constexpr uint64_t ThreadMask = (uint64_t(1) << ThreadBits) - 1;
  static constexpr uint64_t SeqMask =
      (uint64_t(1) << (64 - ScopeAndThreadBits)) - 1;
  static_assert(MaxScopes < (1 << ScopeBits));

  static uint64_t pack(int64_t SeqNr, uint64_t Thread, int Scope) {
    return (uint64_t(SeqNr) & SeqMask) << ScopeAndThreadBits |
           (Thread & ThreadMask) << ScopeBits | uint64_t(Scope + 1);
  }

  std::array<std::atomic<uint64_t>, Size> Slots{};
};
SequenceScopes ForwardOps;

/// RecordFunction start callback for forward ops: remembers the scope their
/// autograd node belongs to. Ops of threads that never run a module call
/// (DataLoader workers) are left out: their numbers would evict the model's.
std::unique_ptr<at::ObserverContext> onForwardOp(const at::RecordFunction &Fn) {
  if (!ScopeStack.EverEntered || Fn.seqNr() < 0)
    return nullptr;
  ForwardOps.record(Fn.seqNr(), Fn.threadId(), currentScope());
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Backward ops: self time, on whichever thread autograd runs them
//===----------------------------------------------------------------------===//

struct BackwardFrame {
  int Scope;
  int64_t StartNs;
  int64_t ChildNs;
};
thread_local struct {
  std::array<BackwardFrame, 32> Frames;
  size_t Depth = 0;
  /// The last outermost op to end on this thread, in which backward pass.
  int LastScope = -1;
  int64_t LastEndNs = 0;
  uint32_t LastPass = 0;
} BackwardStack;

std::atomic<bool> InOptimizerStep{false};

void addBackwardTime(int Scope, int64_t Ns) {
  std::atomic<int64_t> &Total =
      Scope >= 0 ? BackwardNs[Scope] : UnscopedBackwardNs;
  Total.fetch_add(Ns, std::memory_order_relaxed);
}

/// RecordFunction start callback for backward ops: what they allocate is
/// gradients or temporaries, not activations; their clock starts.
std::unique_ptr<at::ObserverContext>
onBackwardOpStart(const at::RecordFunction &Fn) {
  if (!InOptimizerStep.load(std::memory_order_relaxed))
    switchPhase(Phase::Backward);
  int64_t Now = nowNs();
  size_t Depth = BackwardStack.Depth++;
  // Between two ops autograd frees what the earlier one saved and hands its
  // outputs on: that time is the earlier op's, within one backward pass.
  if (Depth == 0 && BackwardStack.LastEndNs > 0 &&
      BackwardStack.LastPass ==
          PhaseTime.BackwardPasses.load(std::memory_order_relaxed) &&
      measuring())
    addBackwardTime(BackwardStack.LastScope, Now - BackwardStack.LastEndNs);
  if (Depth < BackwardStack.Frames.size())
    BackwardStack.Frames[Depth] = {
        ForwardOps.lookup(Fn.seqNr(), Fn.forwardThreadId()), Now, 0};
  cuda::scopeEnter(Depth < BackwardStack.Frames.size()
                       ? BackwardStack.Frames[Depth].Scope
                       : -1); // its kernels are its forward's layer's
  return nullptr;
}

void onBackwardOpEnd(const at::RecordFunction &, at::ObserverContext *) {
  if (BackwardStack.Depth == 0)
    return;
  size_t Depth = --BackwardStack.Depth;
  cuda::scopeExit();
  if (Depth >= BackwardStack.Frames.size())
    return;
  const BackwardFrame &Frame = BackwardStack.Frames[Depth];
  int64_t Now = nowNs();
  int64_t Elapsed = Now - Frame.StartNs;
  // Self time: a node run from inside another (reentrant backward) is its own.
  if (Depth > 0) {
    BackwardStack.Frames[Depth - 1].ChildNs += Elapsed;
  } else {
    BackwardStack.LastScope = Frame.Scope;
    BackwardStack.LastEndNs = Now;
    BackwardStack.LastPass =
        PhaseTime.BackwardPasses.load(std::memory_order_relaxed);
  }
  if (measuring())
    addBackwardTime(Frame.Scope, Elapsed - Frame.ChildNs);
}

//===----------------------------------------------------------------------===//
// Weights: the modules the scopes call, and the optimizers
//===----------------------------------------------------------------------===//

using WeakStorage = c10::weak_intrusive_ptr<c10::StorageImpl>;

/// One module a scope called (a call site in a block that a network repeats
/// calls several), with its storages. Weak: a module the program drops no
/// longer holds memory.
struct CalledModule {
  int Scope;
  size_t Depth; // scopes open around its first call
  std::vector<WeakStorage> Storages;
};

struct ScopeWeights {
  std::mutex Lock;
  std::set<std::pair<int, const torch::nn::Module *>> Seen;
  std::vector<CalledModule> Modules;
  /// The module each scope called last: the usual entry checks no more.
  std::array<std::atomic<const torch::nn::Module *>, MaxScopes> Last{};
};
ScopeWeights &scopeWeights() {
  static auto *Weights = new ScopeWeights(); // lives past static dtors
  return *Weights;
}

/// Takes the storages of a module the first time a scope calls it: once per
/// call site and module, so the walk is off the hot path.
void noteModule(int ScopeId, const torch::nn::Module &Module, size_t Depth) {
  ScopeWeights &Weights = scopeWeights();
  if (Weights.Last[ScopeId].exchange(&Module, std::memory_order_relaxed) ==
      &Module)
    return;
  try {
    std::lock_guard<std::mutex> Hold(Weights.Lock);
    if (!Weights.Seen.insert({ScopeId, &Module}).second)
      return;
    CalledModule Called{ScopeId, Depth, {}};
    for (const at::Tensor &T : moduleTensors(Module))
      if (T.defined() && T.has_storage())
        Called.Storages.push_back(T.storage().getWeakStorageImpl());
    Weights.Modules.push_back(std::move(Called));
  } catch (...) {
    // No weights for this layer rather than an exception in the program.
  }
}

/// The optimizers of the program (a GAN has two); fixed, so tracking one
/// allocates nothing.
struct TrackedOptimizers {
  std::array<const torch::optim::Optimizer *, 8> List{};
  size_t Count = 0;
} Optimizers;

/// Optimizers held through pointers, read at each step (Runtime.h).
struct OptimizerHolderList {
  using Getter = const torch::optim::Optimizer *(*)(const void *);
  std::array<std::pair<const void *, Getter>, 8> List{};
  size_t Count = 0;
} OptimizerHolders;

void trackOptimizer(const torch::optim::Optimizer &Optimizer) {
  for (size_t I = 0; I < Optimizers.Count; ++I)
    if (Optimizers.List[I] == &Optimizer)
      return;
  if (Optimizers.Count < Optimizers.List.size())
    Optimizers.List[Optimizers.Count++] = &Optimizer;
}

/// The optimizers held through pointers that are made by now.
void trackHeldOptimizers() {
  for (size_t I = 0; I < OptimizerHolders.Count; ++I)
    if (const torch::optim::Optimizer *Held =
            OptimizerHolders.List[I].second(OptimizerHolders.List[I].first))
      trackOptimizer(*Held);
}

std::vector<at::Tensor> optimizerParameters() {
  std::vector<at::Tensor> Parameters;
  for (size_t I = 0; I < Optimizers.Count; ++I)
    for (const auto &Group : Optimizers.List[I]->param_groups())
      Parameters.insert(Parameters.end(), Group.params().begin(),
                        Group.params().end());
  return Parameters;
}

/// A storage still alive at the end, and the called module that holds it.
struct HeldStorage {
  c10::intrusive_ptr<c10::StorageImpl> Storage;
  int Scope = -1;
  size_t ModuleSize = 0; // storages of the module
  size_t Depth = 0;      // scopes around its call
};

/// Whether A's module is inside B's: a child holds a subset of its parent's
/// storages; where both hold the same, the one called deeper.
bool isInside(const HeldStorage &A, const HeldStorage &B) {
  return A.ModuleSize != B.ModuleSize ? A.ModuleSize < B.ModuleSize
                                      : A.Depth > B.Depth;
}

/// Each storage of the called modules, given to the scope of the innermost
/// module that holds it, so the rows add up; a module called at two sites
/// counts at the first.
std::unordered_map<const c10::StorageImpl *, HeldStorage> heldStorages() {
  std::unordered_map<const c10::StorageImpl *, HeldStorage> Held;
  ScopeWeights &Weights = scopeWeights();
  std::lock_guard<std::mutex> Hold(Weights.Lock);
  for (const CalledModule &Called : Weights.Modules)
    for (const WeakStorage &Weak : Called.Storages) {
      c10::intrusive_ptr<c10::StorageImpl> Storage = Weak.lock();
      if (!Storage)
        continue;
      HeldStorage Candidate{Storage, Called.Scope, Called.Storages.size(),
                            Called.Depth};
      HeldStorage &Entry = Held[Storage.get()];
      if (Entry.Scope < 0 || isInside(Candidate, Entry))
        Entry = std::move(Candidate);
    }
  return Held;
}

/// Bytes of the scopes' modules, each storage counted once, in all and per
/// scope.
struct ModuleWeights {
  int64_t Total = 0;
  std::vector<int64_t> PerScope = std::vector<int64_t>(MaxScopes, 0);
  std::unordered_set<const c10::StorageImpl *> Storages;
};

/// On the run's device only: a CUDA run's kinds are device memory.
ModuleWeights moduleWeights(c10::DeviceType On) {
  ModuleWeights Weights;
  for (const auto &[Impl, Entry] : heldStorages()) {
    if (Impl->device_type() != On)
      continue;
    Weights.PerScope[Entry.Scope] += int64_t(Impl->nbytes());
    Weights.Total += int64_t(Impl->nbytes());
    Weights.Storages.insert(Impl);
  }
  return Weights;
}

/// Weights are the modules' parameters and buffers and the optimizers'
/// parameters, each storage once; gradients and optimizer state those of
/// the optimizers.
RunResult::Breakdown breakdownAtPeak(const PhaseBytes &AtPeak,
                                     const ModuleWeights &Modules,
                                     c10::DeviceType On, int64_t Setup) {
  std::vector<at::Tensor> Parameters = optimizerParameters();
  std::vector<at::Tensor> State;
  for (size_t I = 0; I < Optimizers.Count; ++I) {
    auto OptimizerState = optimizerStateTensors(*Optimizers.List[I]);
    State.insert(State.end(), OptimizerState.begin(), OptimizerState.end());
  }
  std::vector<at::Tensor> NotInModules;
  for (const at::Tensor &P : Parameters)
    if (P.defined() && P.has_storage() &&
        !Modules.Storages.count(P.storage().unsafeGetStorageImpl()))
      NotInModules.push_back(P);
  return breakDown(AtPeak, Modules.Total + uniqueStorageBytes(NotInModules, On),
                   gradientBytes(Parameters, On), uniqueStorageBytes(State, On),
                   Setup);
}

/// Each setup statement's bytes at the peak, less the weights it made (a
/// model built by the statement: its parameters are the weights kind, not
/// counted twice), most bytes first; statements with none left out. The
/// weights are the modules' storages and the optimizers' parameters, each
/// found by the tag in front of its block.
std::vector<std::pair<int, int64_t>>
setupStatementBytes(const SetupBytes &AtPeak, const ModuleWeights &Modules) {
  SetupBytes Left = AtPeak;
  std::unordered_set<const c10::StorageImpl *> Weights = Modules.Storages;
  for (const at::Tensor &P : optimizerParameters())
    if (P.defined() && P.has_storage())
      Weights.insert(P.storage().unsafeGetStorageImpl());
  for (const c10::StorageImpl *Impl : Weights) {
    if (Impl->device_type() != c10::DeviceType::CPU)
      continue;
    const c10::DataPtr &Data = Impl->data_ptr();
    const AllocationTag *Tag =
        MemoryTracker::tagOf(Data.get(), Data.get_deleter());
    if (Tag && Tag->SetupSlot >= 0)
      Left[Tag->SetupSlot] -= int64_t(Impl->nbytes());
  }
  std::vector<std::pair<int, int64_t>> Rows;
  for (int Id = 0; Id < MaxSetupStatements; ++Id)
    if (Left[Id] > 0)
      Rows.push_back({Id, Left[Id]});
  std::stable_sort(Rows.begin(), Rows.end(), [](const auto &A, const auto &B) {
    return A.second > B.second;
  });
  return Rows;
}

//===----------------------------------------------------------------------===//
// The result
//===----------------------------------------------------------------------===//

/// The "model name" of /proc/cpuinfo; "CPU" where there is none (ARM).
std::string cpuName() {
  std::FILE *Info = std::fopen("/proc/cpuinfo", "r");
  if (!Info)
    return "CPU";
  char Line[512];
  std::string Name;
  while (Name.empty() && std::fgets(Line, sizeof(Line), Info)) {
    if (std::strncmp(Line, "model name", 10) != 0)
      continue;
    const char *Value = std::strchr(Line, ':');
    if (!Value)
      continue;
    Name = Value + 1;
    size_t First = Name.find_first_not_of(" \t");
    size_t Last = Name.find_last_not_of(" \t\r\n");
    Name =
        First == std::string::npos ? "" : Name.substr(First, Last - First + 1);
  }
  std::fclose(Info);
  return Name.empty() ? "CPU" : Name;
}

void describeEnvironment(RunResult &R) {
#ifdef TORCH_VERSION
  R.TorchVersion = TORCH_VERSION;
#else
  R.TorchVersion = std::to_string(TORCH_VERSION_MAJOR) + "." +
                   std::to_string(TORCH_VERSION_MINOR) + "." +
                   std::to_string(TORCH_VERSION_PATCH);
#endif
  R.Threads = at::get_num_threads();
  R.CudnnBenchmark = Clock.ProgramCudnnBenchmark;
  R.Autocast = Clock.ProgramAutocast;
  R.ChannelsLast = Clock.ProgramChannelsLast;
  // Said once the trial had its two chances (the first two iterations).
  if (config().ChannelsLast && Clock.ChannelsLastWeights == 0 &&
      Clock.Count.load(std::memory_order_relaxed) >= 2)
    R.TrialNotApplied =
        Clock.FourDimensionalWeights > 0
            ? "the optimizers' 4-d parameters were channels-last already"
            : "no optimizer with 4-d parameters (convolution weights) was "
              "made by the second iteration";
  if (config().PinnedCopies && PinnedCopiesMade.load() == 0 &&
      Clock.Count.load(std::memory_order_relaxed) >= 1)
    R.TrialNotApplied = "no copy in the training loop took a CPU tensor to a "
                        "CUDA device";
  R.DeviceType = nameOf(DeviceType::CPU);
  R.DeviceName = cpuName();
  cuda::describeDevice(R); // a CUDA run: the GPU and its allocator's peak
}

/// Per host sync id, over the measured iterations; fixed-size, so timing a
/// sync allocates nothing.
std::array<std::atomic<int64_t>, MaxHostSyncs> HostSyncNs{};
std::array<std::atomic<int64_t>, MaxHostSyncs> HostSyncCalls{};

/// The syncs the measured iterations reached, ms per iteration.
std::vector<RunResult::HostSync> hostSyncRows(int WindowIterations) {
  std::vector<RunResult::HostSync> Rows;
  if (!WindowIterations)
    return Rows;
  for (int Id = 0; Id < MaxHostSyncs; ++Id)
    if (int64_t Calls = HostSyncCalls[Id].load(std::memory_order_relaxed))
      Rows.push_back({Id, double(Calls) / WindowIterations,
                      double(HostSyncNs[Id].load(std::memory_order_relaxed)) /
                          (1e6 * WindowIterations)});
  return Rows;
}

/// One row per scope entered and the (unscoped) row: what the forward phase
/// spent outside every scope, backward ops of no known scope, and forward
/// allocations outside every scope (or on other threads).
std::vector<RunResult::Layer> layerRows(const RunResult &R,
                                        int WindowIterations,
                                        const ScopeBytes &ActivationsAtPeak,
                                        const ModuleWeights &Weights) {
  std::vector<RunResult::Layer> Rows;
  if (!WindowIterations)
    return Rows;
  double PerIteration = 1e6 * WindowIterations;
  int64_t ScopedForwardNs = 0, ScopedActivations = 0;
  for (int Id = 0; Id < MaxScopes; ++Id) {
    if (!Entered[Id].load(std::memory_order_relaxed))
      continue;
    int64_t Forward = ForwardNs[Id].load(std::memory_order_relaxed);
    ScopedForwardNs += Forward;
    ScopedActivations += ActivationsAtPeak[Id];
    Rows.push_back({Id, double(Forward) / PerIteration,
                    double(BackwardNs[Id].load()) / PerIteration,
                    ActivationsAtPeak[Id], Weights.PerScope[Id]});
  }
  int64_t ForwardPhaseNs = PhaseTime.Ns[size_t(Phase::Forward)].load();
  RunResult::Layer Unscoped;
  Unscoped.ForwardMs =
      double(std::max<int64_t>(0, ForwardPhaseNs - ScopedForwardNs)) /
      PerIteration;
  Unscoped.BackwardMs = double(UnscopedBackwardNs.load()) / PerIteration;
  // The rest of the activations kind, so the rows add up to it exactly.
  Unscoped.ActivationBytes = R.Memory.Activations - ScopedActivations;
  Rows.push_back(Unscoped);
  return Rows;
}

/// What an exception that ended the program said, where it said the device
/// ran out of memory; written into the result's gpu note. Fixed, so the
/// terminate handler allocates nothing to keep it.
char OutOfMemoryWhat[256];

/// The run's measured iterations: the window after the warm-up (at most
/// --iterations of the Count reached), and those of them that do not span
/// an epoch's end, whose times are the run's; where every one does (a loop
/// entered once an iteration), all count. Returns the window's iterations.
int timeIterations(const Config &C, int Count, bool GpuClock, RunResult &R) {
  std::vector<double> Window, Kept;
  for (int I = C.Warmup; I + 1 < Count && int(Window.size()) < C.Iterations;
       ++I) {
    double GpuMs = GpuClock ? cuda::iterationMs(I) : -1;
    Window.push_back(
        GpuMs >= 0 ? GpuMs
                   : double(Clock.StartNs[I + 1] - Clock.StartNs[I]) / 1e6);
    if (!Clock.AcrossLoopStart[size_t(I)])
      Kept.push_back(Window.back());
  }
  // One iteration alone says nothing of the epochs' length.
  R.EveryIterationAnEpoch = Kept.empty() && Window.size() >= 2;
  R.DatasetSamples = Clock.DatasetSamples;
  R.DatasetsGcd = Clock.DatasetSamples ? Clock.DatasetsGcd : 0;
  // The first epoch's last iteration is the first to span a loop start.
  for (int I = 0; I + 1 < Count && I < int(Clock.AcrossLoopStart.size()); ++I)
    if (Clock.AcrossLoopStart[size_t(I)]) {
      R.EpochIterations = I + 1;
      break;
    }
  if (Kept.empty())
    Kept = Window;
  R.Iterations = int(Kept.size());
  R.EpochEndIterations = int(Window.size() - Kept.size());
  R.IterationMs = summarize(Kept);
  R.Throughput = R.IterationMs.Median > 0
                     ? double(R.BatchSize) * 1000.0 / R.IterationMs.Median
                     : 0;
  return int(Window.size());
}

/// The batch size the run observed (observe_batch): the most frequent one
/// of the measured iterations kept (an epoch's short last batch is left out
/// with its iteration), else of the whole window, else of any iteration;
/// the first to reach that count wins. Scope: the call it was read from.
/// 0 where no iteration showed one.
int64_t observedBatchSize(const Config &C, int Count, int &Scope) {
  Scope = -1;
  int Last = std::min(Count, int(Clock.ObservedBatch.size()));
  auto MostFrequent = [&](auto Takes) -> int64_t {
    std::map<int64_t, int> Seen;
    int64_t Best = 0;
    for (int I = 0; I < Last; ++I) {
      int64_t Size = Clock.ObservedBatch[size_t(I)];
      if (Size <= 0 || !Takes(I))
        continue;
      int N = ++Seen[Size];
      if (N > (Best ? Seen[Best] : 0)) {
        Best = Size;
        Scope = Clock.ObservedScope[size_t(I)];
      }
    }
    return Best;
  };
  auto InWindow = [&](int I) {
    return I >= C.Warmup && I + 1 < Count && I < C.Warmup + C.Iterations;
  };
  if (int64_t Kept = MostFrequent([&](int I) {
        return InWindow(I) && !Clock.AcrossLoopStart[size_t(I)];
      }))
    return Kept;
  if (int64_t Window = MostFrequent(InWindow))
    return Window;
  return MostFrequent([](int) { return true; });
}

/// The hooks' time per phase, summed over the whole window (epoch ends
/// included), an iteration's share.
void splitTimeByPhase(int WindowIterations, bool GpuClock, RunResult &R) {
  if (WindowIterations)
    for (size_t I = 0; I < NumPhases; ++I)
      R.TimeSplitMs[I] =
          double(PhaseTime.Ns[I].load()) / 1e6 / WindowIterations;
  // On CUDA, the phases on the stream's timeline: where the CPU waited for
  // the GPU does not decide which phase the wait lands in.
  if (GpuClock)
    cuda::phaseSplitMs(R.TimeSplitMs);
}

/// The memory kinds at the peak, where the run has a breakdown; else only
/// the allocation tags'. Returns the modules' weights (none without a
/// breakdown) for the layers' rows.
ModuleWeights breakDownMemory(MemoryTracker &Tracker, bool OnDevice,
                              c10::DeviceType On, RunResult &R) {
  ModuleWeights Weights;
  if (R.HasMemoryBreakdown) {
    Weights = moduleWeights(On);
    // The setup statements' bytes are the CPU tracker's: a CUDA run's
    // device memory keeps them in untracked.
    if (!OnDevice)
      R.SetupStatements =
          setupStatementBytes(Tracker.peakBySetupStatement(), Weights);
    int64_t Setup = 0;
    for (const auto &Statement : R.SetupStatements)
      Setup += Statement.second;
    R.Memory = breakdownAtPeak(R.PeakByPhase, Weights, On, Setup);
  } else {
    // Only the allocation tags: activations are the forward phase's bytes.
    R.Memory.Activations = R.PeakByPhase[size_t(Phase::Forward)];
  }
  return Weights;
}

/// Where the optimizers' gradients are, as blocks of the device's memory.
std::vector<uintptr_t> gradientBlocks() {
  std::vector<uintptr_t> Blocks;
  for (const at::Tensor &P : optimizerParameters())
    if (P.defined() && P.grad().defined() && P.grad().has_storage())
      Blocks.push_back(
          reinterpret_cast<uintptr_t>(P.grad().storage().data_ptr().get()));
  return Blocks;
}

/// What the run measured. At program exit (Why is EndedEarly) the program's
/// modules and optimizers are destroyed: the weights and the optimizers'
/// tensors are not looked at, so the memory kinds and the layers' weight
/// bytes are left out rather than wrong.
RunResult collect(StopReason Why) {
  const Config &C = config();
  RunResult R;
  int Count = Clock.Count.load();
  R.ObservedBatchSize = observedBatchSize(C, Count, R.ObservedScope);
  // Without a literal to change, the size the program chose itself.
  R.BatchSize = Clock.EffectiveBatchSize > 0 ? Clock.EffectiveBatchSize
                                             : R.ObservedBatchSize;
  R.OutOfMemory = Why == StopReason::OutOfMemory;
  R.Mode = C.Mode;
  R.Stopped = Why;
  R.EndedEarly = Why == StopReason::EndedEarly;
  R.Warmup = C.Warmup;
  R.IterationsAsked = C.Iterations;
  R.MinIterations = C.Stop.MinIterations;
  R.IterationsReached = Count;
  R.LoopBegan = Clock.LoopBegan.load(std::memory_order_relaxed);
  // On CUDA the stream's timeline times the iterations (docs/gpu.md); after
  // main returned CUDA may be gone, and the CPU's clock does.
  bool GpuClock = !R.EndedEarly && cuda::resolveTimeline();
  int WindowIterations = timeIterations(C, Count, GpuClock, R);
  R.HostSyncs = hostSyncRows(WindowIterations);
  MemoryTracker &Tracker = MemoryTracker::install();
  R.PeakBytes = Tracker.peakBytes();
  R.HasMemoryBreakdown = C.Hooks && !R.EndedEarly;
  if (C.Evaluation) {
    const EvaluationClock &E = EvalPasses;
    R.Evaluation.UnguardedMs.assign(E.UnguardedMs.begin(),
                                    E.UnguardedMs.begin() + E.Unguarded);
    R.Evaluation.GuardedMs.assign(E.GuardedMs.begin(),
                                  E.GuardedMs.begin() + E.Guarded);
    R.Evaluation.UnguardedPeakBytes = E.UnguardedPeak;
    R.Evaluation.GuardedPeakBytes = E.GuardedPeak;
    R.HasMemoryBreakdown = false; // no training iteration to break down
  }
  describeEnvironment(R);
  if (GpuClock && R.Gpu.Used)
    R.Gpu.Clock = "cuda_events";
  if (OutOfMemoryWhat[0])
    R.Gpu.Note =
        (R.Gpu.Note.empty() ? "" : R.Gpu.Note + "; ") +
        "out of memory outside the caching allocator: " + OutOfMemoryWhat;
  if (!C.Hooks)
    return R;
  // A CUDA run's kinds are the device reporter's tags, else the CPU's.
  const TaggedBytes *Device = cuda::deviceMemory();
  const TaggedBytes &Tags = Device ? *Device : Tracker;
  c10::DeviceType On = Device ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
  R.PeakByPhase = Tags.peakByPhase();
  splitTimeByPhase(WindowIterations, GpuClock, R);
  ModuleWeights Weights = breakDownMemory(Tracker, Device != nullptr, On, R);
  R.Layers = layerRows(R, WindowIterations, Tags.peakForwardByScope(), Weights);
  // A CUDA run: gpu_ms per layer, the workspace kind (the gradients'
  // blocks, held from warm-up on too, are not workspace), untracked rest.
  std::vector<uintptr_t> GradientBlocks;
  if (Device && R.HasMemoryBreakdown)
    GradientBlocks = gradientBlocks();
  cuda::completeLayers(R, GradientBlocks);
  return R;
}

/// Writes the result once; false when another path wrote it first or the
/// file could not be written (Written says which).
bool writeResultOnce(StopReason Why, bool &Written) {
  Written = false;
  if (Clock.Finished.exchange(true))
    return false;
  // Nothing the result's collection allocates is an out-of-memory.
  MemoryTracker::install().setBudget(0, nullptr);
  RunResult R;
  try {
    R = collect(Why);
  } catch (...) {
    R.OutOfMemory = Why == StopReason::OutOfMemory; // a partial result
    R.Stopped = Why;                                // beats none
    R.EndedEarly = Why == StopReason::EndedEarly;
    R.HasMemoryBreakdown = false;
  }
  Written = writeRunResult(R, config().ResultPath);
  return true;
}

[[noreturn]] void finish(StopReason Why) {
  bool Written = false;
  if (!writeResultOnce(Why, Written)) {
    // Another thread is writing the result and ends the process; this one
    // must not return into the program meanwhile.
    for (;;)
      pause();
  }
  std::fflush(nullptr);
  std::_Exit(!Written                         ? ExitResultNotWritten
             : Why == StopReason::OutOfMemory ? ExitOutOfMemory
                                              : 0);
}

[[noreturn]] void onOutOfMemory(size_t, int64_t, int64_t) {
  finish(StopReason::OutOfMemory);
}

std::terminate_handler PreviousTerminate = nullptr;

/// An exception nobody caught: cuBLAS or cuDNN failing to allocate a handle
/// or workspace outside the caching allocator (CUBLAS_STATUS_ALLOC_FAILED),
/// or a c10::OutOfMemoryError the program let through, ends the run as an
/// out-of-memory run, as the allocator's own observer does; anything else
/// goes to the handler that was there before.
[[noreturn]] void onTerminate() {
  if (std::exception_ptr Current = std::current_exception()) {
    const char *What = nullptr;
    try {
      std::rethrow_exception(Current);
    } catch (const std::exception &E) {
      What = E.what();
    } catch (...) {
    }
    if (What && saysOutOfMemory(What)) {
      // The first line: c10's messages go on with a backtrace.
      size_t N = std::strcspn(What, "\n");
      std::snprintf(OutOfMemoryWhat, sizeof(OutOfMemoryWhat), "%.*s", int(N),
                    What);
      finish(StopReason::OutOfMemory);
    }
    // An evaluation trial left a training loop mid-epoch: a loader with
    // workers refuses the next epoch's iterator. What was timed stands.
    if (config().Evaluation && EvalPasses.Unguarded >= 2 &&
        EvalPasses.Guarded >= 2)
      finish(StopReason::EndedEarly);
  }
  if (PreviousTerminate)
    PreviousTerminate();
  std::abort();
}

/// The host budget was crossed before the boundaries decided whether the
/// program runs on CUDA, where a GPU is there: the budget is lifted then
/// (docs/gpu.md: on CUDA the device's memory is the limit; a dataset loaded
/// on the host before the model moves to the GPU must not end the run), and
/// put back if the program turns out to run on the CPU.
std::atomic<bool> HostBudgetDeferred{false};

void onHostBudgetCrossed(size_t Requested, int64_t Live, int64_t Budget) {
  if (!cuda::decided() && cuda::mayUseDevice()) {
    HostBudgetDeferred.store(true);
    MemoryTracker::install().setBudget(0, nullptr);
    return; // the allocation goes ahead
  }
  onOutOfMemory(Requested, Live, Budget);
}

/// At a boundary, once decided: a CPU run gets its budget back, and is out
/// of memory at once if it holds more.
void restoreHostBudget() {
  if (!HostBudgetDeferred.load(std::memory_order_relaxed) || !cuda::decided() ||
      cuda::onDevice())
    return;
  HostBudgetDeferred.store(false);
  MemoryTracker &Tracker = MemoryTracker::install();
  int64_t Budget = config().MemoryBudget;
  if (Tracker.liveBytes() > Budget)
    onOutOfMemory(0, Tracker.liveBytes(), Budget);
  Tracker.setBudget(Budget, &onHostBudgetCrossed);
}

/// The program returned (or called exit()) before the run ended it: a
/// partial result, and the program's own exit code, unless the result
/// cannot be written.
void onProgramExit() noexcept {
  bool Written = false;
  if (writeResultOnce(StopReason::EndedEarly, Written) && !Written) {
    std::fflush(nullptr);
    std::_Exit(ExitResultNotWritten);
  }
}

/// Installs the memory tracker before the program's own static
/// constructors and main build the model, so weights are seen.
struct Activation {
  Activation() {
    if (!config().Active)
      return;
    Clock.ProgramStartNs = nowNs();
    // The tracker stays in a timing run: it enforces the budget (the CPU
    // has no out-of-memory of its own) and gives the peak.
    MemoryTracker &Tracker = MemoryTracker::install();
    if (config().MemoryBudget > 0)
      Tracker.setBudget(config().MemoryBudget, &onHostBudgetCrossed);
    // After config() and the tracker exist, so both outlive the handler.
    std::atexit(&onProgramExit);
    PreviousTerminate = std::set_terminate(&onTerminate);
    if (!config().Hooks)
      return;
    // The device's blocks are tagged from the model's first tensor on.
    cuda::programStart(/*Breakdown=*/true);
    at::addGlobalCallback(at::RecordFunctionCallback(&onForwardOp)
                              .scopes({at::RecordScope::FUNCTION}));
    at::addGlobalCallback(
        at::RecordFunctionCallback(&onBackwardOpStart, &onBackwardOpEnd)
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

std::size_t loader_workers(std::size_t Own) noexcept {
  const Config &C = config();
  return C.Active && C.LoaderWorkers > 0 ? std::size_t(C.LoaderWorkers) : Own;
}

namespace {

/// Each arm has the passes it needs, or the run's time is spent with two of
/// each (the fewest to compare): the run ends, with what it timed.
void endEvaluationIfDone(int64_t Now) {
  const Config &C = config();
  const EvaluationClock &E = EvalPasses;
  // The fewest iterations a timing run measures, and at least 8 where the
  // run may measure that many.
  int Wanted = std::min(C.Iterations, std::max(C.Stop.MinIterations, 8));
  bool Enough = E.Guarded >= Wanted && E.Unguarded >= Wanted;
  bool OutOfTime = C.Stop.TimeLimitSeconds > 0 &&
                   double(Now - Clock.ProgramStartNs) / 1e9 >=
                       C.Stop.TimeLimitSeconds;
  if (Enough || (OutOfTime && E.Guarded >= 2 && E.Unguarded >= 2))
    finish(Enough ? StopReason::Count : StopReason::TimeLimit);
}

} // namespace

bool training_skipped() noexcept {
  const Config &C = config();
  if (!C.Active || !C.Evaluation)
    return false;
  // A loop entered again and again without evaluating: the run ends, with
  // whatever passes it timed, rather than at the run's timeout.
  constexpr int64_t MaxSkipsWithoutPass = 100000;
  int64_t Now = nowNs();
  bool OutOfTime = C.Stop.TimeLimitSeconds > 0 &&
                   double(Now - Clock.ProgramStartNs) / 1e9 >=
                       C.Stop.TimeLimitSeconds;
  if (++EvalPasses.SkipsWithoutPass > MaxSkipsWithoutPass || OutOfTime)
    finish(StopReason::TimeLimit);
  return true;
}

EvaluationPass evaluation_begin() noexcept {
  const Config &C = config();
  if (!C.Active || !C.Evaluation || EvalPasses.Open.exchange(true))
    return EvaluationNotTimed;
  EvaluationClock &E = EvalPasses;
  E.SkipsWithoutPass = 0;
  int Index = E.Passes++;
  int Timed = Index - C.Warmup;
  E.Timed = Timed >= 0;
  // U G G U U G ...: pairs alternate which arm runs first.
  bool SecondOfPair = Timed % 2 == 1;
  bool PairStartsGuarded = (Timed / 2) % 2 == 1;
  E.PassGuarded = E.Timed && SecondOfPair != PairStartsGuarded;
  int64_t Unused = 0;
  E.OnDevice = cuda::evaluationBoundary(/*Start=*/true, Unused);
  MemoryTracker::install().resetPeak();
  E.BeginNs = nowNs();
  return E.PassGuarded ? EvaluationGuarded : EvaluationUnguarded;
}

void evaluation_end(EvaluationPass Pass) noexcept {
  EvaluationClock &E = EvalPasses;
  if (Pass == EvaluationNotTimed)
    return; // not the pass this call opened
  int64_t Peak = MemoryTracker::install().peakBytes();
  if (E.OnDevice && !cuda::evaluationBoundary(/*Start=*/false, Peak))
    E.Timed = false; // a pass without its device figures
  int64_t Now = nowNs();
  double Ms = double(Now - E.BeginNs) / 1e6;
  if (E.Timed && E.PassGuarded && E.Guarded < MaxIterations) {
    E.GuardedMs[size_t(E.Guarded++)] = Ms;
    E.GuardedPeak = std::max(E.GuardedPeak, Peak);
  } else if (E.Timed && !E.PassGuarded && E.Unguarded < MaxIterations) {
    E.UnguardedMs[size_t(E.Unguarded++)] = Ms;
    E.UnguardedPeak = std::max(E.UnguardedPeak, Peak);
  }
  E.Open.store(false);
  endEvaluationIfDone(Now);
}

namespace {

/// What the autocast fix-it writes at the start of main: bfloat16, and no
/// cache of cast weights, which nothing would clear once the optimizer has
/// changed them (a scoped autocast clears it as it ends).
void enableAutocastBf16() {
  at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
  at::autocast::set_autocast_cache_enabled(false);
  at::autocast::set_autocast_enabled(at::kCUDA, true);
}

/// The program's own order of its optimizers' 4-d parameters (a
/// convolution's weights), read at the first iteration or, for an
/// optimizer first seen at its step (a class member), at the second; then,
/// with Convert, what the channels-last fix-it writes after the optimizer's
/// declaration: each such parameter in channels-last order, in place, so
/// the optimizer and the module keep the same tensor, and the convolutions
/// run in that order (cuDNN and oneDNN follow the weight's). Nothing here
/// runs once they are read.
void readChannelsLast(bool Convert) {
  if (Clock.FourDimensionalWeights > 0)
    return;
  trackHeldOptimizers();
  std::vector<at::Tensor> Weights;
  for (const at::Tensor &P : optimizerParameters())
    if (P.defined() && P.dim() == 4)
      Weights.push_back(P);
  if (Weights.empty())
    return;
  Clock.FourDimensionalWeights = int(Weights.size());
  // A 1 x 1 or depthwise kernel is contiguous in both orders: its strides
  // say which the program chose (suggest_memory_format), not is_contiguous.
  Clock.ProgramChannelsLast =
      std::all_of(Weights.begin(), Weights.end(), [](const at::Tensor &P) {
        return P.suggest_memory_format() == at::MemoryFormat::ChannelsLast;
      });
  if (!Convert)
    return;
  at::NoGradGuard NoGrad;
  for (const at::Tensor &P : Weights) {
    if (P.is_contiguous(at::MemoryFormat::ChannelsLast))
      continue; // in that order already: nothing to change
    P.set_data(P.detach().contiguous(at::MemoryFormat::ChannelsLast));
    ++Clock.ChannelsLastWeights;
  }
}

} // namespace

void iteration_begin() noexcept {
  const Config &C = config();
  if (!C.Active)
    return;
  int Index = Clock.Count.load(std::memory_order_relaxed);
  if (Index >= int(Clock.StartNs.size()))
    return;
  // After the program's own setting (at the start of main, or anywhere
  // before its loop), as a fix-it at the start of main would be.
  if (Index == 0 && C.IntraOpThreads > 0)
    at::set_num_threads(C.IntraOpThreads);
  if (Index == 0) {
    Clock.ProgramCudnnBenchmark = at::globalContext().benchmarkCuDNN();
    if (C.CudnnBenchmark)
      at::globalContext().setBenchmarkCuDNN(true);
    Clock.ProgramAutocast = at::autocast::is_autocast_enabled(at::kCUDA);
    if (C.AutocastBf16)
      enableAutocastBf16();
  }
  if (Index < 2 && (C.Hooks || C.ChannelsLast)) {
    try {
      readChannelsLast(C.ChannelsLast);
    } catch (const std::exception &) {
      // The program's weights stay as they were; the trial then says it
      // changed nothing.
    }
  }
  cuda::iterationBegin(Index, C.Warmup, C.Hooks, &onOutOfMemory, C.Iterations);
  restoreHostBudget();
  int64_t Now = nowNs();
  MemoryTracker &Tracker = MemoryTracker::install();
  if (C.Hooks) {
    // Close the previous iteration's last phase at the boundary itself.
    int64_t Last =
        PhaseTime.LastSwitchNs.exchange(Now, std::memory_order_relaxed);
    if (measuring() && Last > 0)
      PhaseTime.Ns[size_t(Tracker.phase())].fetch_add(
          Now - Last, std::memory_order_relaxed);
  }
  Clock.StartNs[Index] = Now;
  // A loop start since the last iteration began: that iteration spans an
  // epoch's end. The first start comes before the first iteration.
  if (Clock.LoopStarted.exchange(false, std::memory_order_relaxed) && Index > 0)
    Clock.AcrossLoopStart[size_t(Index - 1)] = true;
  Clock.Count.store(Index + 1, std::memory_order_relaxed);
  if (C.Hooks)
    Tracker.setPhase(Phase::Data);
  if (Index == C.Warmup)
    Tracker.resetPeak(); // the measured iterations' peak, not the warm-up's
  int Spent = Index - C.Warmup;
  if (Spent <= 0)
    return;
  double Ms = double(Now - Clock.StartNs[Index - 1]) / 1e6;
  if (Spent <= MaxIterations)
    Clock.WindowMs[size_t(Spent - 1)] = Ms;
  if (!Clock.AcrossLoopStart[size_t(Index - 1)] &&
      Clock.MeasuredCount < MaxIterations)
    Clock.MeasuredMs[size_t(Clock.MeasuredCount++)] = Ms;
  double Elapsed = double(Now - Clock.ProgramStartNs) / 1e9;
  StopReason Why = Clock.MeasuredCount
                       ? whenToStop(C.Stop, Clock.MeasuredMs.data(),
                                    Clock.MeasuredCount, Elapsed, Spent)
                       : whenToStop(C.Stop, Clock.WindowMs.data(),
                                    std::min(Spent, MaxIterations), Elapsed);
  if (Why != StopReason::Continue)
    finish(Why);
}

bool batch_wanted() noexcept {
  if (CallDepth != 1 || !config().Active)
    return false;
  int Index = Clock.Count.load(std::memory_order_relaxed) - 1;
  return Index >= 0 &&
         Clock.ObservedIteration.load(std::memory_order_relaxed) != Index;
}

void observe_batch(int ScopeId, int64_t FirstDimension) noexcept {
  if (!config().Active || FirstDimension <= 0)
    return;
  int Index = Clock.Count.load(std::memory_order_relaxed) - 1;
  if (Index < 0 || Index >= int(Clock.ObservedBatch.size()))
    return;
  // One size an iteration, the first outermost call's, whichever thread.
  int Seen = Clock.ObservedIteration.load(std::memory_order_relaxed);
  if (Seen == Index || !Clock.ObservedIteration.compare_exchange_strong(
                           Seen, Index, std::memory_order_relaxed))
    return;
  Clock.ObservedBatch[size_t(Index)] = FirstDimension;
  Clock.ObservedScope[size_t(Index)] = ScopeId;
}

void dataset_size(int64_t Samples, bool Training) noexcept {
  if (!config().Active || Samples <= 0)
    return;
  if (Training && Clock.DatasetSamples == 0)
    Clock.DatasetSamples = Samples;
  Clock.DatasetsGcd = std::gcd(Clock.DatasetsGcd, Samples);
}

void loop_begin() noexcept {
  if (!config().Active)
    return;
  Clock.LoopStarted.store(true, std::memory_order_relaxed);
  Clock.LoopBegan.store(true, std::memory_order_relaxed);
  // The loop's own start (a loader's first batch) is no setup statement's.
  MemoryTracker::setSetupStatement(-1);
}

void setup_statement(int StatementId) noexcept {
  if (config().Hooks)
    MemoryTracker::setSetupStatement(StatementId);
}

void track_optimizer(const torch::optim::Optimizer &Optimizer) noexcept {
  if (config().Hooks || config().ChannelsLast)
    trackOptimizer(Optimizer);
}

void track_optimizer_holder(
    const void *Holder,
    const torch::optim::Optimizer *(*Get)(const void *)) noexcept {
  if (!config().Hooks && !config().ChannelsLast)
    return;
  for (size_t I = 0; I < OptimizerHolders.Count; ++I)
    if (OptimizerHolders.List[I].first == Holder)
      return;
  if (OptimizerHolders.Count < OptimizerHolders.List.size())
    OptimizerHolders.List[OptimizerHolders.Count++] = {Holder, Get};
}

void optimizer_phase_begin() noexcept {
  if (!config().Hooks)
    return;
  trackHeldOptimizers(); // made by now, where the program steps them
  InOptimizerStep.store(true, std::memory_order_relaxed);
  switchPhase(Phase::Optimizer);
}

void optimizer_phase_end() noexcept {
  if (!config().Hooks)
    return;
  InOptimizerStep.store(false, std::memory_order_relaxed);
  // What follows a step is the next batch being loaded (a range-for over a
  // DataLoader fetches it before the body starts), unless a module call or a
  // backward op says otherwise first.
  switchPhase(Phase::Data);
}

int64_t host_sync_begin() noexcept {
  return config().Active && measuring() ? nowNs() : -1;
}

void host_sync_end(int SyncId, int64_t StartNs) noexcept {
  if (StartNs < 0 || SyncId < 0 || SyncId >= MaxHostSyncs)
    return;
  HostSyncNs[SyncId].fetch_add(nowNs() - StartNs, std::memory_order_relaxed);
  HostSyncCalls[SyncId].fetch_add(1, std::memory_order_relaxed);
}

bool pinned_copies() noexcept {
  return config().Active && config().PinnedCopies;
}

void pinned_copy_made() noexcept {
  PinnedCopiesMade.fetch_add(1, std::memory_order_relaxed);
}

void scope_enter(int ScopeId, const torch::nn::Module *Module) noexcept {
  if (!config().Active)
    return;
  ++CallDepth;
  if (!config().Hooks)
    return;
  bool Known = ScopeId >= 0 && ScopeId < MaxScopes;
  if (Known && !Entered[ScopeId].load(std::memory_order_relaxed))
    Entered[ScopeId].store(true, std::memory_order_relaxed);
  // Before the clocks start: a first call's walk is not the layer's time.
  if (Known && Module)
    noteModule(ScopeId, *Module, ScopeStack.Depth);
  switchPhase(Phase::Forward);
  if (ScopeStack.Depth < ScopeStack.Frames.size())
    ScopeStack.Frames[ScopeStack.Depth] = {ScopeId, nowNs(), 0};
  ++ScopeStack.Depth;
  cuda::scopeEnter(ScopeId);
  ScopeStack.EverEntered = true;
  MemoryTracker::setThreadScope(currentScope());
}
// A GAN's generator runs again after the discriminator's step: its module
// calls put the phase back to forward, as they should.

void scope_exit(int ScopeId) noexcept {
  if (!config().Active)
    return;
  CallDepth = std::max(0, CallDepth - 1);
  if (!config().Hooks || ScopeStack.Depth == 0)
    return;
  size_t Depth = --ScopeStack.Depth;
  cuda::scopeExit();
  MemoryTracker::setThreadScope(currentScope());
  if (Depth >= ScopeStack.Frames.size())
    return;
  const ScopeFrame &Frame = ScopeStack.Frames[Depth];
  int64_t Elapsed = nowNs() - Frame.StartNs;
  // Self time: a layer's row excludes the layers it calls, so rows add up.
  if (Depth > 0)
    ScopeStack.Frames[Depth - 1].ChildNs += Elapsed;
  if (measuring() && ScopeId >= 0 && ScopeId < MaxScopes && Frame.Id == ScopeId)
    ForwardNs[ScopeId].fetch_add(Elapsed - Frame.ChildNs,
                                 std::memory_order_relaxed);
}

} // namespace skyline::rt
