//===- LspServer.h - skyline-lsp: the analysis in the editor ----*- C++ -*-===//
//
// A language server over MLIR's LSP support library (its JSON-RPC transport,
// message handler and protocol types). It only wires existing stages: the
// options as skyline-check parses them (the same .skyline.yaml and -p),
// the front end on open and save, the rules on the latest measurement's
// report, and LspDocument.h's hovers, hints and actions. docs/editors.md.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_LSPSERVER_H
#define SKYLINE_LSPSERVER_H

#include "skyline/Driver.h"

#include "llvm/Support/Error.h"

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace skyline {

struct LspServerOptions {
  /// skyline-check's command line (without the program name) to options:
  /// the tool passes the CLI's own parser, so a .skyline.yaml and -p mean
  /// what they mean there. An error is a usage error's message.
  std::function<llvm::Expected<CommandLineOptions>(
      const std::vector<std::string> &Arguments)>
      ParseArguments;
  /// Options for every program, from skyline-lsp's command line; the
  /// client's initializationOptions.arguments follow them.
  std::vector<std::string> Arguments;
  /// The skyline-check that measures the program for the `skyline.measure`
  /// command (workspace/executeCommand); empty: no such command.
  std::string SkylineCheck;
};

/// Serves one client on In and Out until `exit` or the end of In. In is
/// read through its file descriptor, each message checked and bounded
/// first (LspInputFilter.h). Returns the process exit code: 0 after
/// shutdown and exit, 1 when the client went away without shutdown (as the
/// protocol asks). What the server started ends first: a preamble's clang
/// is killed, a measurement's skyline-check stopped (SIGTERM) and waited
/// for. An analysis still running then is not waited for: the process ends
/// at once (std::_Exit).
int runLspServer(std::FILE *In, llvm::raw_ostream &Out,
                 const LspServerOptions &Options);

} // namespace skyline

#endif // SKYLINE_LSPSERVER_H
