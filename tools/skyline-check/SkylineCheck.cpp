//===- SkylineCheck.cpp - The skyline-check command -----------------------===//

#include "CommandLine.h"

#include "llvm/Support/raw_ostream.h"

int main(int Argc, const char **Argv) {
  skyline::ParsedCommandLine Parsed = skyline::parseCommandLine(Argc, Argv);
  if (auto *Help = std::get_if<skyline::HelpRequest>(&Parsed)) {
    llvm::outs() << Help->Text;
    return skyline::ExitSuccess;
  }
  if (auto *Error = std::get_if<skyline::UsageError>(&Parsed)) {
    llvm::errs() << "skyline-check: error: " << Error->Message
                 << "\nRun 'skyline-check --help' for usage.\n";
    return skyline::ExitUsageError;
  }
  return skyline::runSkylineCheck(std::get<skyline::CommandLineOptions>(Parsed),
                                  llvm::outs(), llvm::errs());
}
