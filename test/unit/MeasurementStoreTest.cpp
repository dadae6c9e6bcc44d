// Measurements kept in the work directory by what decided them: the key's
// parts change with the program's files, the compile flags, the LibTorch
// and the device, and nothing else; the store keeps the last eight and the
// latest; a report carries its key through YAML.

#include "skyline/MeasurementStore.h"

#include "skyline/Driver.h"
#include "skyline/FileHash.h"
#include "skyline/RunReport.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "gtest/gtest.h"

#include <chrono>
#include <fstream>
#include <unistd.h>

using namespace skyline;

namespace {

void writeText(const std::string &Path, const std::string &Text) {
  std::ofstream(Path) << Text;
}

std::string readText(const std::string &Path) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  return Buffer ? (*Buffer)->getBuffer().str() : "(unreadable)";
}

class MeasurementStoreTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> Path;
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("measurement-store", Path));
    Dir = std::string(Path);
    Source = Dir + "/train.cpp";
    writeText(Source, "const int kBatchSize = 64;\n");
    // A LibTorch as find_package sees it: share/cmake/Torch, and the
    // version header three levels up.
    TorchDir = Dir + "/libtorch/share/cmake/Torch";
    ASSERT_FALSE(llvm::sys::fs::create_directories(TorchDir));
    ASSERT_FALSE(
        llvm::sys::fs::create_directories(Dir + "/libtorch/include/torch"));
    writeText(Dir + "/libtorch/include/torch/version.h",
              "#define TORCH_VERSION \"2.11.0\"\n");
    Program.Sources = {Source};
    Program.Files = {Source};
    Program.FileSha256[Source] = *sha256OfFile(Source);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  clang::tooling::FixedCompilationDatabase
  database(std::vector<std::string> Flags) {
    return clang::tooling::FixedCompilationDatabase(Dir, Flags);
  }
  MeasurementKey key(std::vector<std::string> Flags = {"-O2"},
                     DeviceChoice Device = DeviceChoice::Auto) {
    return measurementKey(database(Flags), Program, TorchDir, Device);
  }

  std::string Dir, Source, TorchDir;
  ProgramModel Program;
};

TEST(CacheKeyTest, NamedValuesWithTheirLengths) {
  EXPECT_EQ(CacheKey().add("a", "bc").hex(), sha256Hex("a\n2\nbc\n"));
  // The lengths keep a value's end from passing for the next name.
  EXPECT_NE(CacheKey().add("a", "b\n1\nc").hex(),
            CacheKey().add("a", "b").add("1", "c").hex());
}

TEST_F(MeasurementStoreTest, TheKeyFollowsWhatDecidesAMeasurement) {
  MeasurementKey Base = key();
  EXPECT_EQ(Base.Device, "auto");
  EXPECT_EQ(Base.Sources.size(), 64u);
  EXPECT_EQ(key(), Base);
  EXPECT_EQ(keyChanges(Base, key()), std::vector<std::string>{});

  EXPECT_EQ(keyChanges(Base, key({"-O3"})),
            std::vector<std::string>{"compile flags"});
  EXPECT_EQ(keyChanges(Base, key({"-O2"}, DeviceChoice::CUDA)),
            std::vector<std::string>{"device"});
  EXPECT_EQ(key({"-O2"}, DeviceChoice::CPU).Device, "cpu");

  // Another LibTorch: another version header, or none at all.
  writeText(Dir + "/libtorch/include/torch/version.h",
            "#define TORCH_VERSION \"2.12.0\"\n");
  EXPECT_EQ(keyChanges(Base, key()), std::vector<std::string>{"LibTorch"});
  MeasurementKey NoTorch =
      measurementKey(database({"-O2"}), Program, "", DeviceChoice::Auto);
  EXPECT_EQ(keyChanges(key(), NoTorch), std::vector<std::string>{"LibTorch"});

  // The files as the model recorded them, and as they are now.
  EXPECT_EQ(currentMeasurementKey(database({"-O2"}), Program, TorchDir,
                                  DeviceChoice::Auto),
            key());
  writeText(Source, "const int kBatchSize = 128;\n");
  MeasurementKey Edited = currentMeasurementKey(database({"-O3"}), Program,
                                                TorchDir, DeviceChoice::Auto);
  EXPECT_EQ(keyChanges(key(), Edited),
            (std::vector<std::string>{"sources", "compile flags"}));
  llvm::sys::fs::remove(Source);
  EXPECT_EQ(
      keyChanges(key(), currentMeasurementKey(database({"-O2"}), Program,
                                              TorchDir, DeviceChoice::Auto)),
      std::vector<std::string>{"sources"});
}

