//===- MemoryCapacityRule.cpp - skyline-memory-capacity -------------------===//
//
// The declared batch size ran out of memory, or its peak (measured, else
// predicted) is over the capacity less the margin: the fix-it sets the
// suggested size, which always fits.
//
//===----------------------------------------------------------------------===//

#include "RuleFactories.h"

#include "skyline/FixExport.h"
#include "skyline/Units.h"

#include "llvm/Support/FormatVariadic.h"

namespace skyline {
namespace {

class MemoryCapacityRule : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-memory-capacity",
        "The training batch size does not fit in memory, or only just",
        "The measured or predicted peak memory at the declared batch size is "
        "over the "
        "device's capacity less the margin (--memory-margin); the fix-it sets "
        "the largest "
        "batch size that fits.",
        DiagLevel::Warning, RulePrecision::Medium};
    return Info;
  }

  void check(const RuleContext &Context,
             std::vector<Finding> &Out) const override {
    const BatchSizeSite &Site = *Context.Program.BatchSize;
    const Analysis &Model = Context.Model;
    std::string Problem = describeProblem(Context, Site.Value);
    if (Problem.empty())
      return;
    std::optional<int64_t> Target;
    if (ranOutBeforeTheLoop(Context, Site.Value))
      ; // no batch size is the fix
    else if (Model.Suggested && Model.Suggested->BatchSize < Site.Value)
      Target = Model.Suggested->BatchSize;
    else if (Model.MaxBatchSize && *Model.MaxBatchSize < Site.Value)
      Target = *Model.MaxBatchSize;

    Finding F;
    F.Rule = std::string(id());
    F.Level = DiagLevel::Warning;
    F.At = Site.Literal;
    F.Message = Problem;
    if (Target) {
      F.Message += llvm::formatv("; {0} fits", *Target).str();
      if (Model.MaxBatchSize)
        F.Message += llvm::formatv(" (the largest predicted to fit is {0})",
                                   *Model.MaxBatchSize)
                         .str();
      F.Edits = makeBatchSizeFix(Site, *Target).Edits;
    }
    Out.push_back(std::move(F));
  }

private:
  static bool ranOutBeforeTheLoop(const RuleContext &Context,
                                  int64_t BatchSize) {
    for (const MeasuredRun &Run : Context.Measured.Runs)
      if (Run.BatchSize == BatchSize && Run.OutOfMemoryBeforeLoop)
        return true;
    return false;
  }

  static std::string describeProblem(const RuleContext &Context,
                                     int64_t BatchSize) {
    const Analysis &Model = Context.Model;
    if (ranOutBeforeTheLoop(Context, BatchSize))
      return llvm::formatv(
                 "the run at batch size {0} ran out of memory before its "
                 "training loop began: what the program does before the "
                 "loop needs more than the {1} {2} capacity, whatever the "
                 "batch size",
                 BatchSize, formatBytes(Model.CapacityBytes),
                 nameOf(Context.Measured.Device))
          .str();
    for (const MeasuredRun &Run : Context.Measured.Runs)
      if (Run.BatchSize == BatchSize && Run.OutOfMemory)
        return llvm::formatv("batch size {0} ran out of memory: a run needs "
                             "more than the {1} "
                             "{2} capacity",
                             BatchSize, formatBytes(Model.CapacityBytes),
                             nameOf(Context.Measured.Device))
            .str();
    int64_t Peak = 0;
    const char *How = "measured";
    if (const MeasuredRun *Run = Context.currentRun();
        Run && Run->BatchSize == BatchSize)
      Peak = Run->PeakBytes;
    else if (Model.Current) {
      Peak = Model.Current->PeakBytes;
      How = "predicted";
    }
    if (Peak <= Model.UsableBytes || Model.UsableBytes <= 0)
      return "";
    if (Peak > Model.CapacityBytes)
      return llvm::formatv("batch size {0} does not fit: its {1} peak memory "
                           "of {2} is over the "
                           "{3} capacity",
                           BatchSize, How, formatBytes(Peak),
                           formatBytes(Model.CapacityBytes))
          .str();
    return llvm::formatv("batch size {0} only just fits: its {1} peak memory "
                         "of {2} is within "
                         "the {3} margin of the {4} capacity",
                         BatchSize, How, formatBytes(Peak),
                         formatShare(Context.Options.Model.MemoryMargin),
                         formatBytes(Model.CapacityBytes))
        .str();
  }
};

} // namespace

std::unique_ptr<Rule> createMemoryCapacityRule() {
  return std::make_unique<MemoryCapacityRule>();
}

} // namespace skyline
