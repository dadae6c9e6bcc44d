//===- Sarif.h - Findings as SARIF 2.1.0 ------------------------*- C++ -*-===//
//
// The --sarif output: one run with the whole rule catalog and a result per
// finding, in the shape GitHub code scanning and SARIF viewers expect (URIs
// relative to the source root, line-hash fingerprints, fixes). docs/sarif.md
// describes the file.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_SARIF_H
#define SKYLINE_SARIF_H

#include "skyline/Findings.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace skyline {

struct SarifOptions {
  /// Absolute directory; artifact URIs are relative to it under the uriBaseId
  /// %SRCROOT%. Empty: defaultSourceRoot() of the current directory.
  std::string SourceRoot;
  std::string ToolVersion;
  /// run.automationDetails.id ("skyline-check/train/"); empty: omitted.
  /// GitHub takes everything up to the last '/' as the category.
  std::string AutomationId;
};

/// The SARIF log, pretty-printed. Source files named by the findings are
/// read (once each) for the fingerprints and UTF-16 columns; one that cannot
/// be read only makes those less robust.
std::string findingsToSarif(llvm::ArrayRef<Finding> Findings,
                            const SarifOptions &Options);

/// The default --source-root: the git top level above Dir (look for a .git
/// entry walking up; no subprocess), else Dir itself; absolute, no trailing
/// slash. An empty Dir is the current directory.
std::string defaultSourceRoot(llvm::StringRef Dir);

} // namespace skyline

#endif // SKYLINE_SARIF_H
