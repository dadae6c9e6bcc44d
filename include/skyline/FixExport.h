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

#include <optional>
#include <string>

namespace skyline {

/// A note with the fix-it that sets the training batch size to NewValue.
Finding makeBatchSizeFix(const BatchSizeSite &Site, int64_t NewValue);

/// Adds the fix-it of --set-batch-size=NewValue to Findings. It wins over
/// any other fix-it on the same text (the batch-size suggestion, the memory
/// capacity's): those keep their message, lose their edits, and say so.
void addRequestedBatchSize(std::vector<Finding> &Findings,
                           const BatchSizeSite &Site, int64_t NewValue);

/// Whether two edits touch the same text of one file.
bool editsOverlap(const TextEdit &A, const TextEdit &B);

/// The YAML text clang-apply-replacements reads: the findings that carry a
/// fix-it; optional ones (OptionalFix) only when IncludeOptional is set.
/// One replacement per site: a finding whose edit overlaps one already
/// taken is left out whole (clang-apply-replacements refuses a file with
/// overlapping replacements, and would then change nothing).
std::string fixesToYAML(llvm::StringRef MainSourceFile,
                        llvm::ArrayRef<Finding> Findings,
                        bool IncludeOptional = false);

/// Why the fix-its of Findings would not land where they were found: an
/// edit names a file Program does not describe, or one whose text is no
/// longer the one analyzed (its SHA-256 differs from Program's, or Program
/// records none); none when every edited file is as it was analyzed.
std::optional<std::string> whyFixesAreStale(llvm::ArrayRef<Finding> Findings,
                                            const ProgramModel &Program);

} // namespace skyline

#endif // SKYLINE_FIXEXPORT_H
