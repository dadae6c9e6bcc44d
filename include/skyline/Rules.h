//===- Rules.h - From measurements and predictions to findings --*- C++ -*-===//
//
// Each rule is one class that declares itself (its RuleInfo: id, level,
// descriptions, options), registered by one line in Rules/Rules.def, as
// clang-tidy registers its checks; the catalog (Findings.h) is made from
// the declarations. A rule reads the program model, the measured runs and
// the Analysis, and adds findings; `// NOLINT(rule)` on a finding's line
// silences it there. docs/design.md says how to add one.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RULES_H
#define SKYLINE_RULES_H

#include "skyline/Findings.h"
#include "skyline/Measurement.h"
#include "skyline/Model.h"
#include "skyline/ProgramModel.h"

#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace skyline {

struct RuleOptions {
  ModelOptions Model;
  double HotLayerShare = 0.20; // HotLayerShareOption: of the iteration time
};

struct RuleContext {
  const ProgramModel &Program; // has a training batch size
  const Measurement &Measured;
  const Analysis &Model;
  const RuleOptions &Options;

  /// The run at the declared batch size, else the first that fit; null
  /// when no run fit.
  const MeasuredRun *currentRun() const;
};

class Rule {
public:
  virtual ~Rule();
  /// The rule's declaration.
  virtual const RuleInfo &info() const = 0;
  llvm::StringRef id() const { return info().Id; }
  virtual void check(const RuleContext &Context,
                     std::vector<Finding> &Out) const = 0;
};

/// Every rule, in the catalog's order.
std::vector<std::unique_ptr<Rule>> createRules();

/// The declarations other code names findings with: a rule's own, where
/// another stage makes findings of it (the fix-it of --set-batch-size, the
/// front end's batch-size notes), and the gate's and the front end's, whose
/// findings no rule class makes.
namespace rules {
const RuleInfo &batchSize();
const RuleInfo &throughputRegression();
const RuleInfo &memoryRegression();
const RuleInfo &baselineEnvironment();
const RuleInfo &moduleNote();
const RuleInfo &moduleCallNote();
const RuleInfo &trainingLoopNote();
} // namespace rules

/// skyline-hot-layer's --hot-layer-share.
const RuleOptionInfo &hotLayerShareOption();

/// skyline-hot-layer's figures, which the editor's hovers and hints show
/// too: a layer's time in an iteration (its GPU time where the run
/// measured one, else forward and backward) and that time's share of the
/// run's median iteration, the statistic the run table and the loop's hint
/// show (0 where the median is not positive).
double hotLayerMs(const LayerMeasure &Layer);
double hotLayerShare(const MeasuredRun &Run, const LayerMeasure &Layer);

/// Runs every rule and drops what NOLINT comments silence.
std::vector<Finding> runRules(const RuleContext &Context);

/// True when Line (or, for NOLINTNEXTLINE, PreviousLine) silences Rule:
/// `NOLINT` alone silences every rule, `NOLINT(a, b)` the named ones, and
/// a name may end in `*` (`NOLINT(skyline-*)`).
bool isSilenced(llvm::StringRef Line, llvm::StringRef PreviousLine,
                llvm::StringRef Rule);

/// Drops the findings whose source line silences their rule, and the notes
/// that follow a silenced warning of the same rule.
std::vector<Finding> dropSilenced(std::vector<Finding> Findings);

} // namespace skyline

#endif // SKYLINE_RULES_H
