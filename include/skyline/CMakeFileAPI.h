//===- CMakeFileAPI.h - The program's target from CMake --------*- C++ -*-===//
//
// The compilation database has no link line; CMake's File API has one. An
// empty query file of skyline-check's own client asks CMake for its
// codemodel-v2 at the build dir's next configure; in the reply, the target
// whose sources include the program's main source says how the program
// links: the link command fragments, the link language and the project's own
// libraries it needs, already built in the user's build dir.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_CMAKEFILEAPI_H
#define SKYLINE_CMAKEFILEAPI_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace skyline {

/// A target of the project that the program's target links.
struct CMakeDependency {
  std::string Name;
  std::string Type;                   // STATIC_LIBRARY, SHARED_LIBRARY, ...
  std::vector<std::string> Artifacts; // absolute paths
};

/// What the File API says about one target, paths made absolute.
struct CMakeTarget {
  std::string Name;
  std::string Type;         // EXECUTABLE, STATIC_LIBRARY, ...
  std::string LinkLanguage; // CXX, C, CUDA, ...; empty for non-linked targets
  std::vector<std::string> Sources; // the sources it compiles
  std::vector<std::string> Objects; // object files it links as sources
  /// Link fragments of roles "flags", "libraryPath" and "frameworkPath", as
  /// the shell reads them: they come before the objects.
  std::vector<std::string> LinkFlags;
  /// Link fragments of role "libraries", one argument each, in order:
  /// relative library paths are made absolute.
  std::vector<std::string> LinkLibraries;
  std::vector<CMakeDependency> Dependencies;
};

/// Path made absolute against Directory (the reply's paths are relative to
/// the source or build dir, a compile command's to its directory).
std::string absolutePathIn(llvm::StringRef Directory, llvm::StringRef Path);

/// Where skyline-check's codemodel-v2 query lives in BuildDir.
std::string codemodelQueryPath(llvm::StringRef BuildDir);

/// Writes the (empty) query file; CMake answers it at its next configure.
llvm::Error writeCodemodelQuery(llvm::StringRef BuildDir);

/// The index file of BuildDir's latest reply, if it holds a codemodel-v2
/// and is not older than CMakeCache.txt (a reply older than the cache may
/// describe an earlier configuration).
std::optional<std::string> freshCodemodelReply(llvm::StringRef BuildDir);

/// From the reply that IndexFile names: the target that compiles the most of
/// Sources (absolute paths), an executable ahead of any other.
llvm::Expected<CMakeTarget>
readTargetWithSource(llvm::StringRef IndexFile,
                     llvm::ArrayRef<std::string> Sources);

/// The C++ sources Target compiles beyond Given, in the target's order: the
/// rest of the program when only its main source was named. Other languages
/// are left to the note on what the target does that the copy does not.
std::vector<std::string> otherSources(const CMakeTarget &Target,
                                      llvm::ArrayRef<std::string> Given);

/// All of it: writes the query, re-configures BuildDir when it has no fresh
/// reply (saying so on Progress, the output in LogPath), and reads the
/// target. Fails when BuildDir is not a CMake build dir, CMake fails or no
/// target compiles Sources.
llvm::Expected<CMakeTarget> loadCMakeTarget(llvm::StringRef BuildDir,
                                            llvm::ArrayRef<std::string> Sources,
                                            llvm::StringRef LogPath,
                                            llvm::raw_ostream &Progress);

} // namespace skyline

#endif // SKYLINE_CMAKEFILEAPI_H
