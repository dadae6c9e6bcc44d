//===- FuzzCompileDatabase.cpp - libFuzzer target for compile commands ----===//
//
// A repository's compile_commands.json through the tool's loader and the
// sanitizer (CompileCommandSanitizer.h), as -p DIR reads it. Beyond "no
// crash", the sanitizer must be settled by one pass: a command it let
// through has nothing left for a second pass to drop (an option that loads
// code or writes a file hidden from the first would show here).
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "skyline/CompilationSetup.h"
#include "skyline/CompileCommandSanitizer.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdlib>
#include <sys/stat.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static const std::string Dir = [] {
    const char *Root = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string Made =
        std::string(Root) + "/skyline-fuzz-cdb-" + std::to_string(getpid());
    mkdir(Made.c_str(), 0700);
    return Made;
  }();
  std::string Path = Dir + "/compile_commands.json";
  std::FILE *Out = std::fopen(Path.c_str(), "wb");
  if (!Out || std::fwrite(Data, 1, Size, Out) != Size || std::fclose(Out))
    std::exit(2);
  auto Setup = skyline::loadCompilationSetup(
      Dir, std::nullopt, {"/nonexistent/skyline-fuzz/train.cpp"});
  if (!Setup) {
    llvm::consumeError(Setup.takeError());
    return 0;
  }
  skyline::SanitizerOptions Options;
  Options.TrustedRoots.push_back(Dir);
  for (const clang::tooling::CompileCommand &Command :
       Setup->Database->getAllCompileCommands()) {
    skyline::SanitizedCommand Again = skyline::sanitizeCompileCommand(
        Command.CommandLine, Command.Directory, Command.Filename, Options);
    if (!Again.Dropped.empty()) {
      std::fprintf(stderr, "a second pass dropped %s from '%s'\n",
                   skyline::describeDropped(Again.Dropped).c_str(),
                   llvm::join(Command.CommandLine, "' '").c_str());
      std::abort();
    }
  }
  return 0;
}
