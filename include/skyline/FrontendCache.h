//===- FrontendCache.h - The front end's answer kept between runs -*- C++
//-*-===//
//
// A second skyline-check of an unchanged program reads the front end's
// ProgramModel from its work directory instead of parsing again: the parse
// with LibTorch's headers is most of a cached run's time outside the runs.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_FRONTENDCACHE_H
#define SKYLINE_FRONTENDCACHE_H

#include "skyline/Frontend.h"
#include "skyline/ProgramModel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace clang::tooling {
class CompilationDatabase;
} // namespace clang::tooling

namespace skyline {

/// What decides the front end's answer besides the files it reads: the
/// sources (as absolute paths, however they were given), each one's compile
/// command, the options of the analysis and the skyline-check that parses
/// (its version and its executable's size and time: Executable, else this
/// process's), as a SHA-256 in hex. skyline-lsp names the skyline-check
/// beside it to read that one's model.
std::string frontendCacheKey(const clang::tooling::CompilationDatabase &DB,
                             llvm::ArrayRef<std::string> Sources,
                             const FrontendOptions &Options,
                             llvm::StringRef Executable = "");

/// The model kept at Path, where it was kept under Key and every file it
/// was read from is as it was: the program's own files by their SHA-256
/// (ProgramModel::FileSha256), the system headers by size and modification
/// time (as Clang checks a precompiled header's inputs). None otherwise, and
/// for a missing or unreadable file: the caller parses again.
std::optional<ProgramModel> readCachedProgram(llvm::StringRef Path,
                                              llvm::StringRef Key);

/// Keeps Model at Path (atomically) under Key, with the system headers the
/// parse read.
llvm::Error writeCachedProgram(llvm::StringRef Path, llvm::StringRef Key,
                               const ProgramModel &Model,
                               llvm::ArrayRef<std::string> SystemFiles);

} // namespace skyline

#endif // SKYLINE_FRONTENDCACHE_H
