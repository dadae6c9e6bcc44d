// A real run of RuntimeProgram on this machine: without a GPU (or with CUDA
// hidden, as --device=cpu does) the result is a CPU run with no gpu_ms and
// no gpu block.

#include "RuntimeProgramRun.h"
#include "gtest/gtest.h"

namespace {

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
  ProgramRun R = runProgram(
      "SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=16 SKYLINE_ITERATIONS=2", "layers");
  expectCpuRun(R);
  // What --device=cuda reads: no GPU here, or one the program left unused.
  bool NoDevice = R.Result.find(", cuda: no_device}") != std::string::npos;
  bool Unused = R.Result.find(", cuda: unused}") != std::string::npos;
  EXPECT_TRUE(NoDevice || Unused) << R.Result;
}

TEST(RuntimeGpuTest, HiddenCudaIsACpuRun) {
  ProgramRun R =
      runProgram("CUDA_VISIBLE_DEVICES= SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=16 "
                 "SKYLINE_ITERATIONS=2",
                 "layers");
  expectCpuRun(R);
  EXPECT_NE(R.Result.find(", cuda: hidden}"), std::string::npos) << R.Result;
}

} // namespace
