//===- FixExport.h - Fix-its as clang-tidy's YAML ---------------*- C++ -*-===//
//
// Writes clang::tooling::TranslationUnitDiagnostics through LLVM's own YAML
// mapping, the file clang-apply-replacements reads.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_FIXEXPORT_H
#define SKYLINE_FIXEXPORT_H

#include "skyline/Findings.h"
#include "skyline/ProgramModel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace skyline {

/// A note with the fix-it that sets the training batch size to NewValue.
Finding makeBatchSizeFix(const BatchSizeSite &Site, int64_t NewValue);

/// The YAML text clang-apply-replacements reads: the findings that carry a
/// fix-it; optional ones (OptionalFix) only when IncludeOptional is set.
std::string fixesToYAML(llvm::StringRef MainSourceFile,
                        llvm::ArrayRef<Finding> Findings,
                        bool IncludeOptional = false);

/// Fails, naming Option (`--sarif`) when given, unless Path's directory
/// exists and is writable: checked before long work, not after it.
llvm::Error checkOutputDirectory(llvm::StringRef Path,
                                 llvm::StringRef Option = "");

/// Writes Text to Path through a temporary file, so a failed write leaves
/// no partial file behind.
llvm::Error writeFileAtomically(llvm::StringRef Path, llvm::StringRef Text);

} // namespace skyline

#endif // SKYLINE_FIXEXPORT_H
