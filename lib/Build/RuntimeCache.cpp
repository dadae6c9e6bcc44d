//===- RuntimeCache.cpp - The runtime compiled once -----------------------===//

#include "skyline/RuntimeCache.h"

#include "skyline/Config.h"
#include "skyline/FileHash.h"
#include "skyline/FileOwnership.h"
#include "skyline/OutputFiles.h"
#include "skyline/Process.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace skyline {

llvm::ArrayRef<const char *> runtimeSources() {
  static const char *const Sources[] = {
      "MemoryTracker.cpp",    "Runtime.cpp",     "RunResult.cpp",
      "TensorAccounting.cpp", "GpuActivity.cpp", "Cupti.cpp",
      "CudaSupport.cpp"};
  return Sources;
}

namespace {

constexpr const char *TorchSettingsFile = "torch-settings.cmake";
/// Each object's name, size and SHA-256, written last into a new entry: an
/// object truncated or replaced since is found before it is linked.
constexpr const char *ManifestFile = "manifest";
/// An object larger than this is no runtime object.
constexpr uint64_t MaxObjectBytes = uint64_t(1) << 30;

/// Dir made absolute: the instrumented project, in another directory,
/// names the objects by these paths.
std::string absolute(std::string Dir) {
  llvm::SmallString<256> Path(Dir);
  if (!Dir.empty())
    llvm::sys::fs::make_absolute(Path);
  return std::string(Path);
}

} // namespace

std::string runtimeCacheRoot() {
  if (const char *Explicit = std::getenv("SKYLINE_CACHE_DIR"))
    return absolute(Explicit);
  if (const char *Xdg = std::getenv("XDG_CACHE_HOME"); Xdg && *Xdg)
    return absolute(std::string(Xdg) + "/skyline-check");
  if (const char *Home = std::getenv("HOME"); Home && *Home)
    return absolute(std::string(Home) + "/.cache/skyline-check");
  return "";
}

std::string preambleDirectory() {
  std::string Root = runtimeCacheRoot();
  if (Root.empty())
    return Root;
  // Preambles are read into every parse: none from a directory another
  // user can write.
  std::string Preambles = Root + "/preamble";
  for (const std::string &Dir : {Root, Preambles})
    if (llvm::Error E = makePrivateDirectory(Dir, "cache directory")) {
      llvm::consumeError(std::move(E));
      return "";
    }
  return Preambles;
}

namespace {

std::string realPath(llvm::StringRef Path) {
  llvm::SmallString<256> Real;
  if (llvm::sys::fs::real_path(Path, Real))
    return Path.str();
  return std::string(Real);
}

std::string fileText(llvm::StringRef Path) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  return Buffer ? (*Buffer)->getBuffer().str() : "";
}

/// The runtime's headers, in a stable order.
std::vector<std::string> runtimeHeaders() {
  std::vector<std::string> Headers;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator
           It(std::string(SKYLINE_INCLUDE_DIR) + "/skyline/runtime", EC),
       End;
       It != End && !EC; It.increment(EC))
    if (llvm::StringRef(It->path()).ends_with(".h"))
      Headers.push_back(It->path());
  llvm::sort(Headers);
  return Headers;
}

/// What CMake's compiler detection will find: $CXX, else c++ on PATH.
std::string compilerIdentity() {
  if (const char *Cxx = std::getenv("CXX"); Cxx && *Cxx)
    return std::string("CXX=") + Cxx;
  auto Found = llvm::sys::findProgramByName("c++");
  return Found ? realPath(*Found) : "no c++";
}

