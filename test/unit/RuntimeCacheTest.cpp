// The runtime cache: where it lives, what its key depends on, that a
// complete entry is used as it is and a failed compile leaves no entry. The
// compile itself, and an instrumented program linking the cached objects,
// are tested end to end by test/lit/examples/runtime-cache.test.

#include "skyline/RuntimeCache.h"

#include "skyline/FileHash.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace skyline;

namespace {

/// Sets (or, with nullopt, unsets) an environment variable for a scope.
class ScopedEnv {
public:
  ScopedEnv(const char *Name, std::optional<std::string> Value) : Name(Name) {
    if (const char *Old = std::getenv(Name))
      Saved = Old;
    if (Value)
      setenv(Name, Value->c_str(), 1);
    else
      unsetenv(Name);
  }
  ~ScopedEnv() {
    if (Saved)
      setenv(Name, Saved->c_str(), 1);
    else
      unsetenv(Name);
  }

private:
  const char *Name;
  std::optional<std::string> Saved;
};

std::string tempDir() {
  llvm::SmallString<128> Dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("runtime-cache", Dir));
  return std::string(Dir);
}

TEST(RuntimeCacheTest, RootFollowsTheEnvironment) {
  ScopedEnv Xdg("XDG_CACHE_HOME", "/x/cache");
  ScopedEnv Home("HOME", "/home/u");
  {
    ScopedEnv Explicit("SKYLINE_CACHE_DIR", "/c");
    EXPECT_EQ(runtimeCacheRoot(), "/c");
  }
  {
    ScopedEnv Off("SKYLINE_CACHE_DIR", "");
    EXPECT_EQ(runtimeCacheRoot(), "") << "set but empty: no cache";
  }
  {
    // The project names the objects from another directory: never relative.
    ScopedEnv Relative("SKYLINE_CACHE_DIR", "rel/cache");
    llvm::SmallString<128> Here;
    ASSERT_FALSE(llvm::sys::fs::current_path(Here));
    EXPECT_EQ(runtimeCacheRoot(), (Here + "/rel/cache").str());
  }
  ScopedEnv Unset("SKYLINE_CACHE_DIR", std::nullopt);
  EXPECT_EQ(runtimeCacheRoot(), "/x/cache/skyline-check");
  {
    ScopedEnv NoXdg("XDG_CACHE_HOME", std::nullopt);
    EXPECT_EQ(runtimeCacheRoot(), "/home/u/.cache/skyline-check");
    ScopedEnv NoHome("HOME", std::nullopt);
    EXPECT_EQ(runtimeCacheRoot(), "");
  }
}

TEST(RuntimeCacheTest, TheKeyChangesWithWhatDecidesTheObjects) {
  ScopedEnv Cxx("CXX", std::nullopt);
  ScopedEnv Flags("CXXFLAGS", std::nullopt);
  std::string Base = runtimeCacheKey("/opt/libtorch/share/cmake/Torch");
  EXPECT_EQ(Base.size(), 64u);
  EXPECT_EQ(runtimeCacheKey("/opt/libtorch/share/cmake/Torch"), Base)
      << "the same inputs give the same key";
  EXPECT_NE(runtimeCacheKey("/opt/other/share/cmake/Torch"), Base);
  {
    ScopedEnv Debug("CXXFLAGS", "-O0 -g");
    EXPECT_NE(runtimeCacheKey("/opt/libtorch/share/cmake/Torch"), Base);
  }
  ScopedEnv Clang("CXX", "clang++-19");
  EXPECT_NE(runtimeCacheKey("/opt/libtorch/share/cmake/Torch"), Base);
}

