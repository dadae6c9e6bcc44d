// The runtime inside a real program: it ends the run after its iterations,
// writes the result, applies the batch-size override, and reports an
// out-of-memory run as such, with its own exit code.

#include "skyline/runtime/RunResult.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct ProgramRun {
  int ExitCode = -1;
  std::string Output;
  std::string Result;
};

ProgramRun runProgram(const std::string &Environment) {
  // One file per test: ctest runs the tests of this file in parallel.
  std::string ResultPath =
      ::testing::TempDir() + "skyline-run-" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
      std::to_string(getpid()) + ".yaml";
  std::remove(ResultPath.c_str());
  std::string Command = "env " + Environment +
                        (Environment.find("SKYLINE_RESULT") == std::string::npos
                             ? ""
                             : " SKYLINE_RESULT=" + ResultPath) +
                        " " SKYLINE_RUNTIME_PROGRAM " 2>&1";
  ProgramRun R;
  if (std::FILE *Pipe = popen(Command.c_str(), "r")) {
    char Buffer[512];
    while (std::fgets(Buffer, sizeof(Buffer), Pipe))
      R.Output += Buffer;
    int Status = pclose(Pipe);
    R.ExitCode = WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
  }
  std::ifstream In(ResultPath);
  std::stringstream Text;
  Text << In.rdbuf();
  R.Result = Text.str();
  return R;
}

long long field(const std::string &Text, const std::string &Key) {
  std::smatch Match;
  if (!std::regex_search(Text, Match, std::regex("(^|\\n)" + Key + ": ([0-9]+)")))
    return -1;
  return std::stoll(Match[2]);
}

TEST(RuntimeRunTest, InactiveWithoutResultPath) {
  ProgramRun R = runProgram("SKYLINE_BATCH_SIZE=64");
  EXPECT_EQ(R.ExitCode, 3) << R.Output;
  EXPECT_NE(R.Output.find("loop ended with batch size 16"), std::string::npos)
      << "the override applies only inside a measured run";
}

TEST(RuntimeRunTest, MeasuredRunEndsAndWritesItsResult) {
  ProgramRun R = runProgram("SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=32 SKYLINE_WARMUP=2 "
                     "SKYLINE_ITERATIONS=5");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  EXPECT_EQ(R.Output.find("loop ended"), std::string::npos);
  EXPECT_EQ(field(R.Result, "batch_size"), 32) << R.Result;
  EXPECT_EQ(field(R.Result, "iterations"), 5) << R.Result;
  EXPECT_NE(R.Result.find("oom: false"), std::string::npos);
  // Weights, Adam's two moments and the gradients are all live at the peak.
  const long long Weights = (256 * 512 + 512 + 512 * 256 + 256) * 4;
  EXPECT_GE(field(R.Result, "peak_bytes"), 4 * Weights) << R.Result;
  EXPECT_GE(field(R.Result, "  construction"), Weights) << R.Result;
  // The model call's forward time, per iteration, within the iteration's.
  std::smatch Layer;
  ASSERT_TRUE(std::regex_search(R.Result, Layer,
                                std::regex("- \\{scope: 0, forward_ms: ([0-9.]+)\\}")))
      << R.Result;
  std::smatch Median;
  ASSERT_TRUE(std::regex_search(R.Result, Median, std::regex("median: ([0-9.]+)")));
  EXPECT_GT(std::stod(Layer[1]), 0.0);
  EXPECT_LT(std::stod(Layer[1]), std::stod(Median[1]));
}

long long memory(const std::string &Text, const std::string &Kind) {
  std::smatch Match;
  if (!std::regex_search(Text, Match, std::regex("[{ ]" + Kind + ": ([0-9]+)")))
    return -1;
  return std::stoll(Match[1]);
}

TEST(RuntimeRunTest, BreakdownToTheByteAndAddsUp) {
  ProgramRun R = runProgram("SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=64 SKYLINE_ITERATIONS=4");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  const long long Weights = (256 * 512 + 512 + 512 * 256 + 256) * 4;
  EXPECT_EQ(memory(R.Result, "weights"), Weights) << R.Result;
  EXPECT_EQ(memory(R.Result, "gradients"), Weights) << R.Result;
  EXPECT_EQ(memory(R.Result, "optimizer_state"), 2 * Weights) << R.Result;
  // The batch (64 x 256 floats) is data; at the peak (inside Adam's step)
  // the model's output y (64 x 256 floats) is still a live activation.
  EXPECT_EQ(memory(R.Result, "data"), 64 * 256 * 4) << R.Result;
  EXPECT_GE(memory(R.Result, "activations"), 64 * 256 * 4) << R.Result;
  long long Sum = 0;
  for (const char *Kind : {"weights", "gradients", "optimizer_state", "activations", "data",
                           "temporaries", "untracked"})
    Sum += memory(R.Result, Kind);
  EXPECT_EQ(Sum, field(R.Result, "peak_bytes")) << R.Result;

  // The phases' times add up to the mean iteration (other is the rest).
  std::smatch Split;
  ASSERT_TRUE(std::regex_search(
      R.Result, Split,
      std::regex("time_split_ms: \\{data: ([0-9.]+), forward: ([0-9.]+), backward: "
                 "([0-9.]+), optimizer: ([0-9.]+), other: ([0-9.]+)\\}")))
      << R.Result;
  std::smatch Mean;
  ASSERT_TRUE(std::regex_search(R.Result, Mean, std::regex("mean: ([0-9.]+)")));
  double Total = 0;
  for (int I = 1; I <= 5; ++I)
    Total += std::stod(Split[I]);
  EXPECT_NEAR(Total, std::stod(Mean[1]), 0.01 * std::stod(Mean[1]) + 0.002);
  EXPECT_GT(std::stod(Split[2]), 0.0) << "forward";
  EXPECT_GT(std::stod(Split[3]), 0.0) << "backward";
  EXPECT_GT(std::stod(Split[4]), 0.0) << "optimizer";
}

TEST(RuntimeRunTest, PeakGrowsWithTheBatchSize) {
  ProgramRun Small = runProgram("SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=16 SKYLINE_ITERATIONS=3");
  ProgramRun Large = runProgram("SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=512 SKYLINE_ITERATIONS=3");
  ASSERT_EQ(Small.ExitCode, 0) << Small.Output;
  ASSERT_EQ(Large.ExitCode, 0) << Large.Output;
  // Activations: at least x (256 floats) and the hidden layer (512) per sample.
  EXPECT_GE(field(Large.Result, "peak_bytes") - field(Small.Result, "peak_bytes"),
            (512 - 16) * (256 + 512) * 4);
}

TEST(RuntimeRunTest, BudgetCrossedIsAnOutOfMemoryRun) {
  ProgramRun R = runProgram("SKYLINE_RESULT=x SKYLINE_MEMORY_BUDGET=1000000");
  EXPECT_EQ(R.ExitCode, skyline::rt::ExitOutOfMemory) << R.Output;
  EXPECT_NE(R.Result.find("oom: true"), std::string::npos) << R.Result;
  EXPECT_LE(field(R.Result, "peak_bytes"), 1000000);
}

TEST(RuntimeRunTest, Summary) {
  skyline::rt::Summary S = skyline::rt::summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(S.Median, 2.5);
  EXPECT_DOUBLE_EQ(S.Mean, 2.5);
  EXPECT_DOUBLE_EQ(S.Min, 1);
  EXPECT_DOUBLE_EQ(S.Max, 4);
  EXPECT_NEAR(S.Stddev, 1.2910, 1e-4);
}

} // namespace
