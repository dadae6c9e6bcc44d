//===- FuzzConfig.cpp - libFuzzer target for the .skyline.yaml reader -----===//
//
// The config file goes through parseCommandLine as the tool reads it:
// --config=FILE with one source, whose name no file has (the parser only
// takes names; it reads and writes nothing else).
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"
#include "FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static skyline::fuzz::InputFile File("skyline.yaml");
  std::string Config = "--config=" + File.write(Data, Size);
  const char *Argv[] = {"skyline-check", Config.c_str(),
                        "/nonexistent/skyline-fuzz/train.cpp"};
  (void)skyline::parseCommandLine(3, Argv);
  return 0;
}
