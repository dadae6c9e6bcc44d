//===- AutocastExperiment.cpp - skyline-experiment-autocast-bf16 ----------===//
//
// A model of matrix products (linear, convolution, recurrent and attention
// layers) trained on CUDA in float32 runs them on the GPU's float32 path;
// under autocast to bfloat16, the ops autocast lists (matmul, linear,
// convolution, the RNN cells) run in bfloat16 on the tensor cores, and the
// ops that need range (softmax, losses, norms) stay in float32. The trial
// turns autocast on at the first iteration (SKYLINE_AUTOCAST=bf16), on the
// thread that trains; on a CPU run it is listed as not tried, with why. The
// fix-it writes the same three calls at the start of main, and the #include
// they need (docs/experiments/autocast-bf16.md).
//
//===----------------------------------------------------------------------===//

#include "ExperimentFactories.h"

#include "skyline/runtime/RunFormat.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

namespace skyline {
namespace {

constexpr llvm::StringLiteral AutocastHeader = "ATen/autocast_mode.h";

/// The program's first layer whose forward autocast runs in bfloat16;
/// null: none.
const ModuleSite *firstAutocastLayer(const ProgramModel &Program) {
  static constexpr llvm::StringLiteral Layers[] = {
      "torch::nn::Linear",
      "torch::nn::Bilinear",
      "torch::nn::Conv",
      "torch::nn::LSTM",
      "torch::nn::GRU",
      "torch::nn::RNN",
      "torch::nn::MultiheadAttention",
      "torch::nn::Transformer"};
  auto It = llvm::find_if(Program.Modules, [](const ModuleSite &Module) {
    return llvm::any_of(Layers, [&](llvm::StringRef Prefix) {
      return llvm::StringRef(Module.Type).starts_with(Prefix);
    });
  });
  return It == Program.Modules.end() ? nullptr : &*It;
}

class AutocastExperiment : public Experiment {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-experiment-autocast-bf16",
        "autocast to bfloat16 trains faster, measured",
        "The program trains on CUDA in float32. skyline-check ran it at its "
        "declared batch size with CUDA autocast to bfloat16, which runs "
        "matrix products and convolutions in bfloat16 on the tensor cores "
        "and keeps softmax, losses and norms in float32, and the iteration "
        "was faster beyond the runs' noise. The fix-it turns autocast on at "
        "the start of main; it changes the numerics (bfloat16 keeps 8 bits "
        "of mantissa), so check the loss curve.",
        DiagLevel::Warning, RulePrecision::Medium};
    return Info;
  }
  llvm::StringRef name() const override { return "autocast-bf16"; }
  unsigned extraRuns() const override { return 1; }

  std::vector<TrialRequest> plan(const ProgramModel &Program,
                                 const Measurement &SoFar,
                                 const MachineInfo &) const override {
    if (!firstAutocastLayer(Program) || SoFar.Runs.empty())
      return {};
    return gpuSettingTrial(
        *this, SoFar, "CUDA autocast to bfloat16 (the program's float32)",
        "the runs were on the CPU, and autocast to bfloat16 pays where a GPU's "
        "tensor cores run it: measure on a machine with a GPU (--device=cuda)",
        SoFar.Runs.front().Autocast, std::string(rt::env::Autocast) + "=bf16");
  }

  /// A note (not tried, no clear effect) points at the first such layer.
  std::optional<SourceSpan> place(const ProgramModel &Program) const override {
    return constructionOf(firstAutocastLayer(Program));
  }

  /// The runtime's calls (Runtime.cpp's enableAutocastBf16), at the start
  /// of main, and the header that declares them where main's file lacks
  /// it; nothing where there is no place for that #include.
  std::vector<TextEdit> fixIt(const ProgramModel &Program,
                              const TrialRun &) const override {
    const ThreadSettings &Main = Program.Threads;
    bool Included = llvm::is_contained(Main.MainIncludes, AutocastHeader);
    std::optional<TextEdit> Calls = atMainStart(
        Main, {"at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);",
               "at::autocast::set_autocast_cache_enabled(false);",
               "at::autocast::set_autocast_enabled(at::kCUDA, true);"});
    if (!Calls || (!Included && !Main.IncludeAt))
      return {};
    std::vector<TextEdit> Edits = {*Calls};
    if (!Included)
      Edits.push_back(
          {*Main.IncludeAt, "#include <" + AutocastHeader.str() + ">\n"});
    return Edits;
  }
};

} // namespace

std::unique_ptr<Experiment> createAutocastExperiment() {
  return std::make_unique<AutocastExperiment>();
}

} // namespace skyline
