// Outputs never replace an input or anything but a regular file, and a
// run's outputs are written all or none.

#include "skyline/OutputFiles.h"
#include "skyline/WorkDirectory.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace skyline;
using ::testing::HasSubstr;

namespace {

class OutputFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("skyline-out", Dir));
    write(path("train.cpp"), "int main() {}\n");
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  std::string path(llvm::StringRef Name) const {
    return (Dir + "/" + Name).str();
  }
  static void write(const std::string &Path, llvm::StringRef Text) {
    std::error_code EC;
    llvm::raw_fd_ostream(Path, EC) << Text;
  }
  static std::string read(const std::string &Path) {
    auto Buffer = llvm::MemoryBuffer::getFile(Path);
    return Buffer ? (*Buffer)->getBuffer().str() : "<missing>";
  }
  int filesInDir() const {
    std::error_code EC;
    int Files = 0;
    for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
         It.increment(EC))
      ++Files;
    return Files;
  }
  std::string check(const std::string &Output,
                    const char *Option = "--report") {
    llvm::Error E =
        checkOutputPaths({{Option, Output}}, {{"source", path("train.cpp")}});
    return E ? llvm::toString(std::move(E)) : "";
  }

  llvm::SmallString<128> Dir;
};

TEST_F(OutputFilesTest, NewPathsAndRegularFilesAreWritable) {
  EXPECT_EQ(check(path("report.yaml")), "");
  write(path("old.yaml"), "old");
  EXPECT_EQ(check(path("old.yaml")), "");
}

TEST_F(OutputFilesTest, AnInputIsNeverAnOutput) {
  std::string Source = path("train.cpp");
  EXPECT_EQ(check(Source), "cannot write --report '" + Source +
                               "': it is the source '" + Source +
                               "' that this run reads; outputs never replace "
                               "an input: name another file");
  // Other spellings and other names of the same file.
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("sub")));
  EXPECT_THAT(check(path("sub/../train.cpp")), HasSubstr("it is the source"));
  ASSERT_FALSE(llvm::sys::fs::create_hard_link(Source, path("hard.cpp")));
  EXPECT_THAT(check(path("hard.cpp")), HasSubstr("it is the source"));
  EXPECT_EQ(read(Source), "int main() {}\n");
}

TEST_F(OutputFilesTest, OnlyRegularFilesOrNewPathsAreWritten) {
  EXPECT_EQ(check("/dev/null", "--sarif"),
            "cannot write --sarif '/dev/null': it is a character device; "
            "skyline-check writes only regular files or new paths");
  EXPECT_EQ(check(std::string(Dir), "--html"),
            "cannot write --html '" + std::string(Dir) +
                "': it is a directory; name a file in it");
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("dir")));
  EXPECT_THAT(check(path("dir/")), HasSubstr("it names a directory"));
  ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
  EXPECT_THAT(check(path("fifo")), HasSubstr("it is a FIFO"));
  ASSERT_FALSE(llvm::sys::fs::create_link(path("train.cpp"), path("link.cpp")));
  EXPECT_THAT(check(path("link.cpp")), HasSubstr("it is a symbolic link"));
  EXPECT_THAT(check(path("missing/report.yaml")),
              HasSubstr("directory '" + path("missing") + "' does not exist"));
}

TEST_F(OutputFilesTest, TwoOutputsMayNotShareAPath) {
  llvm::Error E = checkOutputPaths(
      {{"--report", path("out.yaml")}, {"--sarif", path("./out.yaml")}}, {});
  EXPECT_EQ(llvm::toString(std::move(E)),
            "cannot write --sarif '" + path("./out.yaml") + "': --report '" +
                path("out.yaml") +
                "' names the same file; give each output its own path");
}

TEST_F(OutputFilesTest, AllOutputsAreWrittenTogether) {
  write(path("a.yaml"), "old a");
  OutputTransaction Both;
  Both.add({"--report", path("a.yaml")}, "new a");
  Both.add({"--sarif", path("b.sarif")}, "new b");
  ASSERT_FALSE(bool(Both.commit()));
  EXPECT_EQ(read(path("a.yaml")), "new a");
  EXPECT_EQ(read(path("b.sarif")), "new b");
  EXPECT_EQ(filesInDir(), 3) << "no temporary or backup file is left behind";
}

