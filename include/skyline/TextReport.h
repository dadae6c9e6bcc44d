//===- TextReport.h - clang-style diagnostics on the terminal ---*- C++ -*-===//
//
// `file:line:col: note: message [rule]`, the source line, a caret under the
// range, and an optional fix-it line, as clang and clang-tidy print them.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_TEXTREPORT_H
#define SKYLINE_TEXTREPORT_H

#include "skyline/Findings.h"
#include "skyline/ProgramModel.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MemoryBuffer;
class raw_ostream;
} // namespace llvm

namespace skyline {

/// Prints diagnostics, reading each source file once for the quoted lines.
class DiagnosticPrinter {
public:
  /// DisplayPath maps the model's absolute paths to what the user typed.
  DiagnosticPrinter(llvm::raw_ostream &OS,
                    std::function<std::string(llvm::StringRef)> DisplayPath);
  ~DiagnosticPrinter();

  /// Column and Length select the caret range on Line (1-based column).
  void print(DiagLevel Level, llvm::StringRef File, unsigned Line,
             unsigned Column, unsigned Length, llvm::StringRef Message,
             llvm::StringRef Rule,
             std::optional<std::string> FixIt = std::nullopt);
  /// A finding; its fix-it line shows the first edit's text when that edit
  /// is on the finding's line. A finding without a file prints plain.
  void print(const Finding &F);
  /// A path as the user should see it.
  std::string displayPath(llvm::StringRef Path) const {
    return DisplayPath(Path);
  }
  /// A diagnostic with no location: `skyline-check: error: ...`.
  void printPlain(DiagLevel Level, llvm::StringRef Message);

private:
  std::optional<std::string> lineText(llvm::StringRef File, unsigned Line);

  llvm::raw_ostream &OS;
  std::function<std::string(llvm::StringRef)> DisplayPath;
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> Files;
};

/// The static analysis as findings (notes): batch sizes, modules, calls,
/// loops, in the order the terminal prints them; the terminal and
/// skyline-lsp's diagnostics both come from here. DisplayPath shows the
/// paths a message names.
std::vector<Finding> programModelNotes(
    const ProgramModel &Model,
    const std::function<std::string(llvm::StringRef)> &DisplayPath);

/// The static analysis as notes: batch sizes, modules, calls, loops.
void printProgramModel(const ProgramModel &Model, DiagnosticPrinter &Printer,
                       llvm::raw_ostream &OS);

} // namespace skyline

#endif // SKYLINE_TEXTREPORT_H
