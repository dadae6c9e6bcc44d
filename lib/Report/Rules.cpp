//===- Rules.cpp - The rule catalog ---------------------------------------===//

#include "skyline/Findings.h"

namespace skyline {

llvm::ArrayRef<RuleInfo> ruleCatalog() {
  static const RuleInfo Rules[] = {
      {"skyline-batch-size",
       "The training batch size leaves throughput on the table",
       "Iteration time grows about linearly with the batch size, so throughput rises toward "
       "a limit and flattens. The suggested size is the smallest (rounded) whose predicted "
       "throughput is within the slack of the best that fits in memory; the fix-it changes "
       "the literal the batch size comes from. A note offers the learning rate scaled by the "
       "linear scaling rule.",
       "docs/rules/skyline-batch-size.md"},
      {"skyline-memory-capacity",
       "The training batch size does not fit in memory, or only just",
       "The measured or predicted peak memory at the declared batch size is over the "
       "device's capacity less the margin (--memory-margin); the fix-it sets the largest "
       "batch size that fits.",
       "docs/rules/skyline-memory-capacity.md"},
      {"skyline-hot-layer",
       "A layer takes a large share of the iteration time",
       "The layer's forward and backward time is above the share of the iteration time set "
       "by --hot-layer-share; reported at the call site and the construction site.",
       "docs/rules/skyline-hot-layer.md"},
      {"skyline-memory-breakdown",
       "Peak memory by kind at the training batch size",
       "Weights, gradients, optimizer state, activations and data at the peak of the "
       "measured run at the declared batch size, and how activations grow per sample.",
       "docs/rules/skyline-memory-breakdown.md"},
      {"skyline-throughput-regression",
       "Throughput dropped against the baseline",
       "Throughput at the baseline's batch size is lower than the baseline's by more than "
       "--max-throughput-drop, after repeated measurements and with the noise taken into "
       "account.",
       "docs/rules/skyline-throughput-regression.md"},
      {"skyline-memory-regression",
       "Peak memory grew against the baseline",
       "Peak memory at the baseline's batch size is higher than the baseline's by more than "
       "--max-memory-growth.",
       "docs/rules/skyline-memory-regression.md"},
  };
  return Rules;
}

const RuleInfo *findRule(llvm::StringRef Id) {
  for (const RuleInfo &Rule : ruleCatalog())
    if (Rule.Id == Id)
      return &Rule;
  return nullptr;
}

} // namespace skyline
