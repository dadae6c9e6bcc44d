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
  const RuleInfo &info() const override { return rules::batchSize(); }

  void check(const RuleContext &Context,
             std::vector<Finding> &Out) const override {
    const Analysis &Model = Context.Model;
    if (!Model.Suggested || !Model.Current || !Model.Current->Fits)
      return; // a size that does not fit is skyline-memory-capacity's
    const BatchSizeSite &Site = *Context.Program.BatchSize;
    const Suggestion &Best = *Model.Suggested;
    Finding F = makeBatchSizeFix(Site, Best.BatchSize);
    F.Level = DiagLevel::Warning;
    // What the two wordings share: the gain's interval, the throughputs,
    // the memory.
    std::string Figures =
        llvm::formatv("({0}, 90% interval; {1:F0} -> {2:F0} samples/s) with "
                      "{3} peak memory of {4} usable",
                      formatShareRange(Best.GainRange.Low, Best.GainRange.High),
                      Model.Current->Throughput, Best.At.Throughput,
                      formatBytes(Best.At.PeakBytes),
                      formatBytes(Model.UsableBytes))
            .str();
    F.Message =
        Best.MeasuredOnly
            ? llvm::formatv("batch size {0} is below the throughput knee: {1} "
                            "ran {2} faster, measured {3}; the time between "
                            "the sizes could not be modelled",
                            Site.Value, Best.BatchSize, formatShare(Best.Gain),
                            Figures)
                  .str()
            : llvm::formatv("batch size {0} is below the throughput knee: {1} "
                            "is predicted to train {2} faster {3}{4}",
                            Site.Value, Best.BatchSize, formatShare(Best.Gain),
                            Figures,
                            Best.At.Extrapolated
                                ? " (extrapolated outside the sizes measured)"
                                : "")
                  .str();
    F.Figures = {{"suggestedBatchSize", double(Best.BatchSize)},
                 {"predictedGain", Best.Gain},
                 {"predictedGainLow90", Best.GainRange.Low},
                 {"predictedGainHigh90", Best.GainRange.High},
                 {"predictedThroughput", Best.At.Throughput},
                 {"predictedThroughputLow90", Best.At.ThroughputRange.Low},
                 {"predictedThroughputHigh90", Best.At.ThroughputRange.High},
                 {"predictedPeakBytes", double(Best.At.PeakBytes)},
                 {"predictedPeakBytesLow90", Best.At.PeakBytesRange.Low},
                 {"predictedPeakBytesHigh90", Best.At.PeakBytesRange.High},
                 {"measuredOnly", Best.MeasuredOnly ? 1.0 : 0.0}};
    Out.push_back(std::move(F));
    addWholeBatchNote(Context, Best.BatchSize, Out);
    addLearningRateNotes(Context, Site.Value, Best.BatchSize, Out);
  }

private:
  /// Where the loop gives tensors the batch size as a dimension, a batch
  /// shorter than the size fails there: the note at the first such call
  /// says whether the suggestion divides the dataset.
  static void addWholeBatchNote(const RuleContext &Context, int64_t To,
                                std::vector<Finding> &Out) {
    const BatchShape *First = nullptr;
    size_t Count = 0;
    for (const TrainingLoop &Loop : Context.Program.TrainingLoops)
      for (const BatchShape &Shape : Loop.BatchShapes) {
        if (!First)
          First = &Shape;
        ++Count;
      }
    if (!First)
      return;
    // "'x.view(...)' needs", "'x.view(...)' and 2 more calls need".
    std::string Needs =
        Count == 1 ? "needs"
        : Count == 2
            ? "and 1 more call need"
            : llvm::formatv("and {0} more calls need", Count - 1).str();
    int64_t Samples = Context.Model.WholeBatchSamples;
    Finding Note;
    Note.Rule = rules::batchSize().Id.str();
    Note.Level = DiagLevel::Note;
    Note.At = {First->Call.File, First->Call.Line, First->Call.Column,
               First->Call.Offset, First->Call.Length};
    int64_t Training = Context.Model.DatasetSamples;
    Note.Message =
        Samples > 0 && Training > 0 && Samples != Training
            ? llvm::formatv("'{0}' {1} every batch whole: {2} divides "
                            "the training data's {3} samples and those of "
                            "the other loaders given the batch size (all "
                            "multiples of {4}), so no batch is short",
                            First->Text, Needs, To, Training, Samples)
                  .str()
        : Samples > 0
            ? llvm::formatv("'{0}' {1} every batch whole: {2} divides "
                            "the dataset's {3} samples, so no batch is short",
                            First->Text, Needs, To, Samples)
                  .str()
            : llvm::formatv(
                  "'{0}' {1} every batch whole: unless the dataset's "
                  "size is a multiple of {2}, an epoch's last batch is "
                  "short and fails here; shape by the batch's own size "
                  "(size(0)) or drop the last batch "
                  "(DataLoaderOptions().drop_last(true))",
                  First->Text, Needs, To)
                  .str();
    Out.push_back(std::move(Note));
  }

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
        Note.Rule = rules::batchSize().Id.str();
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

const RuleInfo &rules::batchSize() {
  static const RuleInfo Info{
      "skyline-batch-size",
      "The training batch size leaves throughput on the table",
      "Iteration time grows about linearly with the batch size, so throughput "
      "rises toward "
      "a limit and flattens. The suggested size is the smallest (rounded) "
      "whose predicted "
      "throughput is within the slack of the best that fits in memory; the "
      "fix-it changes "
      "the literal the batch size comes from. A note offers the learning rate "
      "scaled by the "
      "linear scaling rule.",
      DiagLevel::Warning, RulePrecision::Medium};
  return Info;
}

std::unique_ptr<Rule> createBatchSizeRule() {
  return std::make_unique<BatchSizeRule>();
}

} // namespace skyline
