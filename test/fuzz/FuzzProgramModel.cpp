//===- FuzzProgramModel.cpp - libFuzzer target for programModelFromYAML ---===//
//
// The program model --analyze-only --format=yaml prints, read back as text.
//
//===----------------------------------------------------------------------===//
#include "skyline/ProgramModelYAML.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  std::string Error;
  (void)skyline::programModelFromYAML(Text, Error);
  return 0;
}
