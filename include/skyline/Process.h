//===- Process.h - Running a child with a log and a timeout -----*- C++ -*-===//
//
// Runs a measured program (or a build tool) in its own process group, so that
// a timeout, a crash or an interrupted skyline-check leaves nothing of it
// behind, and says how it ended.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_PROCESS_H
#define SKYLINE_PROCESS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace skyline {

/// How a child ended.
enum class ProcessEnd {
  NotStarted,  // Error says why
  Exited,      // ExitCode says how
  Signalled,   // Signal says which; Error describes it
  TimedOut,    // stopped after TimeLimitSeconds
  Interrupted, // stopped because skyline-check got SIGINT/SIGTERM/SIGHUP
};

struct ProcessResult {
  int ExitCode = -1; // -1 when it did not exit normally
  bool TimedOut = false;
  bool Crashed = false; // killed by a signal that skyline-check did not send
  std::string Error;    // why it could not be started, or the crash signal
  double Seconds = 0;
  ProcessEnd End = ProcessEnd::NotStarted;
  int Signal = 0;                // the signal that ended it (Signalled)
  bool CoreDumped = false;       // Signalled with a core file written
  unsigned TimeLimitSeconds = 0; // the limit it ran under (0: none)
};

/// Runs Args[0] (searched in PATH when it has no slash) with Args, in
/// Directory (empty: here), with extra environment entries ("NAME=value",
/// replacing this process's NAME), stdin from /dev/null, stdout and stderr to
/// LogPath. The child leads a new process group: after TimeoutSeconds (0: no
/// limit) the group gets SIGTERM, then SIGKILL after a short grace period;
/// whatever of the group outlives the child is killed when it ends; and if
/// skyline-check is interrupted during the run, the group is killed first.
ProcessResult runProcess(llvm::ArrayRef<std::string> Args,
                         llvm::StringRef Directory,
                         llvm::ArrayRef<std::string> Environment,
                         llvm::StringRef LogPath, unsigned TimeoutSeconds);

/// How the child ended, to follow "the run at batch size 8 ...": "exited with
/// code 3", "crashed: SIGSEGV, ...", "did not finish within 300 s ...".
std::string describeProcessEnd(const ProcessResult &Result);

/// "SIGSEGV: a segmentation fault, ...": a signal's name and a likely cause.
std::string describeSignal(int Signal);

/// The last Lines lines of a file, for error messages.
std::string tailOfFile(llvm::StringRef Path, unsigned Lines);

/// What a program's output says of how it failed: where it died of an
/// uncaught C++ exception, the "terminate called ..." and what() lines (at
/// most Lines), without the stack frames a LibTorch error prints after its
/// message; else the last Lines lines.
std::string failureOfOutput(llvm::StringRef Path, unsigned Lines);

} // namespace skyline

#endif // SKYLINE_PROCESS_H