/// An exclusive flock() on Path, waited for up to WaitSeconds; -1 on
/// failure. The kernel drops it when the process ends, however it ends.
int lockFile(const std::string &Path, unsigned WaitSeconds) {
  int Fd = ::open(Path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (Fd < 0)
    return -1;
  auto Until =
      std::chrono::steady_clock::now() + std::chrono::seconds(WaitSeconds);
  while (::flock(Fd, LOCK_EX | LOCK_NB) != 0) {
    if (std::chrono::steady_clock::now() >= Until) {
      ::close(Fd);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Fd;
}

/// The entry's Torch settings; empty in an older entry without them.
std::string torchSettings(const std::string &Directory) {
  std::string Path = Directory + "/" + TorchSettingsFile;
  return llvm::sys::fs::is_regular_file(Path) ? Path : "";
}

std::string objectOf(llvm::StringRef Source) {
  return llvm::sys::path::stem(Source).str() + ".o";
}

/// The manifest of the objects in Directory.
llvm::Expected<std::string> manifestOf(const std::string &Directory) {
  std::string Manifest;
  for (llvm::StringRef Source : runtimeSources()) {
    std::string Object = Directory + "/" + objectOf(Source);
    uint64_t Size = 0;
    std::optional<std::string> Digest = sha256OfFile(Object, MaxObjectBytes);
    if (!Digest || llvm::sys::fs::file_size(Object, Size))
      return llvm::createStringError(std::errc::io_error, "cannot read %s",
                                     Object.c_str());
    Manifest +=
        objectOf(Source) + " " + std::to_string(Size) + " " + *Digest + "\n";
  }
  return Manifest;
}

/// What is wrong with the entry in Directory, in a few words; empty when it
/// is complete and whole: every object the user's own, writable by no one
/// else, and as the manifest written with it says.
std::string entryProblem(const std::string &Directory) {
  if (llvm::Error E = checkPrivate(Directory, "cache entry"))
    return llvm::toString(std::move(E));
  std::string ManifestPath = Directory + "/" + ManifestFile;
  if (!llvm::sys::fs::is_regular_file(ManifestPath))
    return "it has no manifest";
  if (llvm::Error E = checkPrivate(ManifestPath, "manifest"))
    return llvm::toString(std::move(E));
  for (llvm::StringRef Source : runtimeSources()) {
    std::string Object = Directory + "/" + objectOf(Source);
    if (!llvm::sys::fs::is_regular_file(Object))
      return objectOf(Source) + " is missing";
    if (llvm::Error E = checkPrivate(Object, "cached object"))
      return llvm::toString(std::move(E));
  }
  auto Manifest = manifestOf(Directory);
  if (!Manifest)
    return llvm::toString(Manifest.takeError());
  auto Written = llvm::MemoryBuffer::getFile(ManifestPath);
  if (!Written || (*Written)->getBuffer() != *Manifest)
    return "an object is not as it was compiled (truncated or changed)";
  return "";
}

bool entryExists(const std::string &Directory) {
  return llvm::sys::fs::exists(Directory);
}

/// The objects of a complete entry.
std::vector<std::string> objectsIn(const std::string &Directory) {
  std::vector<std::string> Objects;
  for (llvm::StringRef Source : runtimeSources())
    Objects.push_back(Directory + "/" + objectOf(Source));
  return Objects;
}

std::string projectText() {
  std::string Project;
  llvm::raw_string_ostream Out(Project);
  Out << "# Generated by skyline-check: its runtime, compiled once.\n"
      << "cmake_minimum_required(VERSION 3.18)\n"
      << "project(skyline_runtime CXX)\n"
      << "find_package(Torch REQUIRED)\n"
      << "add_library(skyline_runtime OBJECT";
  for (llvm::StringRef Source : runtimeSources())
    Out << "\n  \"" << SKYLINE_RUNTIME_SOURCE_DIR << "/" << Source << "\"";
  Out << ")\n"
      << "target_include_directories(skyline_runtime PRIVATE \""
      << SKYLINE_INCLUDE_DIR << "\")\n"
      << "target_include_directories(skyline_runtime SYSTEM PRIVATE "
         "${TORCH_INCLUDE_DIRS})\n"
      << "if(TORCH_CXX_FLAGS)\n"
      << "  target_compile_options(skyline_runtime PRIVATE "
         "${TORCH_CXX_FLAGS})\n"
      << "endif()\n"
      // As the instrumented project compiles them: c10/cuda only against a
      // LibTorch with CUDA.
      << "if(TORCH_CUDA_LIBRARIES)\n"
      << "  target_compile_definitions(skyline_runtime PRIVATE "
         "SKYLINE_WITH_CUDA)\n"
      << "endif()\n"
      << "set_target_properties(skyline_runtime PROPERTIES CXX_STANDARD 17 "
         "POSITION_INDEPENDENT_CODE ON)\n"
      // What an instrumented project linking like the user's target needs
      // of find_package(Torch), which spends most of a configure detecting
      // CUDA: kept with the objects (TorchSettingsFile).
      << "file(WRITE \"${CMAKE_BINARY_DIR}/" << TorchSettingsFile << "\"\n"
      << "  \"set(TORCH_INCLUDE_DIRS \\\"${TORCH_INCLUDE_DIRS}\\\")\\n\"\n"
      << "  \"set(TORCH_CXX_FLAGS \\\"${TORCH_CXX_FLAGS}\\\")\\n\"\n"
      << "  \"set(TORCH_CUDA_LIBRARIES "
         "\\\"${TORCH_CUDA_LIBRARIES}\\\")\\n\")\n";
  return Project;
}

/// Copies the object CMake made of each runtime source, and the Torch
/// settings, into Into.
llvm::Error collectObjects(const std::string &BuildDir,
                           const std::string &Into) {
  std::string Settings = BuildDir + "/" + TorchSettingsFile;
  if (std::error_code Copy =
          llvm::sys::fs::copy_file(Settings, Into + "/" + TorchSettingsFile))
    return llvm::createStringError(Copy, "cannot copy %s: %s", Settings.c_str(),
                                   Copy.message().c_str());
  std::error_code EC;
  std::vector<std::string> Found;
  for (llvm::sys::fs::recursive_directory_iterator It(BuildDir, EC), End;
       It != End && !EC; It.increment(EC))
    if (llvm::StringRef(It->path()).ends_with(".o"))
      Found.push_back(It->path());
  for (llvm::StringRef Source : runtimeSources()) {
    std::string Suffix = "/" + Source.str() + ".o";
    auto Object = llvm::find_if(Found, [&](const std::string &Path) {
      return llvm::StringRef(Path).ends_with(Suffix);
    });
    if (Object == Found.end())
      return llvm::createStringError(std::errc::no_such_file_or_directory,
                                     "no object of %s in %s",
                                     Source.str().c_str(), BuildDir.c_str());
    std::string Target =
        Into + "/" + llvm::sys::path::stem(Source).str() + ".o";
    if (std::error_code Copy = llvm::sys::fs::copy_file(*Object, Target))
      return llvm::createStringError(Copy, "cannot copy %s to %s: %s",
                                     Object->c_str(), Target.c_str(),
                                     Copy.message().c_str());
  }
  auto Manifest = manifestOf(Into);
  if (!Manifest)
    return Manifest.takeError();
  return writeFileAtomically(Into + "/" + ManifestFile, *Manifest);
}

/// Compiles the runtime in Scratch and leaves its objects there.
llvm::Error compileRuntime(llvm::StringRef TorchDir, const std::string &Scratch,
                           double &Seconds) {
  std::string ProjectDir = Scratch + "/project";
  std::string BuildDir = Scratch + "/build";
  std::string Log = Scratch + "/build.log";
  if (std::error_code EC = llvm::sys::fs::create_directories(ProjectDir))
    return llvm::createStringError(EC, "cannot create %s: %s",
                                   ProjectDir.c_str(), EC.message().c_str());
  if (llvm::Error E =
          writeFileAtomically(ProjectDir + "/CMakeLists.txt", projectText()))
    return E;
  ProcessResult Configure = runProcess(
      {"cmake", "-S", ProjectDir, "-B", BuildDir, "-G", "Ninja",
       "-DCMAKE_BUILD_TYPE=Release", "-DTorch_DIR=" + TorchDir.str()},
      "", {}, Log, 600);
  Seconds += Configure.Seconds;
  ProcessResult Compile;
  if (Configure.ExitCode == 0) {
    Compile = runProcess({"ninja", "-C", BuildDir}, "", {}, Log, 3600);
    Seconds += Compile.Seconds;
  }
  if (Configure.ExitCode != 0 || Compile.ExitCode != 0)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "compiling the runtime failed (%s):\n%s",
                                   Log.c_str(), tailOfFile(Log, 10).c_str());
  return collectObjects(BuildDir, Scratch);
}

} // namespace

TorchIdentity torchIdentity(llvm::StringRef TorchDir) {
  TorchIdentity Identity;
  Identity.Directory = realPath(TorchDir);
  Identity.VersionHeader =
      fileText(Identity.Directory + "/../../../include/torch/version.h");
  return Identity;
}

std::string runtimeCacheKey(llvm::StringRef TorchDir) {
  CacheKey Key;
  auto Add = [&](llvm::StringRef Name, llvm::StringRef Value) {
    Key.add(Name, Value);
  };
  for (llvm::StringRef Source : runtimeSources()) {
    std::string Path =
        std::string(SKYLINE_RUNTIME_SOURCE_DIR) + "/" + Source.str();
    Add(Path, fileText(Path));
  }
  for (const std::string &Header : runtimeHeaders())
    Add(Header, fileText(Header));
  // What the entry holds follows the project (the Torch settings came later).
  Add("project", projectText());
  TorchIdentity Torch = torchIdentity(TorchDir);
  Add("torch", Torch.Directory);
  Add("torch version", Torch.VersionHeader);
  Add("compiler", compilerIdentity());
  const char *Flags = std::getenv("CXXFLAGS");
  Add("CXXFLAGS", Flags ? Flags : "");
  return Key.hex();
}

llvm::Expected<CachedRuntime> prepareRuntime(llvm::StringRef TorchDir,
                                             llvm::StringRef CacheRoot,
                                             llvm::raw_ostream &Progress,
                                             unsigned WaitSeconds) {
  CachedRuntime Runtime;
  std::string Entries = CacheRoot.str() + "/runtime";
  std::string Key = runtimeCacheKey(TorchDir).substr(0, 24);
  Runtime.Directory = Entries + "/" + Key;
  // Its objects are linked into the user's program: only from directories
  // no other user can write.
  for (const std::string &Dir : {CacheRoot.str(), Entries})
    if (llvm::Error E = makePrivateDirectory(Dir, "cache directory"))
      return llvm::createStringError(
          std::errc::permission_denied,
          "%s; remove it, or set SKYLINE_CACHE_DIR to a directory of your own",
          llvm::toString(std::move(E)).c_str());
  if (entryExists(Runtime.Directory) &&
      entryProblem(Runtime.Directory).empty()) {
    Runtime.Objects = objectsIn(Runtime.Directory);
    Runtime.TorchSettings = torchSettings(Runtime.Directory);
    return Runtime;
  }
  auto Start = std::chrono::steady_clock::now();
  int Lock = lockFile(Runtime.Directory + ".lock", WaitSeconds);
  if (Lock < 0)
    return llvm::createStringError(
        std::errc::resource_unavailable_try_again,
        "%s.lock is held by another skyline-check compiling the runtime",
        Runtime.Directory.c_str());
  auto Unlock = llvm::make_scope_exit([&] { ::close(Lock); });
  // Another process may have compiled it while this one waited.
  if (entryExists(Runtime.Directory)) {
    std::string Problem = entryProblem(Runtime.Directory);
    if (Problem.empty()) {
      Runtime.Objects = objectsIn(Runtime.Directory);
      Runtime.TorchSettings = torchSettings(Runtime.Directory);
      Runtime.Seconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - Start)
                            .count();
      return Runtime;
    }
    if (!ownedByCurrentUser(Runtime.Directory))
      return llvm::createStringError(std::errc::permission_denied, "%s",
                                     Problem.c_str());
    Progress << "skyline-check: note: the cached runtime in "
             << Runtime.Directory << " is damaged (" << Problem
             << "); compiling it again\n";
  }
  Progress << "skyline-check: compiling skyline's runtime once for this "
              "LibTorch and compiler (cached in "
           << Runtime.Directory << ")\n";
  std::string Scratch =
      Runtime.Directory + ".tmp-" + std::to_string(::getpid());
  llvm::sys::fs::remove_directories(Scratch);
  llvm::sys::fs::remove_directories(Runtime.Directory); // an incomplete one
  llvm::Error Compiled = compileRuntime(TorchDir, Scratch, Runtime.Seconds);
  if (!Compiled) {
    llvm::sys::fs::remove_directories(Scratch + "/build");
    llvm::sys::fs::remove_directories(Scratch + "/project");
    if (std::error_code EC = llvm::sys::fs::rename(Scratch, Runtime.Directory))
      Compiled = llvm::createStringError(
          EC, "cannot rename %s to %s: %s", Scratch.c_str(),
          Runtime.Directory.c_str(), EC.message().c_str());
  }
  if (Compiled) {
    llvm::sys::fs::remove_directories(Scratch);
    return std::move(Compiled);
  }
  std::string Problem = entryProblem(Runtime.Directory);
  if (!Problem.empty())
    return llvm::createStringError(std::errc::no_such_file_or_directory,
                                   "the runtime compiled into %s: %s",
                                   Runtime.Directory.c_str(), Problem.c_str());
  Runtime.Compiled = true;
  Runtime.Objects = objectsIn(Runtime.Directory);
  Runtime.TorchSettings = torchSettings(Runtime.Directory);
  return Runtime;
}

} // namespace skyline
