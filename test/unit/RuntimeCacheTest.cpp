// The runtime cache: where it lives, what its key depends on, that a
// complete entry is used as it is and a failed compile leaves no entry. The
// compile itself, and an instrumented program linking the cached objects,
// are tested end to end by test/lit/examples/runtime-cache.test.

#include "skyline/RuntimeCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

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

TEST(RuntimeCacheTest, ACompleteEntryIsUsedAsItIs) {
  std::string Root = tempDir();
  std::string Torch = "/nonexistent/libtorch/share/cmake/Torch";
  std::string Entry = Root + "/runtime/" + runtimeCacheKey(Torch).substr(0, 24);
  ASSERT_FALSE(llvm::sys::fs::create_directories(Entry));
  for (llvm::StringRef Source : runtimeSources())
    std::ofstream(Entry + "/" + llvm::sys::path::stem(Source).str() + ".o");
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

} // namespace
