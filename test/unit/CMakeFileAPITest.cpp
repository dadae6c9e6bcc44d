// Reading the program's target from a CMake File API reply: fixture replies
// under Inputs/fileapi, copied into a temporary build dir where the test needs
// one.

#include "skyline/CMakeFileAPI.h"

#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace skyline;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

// SKYLINE_TEST_INPUTS is the lit tests' input dir; the fixtures are the unit
// tests' own.
const std::string Fixtures =
    std::string(SKYLINE_TEST_INPUTS) + "/../../unit/Inputs/fileapi";
const std::string Index = Fixtures + "/index-2024-01-01T00-00-00-0000.json";

std::string errorText(llvm::Error E) { return llvm::toString(std::move(E)); }

void writeFile(llvm::StringRef Path, llvm::StringRef Text) {
  std::error_code EC;
  llvm::raw_fd_ostream Out(Path, EC);
  ASSERT_FALSE(EC) << Path.str();
  Out << Text;
}

/// Moves a file's modification time by Seconds from now.
void setModified(llvm::StringRef Path, int Seconds) {
  int FD;
  ASSERT_FALSE(llvm::sys::fs::openFileForWrite(
      Path, FD, llvm::sys::fs::CD_OpenExisting, llvm::sys::fs::OF_Append));
  auto When = std::chrono::system_clock::now() + std::chrono::seconds(Seconds);
  EXPECT_FALSE(llvm::sys::fs::setLastAccessAndModificationTime(
      FD, llvm::sys::TimePoint<>(When.time_since_epoch())));
  llvm::sys::fs::closeFile(FD);
}

/// A build dir whose reply dir holds the fixtures.
class CMakeFileAPIBuildDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> Model, Path;
    llvm::sys::path::system_temp_directory(true, Model);
    llvm::sys::path::append(Model, "skyline-fileapi");
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory(Model, Path));
    Dir = std::string(Path);
    Reply = Dir + "/.cmake/api/v1/reply";
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  void copyReply() {
    ASSERT_FALSE(llvm::sys::fs::create_directories(Reply));
    std::error_code EC;
    for (llvm::sys::fs::directory_iterator It(Fixtures, EC), End;
         !EC && It != End; It.increment(EC))
      ASSERT_FALSE(llvm::sys::fs::copy_file(
          It->path(),
          Reply + "/" + llvm::sys::path::filename(It->path()).str()));
    ASSERT_FALSE(EC);
  }

  std::string Dir;
  std::string Reply;
};

TEST(CMakeFileAPITest, ReadsTheTargetThatCompilesTheSource) {
  auto Target = readTargetWithSource(Index, {"/home/user/proj/src/train.cpp"});
  ASSERT_TRUE(bool(Target)) << errorText(Target.takeError());
  EXPECT_EQ(Target->Name, "train");
  EXPECT_EQ(Target->Type, "EXECUTABLE");
  EXPECT_EQ(Target->LinkLanguage, "CXX");
  EXPECT_THAT(Target->Sources, ElementsAre("/home/user/proj/src/train.cpp",
                                           "/home/user/proj/src/model.cpp"))
      << "a header without a compile group is no source";
  EXPECT_THAT(
      Target->Objects,
      ElementsAre("/home/user/proj/build/CMakeFiles/objs.dir/src/obj.cpp.o"));
  EXPECT_THAT(Target->LinkFlags, ElementsAre("-rdynamic", "-L/opt/extra/lib"))
      << "an empty fragment is dropped";
}

TEST(CMakeFileAPITest, LibrariesAreArgumentsWithAbsolutePaths) {
  auto Target = readTargetWithSource(Index, {"/home/user/proj/src/train.cpp"});
  ASSERT_TRUE(bool(Target)) << errorText(Target.takeError());
  // Ninja links in the top build dir; the quoted fragment is two arguments.
  EXPECT_THAT(
      Target->LinkLibraries,
      ElementsAre("-Wl,-rpath,/home/user/proj/build/lib2:/opt/libtorch/lib",
                  "/home/user/proj/build/libhelpers.a",
                  "/home/user/proj/build/lib2/libtwo.so",
                  "-Wl,--no-as-needed,/opt/libtorch/lib/libtorch_cpu.so",
                  "-Wl,--as-needed", "/opt/libtorch/lib/libc10.so",
                  "-lpthread"));
}

