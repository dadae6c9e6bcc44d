// Where compile commands come from: `--` flags, -p DIR, or the fallback.

#include "skyline/CompilationSetup.h"
#include "skyline/CompileCommandSanitizer.h"

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

SanitizedCommand sanitize(std::vector<std::string> Args,
                          std::vector<std::string> Roots = {}) {
  SanitizerOptions Options;
  Options.TrustedRoots = std::move(Roots);
  return sanitizeCompileCommand(Args, "/repo", "/repo/src/a.cpp", Options);
}

TEST(CompileCommandSanitizerTest, KeepsWhatOnlyShapesTheParse) {
  SanitizedCommand Safe =
      sanitize({"g++", "-std=c++17", "-Iinclude", "-isystem", "/opt/torch",
                "-DNDEBUG", "-Wall", "-Wp,-D_FORTIFY_SOURCE=2", "-O2",
                "-Xclang", "-fno-pch-timestamp", "-c", "src/a.cpp"});
  EXPECT_TRUE(Safe.Dropped.empty()) << describeDropped(Safe.Dropped);
  EXPECT_EQ(Safe.Arguments,
            (std::vector<std::string>{
                "g++", "--no-default-config", "-std=c++17", "-Iinclude",
                "-isystem", "/opt/torch", "-DNDEBUG", "-Wall",
                "-Wp,-D_FORTIFY_SOURCE=2", "-O2", "-Xclang",
                "-fno-pch-timestamp", "-c", "src/a.cpp"}));
}

TEST(CompileCommandSanitizerTest, DropsWhatLoadsCodeOrWritesFiles) {
  const struct {
    std::vector<std::string> Args;
    const char *Dropped;
  } Cases[] = {
      {{"-fplugin=./evil.so"}, "'-fplugin=./evil.so' (loads code into the compiler)"},
      {{"-fpass-plugin=p.so"}, "'-fpass-plugin=p.so' (loads code into the compiler)"},
      {{"-fplugin-arg-evil-x"}, "'-fplugin-arg-evil-x' (loads code into the compiler)"},
      {{"-Xclang", "-load", "-Xclang", "e.so"},
       "'-Xclang -load' (loads code into the compiler); '-Xclang e.so' "
       "(passes the compiler's internals an option no driver checks)"},
      {{"-Xclang=-add-plugin"}, "'-Xclang=-add-plugin' (loads code into the compiler)"},
      {{"-Xpreprocessor", "-dependency-file"},
       "'-Xpreprocessor -dependency-file' (writes a file)"},
      {{"-Wp,-MD,/home/u/.bashrc"}, "'-Wp,-MD,/home/u/.bashrc' (writes a file)"},
      {{"-MD"}, "'-MD' (writes a file)"},
      {{"-MMD", "-MF", "x.d", "-MT", "t"},
       "'-MMD' (writes a file); '-MF x.d' (writes a file); '-MT t' (writes a file)"},
      {{"-MFx.d"}, "'-MFx.d' (writes a file)"},
      {{"--write-user-dependencies"}, "'--write-user-dependencies' (writes a file)"},
      {{"-MJ", "cdb.json"}, "'-MJ cdb.json' (writes a file)"},
      {{"-o", "/etc/x"}, ""}, // every build's command has one: said by no note
      {{"-save-temps=obj"}, "'-save-temps=obj' (writes a file)"},
      {{"-ftime-trace"}, "'-ftime-trace' (writes a file)"},
      {{"--serialize-diagnostics", "d.dia"},
       "'--serialize-diagnostics d.dia' (writes a file)"},
      {{"-fprofile-generate=/tmp/p"}, "'-fprofile-generate=/tmp/p' (writes a file)"},
      {{"--coverage"}, "'--coverage' (writes a file)"},
      {{"-fcrash-diagnostics-dir=/x"}, "'-fcrash-diagnostics-dir=/x' (writes a file)"},
      {{"-fmodules"}, "'-fmodules' (builds modules into a cache outside skyline-check's)"},
      {{"--config=evil.cfg"},
       "'--config=evil.cfg' (reads compiler options from a file the command chose)"},
      {{"-ccc-install-dir", "/x"},
       "'-ccc-install-dir /x' (is an internal option of clang's driver)"},
      {{"-Xarch_x86_64", "-fplugin=e.so"},
       "'-Xarch_x86_64 -fplugin=e.so' (passes options on to another tool)"},
      {{"other.cpp"}, "'other.cpp' (is an input other than the source)"},
      {{"-"}, "'-' (is an input other than the source)"},
  };
  for (const auto &Case : Cases) {
    std::vector<std::string> Args{"clang++", "-std=c++17"};
    llvm::append_range(Args, Case.Args);
    Args.push_back("src/a.cpp");
    SanitizedCommand Safe = sanitize(Args);
    EXPECT_EQ(describeDropped(Safe.Dropped), Case.Dropped);
    EXPECT_EQ(Safe.Arguments,
              (std::vector<std::string>{"clang++", "--no-default-config",
                                        "-std=c++17", "src/a.cpp"}))
        << Case.Dropped;
  }
}

