// A real run of RuntimeProgram on this machine: without a GPU (or with CUDA
// hidden, as --device=cpu does) the result is a CPU run with no gpu_ms and
// no gpu block.

#include "gtest/gtest.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct ProgramRun {
  int ExitCode = -1;
  std::string Output, Result;
};

ProgramRun runProgram(const std::string &Environment) {
  std::string ResultPath =
      ::testing::TempDir() + "skyline-gpu-" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
      std::to_string(getpid()) + ".yaml";
  std::remove(ResultPath.c_str());
  std::string Command = "env " + Environment + " SKYLINE_RESULT=" + ResultPath +
                        " " SKYLINE_RUNTIME_PROGRAM " layers 2>&1";
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
  std::remove(ResultPath.c_str());
  return R;
}

void expectCpuRun(const ProgramRun &R) {
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  EXPECT_NE(R.Result.find("device: {type: cpu,"), std::string::npos)
      << R.Result;
  EXPECT_NE(R.Result.find("layers:\n  - {scope:"), std::string::npos)
      << R.Result;
  EXPECT_EQ(R.Result.find("gpu_ms"), std::string::npos) << R.Result;
  EXPECT_EQ(R.Result.find("\ngpu:"), std::string::npos) << R.Result;
}

// With or without a GPU: RuntimeProgram allocates nothing on CUDA, so the
// run is a CPU run either way (utils/device-check makes CUDA runs).
TEST(RuntimeGpuTest, ProgramOnTheCpuIsACpuRun) {
  expectCpuRun(runProgram("SKYLINE_BATCH_SIZE=16 SKYLINE_ITERATIONS=2"));
}

TEST(RuntimeGpuTest, HiddenCudaIsACpuRun) {
  expectCpuRun(runProgram(
      "CUDA_VISIBLE_DEVICES= SKYLINE_BATCH_SIZE=16 SKYLINE_ITERATIONS=2"));
}

} // namespace