TEST_F(MeasurementStoreTest, KeyNamesAreShortAndDistinct) {
  EXPECT_EQ(keyName(key()).size(), 24u);
  EXPECT_EQ(keyName(key()), keyName(key()));
  EXPECT_NE(keyName(key()), keyName(key({"-O3"})));
  EXPECT_EQ(keptReportPath("/w", key()),
            "/w/reports/" + keyName(key()) + ".yaml");
}

TEST_F(MeasurementStoreTest, KeepsTheLatestAndTheLastEightByKey) {
  std::string Work = Dir + "/work";
  // Without a key (a report from before keys): the latest only.
  ASSERT_FALSE(bool(keepMeasurement(Work, "old\n", std::nullopt)));
  EXPECT_EQ(readText(latestReportPath(Work)), "old\n");
  EXPECT_FALSE(llvm::sys::fs::exists(Work + "/reports"));

  // Ten measurements with other flags, each older than the next.
  auto Start = std::chrono::system_clock::now() - std::chrono::hours(1);
  std::vector<MeasurementKey> Keys;
  for (int I = 0; I < 10; ++I) {
    Keys.push_back(key({"-DRUN=" + std::to_string(I)}));
    std::string Text = "run " + std::to_string(I) + "\n";
    ASSERT_FALSE(bool(keepMeasurement(Work, Text, Keys.back())));
    EXPECT_EQ(readText(latestReportPath(Work)), Text);
    EXPECT_EQ(readText(keptReportPath(Work, Keys.back())), Text);
    int Fd;
    ASSERT_FALSE(llvm::sys::fs::openFileForWrite(
        keptReportPath(Work, Keys.back()), Fd, llvm::sys::fs::CD_OpenExisting));
    ASSERT_FALSE(llvm::sys::fs::setLastAccessAndModificationTime(
        Fd, Start + std::chrono::seconds(I)));
    ::close(Fd);
  }
  for (int I = 0; I < 10; ++I)
    EXPECT_EQ(llvm::sys::fs::exists(keptReportPath(Work, Keys[I])), I >= 2)
        << I;
  // Measured again, the oldest kept one is the newest: the next to go is
  // run 3's.
  ASSERT_FALSE(bool(keepMeasurement(Work, "run 2 again\n", Keys[2])));
  ASSERT_FALSE(bool(keepMeasurement(Work, "run 10\n", key({"-DRUN=10"}))));
  EXPECT_TRUE(llvm::sys::fs::exists(keptReportPath(Work, Keys[2])));
  EXPECT_FALSE(llvm::sys::fs::exists(keptReportPath(Work, Keys[3])));
  EXPECT_EQ(readText(latestReportPath(Work)), "run 10\n");
  std::error_code EC;
  int Entries = 0;
  for (llvm::sys::fs::directory_iterator It(Work + "/reports", EC), End;
       It != End && !EC; It.increment(EC))
    ++Entries;
  EXPECT_EQ(Entries, 8); // no temporary file left
}

TEST_F(MeasurementStoreTest, AReportCarriesItsKey) {
  SavedReport Report;
  Report.SkylineVersion = "test";
  Report.Measured.MemoryCapacityBytes = 1;
  Report.Key = key();
  std::string Path = Dir + "/report.yaml";
  writeText(Path, reportToYAML(Report, nullptr));
  auto Read = readReport(Path);
  ASSERT_TRUE(bool(Read)) << llvm::toString(Read.takeError());
  ASSERT_TRUE(Read->Key);
  EXPECT_EQ(*Read->Key, key());

  Report.Key.reset();
  writeText(Path, reportToYAML(Report, nullptr));
  auto Unkeyed = readReport(Path);
  ASSERT_TRUE(bool(Unkeyed)) << llvm::toString(Unkeyed.takeError());
  EXPECT_FALSE(Unkeyed->Key);

  writeText(Path, "schema_version: 2\nruns: []\nmeasured_with:\n  sources: a\n"
                  "  compile_flags: b\n  libtorch: c\n");
  auto Partial = readReport(Path);
  ASSERT_FALSE(bool(Partial));
  EXPECT_EQ(llvm::toString(Partial.takeError()),
            "report '" + Path +
                "': measured_with.device is missing; it must be a string; "
                "write the report again with --report=FILE");
}

} // namespace
