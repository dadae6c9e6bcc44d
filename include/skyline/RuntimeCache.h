//===- RuntimeCache.h - The runtime compiled once ---------------*- C++ -*-===//
//
// skyline's runtime (lib/Runtime) is the same in every instrumented program
// built against one LibTorch with one compiler, yet it took more than half
// of a cold instrumented build (about 70 of 110 CPU-seconds for mnist). It
// is compiled once into a cache that every work directory shares, keyed by
// what decides its object files: the runtime's sources and headers, the
// LibTorch (its directory and version header), the C++ compiler and
// CXXFLAGS. The instrumented project then links those objects, all of them,
// as if it had compiled them itself.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIMECACHE_H
#define SKYLINE_RUNTIMECACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace skyline {

/// The runtime's sources, in lib/Runtime.
llvm::ArrayRef<const char *> runtimeSources();

/// Where the cache lives: $SKYLINE_CACHE_DIR, else
/// $XDG_CACHE_HOME/skyline-check, else $HOME/.cache/skyline-check. Empty
/// (no cache: the runtime compiles with the program) when SKYLINE_CACHE_DIR
/// is set but empty, or none of them is set.
std::string runtimeCacheRoot();

/// Where precompiled preambles are kept (Preamble.h): `preamble/` in the
/// cache; empty without a cache.
std::string preambleDirectory();

/// What tells one LibTorch from another: its CMake directory's real path
/// and the text of its include/torch/version.h (empty when unreadable).
/// The runtime's key and a measurement's (MeasurementStore.h) use it.
struct TorchIdentity {
  std::string Directory;
  std::string VersionHeader;
};
TorchIdentity torchIdentity(llvm::StringRef TorchDir);

/// The cache key of the runtime built against TorchDir: the SHA-256 of the
/// runtime's files and of what the compiler would be given, in hex.
std::string runtimeCacheKey(llvm::StringRef TorchDir);

struct CachedRuntime {
  std::vector<std::string> Objects; // one per runtime source
  std::string Directory;            // CacheRoot/runtime/<key>
  /// A CMake script setting TORCH_INCLUDE_DIRS, TORCH_CXX_FLAGS and
  /// TORCH_CUDA_LIBRARIES as find_package(Torch) set them for the runtime;
  /// empty in an entry made before it was written.
  std::string TorchSettings;
  bool Compiled = false; // by this call; else it was there
  double Seconds = 0;    // spent compiling or waiting
};

/// The runtime's object files for TorchDir, compiled into CacheRoot first if
/// they are not there. Another skyline-check compiling the same key is
/// waited for (at most WaitSeconds); an entry appears only once complete, so
/// an interrupted build leaves none. An error says why (the caller then
/// compiles the runtime with the program).
llvm::Expected<CachedRuntime> prepareRuntime(llvm::StringRef TorchDir,
                                             llvm::StringRef CacheRoot,
                                             llvm::raw_ostream &Progress,
                                             unsigned WaitSeconds = 900);

} // namespace skyline

#endif // SKYLINE_RUNTIMECACHE_H
