// Where compile commands come from: `--` flags, -p DIR, or the fallback.

#include "skyline/CompilationSetup.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace skyline;

namespace {

std::vector<std::string> commandFor(const CompilationSetup &Setup, llvm::StringRef File) {
  auto Commands = Setup.Database->getCompileCommands(File);
  return Commands.empty() ? std::vector<std::string>() : Commands.front().CommandLine;
}

bool contains(const std::vector<std::string> &Args, llvm::StringRef Arg) {
  return std::find(Args.begin(), Args.end(), Arg) != Args.end();
}

TEST(CompilationSetupTest, FlagsAfterDoubleDash) {
  auto Setup = loadCompilationSetup("", std::vector<std::string>{"-std=c++20", "-DX=1"},
                                    {"a.cpp"});
  ASSERT_TRUE(bool(Setup));
  EXPECT_TRUE(Setup->Warnings.empty());
  auto Args = commandFor(*Setup, "a.cpp");
  EXPECT_TRUE(contains(Args, "-std=c++20"));
  EXPECT_TRUE(contains(Args, "-DX=1"));
}

TEST(CompilationSetupTest, FallbackUsesTorchHeadersAndWarns) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("/tmp/skyline-nodb", Dir));
  std::string Source = (Dir + "/train.cpp").str();
  auto Setup = loadCompilationSetup("", std::nullopt, {Source});
  ASSERT_TRUE(bool(Setup));
  ASSERT_EQ(Setup->Warnings.size(), 1u);
  EXPECT_NE(Setup->Warnings[0].find("no compilation database found"), std::string::npos);
  auto Args = commandFor(*Setup, Source);
  EXPECT_TRUE(contains(Args, "-std=c++17"));
  for (const std::string &Flag : fallbackCompileFlags())
    EXPECT_TRUE(contains(Args, Flag)) << Flag;
  llvm::sys::fs::remove_directories(Dir);
}

TEST(CompilationSetupTest, BuildDirectoryErrors) {
  auto Missing = loadCompilationSetup("/no/such/build", std::nullopt, {"a.cpp"});
  ASSERT_FALSE(bool(Missing));
  EXPECT_NE(llvm::toString(Missing.takeError()).find("does not exist"), std::string::npos);

  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("/tmp/skyline-empty", Dir));
  auto Empty = loadCompilationSetup(Dir, std::nullopt, {"a.cpp"});
  ASSERT_FALSE(bool(Empty));
  EXPECT_NE(llvm::toString(Empty.takeError()).find("no compile_commands.json"),
            std::string::npos);
  llvm::sys::fs::remove_directories(Dir);
}

TEST(CompilationSetupTest, AnUnusableDatabaseSaysWhy) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("/tmp/skyline-baddb", Dir));
  std::string Database = (Dir + "/compile_commands.json").str();
  auto ErrorWith = [&](llvm::StringRef Text, llvm::StringRef BuildPath) {
    {
      std::error_code EC;
      llvm::raw_fd_ostream Out(Database, EC);
      Out << Text;
    }
    auto Setup = loadCompilationSetup(BuildPath, std::nullopt,
                                      {(Dir + "/src/train.cpp").str()});
    return Setup ? std::string("(loaded)") : llvm::toString(Setup.takeError());
  };
  const std::string Prefix = "cannot use compile_commands.json '" + Database + "': ";
  const std::string Advice = "; configure the build again with "
                             "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON, or give "
                             "compiler flags after --";
  EXPECT_EQ(ErrorWith("", Dir), Prefix + "it is empty" + Advice);
  EXPECT_EQ(ErrorWith("[]", Dir), Prefix + "it lists no compile commands" + Advice);
  EXPECT_EQ(ErrorWith("{", Dir).rfind(Prefix + "it is not a JSON list", 0), 0u);
  // Found above the source, without -p: the same, not the fallback.
  EXPECT_EQ(ErrorWith("", ""), Prefix + "it is empty" + Advice);
  // -p at the database itself.
  auto AtFile = loadCompilationSetup(Database, std::nullopt, {"a.cpp"});
  ASSERT_FALSE(bool(AtFile));
  EXPECT_EQ(llvm::toString(AtFile.takeError()),
            "-p '" + Database +
                "' is a file, not a directory; give the directory that holds "
                "compile_commands.json (-p " + Dir.str().str() + ")");
  llvm::sys::fs::remove_directories(Dir);
}

TEST(CompilationSetupTest, DatabaseInBuildDirectory) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("/tmp/skyline-db", Dir));
  {
    std::error_code EC;
    llvm::raw_fd_ostream Out((Dir + "/compile_commands.json").str(), EC);
    Out << "[{\"directory\": \"" << Dir << "\", \"file\": \"" << Dir
        << "/train.cpp\", \"arguments\": [\"c++\", \"-DFROM_DB\", \"-c\", \"train.cpp\"]}]";
  }
  auto Setup = loadCompilationSetup(Dir, std::nullopt, {(Dir + "/train.cpp").str()});
  ASSERT_TRUE(bool(Setup));
  EXPECT_TRUE(contains(commandFor(*Setup, (Dir + "/train.cpp").str()), "-DFROM_DB"));
  // A file the database does not list borrows its neighbour's command.
  EXPECT_TRUE(contains(commandFor(*Setup, (Dir + "/other.cpp").str()), "-DFROM_DB"));
  llvm::sys::fs::remove_directories(Dir);
}

} // namespace
