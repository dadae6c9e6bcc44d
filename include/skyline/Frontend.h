//===- Frontend.h - Static analysis of a LibTorch program -------*- C++ -*-===//
//
// The first stage: parses the program's sources with their compile commands
// and finds the batch size, the modules, their call sites and the training
// loop. Only the program's own files are matched, never system headers.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_FRONTEND_H
#define SKYLINE_FRONTEND_H

#include "skyline/ProgramModel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace clang::tooling {
class CompilationDatabase;
} // namespace clang::tooling

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace skyline {

struct FrontendOptions {
  /// A variable, field or macro the user names as the training batch size
  /// (--batch-size-var); empty to find it from its uses.
  std::string BatchSizeVar;
  /// Where clang's own diagnostics go (parse errors). Null: llvm::errs().
  llvm::raw_ostream *DiagnosticStream = nullptr;
  /// Where set, every system header the parse entered is added here: the
  /// front end's cache (FrontendCache.h) checks them for changes.
  std::vector<std::string> *SystemFilesRead = nullptr;
  /// Where a source has compile errors, analyze what clang could read of it
  /// all the same (code outside the broken declarations is whole), with a
  /// warning in the model, instead of failing. A header of another machine
  /// (OpenCV, `omp.h`) should not cost every other fact. Off: the editor
  /// keeps its last findings instead, and a stale preamble must fail.
  bool AcceptCompileErrors = false;
  /// Where set, the number of errors clang reported is stored here (0 when
  /// the program compiled).
  unsigned *CompileErrorsSeen = nullptr;
};

/// Analyzes the sources as one program, each with its command from DB.
/// Fails when a source is missing or does not parse (unless
/// Options.AcceptCompileErrors); clang's errors have then been printed to
/// DiagnosticStream.
llvm::Expected<ProgramModel>
analyzeProgram(const clang::tooling::CompilationDatabase &DB,
               llvm::ArrayRef<std::string> Sources,
               const FrontendOptions &Options);

/// A compiler command line, run in Directory; Filename is its source.
struct FrontendCommand {
  std::string Directory;
  std::string Filename;
  std::vector<std::string> Arguments; // the compiler first
};

/// The command analyzeProgram parses Source with: DB's command with the
/// front end's adjustments (no output or dependency files, GCC-only flags
/// dropped, clang's resource directory); none when DB has none. skyline-lsp
/// precompiles the program's preamble with it.
std::optional<FrontendCommand>
frontendCommandLine(const clang::tooling::CompilationDatabase &DB,
                    llvm::StringRef Source);

/// Analyzes one in-memory source (for tests): Args are compiler flags.
llvm::Expected<ProgramModel> analyzeCode(llvm::StringRef Code,
                                         llvm::ArrayRef<std::string> Args,
                                         llvm::StringRef FileName = "input.cpp",
                                         const FrontendOptions &Options = {});

} // namespace skyline

#endif // SKYLINE_FRONTEND_H
