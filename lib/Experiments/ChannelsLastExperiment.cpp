//===- ChannelsLastExperiment.cpp - skyline-experiment-channels-last ------===//
//
// A 2-d convolution's weight is stored as LibTorch makes it, contiguous
// (N, C, H, W); cuDNN's tensor-core kernels work in channels-last order
// (N, H, W, C), so on CUDA each convolution either transposes its operands
// or takes a slower kernel. With the weight channels-last, the convolution
// runs in that order, and so do the activations it makes. The trial makes
// every 4-d parameter of the program's optimizers channels-last at the
// first iteration (SKYLINE_CHANNELS_LAST), in place, as the fix-it does
// after the optimizer's declaration. On a CPU run it is listed as not
// tried, with why (docs/experiments/channels-last.md).
//
//===----------------------------------------------------------------------===//

#include "ExperimentFactories.h"

#include "skyline/runtime/RunFormat.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

namespace skyline {
namespace {

/// The program's first 2-d convolution (or its transpose); null: none.
const ModuleSite *firstConvolution2d(const ProgramModel &Program) {
  auto It = llvm::find_if(Program.Modules, [](const ModuleSite &Module) {
    llvm::StringRef Type = Module.Type;
    return Type.starts_with("torch::nn::Conv2d") ||
           Type.starts_with("torch::nn::ConvTranspose2d");
  });
  return It == Program.Modules.end() ? nullptr : &*It;
}

/// The training loops' optimizers, each once (a loop in a header is seen by
/// every source), all of which the trial changed.
std::vector<const OptimizerSite *> optimizersOf(const ProgramModel &Program) {
  std::vector<const OptimizerSite *> Optimizers;
  for (const TrainingLoop &Loop : Program.TrainingLoops)
    for (const OptimizerSite &Optimizer : Loop.Optimizers)
      if (llvm::none_of(Optimizers, [&](const OptimizerSite *Seen) {
            return Seen->File == Optimizer.File &&
                   Seen->Line == Optimizer.Line && Seen->Name == Optimizer.Name;
          }))
        Optimizers.push_back(&Optimizer);
  return Optimizers;
}

/// The statements after Optimizer's declaration.
TextEdit reorderAfter(const OptimizerSite &Optimizer) {
  std::string Groups = Optimizer.Name +
                       (Optimizer.ThroughPointer ? "->" : ".") +
                       "param_groups()";
  const std::string &Indent = Optimizer.Indent;
  std::string Text =
      "\n" + Indent + "for (auto &group : " + Groups + ")\n" + Indent +
      "  for (auto &parameter : group.params())\n" + Indent +
      "    if (parameter.dim() == 4)\n" + Indent +
      "      parameter.set_data(parameter.detach().contiguous(\n" + Indent +
      "          torch::MemoryFormat::ChannelsLast));";
  return {*Optimizer.AfterDeclaration, Text};
}

class ChannelsLastExperiment : public Experiment {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-experiment-channels-last",
        "channels-last convolution weights train faster, measured",
        "The program trains 2-d convolutions on CUDA with their weights "
        "contiguous (N, C, H, W). skyline-check ran it at its declared "
        "batch size with every 4-d parameter of its optimizers made "
        "channels-last (N, H, W, C), the order cuDNN's tensor-core kernels "
        "use, so the convolutions and the activations they make run in that "
        "order, and the iteration was faster beyond the runs' noise. The "
        "fix-it makes the same change after the optimizer's declaration; "
        "the values do not change, though kernels for the other order may "
        "round differently.",
        DiagLevel::Warning, RulePrecision::Medium};
    return Info;
  }
  llvm::StringRef name() const override { return "channels-last"; }
  unsigned extraRuns() const override { return 1; }

  std::vector<TrialRequest> plan(const ProgramModel &Program,
                                 const Measurement &SoFar,
                                 const MachineInfo &) const override {
    if (!firstConvolution2d(Program) || SoFar.Runs.empty())
      return {};
    return gpuSettingTrial(
        *this, SoFar,
        "channels-last convolution weights (the program's contiguous)",
        "the runs were on the CPU, and channels-last pays where cuDNN runs the "
        "convolutions on a GPU's tensor cores: measure on a machine with a "
        "GPU (--device=cuda)",
        SoFar.Runs.front().ChannelsLast,
        std::string(rt::env::ChannelsLast) + "=1");
  }

  /// A note (not tried, no clear effect) points at the first convolution.
  std::optional<SourceSpan> place(const ProgramModel &Program) const override {
    return constructionOf(firstConvolution2d(Program));
  }

  /// What the runtime's trial does (Runtime.cpp's readChannelsLast), on
  /// each optimizer's parameters after its declaration; none where an
  /// optimizer has no such place (a class member, a holder made later, a
  /// declaration sharing its line): a fix-it for some of them would not be
  /// what was measured.
  std::vector<TextEdit> fixIt(const ProgramModel &Program,
                              const TrialRun &) const override {
    std::vector<const OptimizerSite *> Optimizers = optimizersOf(Program);
    if (Optimizers.empty() ||
        llvm::any_of(Optimizers, [](const OptimizerSite *Optimizer) {
          return !Optimizer->AfterDeclaration;
        }))
      return {};
    std::vector<TextEdit> Edits;
    for (const OptimizerSite *Optimizer : Optimizers)
      Edits.push_back(reorderAfter(*Optimizer));
    return Edits;
  }
};

} // namespace

std::unique_ptr<Experiment> createChannelsLastExperiment() {
  return std::make_unique<ChannelsLastExperiment>();
}

} // namespace skyline