TEST(CMakeFileAPITest, DependenciesNameTheProjectsLibraries) {
  auto Target = readTargetWithSource(Index, {"/home/user/proj/src/train.cpp"});
  ASSERT_TRUE(bool(Target)) << errorText(Target.takeError());
  ASSERT_EQ(Target->Dependencies.size(), 2u);
  EXPECT_EQ(Target->Dependencies[0].Name, "helpers");
  EXPECT_EQ(Target->Dependencies[0].Type, "STATIC_LIBRARY");
  EXPECT_THAT(Target->Dependencies[0].Artifacts,
              ElementsAre("/home/user/proj/build/libhelpers.a"));
  EXPECT_EQ(Target->Dependencies[1].Name, "two");
  EXPECT_THAT(Target->Dependencies[1].Artifacts,
              ElementsAre("/home/user/proj/build/lib2/libtwo.so"));
}

TEST(CMakeFileAPITest, PrefersTheExecutableThatCompilesMostSources) {
  // unit comes first in the codemodel and compiles model.cpp too.
  auto Train = readTargetWithSource(Index, {"/home/user/proj/src/train.cpp",
                                            "/home/user/proj/src/model.cpp"});
  ASSERT_TRUE(bool(Train)) << errorText(Train.takeError());
  EXPECT_EQ(Train->Name, "train");
  auto Unit = readTargetWithSource(Index, {"/home/user/proj/test/unit.cpp",
                                           "/home/user/proj/src/model.cpp"});
  ASSERT_TRUE(bool(Unit)) << errorText(Unit.takeError());
  EXPECT_EQ(Unit->Name, "unit");
  auto Relative =
      readTargetWithSource(Index, {"/home/user/proj/app/../src/train.cpp"});
  ASSERT_TRUE(bool(Relative)) << errorText(Relative.takeError());
  EXPECT_EQ(Relative->Name, "train");
}

TEST(CMakeFileAPITest, OtherSourcesAreTheRestOfTheTargetsCXX) {
  CMakeTarget Target;
  Target.Sources = {"/p/src/train.cpp", "/p/src/model.cpp",
                    "/p/src/io.c",      "/p/src/kernels.cu",
                    "/p/src/data.cc",   "/p/src/model.cpp"};
  EXPECT_THAT(otherSources(Target, {"/p/src/train.cpp"}),
              ElementsAre("/p/src/model.cpp", "/p/src/data.cc"));
  // The given source written another way is still the given one.
  EXPECT_THAT(otherSources(Target, {"/p/src/../src/model.cpp"}),
              ElementsAre("/p/src/train.cpp", "/p/src/data.cc"));
  EXPECT_THAT(otherSources(Target, {"/p/src/train.cpp", "/p/src/model.cpp",
                                    "/p/src/data.cc"}),
              ::testing::IsEmpty());
}

TEST(CMakeFileAPITest, NoExecutableOrNoTargetIsAnError) {
  auto Library =
      readTargetWithSource(Index, {"/home/user/proj/src/helper.cpp"});
  ASSERT_FALSE(bool(Library));
  EXPECT_THAT(
      errorText(Library.takeError()),
      HasSubstr(
          "no executable target compiles /home/user/proj/src/helper.cpp, only "
          "the STATIC_LIBRARY 'helpers'"));
  auto None = readTargetWithSource(Index, {"/elsewhere/main.cpp"});
  ASSERT_FALSE(bool(None));
  EXPECT_THAT(
      errorText(None.takeError()),
      HasSubstr(
          "no target of /home/user/proj/build compiles /elsewhere/main.cpp"));
  auto Empty =
      readTargetWithSource(Fixtures + "/index-2023-06-01T00-00-00-0000.json",
                           {"/home/user/proj/src/train.cpp"});
  ASSERT_FALSE(bool(Empty));
  EXPECT_THAT(errorText(Empty.takeError()),
              HasSubstr("answers no codemodel-v2 query"));
}

TEST_F(CMakeFileAPIBuildDirTest, MakefilesLinkInTheTargetsBuildDir) {
  copyReply();
  std::string Ninja =
      llvm::MemoryBuffer::getFile(Index).get()->getBuffer().str();
  std::string Makefiles = Ninja;
  Makefiles.replace(Makefiles.find("\"Ninja\""), 7, "\"Unix Makefiles\"");
  std::string Copy = Reply + "/index-2024-01-01T00-00-00-0000.json";
  writeFile(Copy, Makefiles);
  auto Target = readTargetWithSource(Copy, {"/home/user/proj/src/train.cpp"});
  ASSERT_TRUE(bool(Target)) << errorText(Target.takeError());
  EXPECT_EQ(Target->LinkLibraries[1], "/home/user/proj/build/app/libhelpers.a");
}

