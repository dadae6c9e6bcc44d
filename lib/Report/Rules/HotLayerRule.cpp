//===- HotLayerRule.cpp - skyline-hot-layer -------------------------------===//
//
// A module call site whose time is at least --hot-layer-share of the
// median iteration (the run table's and the editor's statistic): a warning
// at the call, a note where the module is constructed.
// On CUDA the time is the layer's GPU time (gpu_ms: CUPTI's kernels, or its
// span on the stream with CUDA events) where the run measured it: its CPU
// time there is only the launches, the GPU runs the layer later. Elsewhere
// (the CPU, or a CUDA run without gpu_ms) it is forward and backward self
// time, and the message says which.
//
//===----------------------------------------------------------------------===//

#include "RuleFactories.h"

#include "skyline/Units.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace skyline {
namespace {

/// Constructor arguments as a message shows them: on one line (a
/// diagnostic is one), and no longer than MaxChars, cut at a character.
std::string oneLineArguments(llvm::StringRef Text, size_t MaxChars = 72) {
  std::string Line;
  bool Space = false;
  for (char C : Text.trim()) {
    if (llvm::isSpace(C)) {
      Space = true;
      continue;
    }
    if (Space)
      Line += ' ';
    Space = false;
    Line += C;
  }
  if (Line.size() <= std::max<size_t>(MaxChars, 3))
    return Line;
  size_t Cut = MaxChars - 3;
  while (Cut > 0 && (static_cast<unsigned char>(Line[Cut]) & 0xC0) == 0x80)
    --Cut; // not inside a UTF-8 sequence
  return Line.substr(0, Cut) + "...";
}

const RuleOptionInfo HotLayerOptions[] = {
    {"hot-layer-share", "20",
     "skyline-hot-layer reports layers taking at least P% of an iteration"}};

class HotLayerRule : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-hot-layer",
        "A layer takes a large share of the iteration time",
        "The layer's time (on CUDA its GPU time where measured, else its "
        "forward and backward time) is above the share of the median "
        "iteration time set by --hot-layer-share; reported at the call site "
        "and the construction site.",
        DiagLevel::Warning,
        RulePrecision::High,
        RuleOrigin::Measurement,
        HotLayerOptions};
    return Info;
  }

  void check(const RuleContext &Context,
             std::vector<Finding> &Out) const override {
    const MeasuredRun *Run = Context.currentRun();
    if (!Run || Run->IterationMs.Median <= 0)
      return;
    std::vector<const LayerMeasure *> Hot;
    for (const LayerMeasure &Layer : Run->Layers)
      if (!Layer.Name.empty() &&
          hotLayerShare(*Run, Layer) >= Context.Options.HotLayerShare)
        Hot.push_back(&Layer);
    std::stable_sort(Hot.begin(), Hot.end(), [&](const auto *A, const auto *B) {
      return hotLayerShare(*Run, *A) > hotLayerShare(*Run, *B);
    });
    for (const LayerMeasure *Layer : Hot)
      report(Context, *Run, *Layer, Out);
  }

private:
  static bool onGpu(const LayerMeasure &Layer) { return Layer.GpuMs >= 0; }

  /// What the figures are: the GPU's time and its source, or the CPU's,
  /// said to be the CPU's on a CUDA run.
  static std::string figures(const MeasuredRun &Run, const LayerMeasure &Layer,
                             bool Cuda) {
    if (onGpu(Layer))
      return llvm::formatv("GPU time {0:F2} ms ({1}) of {2:F2} ms", Layer.GpuMs,
                           Run.GpuMsSource == GpuTimeSource::CudaEvents
                               ? "its span on the stream, from CUDA events"
                               : "its kernels, from CUPTI",
                           Run.IterationMs.Median)
          .str();
    return llvm::formatv(
               "forward {0:F2} ms, backward {1:F2} ms of {2:F2} ms{3}",
               Layer.ForwardMs, Layer.BackwardMs, Run.IterationMs.Median,
               Cuda ? " (CPU time: the run measured no GPU time "
                      "for this layer)"
                    : "")
        .str();
  }

  void report(const RuleContext &Context, const MeasuredRun &Run,
              const LayerMeasure &Layer, std::vector<Finding> &Out) const {
    Finding Call;
    Call.Rule = std::string(id());
    Call.Level = DiagLevel::Warning;
    Call.At = callSite(Context.Program, Layer);
    std::string Type = Layer.Type.empty() ? "" : " (" + Layer.Type + ")";
    Call.Message =
        llvm::formatv(
            "layer '{0}'{1} takes {2} of the median iteration time at batch "
            "size {3}: {4}",
            Layer.Name, Type, formatShare(hotLayerShare(Run, Layer)),
            Run.BatchSize,
            figures(Run, Layer,
                    Context.Measured.Device == DeviceType::CUDA ||
                        Run.Device == DeviceType::CUDA ||
                        Run.GpuMsSource != GpuTimeSource::None))
            .str();
    Out.push_back(std::move(Call));
    for (const ModuleSite &Module : Context.Program.Modules) {
      if (Module.Name != Layer.Name || Module.File.empty())
        continue;
      Finding Construction;
      Construction.Rule = std::string(id());
      Construction.Level = DiagLevel::Note;
      Construction.At = {Module.File, Module.Line, Module.Column, 0, 1};
      Construction.Message =
          "'" + Layer.Name + "' is constructed here" +
          (Module.Options.empty()
               ? ""
               : " with " + oneLineArguments(Module.Options));
      Out.push_back(std::move(Construction));
      break;
    }
  }

  /// The call's own range when the model knows it; else the line alone.
  static SourceSpan callSite(const ProgramModel &Program,
                             const LayerMeasure &Layer) {
    for (const ModuleCall &Call : Program.ModuleCalls)
      if (Call.Name == Layer.Name && Call.Line == Layer.Line &&
          Call.File == Layer.File)
        return {Call.File, Call.Line, Call.Column, Call.Offset, Call.Length};
    return {Layer.File, Layer.Line, 1, 0, 1};
  }
};

} // namespace

const RuleOptionInfo &hotLayerShareOption() { return HotLayerOptions[0]; }

double hotLayerMs(const LayerMeasure &Layer) {
  return Layer.GpuMs >= 0 ? Layer.GpuMs : Layer.ForwardMs + Layer.BackwardMs;
}

// Of the median, as the run table and the loop's hint give the iteration:
// one figure, named the same way, wherever the iteration time is shown.
double hotLayerShare(const MeasuredRun &Run, const LayerMeasure &Layer) {
  return Run.IterationMs.Median > 0 ? hotLayerMs(Layer) / Run.IterationMs.Median
                                    : 0;
}

std::unique_ptr<Rule> createHotLayerRule() {
  return std::make_unique<HotLayerRule>();
}

} // namespace skyline
