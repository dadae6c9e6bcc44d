//===- Rules.h - From measurements and predictions to findings --*- C++ -*-===//
//
// Each rule is one class with a stable id (the catalog in Findings.h), made
// by an explicit list in createRules(), as clang-tidy registers its checks.
// A rule reads the program model, the measured runs and the Analysis, and
// adds findings; `// NOLINT(rule)` on a finding's line silences it there.
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
  double HotLayerShare = 0.20; // --hot-layer-share: of the iteration time
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
  virtual llvm::StringRef id() const = 0;
  virtual void check(const RuleContext &Context,
                     std::vector<Finding> &Out) const = 0;
};

/// Every rule, in the catalog's order.
std::vector<std::unique_ptr<Rule>> createRules();

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
