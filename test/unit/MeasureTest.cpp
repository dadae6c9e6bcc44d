// The sweep's arithmetic and the reading of the runtime's result file.

#include "skyline/Measure.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace skyline;

namespace {

TEST(MeasureTest, ByteSizes) {
  EXPECT_EQ(parseByteSize("512MiB"), 512LL << 20);
  EXPECT_EQ(parseByteSize("8GiB"), 8LL << 30);
  EXPECT_EQ(parseByteSize("1.5GB"), 1500000000LL);
  EXPECT_EQ(parseByteSize("1000000"), 1000000LL);
  EXPECT_EQ(parseByteSize("64 kib"), 65536LL);
  EXPECT_FALSE(parseByteSize("lots"));
  EXPECT_FALSE(parseByteSize("12XB"));
  EXPECT_FALSE(parseByteSize(""));
}

TEST(MeasureTest, DoublesThenBacksOff) {
  EXPECT_EQ(nextBatchSize(32, std::nullopt), 64);
  EXPECT_EQ(nextBatchSize(64, 128), 96);
  EXPECT_EQ(nextBatchSize(96, 128), 112);
  EXPECT_EQ(nextBatchSize(127, 128), 127) << "converged: no size left between";
}

TEST(MeasureTest, ReadsTheRuntimesResult) {
  llvm::SmallString<128> Path;
  int FD;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("run", "yaml", FD, Path));
  {
    llvm::raw_fd_ostream Out(FD, true);
    Out << "schema_version: 1\nbatch_size: 64\noom: false\niterations: 8\n"
           "iteration_ms: {median: 2.5000, mean: 2.6000, stddev: 0.1000, min: "
           "2.4000, "
           "max: 2.9000}\nthroughput: 25600.000\npeak_bytes: 123456\n"
           "peak_bytes_by_phase:\n  construction: 100000\n  data: 23456\n"
           "memory: {weights: 100000, gradients: 0, optimizer_state: 0, "
           "activations: 0, "
           "data: 23456, temporaries: 0, untracked: 0}\n"
           "time_split_ms: {data: 0.1, forward: 1.0, backward: 1.2, optimizer: "
           "0.2, "
           "other: 0.0}\n";
  }
  auto Run = readRunResult(Path);
  ASSERT_TRUE(bool(Run)) << llvm::toString(Run.takeError());
  EXPECT_EQ(Run->BatchSize, 64);
  EXPECT_FALSE(Run->OutOfMemory);
  EXPECT_EQ(Run->Iterations, 8u);
  EXPECT_DOUBLE_EQ(Run->IterationMs.Median, 2.5);
  EXPECT_DOUBLE_EQ(Run->Throughput, 25600);
  EXPECT_EQ(Run->PeakBytes, 123456);
  ASSERT_EQ(Run->PeakBytesByPhase.size(), 2u);
  EXPECT_EQ(Run->PeakBytesByPhase[1].first, "data");
  ASSERT_EQ(Run->TimeSplitMs.size(), 5u);
  EXPECT_EQ(Run->TimeSplitMs[2],
            (std::pair<std::string, double>("backward", 1.2)));
  ASSERT_EQ(Run->Memory.size(), 7u);
  EXPECT_EQ(Run->Memory[0],
            (std::pair<std::string, int64_t>("weights", 100000)));
  llvm::sys::fs::remove(Path);

  auto Missing = readRunResult("/nonexistent/result.yaml");
  ASSERT_FALSE(bool(Missing));
  EXPECT_NE(llvm::toString(Missing.takeError()).find("unreadable run result"),
            std::string::npos);
}

} // namespace
