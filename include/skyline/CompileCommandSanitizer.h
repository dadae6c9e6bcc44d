//===- CompileCommandSanitizer.h - Compile commands made safe ---*- C++ -*-===//
//
// A compile command from outside (a repository's compile_commands.json or
// compile_flags.txt, the flags after `--`, an editor's initializationOptions)
// is the repository's choice, not the user's. Parsing a program must never
// load code or write a file that such a command names, as clangd promises:
// every command passes sanitizeCompileCommand before a compiler sees it, in
// the front end, the preamble build, the editor's server and the instrumented
// build alike (they all read one SanitizedCompilationDatabase).
//
// Dropped: plugin loading (-fplugin=, -fpass-plugin=, -fplugin-arg-), every
// option that makes the compiler write a file (-M* dependency outputs, -o,
// -save-temps, -ftime-trace, --serialize-diagnostics, profile and coverage
// outputs, crash reproducers, optimization records, stats, an implicit
// module cache), compiler configuration files (--config), the driver's
// internal -ccc-* options, options passed on to other tools (-Xarch_*, ...),
// inputs other than the source, and whatever -Xclang, -Xpreprocessor and
// -Wp, would hand the compiler's internals beyond macros, include paths and
// warnings. Response files (@file) are read only when they are regular files
// of at most 1 MiB inside a trusted root (the build directory, the sources'
// repository); their arguments are sanitized the same way.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_COMPILECOMMANDSANITIZER_H
#define SKYLINE_COMPILECOMMANDSANITIZER_H

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace skyline {

/// One argument (or an option with its value) left out, and why.
struct DroppedArgument {
  std::string Text; // as written, an option and its value joined by a space
  std::string Why;  // "loads code into the compiler", "writes a file", ...
};

struct SanitizedCommand {
  std::vector<std::string> Arguments; // the compiler first
  std::vector<DroppedArgument> Dropped;
};

/// Directories whose response files may be read (real paths or not: they
/// are resolved).
struct SanitizerOptions {
  std::vector<std::string> TrustedRoots;
};

/// CommandLine without what could load code or write a file. Directory is
/// the command's working directory (relative paths are from it); Filename is
/// its source, the one input kept. `--no-default-config` follows the
/// compiler, so no configuration file beside a repository's compiler is read.
SanitizedCommand sanitizeCompileCommand(llvm::ArrayRef<std::string> CommandLine,
                                        llvm::StringRef Directory,
                                        llvm::StringRef Filename,
                                        const SanitizerOptions &Options);

/// "'-fplugin=x.so' (loads code into the compiler); '-MD' (writes a file)".
std::string describeDropped(llvm::ArrayRef<DroppedArgument> Dropped);

/// Base's commands, each sanitized. What was dropped is said once a
/// command, as a note naming the database entry (Origin names the database:
/// "compile_commands.json in 'build'", "the flags after --").
class SanitizedCompilationDatabase
    : public clang::tooling::CompilationDatabase {
public:
  SanitizedCompilationDatabase(
      std::unique_ptr<clang::tooling::CompilationDatabase> Base,
      std::string Origin, SanitizerOptions Options);

  std::vector<clang::tooling::CompileCommand>
  getCompileCommands(llvm::StringRef FilePath) const override;
  std::vector<std::string> getAllFiles() const override;
  std::vector<clang::tooling::CompileCommand>
  getAllCompileCommands() const override;

  /// The notes not yet taken, in the order their commands were first read.
  std::vector<std::string> takeNotes() const;

private:
  clang::tooling::CompileCommand
  sanitize(clang::tooling::CompileCommand Command) const;

  std::unique_ptr<clang::tooling::CompilationDatabase> Base;
  std::string Origin;
  SanitizerOptions Options;
  mutable std::mutex Mutex; // the editor's server reads from several threads
  mutable std::set<std::string> Said;
  mutable std::vector<std::string> Pending;
};

} // namespace skyline

#endif // SKYLINE_COMPILECOMMANDSANITIZER_H
