//===- PinnedMemoryExperiment.cpp - skyline-experiment-pinned-memory ------===//
//
// A batch copied to the GPU with `tensor.to(device)` comes from pageable
// memory: CUDA stages it through a pinned buffer of its own, and the host
// waits for the copy before it queues the next kernel. From pinned memory
// with non_blocking, the copy is a DMA the host does not wait for, so it
// queues the forward pass while the batch crosses. The trial makes every
// such copy in the training loop `tensor.pin_memory().to(device, true)`
// (SKYLINE_PINNED_COPIES; the instrumented copy's skyline::rt::to_device),
// as the fix-it writes it. On a CPU run nothing crosses to a device: the
// trial is listed as not tried, with why
// (docs/experiments/pinned-memory.md).
//
//===----------------------------------------------------------------------===//

#include "ExperimentFactories.h"

#include "skyline/runtime/RunFormat.h"

#include "llvm/ADT/STLExtras.h"

namespace skyline {
namespace {

/// The training loops' copies to a device, each once (a loop in a header
/// is seen by every source).
std::vector<const DeviceCopySite *>
deviceCopiesOf(const ProgramModel &Program) {
  std::vector<const DeviceCopySite *> Copies;
  for (const TrainingLoop &Loop : Program.TrainingLoops)
    for (const DeviceCopySite &Copy : Loop.DeviceCopies)
      if (llvm::none_of(Copies, [&](const DeviceCopySite *Seen) {
            return Seen->Call.File == Copy.Call.File &&
                   Seen->Call.Offset == Copy.Call.Offset;
          }))
        Copies.push_back(&Copy);
  return Copies;
}

class PinnedMemoryExperiment : public Experiment {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-experiment-pinned-memory",
        "copies to the GPU from pinned memory train faster, measured",
        "The training loop copies tensors to the GPU with to(device), from "
        "pageable memory and blocking: the host waits for each copy before "
        "it queues the next kernel. skyline-check ran the program at its "
        "declared batch size with each such copy of a CPU tensor made from "
        "pinned memory without blocking (pin_memory(), then to(device, "
        "true)), and the iteration was faster beyond the runs' noise. The "
        "fix-it writes the same at each copy; pinned memory is memory the "
        "system cannot page out.",
        DiagLevel::Warning, RulePrecision::Medium};
    return Info;
  }
  llvm::StringRef name() const override { return "pinned-memory"; }
  unsigned extraRuns() const override { return 1; }

  std::vector<TrialRequest> plan(const ProgramModel &Program,
                                 const Measurement &SoFar,
                                 const MachineInfo &) const override {
    if (deviceCopiesOf(Program).empty() || SoFar.Runs.empty())
      return {};
    return gpuSettingTrial(
        *this, SoFar,
        "copies to the device from pinned memory, non-blocking (the "
        "program's pageable, blocking)",
        "the runs were on the CPU, and no copy crosses to a device there: "
        "measure on a machine with a GPU (--device=cuda)",
        /*ProgramHasIt=*/false, std::string(rt::env::PinnedCopies) + "=1");
  }

  /// A note (not tried, no clear effect) points at the first copy.
  std::optional<SourceSpan> place(const ProgramModel &Program) const override {
    std::vector<const DeviceCopySite *> Copies = deviceCopiesOf(Program);
    if (Copies.empty())
      return std::nullopt;
    return Copies.front()->Call;
  }

  /// What the trial ran (Runtime.h's to_device), at every copy it changed.
  std::vector<TextEdit> fixIt(const ProgramModel &Program,
                              const TrialRun &) const override {
    std::vector<TextEdit> Edits;
    for (const DeviceCopySite *Copy : deviceCopiesOf(Program)) {
      Edits.push_back({Copy->TensorEnd, ".pin_memory()"});
      Edits.push_back({Copy->ArgumentEnd, ", /*non_blocking=*/true"});
    }
    return Edits;
  }
};

} // namespace

std::unique_ptr<Experiment> createPinnedMemoryExperiment() {
  return std::make_unique<PinnedMemoryExperiment>();
}

} // namespace skyline
