//===- SkylineCheck.cpp - The skyline-check command -----------------------===//

#include "CommandLine.h"

#include "llvm/Support/raw_ostream.h"

#include <exception>

namespace {

int run(int Argc, const char **Argv) {
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

int internalError(const char *What) {
  llvm::outs().flush();
  llvm::errs() << "skyline-check: error: internal error: " << What
               << "\nPlease report it with the command that caused it.\n";
  return skyline::ExitToolError;
}

} // namespace

int main(int Argc, const char **Argv) {
  // Every reader returns an error for bad input; an exception that still
  // escapes (a library's, or memory running out) ends the tool with a
  // message and exit 1, never an abort and a core dump.
  try {
    return run(Argc, Argv);
  } catch (const std::bad_alloc &) {
    return internalError("out of memory");
  } catch (const std::exception &E) {
    return internalError(E.what());
  } catch (...) {
    return internalError("an unknown exception");
  }
}
