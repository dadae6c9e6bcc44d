//===- FuzzReport.cpp - libFuzzer target for readReport -------------------===//
//
// A saved report (--from-report, --baseline) is the file CI hands in most.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "skyline/RunReport.h"

#include "llvm/Support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static skyline::fuzz::InputFile File("report.yaml");
  auto Report = skyline::readReport(File.write(Data, Size));
  if (!Report)
    llvm::consumeError(Report.takeError());
  return 0;
}
