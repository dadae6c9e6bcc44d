//===- Process.h - Running a child with a log and a timeout -----*- C++ -*-===//
#ifndef SKYLINE_PROCESS_H
#define SKYLINE_PROCESS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace skyline {

struct ProcessResult {
  int ExitCode = -1;     // -1 when it did not exit normally
  bool TimedOut = false;
  bool Crashed = false;  // killed by a signal
  std::string Error;     // why it could not be started
  double Seconds = 0;
};

/// Runs Args[0] with Args, in Directory (empty: here), with extra environment
/// entries ("NAME=value", added to this process's environment), stdout and
/// stderr to LogPath, killed after TimeoutSeconds (0: no limit).
ProcessResult runProcess(llvm::ArrayRef<std::string> Args, llvm::StringRef Directory,
                         llvm::ArrayRef<std::string> Environment, llvm::StringRef LogPath,
                         unsigned TimeoutSeconds);

/// The last Lines lines of a file, for error messages.
std::string tailOfFile(llvm::StringRef Path, unsigned Lines);

} // namespace skyline

#endif // SKYLINE_PROCESS_H
