//===- MemoryBreakdownRule.cpp - skyline-memory-breakdown -----------------===//
//
// A note at the batch-size literal: the peak of the declared size's run by
// kind, and how much each more sample costs (the memory fit's slope).
//
//===----------------------------------------------------------------------===//

#include "RuleFactories.h"

#include "skyline/Units.h"

#include "llvm/Support/FormatVariadic.h"

namespace skyline {
namespace {

class MemoryBreakdownRule : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-memory-breakdown",
        "Peak memory by kind at the training batch size",
        "Weights, gradients, optimizer state, activations and data at the peak "
        "of the "
        "measured run at the declared batch size, and how activations grow per "
        "sample.",
        DiagLevel::Note, RulePrecision::High};
    return Info;
  }

  void check(const RuleContext &Context,
             std::vector<Finding> &Out) const override {
    const MeasuredRun *Run = Context.currentRun();
    if (!Run || Run->Memory.empty())
      return;
    std::string Kinds;
    std::optional<MemoryKind> Largest;
    int64_t LargestBytes = 0;
    for (const auto &[Kind, Bytes] : Run->Memory) {
      if (Bytes <= 0)
        continue;
      Kinds += (Kinds.empty() ? "" : ", ") + readable(Kind) + " " +
               formatBytes(Bytes);
      if (Bytes > LargestBytes) {
        Largest = Kind;
        LargestBytes = Bytes;
      }
    }
    // The largest kind being none of the training's own is a question the
    // note should answer (a MNIST held in memory is 180 MiB of it). Where
    // the statements before the loop were told apart, a dataset is theirs.
    if (Largest == MemoryKind::Untracked)
      Kinds += Run->SetupStatements.empty()
                   ? " (made before training and no model's or optimizer's: "
                     "a dataset held in memory, LibTorch's own)"
                   : " (made before training by no statement before the "
                     "loop: static initialisers, LibTorch's own)";
    if (Largest == MemoryKind::Workspace)
      Kinds += " (held from warm-up through every iteration, at every batch "
               "size: cuBLAS's workspaces, caches the program keeps)";
    Kinds += madeBeforeTraining(*Run);
    Finding F;
    F.Rule = std::string(id());
    F.Level = DiagLevel::Note;
    F.At = Context.Program.BatchSize->Literal;
    F.Message =
        llvm::formatv("peak memory at batch size {0} is {1}: {2}",
                      Run->BatchSize, formatBytes(Run->PeakBytes), Kinds)
            .str();
    if (const Analysis &Model = Context.Model;
        Model.PeakBytes && Model.canPredictMemory())
      F.Message +=
          llvm::formatv("; each sample adds {0}",
                        formatBytes(int64_t(Model.PeakBytes->Slope + 0.5)))
              .str();
    Out.push_back(std::move(F));
  }

private:
  /// The setup kind by statement, the largest three: what the program made
  /// before training (a dataset, a cache) and still held, by its line.
  static std::string madeBeforeTraining(const MeasuredRun &Run) {
    if (Run.SetupStatements.empty())
      return "";
    std::string Text = "; made before training and held at the peak:";
    for (size_t I = 0; I < Run.SetupStatements.size() && I < 3; ++I) {
      const SetupMeasure &Setup = Run.SetupStatements[I];
      Text += llvm::formatv("{0} {1} by {2}:{3} '{4}'", I ? "," : "",
                            formatBytes(Setup.Bytes), Setup.File, Setup.Line,
                            Setup.Text)
                  .str();
    }
    if (Run.SetupStatements.size() > 3)
      Text += llvm::formatv(" and {0} more statements",
                            Run.SetupStatements.size() - 3)
                  .str();
    return Text;
  }

  static std::string readable(MemoryKind Kind) {
    return Kind == MemoryKind::OptimizerState ? "optimizer state"
                                              : nameOf(Kind);
  }
};

} // namespace

std::unique_ptr<Rule> createMemoryBreakdownRule() {
  return std::make_unique<MemoryBreakdownRule>();
}

} // namespace skyline