/// Entry as prepareRuntime leaves it: an object of Text for each runtime
/// source, and the manifest of their names, sizes and SHA-256s.
void writeEntry(const std::string &Entry, const std::string &Text = "obj") {
  ASSERT_FALSE(llvm::sys::fs::create_directories(Entry));
  std::string Manifest;
  for (llvm::StringRef Source : runtimeSources()) {
    std::string Name = llvm::sys::path::stem(Source).str() + ".o";
    std::ofstream(Entry + "/" + Name) << Text;
    Manifest +=
        Name + " " + std::to_string(Text.size()) + " " + sha256Hex(Text) + "\n";
  }
  std::ofstream(Entry + "/manifest") << Manifest;
}

std::string entryOf(const std::string &Root, const std::string &Torch) {
  return Root + "/runtime/" + runtimeCacheKey(Torch).substr(0, 24);
}

TEST(RuntimeCacheTest, ACompleteEntryIsUsedAsItIs) {
  std::string Root = tempDir();
  std::string Torch = "/nonexistent/libtorch/share/cmake/Torch";
  std::string Entry = entryOf(Root, Torch);
  writeEntry(Entry);
  std::string Notes;
  llvm::raw_string_ostream Progress(Notes);
  auto Runtime = prepareRuntime(Torch, Root, Progress);
  ASSERT_TRUE(bool(Runtime)) << llvm::toString(Runtime.takeError());
  EXPECT_FALSE(Runtime->Compiled);
  EXPECT_EQ(Runtime->Directory, Entry);
  ASSERT_EQ(Runtime->Objects.size(), runtimeSources().size());
  EXPECT_EQ(Runtime->Objects[1], Entry + "/Runtime.o");
  EXPECT_EQ(Runtime->TorchSettings, "")
      << "an entry without Torch settings: the project finds LibTorch";
  EXPECT_EQ(Notes, "") << "nothing compiled, nothing said";

  std::ofstream(Entry + "/torch-settings.cmake");
  auto WithSettings = prepareRuntime(Torch, Root, Progress);
  ASSERT_TRUE(bool(WithSettings)) << llvm::toString(WithSettings.takeError());
  EXPECT_EQ(WithSettings->TorchSettings, Entry + "/torch-settings.cmake");
  llvm::sys::fs::remove_directories(Root);
}

TEST(RuntimeCacheTest, AFailedCompileLeavesNoEntry) {
  // No LibTorch there: CMake's find_package fails at once.
  std::string Root = tempDir();
  std::string Torch = Root + "/no-torch";
  std::string Notes;
  llvm::raw_string_ostream Progress(Notes);
  auto Runtime = prepareRuntime(Torch, Root, Progress);
  ASSERT_FALSE(bool(Runtime));
  EXPECT_NE(
      llvm::toString(Runtime.takeError()).find("compiling the runtime failed"),
      std::string::npos);
  EXPECT_NE(Notes.find("compiling skyline's runtime once"), std::string::npos);
  std::error_code EC;
  unsigned Entries = 0;
  for (llvm::sys::fs::directory_iterator It(Root + "/runtime", EC), End;
       It != End && !EC; It.increment(EC))
    if (!llvm::StringRef(It->path()).ends_with(".lock"))
      ++Entries;
  EXPECT_EQ(Entries, 0u) << "no entry and no scratch directory";
  llvm::sys::fs::remove_directories(Root);
}

