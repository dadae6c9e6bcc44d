//===- ProgramModelNotes.cpp - The front end's notes, declared ------------===//
//
// What the front end found (--analyze-only), printed as notes by
// printProgramModel: the terminal's only, so they stay out of SARIF's rule
// list. The training batch size's notes are skyline-batch-size's.
//
//===----------------------------------------------------------------------===//

#include "skyline/Rules.h"

namespace skyline::rules {

const RuleInfo &moduleNote() {
  static const RuleInfo Info{
      "skyline-module",
      "Where a layer is constructed",
      "A note at each place a layer is constructed, with its name, type and "
      "where register_module names it.",
      DiagLevel::Note,
      RulePrecision::High,
      RuleOrigin::ProgramModel};
  return Info;
}

const RuleInfo &moduleCallNote() {
  static const RuleInfo Info{
      "skyline-module-call",
      "Where a layer is called",
      "A note at each call of a module, named as the module is; a call from a "
      "macro expansion says so.",
      DiagLevel::Note,
      RulePrecision::High,
      RuleOrigin::ProgramModel};
  return Info;
}

const RuleInfo &trainingLoopNote() {
  static const RuleInfo Info{
      "skyline-training-loop",
      "The training loop",
      "A note at the loop one pass of which is one training iteration, with "
      "its optimizers and its zero_grad, backward and step calls.",
      DiagLevel::Note,
      RulePrecision::High,
      RuleOrigin::ProgramModel};
  return Info;
}

} // namespace skyline::rules
