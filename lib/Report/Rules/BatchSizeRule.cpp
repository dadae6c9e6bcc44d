//===- BatchSizeRule.cpp - skyline-batch-size -----------------------------===//
//
// The suggestion of the Model stage at the batch-size literal, with its
// fix-it, and for each optimizer whose learning rate is a literal, a note
// with the rate scaled by the linear scaling rule as an optional fix-it.
//
//===----------------------------------------------------------------------===//

#include "RuleFactories.h"

#include "skyline/FixExport.h"
#include "skyline/Units.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdio>

namespace skyline {
namespace {

/// The scaled rate in the literal's own style: `1e-3` stays exponent
/// notation, a float suffix stays.
std::string formatRate(double Rate, llvm::StringRef Original) {
  llvm::StringRef Suffix = Original.ends_with("f") || Original.ends_with("F")
                               ? Original.take_back(1)
                               : "";
  bool Exponent = Original.contains_insensitive("e");
  char Text[32];
  std::snprintf(Text, sizeof(Text), Exponent ? "%.3g" : "%.6g", Rate);
  std::string Result = Text;
  // "%g" drops the point from whole numbers: 0.5 * 2 must stay a double.
  if (Result.find_first_of(".e") == std::string::npos)
    Result += ".0";
  return Result + Suffix.str();
}

class BatchSizeRule : public Rule {
public:
  llvm::StringRef id() const override { return "skyline-batch-size"; }

  void check(const RuleContext &Context,
             std::vector<Finding> &Out) const override {
    const Analysis &Model = Context.Model;
    if (!Model.Suggested || !Model.Current || !Model.Current->Fits)
      return; // a size that does not fit is skyline-memory-capacity's
    const BatchSizeSite &Site = *Context.Program.BatchSize;
    const Suggestion &Best = *Model.Suggested;
    Finding F = makeBatchSizeFix(Site, Best.BatchSize);
    F.Level = DiagLevel::Warning;
    F.Message =
        llvm::formatv(
            "batch size {0} is below the throughput knee: {1} is predicted to "
            "train {2} faster ({3:F0} -> {4:F0} samples/s) with {5} peak "
            "memory of {6} usable{7}",
            Site.Value, Best.BatchSize, formatShare(Best.Gain),
            Model.Current->Throughput, Best.At.Throughput,
            formatBytes(Best.At.PeakBytes), formatBytes(Model.UsableBytes),
            Best.At.Extrapolated ? " (extrapolated outside the sizes measured)"
                                 : "")
            .str();
    Out.push_back(std::move(F));
    addLearningRateNotes(Context, Site.Value, Best.BatchSize, Out);
  }

private:
  static void addLearningRateNotes(const RuleContext &Context, int64_t From,
                                   int64_t To, std::vector<Finding> &Out) {
    for (const TrainingLoop &Loop : Context.Program.TrainingLoops)
      for (const OptimizerSite &Optimizer : Loop.Optimizers) {
        double Rate = 0;
        if (!Optimizer.LearningRate ||
            !llvm::to_float(
                llvm::StringRef(Optimizer.LearningRateText).rtrim("fFlL"),
                Rate))
          continue;
        std::string Scaled = formatRate(scaleLearningRate(Rate, From, To),
                                        Optimizer.LearningRateText);
        Finding Note;
        Note.Rule = "skyline-batch-size";
        Note.Level = DiagLevel::Note;
        Note.At = *Optimizer.LearningRate;
        Note.Message =
            llvm::formatv(
                "a batch size of {0} may need the learning rate of '{1}' "
                "scaled with it: {2} x {0}/{3} = {4} (linear scaling "
                "rule; optional, export with --scale-learning-rate)",
                To, Optimizer.Name, Optimizer.LearningRateText, From, Scaled)
                .str();
        Note.Edits.push_back({*Optimizer.LearningRate, Scaled});
        Note.OptionalFix = true;
        Out.push_back(std::move(Note));
      }
  }
};

} // namespace

std::unique_ptr<Rule> createBatchSizeRule() {
  return std::make_unique<BatchSizeRule>();
}

} // namespace skyline
