//===- Process.cpp - Running a child with a log and a timeout -------------===//

#include "skyline/Process.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <chrono>
#include <optional>

extern char **environ;

namespace skyline {

ProcessResult runProcess(llvm::ArrayRef<std::string> Args, llvm::StringRef Directory,
                         llvm::ArrayRef<std::string> Environment, llvm::StringRef LogPath,
                         unsigned TimeoutSeconds) {
  ProcessResult Result;
  // env -C DIR: the child starts in DIR (LLVM's Execute has no working directory).
  std::vector<std::string> Command = {"/usr/bin/env"};
  if (!Directory.empty())
    Command.insert(Command.end(), {"-C", Directory.str()});
  Command.insert(Command.end(), Args.begin(), Args.end());
  std::vector<llvm::StringRef> Argv(Command.begin(), Command.end());

  std::vector<std::string> EnvStorage;
  for (char **Entry = environ; *Entry; ++Entry)
    EnvStorage.push_back(*Entry);
  EnvStorage.insert(EnvStorage.end(), Environment.begin(), Environment.end());
  std::vector<llvm::StringRef> Env(EnvStorage.begin(), EnvStorage.end());

  std::optional<llvm::StringRef> Redirects[] = {llvm::StringRef(""), LogPath, LogPath};
  std::string Message;
  bool ExecutionFailed = false;
  auto Start = std::chrono::steady_clock::now();
  int Code = llvm::sys::ExecuteAndWait(Command[0], Argv, Env, Redirects, TimeoutSeconds,
                                       /*MemoryLimit=*/0, &Message, &ExecutionFailed);
  Result.Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  if (ExecutionFailed) {
    Result.Error = Message;
    return Result;
  }
  if (Code == -2 && llvm::StringRef(Message).contains("timed out")) {
    Result.TimedOut = true; // LLVM killed it
    return Result;
  }
  if (Code < 0) {
    Result.Crashed = true;
    Result.Error = Message;
    return Result;
  }
  Result.ExitCode = Code;
  return Result;
}

std::string tailOfFile(llvm::StringRef Path, unsigned Lines) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  if (!Buffer)
    return "";
  llvm::StringRef Text = (*Buffer)->getBuffer().rtrim();
  size_t Start = Text.size();
  for (unsigned I = 0; I < Lines && Start != llvm::StringRef::npos && Start > 0; ++I)
    Start = Text.rfind('\n', Start - 1);
  return (Start == llvm::StringRef::npos ? Text : Text.drop_front(Start + 1)).str();
}

} // namespace skyline
