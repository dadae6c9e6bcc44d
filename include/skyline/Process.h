//===- Process.h - Running a child with a log and a timeout -----*- C++ -*-===//
//
// Runs a measured program (or a build tool) in its own process group, so that
// a timeout, a crash or an interrupted skyline-check leaves nothing of it
// behind, and says how it ended. Nothing it started outlives it: not the
// compilers ninja puts in groups of their own, not a daemon that called
// setsid() (see runProcess).
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_PROCESS_H
#define SKYLINE_PROCESS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
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
  /// The CPU time it used (user and system, its threads and the children it
  /// waited for included); what other work had of the CPUs meanwhile is
  /// the rest (OtherWork.h).
  double CpuSeconds = 0;
  ProcessEnd End = ProcessEnd::NotStarted;
  int Signal = 0;                // the signal that ended it (Signalled)
  bool CoreDumped = false;       // Signalled with a core file written
  unsigned TimeLimitSeconds = 0; // the limit it ran under (0: none)
  uint64_t OutputBytes = 0;      // what it wrote to stdout and stderr
  uint64_t OutputBytesCut = 0;   // of those, left out of the log (see below)
};

/// The log keeps at most this much of a child's output: its beginning...
constexpr uint64_t LogHeadBytes = 256 << 10;
/// ...and its end, with a line where the rest was cut.
constexpr uint64_t LogTailBytes = 1 << 20;

/// Runs Args[0] (searched in PATH when it has no slash) with Args, in
/// Directory (empty: here), with extra environment entries ("NAME=value",
/// replacing this process's NAME), stdin from /dev/null, stdout and stderr to
/// LogPath through a pipe: a log that would pass LogHeadBytes + LogTailBytes
/// keeps its head and its tail, and says how much was cut between them.
///
/// The child leads a new process group: after TimeoutSeconds (0: no limit)
/// the group gets SIGTERM, then SIGKILL after a short grace period. When the
/// child has ended (however it ended), every process still below this one is
/// killed and reaped: during the run this process is the child subreaper, so
/// orphans, whatever group or session they made, are its children, found by
/// their parent links in /proc.
///
/// SIGINT, SIGTERM or SIGHUP during the run: the child's group gets SIGTERM
/// (ninja stops its compilers and removes their partial outputs; a second
/// interrupt sends SIGKILL), SIGKILL after the grace period, then the sweep
/// above; only then is the signal handed on, to the handler installed before
/// (LLVM's removes its temporary files) or to the default action, so the
/// shell sees 130 or 143. Returns (End is Interrupted) only when that
/// handler returns.
///
/// Not thread-safe: one run at a time per process.
ProcessResult runProcess(llvm::ArrayRef<std::string> Args,
                         llvm::StringRef Directory,
                         llvm::ArrayRef<std::string> Environment,
                         llvm::StringRef LogPath, unsigned TimeoutSeconds);

/// A child that works beside skyline-check's runs (a preamble precompiling
/// during the instrumented build): runProcess's sweep of leftover processes
/// leaves it, and what it started, alone. It ends with skyline-check
/// (PR_SET_PDEATHSIG: with the thread that started it, so start it from one
/// that lives as long as the process) and with this object, where not
/// waited for.
/// Thread-safe: a server may start one while another thread runs.
class BackgroundProcess {
public:
  /// Starts Args[0] (an absolute path) with Args in Directory, stdin from
  /// /dev/null, stdout and stderr to LogPath (truncated).
  static llvm::Expected<std::unique_ptr<BackgroundProcess>>
  start(llvm::ArrayRef<std::string> Args, llvm::StringRef Directory,
        llvm::StringRef LogPath);
  /// Waits for its end: its exit code; -1 where a signal ended it.
  int wait();
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess &) = delete;
  BackgroundProcess &operator=(const BackgroundProcess &) = delete;

private:
  explicit BackgroundProcess(int Pid) : Pid(Pid) {}
  int Pid;
  bool Waited = false;
};

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
