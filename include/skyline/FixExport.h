//===- FixExport.h - Fix-its as clang-tidy's YAML ---------------*- C++ -*-===//
//
// Writes clang::tooling::TranslationUnitDiagnostics through LLVM's own YAML
// mapping, the file clang-apply-replacements reads.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_FIXEXPORT_H
#define SKYLINE_FIXEXPORT_H

#include "skyline/ProgramModel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace skyline {

/// One diagnostic with the replacements that carry it out.
struct Fix {
  std::string Rule;    // skyline-batch-size
  std::string Message;
  SourceSpan At;       // where the diagnostic points
  struct Edit {
    SourceSpan Range;
    std::string Text;
  };
  std::vector<Edit> Edits;
};

/// The fix that sets the training batch size to NewValue.
Fix makeBatchSizeFix(const BatchSizeSite &Site, int64_t NewValue);

/// The YAML text clang-apply-replacements reads.
std::string fixesToYAML(llvm::StringRef MainSourceFile, llvm::ArrayRef<Fix> Fixes);

/// Writes Text to Path through a temporary file, so a failed write leaves
/// no partial file behind.
llvm::Error writeFileAtomically(llvm::StringRef Path, llvm::StringRef Text);

} // namespace skyline

#endif // SKYLINE_FIXEXPORT_H
