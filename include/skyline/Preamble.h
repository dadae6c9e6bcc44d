//===- Preamble.h - A program's system headers, precompiled -----*- C++ -*-===//
//
// Most of a LibTorch program's parse is LibTorch's headers (5.5 of mnist's
// 6 s). The leading system #includes the program's sources share are
// precompiled once, by the clang whose libraries parse them, into the cache
// (docs/user-guide.md, "Caches"), and a later parse includes the .pch
// instead of parsing them again. skyline-check and skyline-lsp share them.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_PREAMBLE_H
#define SKYLINE_PREAMBLE_H

#include "skyline/Frontend.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace clang::tooling {
class CompilationDatabase;
} // namespace clang::tooling

namespace skyline {

class BackgroundProcess;

/// The leading `#include <...>` lines of a source (comments, blank lines
/// and `#pragma once` between them skipped), up to its first other line:
/// what a precompiled preamble holds. Only angle includes: a header of the
/// program's own may change with every edit.
std::string systemPreamble(llvm::StringRef Text);

/// A preamble the program's sources share, and where it is kept.
struct PreamblePlan {
  /// <directory>/<key>.pch, the key a hash of what decides its contents:
  /// the text, the command's flags, the clang that builds it and, where a
  /// flag names a relative path, the command's directory.
  std::string Pch;
  std::string Text;        // its #include lines
  FrontendCommand Command; // the first source's; it compiles with it
};

/// The preamble Sources share, kept in Directory: none where Directory is
/// empty, a source cannot be read, has no command or no leading system
/// #include, or where the sources' preambles or flags differ.
std::optional<PreamblePlan>
planPreamble(const clang::tooling::CompilationDatabase &DB,
             llvm::ArrayRef<std::string> Sources, llvm::StringRef Directory);

/// Whether a command line names a path relative to its directory (an
/// include directory, a sysroot): its preamble is then the directory's own.
bool namesRelativePath(const FrontendCommand &Command);

/// The system headers a preamble holds, listed beside it, one a line.
std::string preambleFilesPath(llvm::StringRef Pch);

/// The files a parse through Pch depends on that it did not enter: Pch and
/// the headers listed beside it; none where the list cannot be read.
std::optional<std::vector<std::string>>
filesBehindPreamble(llvm::StringRef Pch);

/// What became of a preamble in analyzeWithPreamble.
enum class PreambleUse {
  None,    // no plan, or none precompiled yet: parsed whole
  Used,    // parsed through it
  Deleted, // it did not load and the whole parse succeeded: stale, deleted
  Kept,    // neither parse succeeded: the program has errors; it is kept
};

/// Analyzes Sources through Plan's preamble where it exists, else, or where
/// it does not load (a header changed since), whole; clang's messages are
/// the whole parse's. Use, where set, says which (PreambleUse);
/// SystemFilesRead, where set, gets the files the model depends on
/// (filesBehindPreamble's with the preamble). OnePass: where the parse
/// through a preamble that loaded fails on the program's own errors, those
/// errors are the answer (without carets), not a second, whole parse's:
/// an editor's save with a typo then costs one parse.
llvm::Expected<ProgramModel>
analyzeWithPreamble(const clang::tooling::CompilationDatabase &DB,
                    llvm::ArrayRef<std::string> Sources,
                    const FrontendOptions &Options,
                    const std::optional<PreamblePlan> &Plan,
                    PreambleUse *Use = nullptr, bool OnePass = false);

/// A preamble being precompiled in a child process (BackgroundProcess):
/// started after a whole parse, finished (waited for and put in place)
/// when convenient. Dropped unfinished, it is stopped and leaves nothing.
class PreambleBuild {
public:
  /// Starts precompiling Plan's preamble. SystemFiles: the headers the
  /// whole parse entered, listed beside it (filesBehindPreamble).
  static llvm::Expected<std::unique_ptr<PreambleBuild>>
  start(const PreamblePlan &Plan, std::vector<std::string> SystemFiles);
  /// Waits for it, then puts the .pch in place; the error names its log.
  llvm::Error finish();
  /// How long it took, once finished.
  double seconds() const { return Seconds; }
  const std::string &pch() const { return Plan.Pch; }
  ~PreambleBuild();

private:
  PreambleBuild() = default;
  PreamblePlan Plan;
  std::vector<std::string> SystemFiles;
  std::string Temporary;
  std::unique_ptr<BackgroundProcess> Child;
  std::chrono::steady_clock::time_point Started;
  double Seconds = 0;
};

} // namespace skyline

#endif // SKYLINE_PREAMBLE_H
