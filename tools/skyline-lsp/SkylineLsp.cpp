//===- SkylineLsp.cpp - The language server's command line ----------------===//
//
// skyline-lsp [--log=error|info|verbose] [skyline-check options...]
//
// Speaks LSP on stdin and stdout. The options after its own are
// skyline-check's (-p, --batch-size-var, --memory-margin, ...), parsed by
// skyline-check's own parser together with the nearest .skyline.yaml.
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"

#include "skyline/Config.h"
#include "skyline/LspServer.h"

#include "mlir/Tools/lsp-server-support/Logging.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace skyline;

static const char Usage[] =
    "usage: skyline-lsp [--log=error|info|verbose] [--skyline-check=PATH]\n"
    "                   [skyline-check options...]\n"
    "\n"
    "A language server (LSP over stdin and stdout) that shows skyline-check's\n"
    "findings, predictions and batch-size fixes in an editor. The options\n"
    "after its own are skyline-check's (-p DIR, --batch-size-var=NAME, ...);\n"
    "a client adds more with initializationOptions.arguments. See\n"
    "docs/editors.md. --skyline-check names the skyline-check that the\n"
    "skyline.measure command runs (default: the one beside skyline-lsp).\n";

int main(int Argc, char **Argv) {
  // A crash prints its stack to stderr, the client's log. LLVM's signal
  // handlers are registered here, on the main thread, and not by the first
  // file written from the worker (RemoveFileOnSignal): the registering
  // thread gets LLVM's alternate signal stack, which AddressSanitizer then
  // fails to unmap when that thread ends.
  llvm::sys::PrintStackTraceOnErrorSignal(Argv[0]);
  LspServerOptions Options;
  // The skyline-check installed beside this binary measures.
  std::string Self = llvm::sys::fs::getMainExecutable(
      Argv[0], reinterpret_cast<void *>(&main));
  llvm::SmallString<256> Beside(llvm::sys::path::parent_path(Self));
  llvm::sys::path::append(Beside, "skyline-check");
  if (llvm::sys::fs::can_execute(Beside))
    Options.SkylineCheck = std::string(Beside);
  mlir::lsp::Logger::setLogLevel(mlir::lsp::Logger::Level::Error);
  for (int I = 1; I < Argc; ++I) {
    std::string Arg = Argv[I];
    if (Arg == "--help" || Arg == "-h") {
      llvm::outs() << Usage;
      return 0;
    }
    if (Arg == "--version") {
      llvm::outs() << "skyline-lsp " << SKYLINE_VERSION << "\n";
      return 0;
    }
    if (Arg.rfind("--skyline-check=", 0) == 0) {
      Options.SkylineCheck = Arg.substr(16);
      continue;
    }
    if (Arg.rfind("--log=", 0) == 0) {
      std::string Level = Arg.substr(6);
      if (Level == "error")
        mlir::lsp::Logger::setLogLevel(mlir::lsp::Logger::Level::Error);
      else if (Level == "info")
        mlir::lsp::Logger::setLogLevel(mlir::lsp::Logger::Level::Info);
      else if (Level == "verbose")
        mlir::lsp::Logger::setLogLevel(mlir::lsp::Logger::Level::Debug);
      else {
        llvm::errs() << "skyline-lsp: error: unknown log level '" << Level
                     << "' (error, info or verbose)\n";
        return 2;
      }
      continue;
    }
    Options.Arguments.push_back(Arg);
  }
  Options.ParseArguments = [](const std::vector<std::string> &Arguments)
      -> llvm::Expected<CommandLineOptions> {
    std::vector<const char *> Argv{"skyline-check"};
    for (const std::string &Arg : Arguments)
      Argv.push_back(Arg.c_str());
    ParsedCommandLine Parsed = parseCommandLine(int(Argv.size()), Argv.data());
    if (auto *Parsed_ = std::get_if<CommandLineOptions>(&Parsed))
      return std::move(*Parsed_);
    if (auto *Error = std::get_if<UsageError>(&Parsed))
      return llvm::createStringError(std::errc::invalid_argument, "%s",
                                     Error->Message.c_str());
    return llvm::createStringError(std::errc::invalid_argument,
                                   "the arguments ask for help, not a run");
  };
  // Nothing but the protocol may go to stdout.
  return runLspServer(stdin, llvm::outs(), Options);
}