TEST_F(CMakeFileAPIBuildDirTest, AnyClientsCodemodelWillDo) {
  copyReply();
  const char *Codemodel = R"({"jsonFile": "codemodel-v2-0123.json",
      "kind": "codemodel", "version": {"major": 2, "minor": 4}})";
  std::string Shared = Reply + "/index-shared.json";
  writeFile(Shared,
            std::string(R"({"reply": {"codemodel-v2": )") + Codemodel + "}}");
  std::string Other = Reply + "/index-other.json";
  writeFile(Other,
            std::string(R"({"reply": {"client-ide": {}}, "objects": [)") +
                Codemodel + "]}");
  for (const std::string &File : {Shared, Other}) {
    auto Target = readTargetWithSource(File, {"/home/user/proj/src/train.cpp"});
    ASSERT_TRUE(bool(Target)) << File << ": " << errorText(Target.takeError());
    EXPECT_EQ(Target->Name, "train");
  }
}

TEST_F(CMakeFileAPIBuildDirTest, WritesTheQueryOnce) {
  EXPECT_EQ(codemodelQueryPath(Dir),
            Dir + "/.cmake/api/v1/query/client-skyline-check/codemodel-v2");
  ASSERT_FALSE(bool(writeCodemodelQuery(Dir)));
  EXPECT_TRUE(llvm::sys::fs::exists(codemodelQueryPath(Dir)));
  EXPECT_FALSE(bool(writeCodemodelQuery(Dir))) << "an existing query is kept";
}

TEST_F(CMakeFileAPIBuildDirTest, AReplyOlderThanTheCacheIsStale) {
  writeFile(Dir + "/CMakeCache.txt",
            "CMAKE_HOME_DIRECTORY:INTERNAL=/home/user/proj\n");
  EXPECT_FALSE(freshCodemodelReply(Dir)) << "no reply yet";
  copyReply();
  setModified(Dir + "/CMakeCache.txt", -60);
  std::optional<std::string> Fresh = freshCodemodelReply(Dir);
  ASSERT_TRUE(Fresh.has_value());
  EXPECT_EQ(llvm::sys::path::filename(*Fresh),
            "index-2024-01-01T00-00-00-0000.json")
      << "the latest index";
  setModified(Dir + "/CMakeCache.txt", 60);
  EXPECT_FALSE(freshCodemodelReply(Dir)) << "re-configured since the reply";
}

TEST_F(CMakeFileAPIBuildDirTest, LoadsAFreshReplyWithoutReconfiguring) {
  writeFile(Dir + "/CMakeCache.txt",
            "CMAKE_HOME_DIRECTORY:INTERNAL=/home/user/proj\n");
  copyReply();
  setModified(Dir + "/CMakeCache.txt", -60);
  std::string Progress;
  llvm::raw_string_ostream Out(Progress);
  auto Target = loadCMakeTarget(Dir, {"/home/user/proj/src/train.cpp"},
                                Dir + "/fileapi.log", Out);
  ASSERT_TRUE(bool(Target)) << errorText(Target.takeError());
  EXPECT_EQ(Target->Name, "train");
  EXPECT_EQ(Progress, "");
  EXPECT_TRUE(llvm::sys::fs::exists(codemodelQueryPath(Dir)));
}

TEST_F(CMakeFileAPIBuildDirTest, SaysWhyItCannotLoad) {
  std::string Progress;
  llvm::raw_string_ostream Out(Progress);
  std::string Log = Dir + "/fileapi.log";
  auto NoCache =
      loadCMakeTarget(Dir, {"/home/user/proj/src/train.cpp"}, Log, Out);
  ASSERT_FALSE(bool(NoCache));
  EXPECT_THAT(errorText(NoCache.takeError()),
              HasSubstr("not a CMake build dir"));

  // The cache's own cmake re-configures; /bin/false stands in for one that
  // fails.
  writeFile(Dir + "/CMakeCache.txt",
            "CMAKE_COMMAND:INTERNAL=/bin/false\n"
            "CMAKE_HOME_DIRECTORY:INTERNAL=/home/user/proj\n");
  auto Failed =
      loadCMakeTarget(Dir, {"/home/user/proj/src/train.cpp"}, Log, Out);
  ASSERT_FALSE(bool(Failed));
  EXPECT_THAT(errorText(Failed.takeError()),
              HasSubstr("re-configuring " + Dir + " failed"));
  EXPECT_THAT(
      Progress,
      HasSubstr("re-configuring " + Dir +
                " to get the program's link line from the CMake File API"));
}

} // namespace
