//===- InputFileTest.cpp - Checked, bounded reading of input files --------===//

#include "skyline/InputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace skyline;
using ::testing::HasSubstr;

namespace {

/// A fresh directory, removed with what it holds.
class InputFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("input-file", Dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  std::string path(llvm::StringRef Name) { return (Dir + "/" + Name).str(); }
  std::string write(llvm::StringRef Name, llvm::StringRef Text) {
    std::string Path = path(Name);
    std::error_code EC;
    llvm::raw_fd_ostream Out(Path, EC);
    Out << Text;
    return Path;
  }

  llvm::SmallString<128> Dir;
};

std::string errorOf(llvm::Error E) { return llvm::toString(std::move(E)); }

template <typename T> std::string errorOf(llvm::Expected<T> Value) {
  if (Value)
    return "(no error)";
  return llvm::toString(Value.takeError());
}

TEST_F(InputFileTest, ReadsARegularFile) {
  std::string Path = write("a.yaml", "key: value\n");
  auto Text = readInputFile(Path, "report", 1024);
  ASSERT_TRUE(bool(Text)) << llvm::toString(Text.takeError());
  EXPECT_EQ(*Text, "key: value\n");
  auto Root = loadYamlInput(Path, "report", ReportLimits);
  ASSERT_TRUE(bool(Root)) << llvm::toString(Root.takeError());
  EXPECT_EQ((*Root)["key"].as<std::string>(), "value");
}

TEST_F(InputFileTest, NamesAMissingFile) {
  EXPECT_EQ(errorOf(readInputFile(path("none.yaml"), "report", 1024)),
            "cannot read report '" + path("none.yaml") + "': no such file");
}

TEST_F(InputFileTest, RefusesADirectory) {
  EXPECT_EQ(errorOf(loadYamlInput(Dir, "config file", ConfigLimits)),
            "cannot read config file '" + Dir.str().str() +
                "': it is a directory, not a file");
}

TEST_F(InputFileTest, RefusesAFifoWithoutOpeningIt) {
  // Opening a FIFO for reading blocks until a writer comes: the test
  // would hang if the reader opened it.
  std::string Fifo = path("fifo");
  ASSERT_EQ(::mkfifo(Fifo.c_str(), 0600), 0);
  EXPECT_EQ(errorOf(readInputFile(Fifo, "report", 1024)),
            "cannot read report '" + Fifo +
                "': it is a FIFO (named pipe), not a regular file");
}

TEST_F(InputFileTest, RefusesADevice) {
  EXPECT_EQ(errorOf(checkInputFile("/dev/null", "report", 1024)),
            "cannot read report '/dev/null': it is a device, not a regular "
            "file");
}

TEST_F(InputFileTest, NamesAnUnreadableFile) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root reads any file";
  std::string Path = write("secret.yaml", "a: 1\n");
  ASSERT_EQ(::chmod(Path.c_str(), 0), 0);
  EXPECT_EQ(errorOf(readInputFile(Path, "report", 1024)),
            "cannot read report '" + Path + "': permission denied");
}

TEST_F(InputFileTest, BoundsTheSize) {
  std::string Path = write("big.yaml", std::string(2048, '#'));
  EXPECT_EQ(errorOf(readInputFile(Path, "config file", 1024)),
            "config file '" + Path +
                "' is 2.00 KiB; skyline-check reads at most 1.00 KiB of a "
                "config file");
}

TEST_F(InputFileTest, RefusesAnAlias) {
  std::string Path = write("alias.yaml", "a: &x [1, 2]\nb: *x\n");
  EXPECT_EQ(errorOf(loadYamlInput(Path, "report", ReportLimits)),
            "report '" + Path +
                "' uses a YAML alias (*name) at line 2; skyline-check's files "
                "have none, and an alias can expand a small file into "
                "gigabytes");
}

TEST_F(InputFileTest, AnAliasBombCostsNothing) {
  // Each level refers to the one before ten times: 10^30 leaves, built as
  // nodes, would never fit.
  std::string Text = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int I = 1; I < 30; ++I) {
    std::string Prev = "*l" + std::to_string(I - 1);
    Text += "l" + std::to_string(I) + ": &l" + std::to_string(I) + " [";
    for (int J = 0; J < 10; ++J)
      Text += (J ? ", " : "") + Prev;
    Text += "]\n";
  }
  EXPECT_THAT(
      errorOf(parseYamlInput(Text, "bomb.yaml", "report", ReportLimits)),
      HasSubstr("uses a YAML alias (*name) at line 2"));
}

TEST_F(InputFileTest, BoundsNodesAndDepth) {
  YamlLimits Small{1024, 5, 2};
  EXPECT_EQ(
      errorOf(parseYamlInput("[1, 2, 3, 4, 5, 6]", "n.yaml", "report", Small)),
      "report 'n.yaml' holds more than 5 YAML values (at line 1), more "
      "than any file skyline-check writes");
  EXPECT_EQ(errorOf(parseYamlInput("[[[1]]]", "d.yaml", "report", Small)),
            "report 'd.yaml' nests more than 2 levels deep (at line 1), "
            "deeper than any file skyline-check writes");
  auto Fits = parseYamlInput("[[1, 2]]", "ok.yaml", "report", Small);
  ASSERT_TRUE(bool(Fits)) << llvm::toString(Fits.takeError());
  EXPECT_EQ((*Fits)[0][1].as<int>(), 2);
}

TEST_F(InputFileTest, NamesAParseError) {
  EXPECT_THAT(
      errorOf(parseYamlInput("a: [1, 2\n", "p.yaml", "report", ReportLimits)),
      HasSubstr("report 'p.yaml' is not valid YAML: yaml-cpp: error "
                "at line"));
}

TEST_F(InputFileTest, AnEmptyFileIsANullDocument) {
  std::string Path = write("empty.yaml", "");
  auto Root = loadYamlInput(Path, "config file", ConfigLimits);
  ASSERT_TRUE(bool(Root)) << llvm::toString(Root.takeError());
  EXPECT_TRUE(Root->IsNull());
}

} // namespace
