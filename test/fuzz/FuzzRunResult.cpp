//===- FuzzRunResult.cpp - libFuzzer target for readRunResult -------------===//
//
// The result file a measured run writes; the program under measurement may
// write anything there (or be killed while it does).
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "skyline/MeasuredRunYAML.h"

#include "llvm/Support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static skyline::fuzz::InputFile File("result.yaml");
  auto Run = skyline::readRunResult(File.write(Data, Size));
  if (!Run)
    llvm::consumeError(Run.takeError());
  return 0;
}
