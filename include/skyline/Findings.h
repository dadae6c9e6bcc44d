//===- Findings.h - Diagnostics with rule ids and fix-its -------*- C++ -*-===//
//
// What the rules conclude about a program, in one form for every output: the
// terminal, clang-tidy's fixes YAML, SARIF and HTML. Each rule is declared
// once, with the rule (its RuleInfo); the catalog is made from those
// declarations and gives each id its descriptions and its docs page.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_FINDINGS_H
#define SKYLINE_FINDINGS_H

#include "skyline/ProgramModel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace skyline {

enum class DiagLevel { Note, Remark, Warning, Error };

/// One diagnostic. At.File empty: about the program as a whole (the gate's
/// regressions), shown without a location.
struct Finding {
  std::string Rule; // skyline-batch-size
  DiagLevel Level = DiagLevel::Warning;
  std::string Message;
  SourceSpan At;
  /// The fix-it; empty when there is none.
  std::vector<TextEdit> Edits;
  /// Shown and put in SARIF, but written to --export-fixes only on request
  /// (the learning-rate scaling that goes with a batch-size change).
  bool OptionalFix = false;
  /// Figures behind the message, by name (predictedGain, ...): SARIF's
  /// result properties, for tools that read the numbers.
  std::vector<std::pair<std::string, double>> Figures;
};

/// How far a rule's findings can be trusted: measured facts are High;
/// conclusions resting on the model's predictions or on noisy timings are
/// Medium (SARIF's precision).
enum class RulePrecision { Medium, High };

/// What makes a rule's findings.
enum class RuleOrigin {
  Measurement,  // a rule class, run on the measured runs (createRules)
  Gate,         // the comparison with a baseline (Gate.h)
  ProgramModel, // the front end's notes: the terminal only, never SARIF
};

/// A command-line option a rule reads, declared with the rule.
struct RuleOptionInfo {
  const char *Name;    // hot-layer-share
  const char *Default; // as the command line writes it: 20
  const char *Help;
};

/// A rule as it is declared, with the rule: everything the catalog, SARIF,
/// the docs and the command line say of it.
struct RuleInfo {
  llvm::StringRef Id;               // skyline-hot-layer
  llvm::StringRef ShortDescription; // one line
  llvm::StringRef FullDescription;  // a paragraph
  DiagLevel DefaultLevel = DiagLevel::Warning;
  RulePrecision Precision = RulePrecision::Medium;
  RuleOrigin Origin = RuleOrigin::Measurement;
  llvm::ArrayRef<RuleOptionInfo> Options = {};
  /// docs/rules/<id>.md, relative to the repo: filled in by the catalog.
  llvm::StringRef DocsPage = {};
};

/// Every rule whose findings skyline-check reports (the measured rules, then
/// the gate's), in a stable order: SARIF's rule list.
llvm::ArrayRef<RuleInfo> ruleCatalog();
const RuleInfo *findRule(llvm::StringRef Id);

/// The front end's notes (--analyze-only), which have docs pages too.
llvm::ArrayRef<RuleInfo> noteCatalog();

const char *diagLevelName(DiagLevel Level); // note, remark, warning, error

} // namespace skyline

#endif // SKYLINE_FINDINGS_H