/// A damaged entry is never linked: it is compiled again (here that fails,
/// no LibTorch being there, which shows it was not taken as it was).
TEST(RuntimeCacheTest, ADamagedEntryIsCompiledAgainNotLinked) {
  std::string Torch = "/nonexistent/libtorch/share/cmake/Torch";
  struct Damage {
    const char *Name;
    std::function<void(const std::string &)> Do;
    const char *Said;
  };
  const Damage Damages[] = {
      {"truncated object",
       [](const std::string &Entry) {
         std::ofstream(Entry + "/Runtime.o") << "ob";
       },
       "an object is not as it was compiled (truncated or changed)"},
      {"object with code added",
       [](const std::string &Entry) {
         std::ofstream(Entry + "/Runtime.o", std::ios::app) << "evil";
       },
       "an object is not as it was compiled (truncated or changed)"},
      {"missing object",
       [](const std::string &Entry) {
         llvm::sys::fs::remove(Entry + "/Cupti.o");
       },
       "Cupti.o is missing"},
      {"no manifest",
       [](const std::string &Entry) {
         llvm::sys::fs::remove(Entry + "/manifest");
       },
       "it has no manifest"},
      {"object writable by others",
       [](const std::string &Entry) {
         ::chmod((Entry + "/Runtime.o").c_str(), 0666);
       },
       "is writable by everyone"}};
  for (const Damage &D : Damages) {
    SCOPED_TRACE(D.Name);
    std::string Root = tempDir();
    std::string Entry = entryOf(Root, Torch);
    writeEntry(Entry);
    D.Do(Entry);
    std::string Notes;
    llvm::raw_string_ostream Progress(Notes);
    auto Runtime = prepareRuntime(Torch, Root, Progress);
    ASSERT_FALSE(bool(Runtime)) << "a damaged entry was used";
    EXPECT_NE(llvm::toString(Runtime.takeError())
                  .find("compiling the runtime failed"),
              std::string::npos);
    EXPECT_NE(Notes.find("the cached runtime in " + Entry + " is damaged ("),
              std::string::npos)
        << Notes;
    EXPECT_NE(Notes.find(D.Said), std::string::npos) << Notes;
    EXPECT_FALSE(llvm::sys::fs::exists(Entry)) << "the damaged entry is gone";
    llvm::sys::fs::remove_directories(Root);
  }
}

TEST(RuntimeCacheTest, ANewCacheIsPrivate) {
  std::string Parent = tempDir();
  std::string Root = Parent + "/cache";
  std::string Torch = "/nonexistent/libtorch/share/cmake/Torch";
  std::string Notes;
  llvm::raw_string_ostream Progress(Notes);
  llvm::consumeError(prepareRuntime(Torch, Root, Progress).takeError());
  for (const std::string &Dir : {Root, Root + "/runtime"}) {
    struct stat Status;
    ASSERT_EQ(::stat(Dir.c_str(), &Status), 0) << Dir;
    EXPECT_EQ(Status.st_mode & 077, 0u) << Dir << " is open to others";
  }
  llvm::sys::fs::remove_directories(Parent);
}

TEST(RuntimeCacheTest, ACacheOthersCanWriteIsNotUsed) {
  std::string Root = tempDir();
  std::string Torch = "/nonexistent/libtorch/share/cmake/Torch";
  writeEntry(entryOf(Root, Torch));
  ASSERT_EQ(::chmod(Root.c_str(), 0777), 0);
  std::string Notes;
  llvm::raw_string_ostream Progress(Notes);
  auto Runtime = prepareRuntime(Torch, Root, Progress);
  ASSERT_FALSE(bool(Runtime));
  EXPECT_EQ(llvm::toString(Runtime.takeError()),
            "cache directory '" + Root +
                "' is writable by everyone: another user could put code in "
                "it; remove it, or set SKYLINE_CACHE_DIR to a directory of "
                "your own");
  llvm::sys::fs::remove_directories(Root);
}

TEST(RuntimeCacheTest, ACacheAnotherUserOwnsIsNotUsed) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "making a directory another user owns needs root";
  std::string Root = tempDir();
  std::string Torch = "/nonexistent/libtorch/share/cmake/Torch";
  writeEntry(entryOf(Root, Torch));
  ASSERT_EQ(::chown(Root.c_str(), 65534, 65534), 0);
  std::string Notes;
  llvm::raw_string_ostream Progress(Notes);
  auto Runtime = prepareRuntime(Torch, Root, Progress);
  ASSERT_FALSE(bool(Runtime));
  EXPECT_EQ(llvm::toString(Runtime.takeError()),
            "cache directory '" + Root +
                "' is owned by uid 65534, not by you (uid 0): another user "
                "could put code in it; remove it, or set SKYLINE_CACHE_DIR to "
                "a directory of your own");
  llvm::sys::fs::remove_directories(Root);
}

} // namespace
