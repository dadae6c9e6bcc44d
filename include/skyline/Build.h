//===- Build.h - Building the instrumented program --------------*- C++ -*-===//
//
// The third stage: a generated CMake + Ninja project in the work directory
// that compiles the mirrored sources with the program's own flags (from the
// compilation database, the mirror's include paths first) and skyline's
// runtime sources, against the user's LibTorch. It links like the user's own
// target when the CMake File API describes it (CMakeFileAPI.h), else with
// LibTorch and --link-arg alone. The runtime comes compiled from a cache
// shared by every work directory (RuntimeCache.h). Ninja's own dependency
// tracking is the cache of the program's sources: unchanged sources compile
// nothing. No precompiled header: measured,
// it makes a cold build slower (docs/performance.md, utils/bench-build).
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_BUILD_H
#define SKYLINE_BUILD_H

#include "skyline/CMakeFileAPI.h"
#include "skyline/Instrument.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
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

struct BuildOptions {
  std::string WorkDir;
  std::string TorchDir;  // --torch-dir; empty: the build dir's, else ours
  std::string BuildPath; // -p: its CMakeCache.txt and CMake File API reply
  std::vector<std::string> LinkArgs;
  /// The user's target when the caller has read it already (the driver does,
  /// to find the program's other sources); else read here.
  std::optional<CMakeTarget> Target;
  /// Why the caller could not read it: then it is not tried again.
  std::string NoTargetReason;
  /// The runtime's objects, compiled once (RuntimeCache.h): linked instead
  /// of compiling the runtime's sources with the program. Empty: buildProgram
  /// takes them from the cache, or compiles the sources where there is none.
  std::vector<std::string> RuntimeObjects;
  /// What find_package(Torch) found when the runtime was compiled
  /// (CachedRuntime::TorchSettings): included instead of finding LibTorch
  /// again where the user's target gives the link line, which saves the
  /// configure most of its time (CUDA's detection). Empty: find_package.
  std::string TorchSettings;
};

struct BuiltProgram {
  std::string Executable;
  std::string TorchDir;
  bool Recompiled = false; // false: everything came from the cache
  double Seconds = 0;
};

/// The flags of the generated project, from the sources' compile commands.
struct ProjectFlags {
  std::vector<std::string> MirrorIncludes; // -I dirs mapped into the mirror
  std::vector<std::string> Includes;       // other -I dirs
  std::vector<std::string> SystemIncludes; // -isystem dirs
  std::vector<std::string> Definitions;    // NAME or NAME=value
  std::string Standard = "17";
  /// Each mirrored source's other options, from its own compile command
  /// (forced includes, warnings, features), as words, by mirror path.
  std::map<std::string, std::vector<std::string>> SourceOptions;
};
ProjectFlags projectFlags(const clang::tooling::CompilationDatabase &DB,
                          const ProgramModel &Model,
                          const InstrumentedProgram &Program);

/// LibTorch's CMake directory: Explicit, else Torch_DIR of BuildPath's
/// CMakeCache.txt, else the one skyline-check was built with.
llvm::Expected<std::string> findTorchDir(llvm::StringRef Explicit,
                                         llvm::StringRef BuildPath);

/// The generated project's CMakeLists.txt; Progress gets the notes on how
/// it links (buildProgram writes it to WorkDir/project and builds it).
llvm::Expected<std::string> generateProject(const InstrumentedProgram &Program,
                                            const ProjectFlags &Flags,
                                            const BuildOptions &Options,
                                            llvm::raw_ostream &Progress);

/// Below this much free space a build fails in ways that name something
/// else (CMake's "CUDA compiler identification failed", a truncated object).
constexpr uint64_t MinFreeBuildBytes = uint64_t(256) << 20;

/// Failure, or, where the disk holding WorkDir has less than
/// MinFreeBuildBytes free, an error that says the disk is full.
llvm::Error explainBuildFailure(llvm::StringRef WorkDir, llvm::Error Failure);

llvm::Expected<BuiltProgram> buildProgram(const InstrumentedProgram &Program,
                                          const ProjectFlags &Flags,
                                          const BuildOptions &Options,
                                          llvm::raw_ostream &Progress);

} // namespace skyline

#endif // SKYLINE_BUILD_H
