//===- CudnnBenchmarkExperiment.cpp - skyline-experiment-cudnn-benchmark --===//
//
// A convolutional model trained on CUDA with cuDNN's benchmark mode off
// (LibTorch's default) runs each convolution with the algorithm cuDNN's
// heuristics pick; with it on, the first call of each shape times the
// candidates and keeps the fastest. The trial turns it on at the first
// iteration (SKYLINE_CUDNN_BENCHMARK), after the program's own setting, so
// the warm-up pays the search and the measured iterations get the choice.
// On a CPU run there is no cuDNN: the trial is listed as not tried, with
// why. The fix-it turns the mode on at the start of main
// (docs/experiments/cudnn-benchmark.md).
//
//===----------------------------------------------------------------------===//

#include "ExperimentFactories.h"

#include "skyline/runtime/RunFormat.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

namespace skyline {
namespace {

/// The program's first convolution (Conv1d to Conv3d and their
/// transposes, as LibTorch names them); null: none.
const ModuleSite *firstConvolution(const ProgramModel &Program) {
  auto It = llvm::find_if(Program.Modules, [](const ModuleSite &Module) {
    return llvm::StringRef(Module.Type).starts_with("torch::nn::Conv");
  });
  return It == Program.Modules.end() ? nullptr : &*It;
}

class CudnnBenchmarkExperiment : public Experiment {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-experiment-cudnn-benchmark",
        "cuDNN's benchmark mode trains faster, measured",
        "The program trains a convolutional model on CUDA with cuDNN's "
        "benchmark mode off, so each convolution runs the algorithm cuDNN's "
        "heuristics pick. skyline-check ran the program at its declared "
        "batch size with the mode on, which times the candidates once for "
        "each shape and keeps the fastest, and the iteration was faster "
        "beyond the runs' noise. The fix-it turns the mode on at the start "
        "of main.",
        DiagLevel::Warning, RulePrecision::Medium};
    return Info;
  }
  llvm::StringRef name() const override { return "cudnn-benchmark"; }
  unsigned extraRuns() const override { return 1; }

  std::vector<TrialRequest> plan(const ProgramModel &Program,
                                 const Measurement &SoFar,
                                 const MachineInfo &) const override {
    if (!firstConvolution(Program) || SoFar.Runs.empty())
      return {};
    return gpuSettingTrial(
        *this, SoFar, "cuDNN's benchmark mode on (the program's off)",
        "the runs were on the CPU, and cuDNN's benchmark mode chooses CUDA's "
        "convolution algorithms: measure on a machine with a GPU "
        "(--device=cuda)",
        SoFar.Runs.front().CudnnBenchmark,
        std::string(rt::env::CudnnBenchmark) + "=1");
  }

  /// A note (not tried, no clear effect) points at the first convolution.
  std::optional<SourceSpan> place(const ProgramModel &Program) const override {
    return constructionOf(firstConvolution(Program));
  }

  std::vector<TextEdit> fixIt(const ProgramModel &Program,
                              const TrialRun &) const override {
    if (auto Edit = atMainStart(
            Program.Threads, {"at::globalContext().setBenchmarkCuDNN(true);"}))
      return {*Edit};
    return {};
  }
};

} // namespace

std::unique_ptr<Experiment> createCudnnBenchmarkExperiment() {
  return std::make_unique<CudnnBenchmarkExperiment>();
}

} // namespace skyline
