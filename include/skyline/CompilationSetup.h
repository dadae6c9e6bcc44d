//===- CompilationSetup.h - Finding compile commands ------------*- C++ -*-===//
//
// Where the front end's compile commands come from, as in clang-tidy: a
// compile_commands.json in -p DIR or above the source, flags after `--`, or a
// fallback to the LibTorch include paths skyline-check was built with. Every
// command from outside is sanitized (CompileCommandSanitizer.h).
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_COMPILATIONSETUP_H
#define SKYLINE_COMPILATIONSETUP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace clang::tooling {
class CompilationDatabase;
} // namespace clang::tooling

namespace skyline {

struct CompilationSetup {
  /// Every command from outside passed through the sanitizer
  /// (CompileCommandSanitizer.h) before anyone reads it.
  std::unique_ptr<clang::tooling::CompilationDatabase> Database;
  std::vector<std::string> Warnings; // e.g. the fallback was used
  /// What the sanitizer dropped from the sources' commands, one note a
  /// command, naming its database entry.
  std::vector<std::string> Notes;
};

/// BuildPath: the -p directory, or empty. ExtraArgs: flags after `--`, or
/// nullopt when there was no `--`. Sources: the files to analyze.
llvm::Expected<CompilationSetup>
loadCompilationSetup(llvm::StringRef BuildPath,
                     const std::optional<std::vector<std::string>> &ExtraArgs,
                     llvm::ArrayRef<std::string> Sources);

/// The flags used when no compilation database exists: the C++ standard
/// LibTorch needs and the include paths of the LibTorch skyline-check was
/// built with.
std::vector<std::string> fallbackCompileFlags();

} // namespace skyline

#endif // SKYLINE_COMPILATIONSETUP_H