TEST_F(OutputFilesTest, OneFailedOutputWritesNone) {
  write(path("a.yaml"), "old a");
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("adir")));
  OutputTransaction Both;
  Both.add({"--report", path("a.yaml")}, "new a");
  Both.add({"--sarif", path("adir")}, "new b");
  llvm::Error E = Both.commit();
  EXPECT_THAT(llvm::toString(std::move(E)),
              HasSubstr("cannot write --sarif '" + path("adir") +
                        "': it is a directory"));
  EXPECT_EQ(read(path("a.yaml")), "old a");
  EXPECT_EQ(filesInDir(), 3) << "train.cpp, a.yaml and adir only";
}

TEST_F(OutputFilesTest, AFullDiskOrSizeLimitIsAnErrorAndWritesNothing) {
  // A file size limit fails the write as a full disk does (EFBIG rather than
  // ENOSPC), without killing the process with SIGXFSZ.
  write(path("a.yaml"), "old a");
  struct rlimit Old;
  getrlimit(RLIMIT_FSIZE, &Old);
  struct rlimit Small = Old;
  Small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &Small), 0);
  OutputTransaction Both;
  Both.add({"--report", path("a.yaml")}, "new a");
  Both.add({"--html", path("big.html")}, std::string(1 << 16, 'x'));
  llvm::Error E = Both.commit();
  setrlimit(RLIMIT_FSIZE, &Old);
  EXPECT_EQ(llvm::toString(std::move(E)),
            "cannot write --html '" + path("big.html") + "': File too large");
  EXPECT_EQ(read(path("a.yaml")), "old a");
  EXPECT_EQ(filesInDir(), 2) << "train.cpp and a.yaml only";
}

TEST_F(OutputFilesTest, WriteFailsCleanlyInAMissingDirectory) {
  llvm::Error E = writeFileAtomically("/nonexistent-dir/fixes.yaml", "x");
  ASSERT_TRUE(bool(E));
  EXPECT_THAT(llvm::toString(std::move(E)),
              HasSubstr("/nonexistent-dir/fixes.yaml"));
  EXPECT_FALSE(llvm::sys::fs::exists("/nonexistent-dir/fixes.yaml"));
}

TEST_F(OutputFilesTest, WriteReplacesTheFileWhole) {
  std::string Path = path("fixes.yaml");
  ASSERT_FALSE(bool(writeFileAtomically(Path, "first")));
  ASSERT_FALSE(bool(writeFileAtomically(Path, "second")));
  EXPECT_EQ(read(Path), "second");
  EXPECT_EQ(filesInDir(), 2) << "no temporary file is left behind";
}

} // namespace

namespace {

class WorkDirectoryTest : public OutputFilesTest {};

TEST_F(WorkDirectoryTest, ANewOrEmptyDirectoryIsClaimedAndMarked) {
  std::string New = path("a/b/work");
  ASSERT_FALSE(bool(claimWorkDirectory(New)));
  EXPECT_TRUE(llvm::sys::fs::exists(New + "/" + WorkDirectoryMarker));
  ASSERT_FALSE(bool(claimWorkDirectory(New))) << "claimed again";
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("empty")));
  ASSERT_FALSE(bool(claimWorkDirectory(path("empty"))));
  EXPECT_TRUE(llvm::sys::fs::exists(path("empty") + "/" + WorkDirectoryMarker));
}

TEST_F(WorkDirectoryTest, TheUsersProjectIsNeverAWorkDirectory) {
  // Dir holds train.cpp: src/, build/ and runs/ would land among its files.
  llvm::Error E = claimWorkDirectory(std::string(Dir));
  EXPECT_EQ(llvm::toString(std::move(E)),
            "the work directory '" + std::string(Dir) +
                "' holds files that skyline-check did not make (such as "
                "'train.cpp'): it writes src/, build/ and runs/ there and "
                "would replace them; give --work-dir a new or empty directory");
  EXPECT_FALSE(llvm::sys::fs::exists(path(WorkDirectoryMarker)));
  EXPECT_THAT(llvm::toString(claimWorkDirectory(path("train.cpp"))),
              HasSubstr("is not a directory"));
}

TEST_F(WorkDirectoryTest, AnEarlierSkylineChecksDirectoryIsKept) {
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("old")));
  write(path("old/scopes.yaml"), "scopes: []\n");
  ASSERT_FALSE(bool(claimWorkDirectory(path("old"))));
}

} // namespace
