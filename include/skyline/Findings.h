//===- Findings.h - Diagnostics with rule ids and fix-its -------*- C++ -*-===//
//
// What the rules conclude about a program, in one form for every output: the
// terminal, clang-tidy's fixes YAML, SARIF and HTML. The rule catalog gives
// each rule id its descriptions and the docs page that explains it.
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
};

struct RuleInfo {
  llvm::StringRef Id;               // skyline-hot-layer
  llvm::StringRef ShortDescription; // one line
  llvm::StringRef FullDescription;  // a paragraph
  llvm::StringRef DocsPage;         // docs/rules/<id>.md, relative to the repo
};

/// Every rule skyline-check reports, in a stable order.
llvm::ArrayRef<RuleInfo> ruleCatalog();
const RuleInfo *findRule(llvm::StringRef Id);

const char *diagLevelName(DiagLevel Level); // note, remark, warning, error

} // namespace skyline

#endif // SKYLINE_FINDINGS_H
