//===- RuntimeProgramRun.h - Runs RuntimeProgram for a test -----*- C++ -*-===//
//
// The runtime tests start the real RuntimeProgram (SKYLINE_RUNTIME_PROGRAM)
// with an environment and read what it printed and the result it wrote.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_TEST_RUNTIMEPROGRAMRUN_H
#define SKYLINE_TEST_RUNTIMEPROGRAMRUN_H

#include "gtest/gtest.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

struct ProgramRun {
  int ExitCode = -1;
  std::string Output;
  std::string Result;
};

/// Runs RuntimeProgram with Environment and Arguments. When Environment
/// names SKYLINE_RESULT, the result goes to a file of this test's own
/// (ctest runs tests in parallel), read into Result and removed.
inline ProgramRun runProgram(const std::string &Environment,
                             const std::string &Arguments = "") {
  std::string ResultPath =
      ::testing::TempDir() + "skyline-run-" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
      std::to_string(getpid()) + ".yaml";
  std::remove(ResultPath.c_str());
  std::string Command = "env " + Environment +
                        (Environment.find("SKYLINE_RESULT") == std::string::npos
                             ? ""
                             : " SKYLINE_RESULT=" + ResultPath) +
                        " " SKYLINE_RUNTIME_PROGRAM " " + Arguments + " 2>&1";
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

#endif // SKYLINE_TEST_RUNTIMEPROGRAMRUN_H