TEST(CompileCommandSanitizerTest, ResponseFilesOnlyFromTrustedRoots) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("sanitizer-rsp", Dir));
  std::string Inside = (Dir + "/inside.rsp").str();
  std::string Nested = (Dir + "/nested.rsp").str();
  {
    std::error_code EC;
    llvm::raw_fd_ostream(Inside, EC) << "-DINSIDE=1 -fplugin=e.so @" << Nested
                                     << "\n";
    llvm::raw_fd_ostream(Nested, EC) << "-DNESTED\n";
  }
  SanitizedCommand Trusted =
      sanitize({"clang++", "@" + Inside, "src/a.cpp"}, {std::string(Dir)});
  EXPECT_EQ(Trusted.Arguments,
            (std::vector<std::string>{"clang++", "--no-default-config",
                                      "-DINSIDE=1", "src/a.cpp"}));
  EXPECT_EQ(describeDropped(Trusted.Dropped),
            "'@" + Nested +
                "' (is a response file named in a response file); "
                "'-fplugin=e.so' (loads code into the compiler)");
  SanitizedCommand Outside =
      sanitize({"clang++", "@" + Inside, "src/a.cpp"}, {"/repo"});
  EXPECT_EQ(describeDropped(Outside.Dropped),
            "'@" + Inside +
                "' (is a response file outside the build directory and the "
                "sources' repository)");
  SanitizedCommand Device =
      sanitize({"clang++", "@/dev/stdin", "src/a.cpp"}, {"/"});
  EXPECT_EQ(describeDropped(Device.Dropped),
            "'@/dev/stdin' (is a response file that is not a regular file)");
  llvm::sys::fs::remove_directories(Dir);
}

TEST(CompileCommandSanitizerTest, ClangClCommandsAreNotRead) {
  SanitizedCommand Safe = sanitize({"clang-cl", "/Fo:x.obj", "src/a.cpp"});
  EXPECT_EQ(Safe.Arguments,
            (std::vector<std::string>{"clang++", "--no-default-config", "--",
                                      "/repo/src/a.cpp"}));
  ASSERT_EQ(Safe.Dropped.size(), 1u);
  EXPECT_EQ(Safe.Dropped[0].Text, "/Fo:x.obj src/a.cpp");
}

TEST(CompileCommandSanitizerTest, TheSetupSaysWhatItDroppedOnce) {
  auto Setup = loadCompilationSetup(
      "", std::vector<std::string>{"-std=c++17", "-fplugin=e.so"}, {"a.cpp"});
  ASSERT_TRUE(bool(Setup));
  ASSERT_EQ(Setup->Notes.size(), 1u);
  EXPECT_NE(Setup->Notes[0].find("a.cpp' (the flags after --): "
                                 "'-fplugin=e.so' (loads code into the "
                                 "compiler)"),
            std::string::npos)
      << Setup->Notes[0];
  llvm::SmallString<128> Absolute("a.cpp");
  llvm::sys::fs::make_absolute(Absolute);
  auto Args = commandFor(*Setup, Absolute);
  EXPECT_FALSE(contains(Args, "-fplugin=e.so"));
  auto *Safe =
      static_cast<const SanitizedCompilationDatabase *>(Setup->Database.get());
  EXPECT_TRUE(Safe->takeNotes().empty()) << "said once";
}

} // namespace
