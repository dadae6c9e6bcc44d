//===- Process.cpp - Running a child with a log and a timeout -------------===//
//
// The child leads its own process group, so that everything it starts (data
// loader workers, helper processes) can be stopped with one kill(): on a
// timeout, after it ends, and when skyline-check itself is interrupted. POSIX
// only (posix_spawn, waitid).
//
//===----------------------------------------------------------------------===//

#include "skyline/Process.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <optional>
#include <spawn.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace skyline {
namespace {

using Clock = std::chrono::steady_clock;

/// How long a timed-out group has between SIGTERM and SIGKILL: enough to
/// flush a log, short enough not to stall the next run.
constexpr std::chrono::seconds GracePeriod(2);

/// What stops skyline-check from outside while a run is going; the run's group
/// does not get them from the terminal, since it is not the foreground group.
constexpr int InterruptSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int NumInterruptSignals = std::size(InterruptSignals);

// Shared with the signal handler, so plain sig_atomic_t values and actions
// written only while the signals are blocked.
volatile sig_atomic_t RunningGroup = 0;
volatile sig_atomic_t WasInterrupted = 0;
struct sigaction PreviousActions[NumInterruptSignals];
bool Installed[NumInterruptSignals];

/// What Signal did before our handler, or null when it was the default.
const struct sigaction *previousHandler(int Signal) {
  for (int I = 0; I < NumInterruptSignals; ++I) {
    if (InterruptSignals[I] != Signal)
      continue;
    const struct sigaction &Previous = PreviousActions[I];
    bool IsDefault =
        !(Previous.sa_flags & SA_SIGINFO) &&
        (Previous.sa_handler == SIG_DFL || Previous.sa_handler == SIG_IGN);
    return IsDefault ? nullptr : &Previous;
  }
  return nullptr;
}

/// Hands a signal on as if our handler had not been there: to the previous
/// handler (LLVM's removes its temporary files), or to the default action.
void passOn(int Signal, siginfo_t *Info, void *Context) {
  if (const struct sigaction *Previous = previousHandler(Signal)) {
    if (Previous->sa_flags & SA_SIGINFO)
      return Previous->sa_sigaction(Signal, Info, Context);
    return Previous->sa_handler(Signal);
  }
  struct sigaction Default = {};
  Default.sa_handler = SIG_DFL;
  sigaction(Signal, &Default, nullptr);
  // The signal is blocked while its handler runs: unblock it so that raise()
  // ends this process now.
  sigset_t Unblock;
  sigemptyset(&Unblock);
  sigaddset(&Unblock, Signal);
  sigprocmask(SIG_UNBLOCK, &Unblock, nullptr);
  raise(Signal);
}

/// Async-signal-safe only: the run's group must not outlive skyline-check.
extern "C" void onInterrupt(int Signal, siginfo_t *Info, void *Context) {
  int SavedErrno = errno;
  pid_t Group = RunningGroup;
  if (Group > 0)
    kill(-Group, SIGKILL); // no one would be left to send SIGKILL later
  WasInterrupted = 1;
  passOn(Signal, Info, Context);
  errno = SavedErrno;
}

/// Forwards interrupts to the run's group while it lives. Construct it before
/// starting the child: the signals stay blocked until started(), so none can
/// come between the spawn and the handler knowing the group.
class InterruptForwarding {
public:
  InterruptForwarding() {
    sigset_t Block = interruptSet();
    pthread_sigmask(SIG_BLOCK, &Block, &OriginalMask);
    WasInterrupted = 0;
    for (int I = 0; I < NumInterruptSignals; ++I)
      install(I);
  }

  ~InterruptForwarding() {
    sigset_t Block = interruptSet();
    pthread_sigmask(SIG_BLOCK, &Block, nullptr);
    RunningGroup = 0;
    for (int I = 0; I < NumInterruptSignals; ++I)
      if (Installed[I])
        sigaction(InterruptSignals[I], &PreviousActions[I], nullptr);
    pthread_sigmask(SIG_SETMASK, &OriginalMask, nullptr);
  }

  InterruptForwarding(const InterruptForwarding &) = delete;
  InterruptForwarding &operator=(const InterruptForwarding &) = delete;

  /// The mask the child should start with: this thread's before the run.
  const sigset_t &originalMask() const { return OriginalMask; }

  void started(pid_t Group) {
    RunningGroup = Group;
    pthread_sigmask(SIG_SETMASK, &OriginalMask, nullptr);
  }

private:
  static sigset_t interruptSet() {
    sigset_t Set;
    sigemptyset(&Set);
    for (int Signal : InterruptSignals)
      sigaddset(&Set, Signal);
    return Set;
  }

  /// A signal that skyline-check ignores (nohup) stays ignored.
  static void install(int I) {
    Installed[I] = false;
    sigaction(InterruptSignals[I], nullptr, &PreviousActions[I]);
    if (PreviousActions[I].sa_handler == SIG_IGN &&
        !(PreviousActions[I].sa_flags & SA_SIGINFO))
      return;
    struct sigaction Action = {};
    Action.sa_sigaction = onInterrupt;
    Action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&Action.sa_mask); // one interrupt at a time
    Installed[I] = sigaction(InterruptSignals[I], &Action, nullptr) == 0;
  }

  sigset_t OriginalMask;
};

/// posix_spawn's file actions and attributes, destroyed with the object.
struct SpawnSetup {
  SpawnSetup() {
    posix_spawn_file_actions_init(&Actions);
    posix_spawnattr_init(&Attributes);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&Actions);
    posix_spawnattr_destroy(&Attributes);
  }
  SpawnSetup(const SpawnSetup &) = delete;
  SpawnSetup &operator=(const SpawnSetup &) = delete;

  posix_spawn_file_actions_t Actions;
  posix_spawnattr_t Attributes;
};

/// This process's environment with Extra's entries replacing those of the
/// same name (a duplicate would lose: getenv() finds the first).
std::vector<std::string> childEnvironment(llvm::ArrayRef<std::string> Extra) {
  llvm::StringSet<> Replaced;
  for (llvm::StringRef Entry : Extra)
    Replaced.insert(Entry.split('=').first);
  std::vector<std::string> Result;
  for (char **Entry = environ; *Entry; ++Entry)
    if (!Replaced.contains(llvm::StringRef(*Entry).split('=').first))
      Result.push_back(*Entry);
  Result.insert(Result.end(), Extra.begin(), Extra.end());
  return Result;
}

std::vector<char *> pointersTo(std::vector<std::string> &Strings) {
  std::vector<char *> Pointers;
  for (std::string &S : Strings)
    Pointers.push_back(S.data());
  Pointers.push_back(nullptr);
  return Pointers;
}

/// Starts the child as the leader of a new process group, stdin from
/// /dev/null and stdout and stderr to LogFd.
llvm::Expected<pid_t> spawnChild(llvm::ArrayRef<std::string> Args,
                                 llvm::StringRef Directory,
                                 std::vector<std::string> Environment,
                                 int LogFd, const sigset_t &Mask) {
  if (Args.empty())
    return llvm::createStringError(std::errc::invalid_argument,
                                   "no command to run");
  if (!Directory.empty() && !llvm::sys::fs::is_directory(Directory))
    return llvm::createStringError(std::errc::no_such_file_or_directory,
                                   "its working directory '%s' does not exist",
                                   Directory.str().c_str());
  SpawnSetup Setup;
  posix_spawn_file_actions_addopen(&Setup.Actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&Setup.Actions, LogFd, 1);
  posix_spawn_file_actions_adddup2(&Setup.Actions, LogFd, 2);
  std::string Dir = Directory.str();
  if (!Dir.empty())
    posix_spawn_file_actions_addchdir_np(&Setup.Actions, Dir.c_str());

  // SIGTERM must reach the program's default action (or its handler) for
  // the timeout's polite stop, even where skyline-check ignores it.
  sigset_t Default;
  sigemptyset(&Default);
  sigaddset(&Default, SIGTERM);
  posix_spawnattr_setsigdefault(&Setup.Attributes, &Default);
  posix_spawnattr_setsigmask(&Setup.Attributes, &Mask);
  posix_spawnattr_setpgroup(&Setup.Attributes, 0);
  posix_spawnattr_setflags(&Setup.Attributes, POSIX_SPAWN_SETPGROUP |
                                                  POSIX_SPAWN_SETSIGDEF |
                                                  POSIX_SPAWN_SETSIGMASK);

  std::vector<std::string> ArgStorage(Args.begin(), Args.end());
  std::vector<char *> Argv = pointersTo(ArgStorage);
  std::vector<char *> Envp = pointersTo(Environment);
  pid_t Pid = 0;
  // glibc's posix_spawnp reports a failed exec (missing program, bad
  // directory) here rather than as exit code 127.
  int Error = posix_spawnp(&Pid, Argv[0], &Setup.Actions, &Setup.Attributes,
                           Argv.data(), Envp.data());
  if (Error != 0)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "cannot run '%s': %s", Argv[0],
                                   std::strerror(Error));
  return Pid;
}

/// Waits for the child to end, without reaping it: its zombie keeps the
/// group's id from being reused while we kill what is left of the group.
/// False when Deadline came first.
bool waitForEnd(pid_t Pid, std::optional<Clock::time_point> Deadline) {
  auto Pause = std::chrono::milliseconds(1);
  while (true) {
    siginfo_t Info = {};
    int Options = WEXITED | WNOWAIT | (Deadline ? WNOHANG : 0);
    int Status = waitid(P_PID, Pid, &Info, Options);
    if (Status == 0 && Info.si_pid == Pid)
      return true;
    if (Status != 0 && errno != EINTR)
      return true; // nothing left to wait for
    if (!Deadline)
      continue;
    auto Now = Clock::now();
    if (Now >= *Deadline)
      return false;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(Pause, *Deadline - Now));
    Pause = std::min(Pause * 2, std::chrono::milliseconds(20));
  }
}

/// Stops a group that overran: SIGTERM so it can flush its output, SIGKILL
/// after the grace period for whoever ignored it.
void stopGroup(pid_t Pid) {
  kill(-Pid, SIGTERM);
  waitForEnd(Pid, Clock::now() + GracePeriod);
}

/// Makes the run's orphans (what the program forked, once the program is
/// gone) children of this process while it runs, so that they are reaped
/// here: pid 1 of a container may never reap them.
class OrphanAdoption {
public:
#ifdef __linux__
  OrphanAdoption() {
    prctl(PR_GET_CHILD_SUBREAPER, &Previous);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
  }
  ~OrphanAdoption() { prctl(PR_SET_CHILD_SUBREAPER, Previous); }
#endif

private:
  int Previous = 0;
};

/// Lets a killed group die before the next run starts: its memory, on the GPU
/// too, is free only then. Bounded: a member may be stuck in the kernel, or
/// be another parent's zombie.
void reapGroup(pid_t Group) {
  auto Until = Clock::now() + std::chrono::seconds(5);
  auto Pause = std::chrono::milliseconds(1);
  while (true) {
    while (waitpid(-Group, nullptr, WNOHANG) > 0)
      ;
    if (kill(-Group, 0) != 0 || Clock::now() >= Until)
      return;
    std::this_thread::sleep_for(Pause);
    Pause = std::min(Pause * 2, std::chrono::milliseconds(20));
  }
}

/// The child's wait status; none when someone else took it (SIGCHLD set to
/// SIG_IGN reaps children unasked).
std::optional<int> reap(pid_t Pid) {
  int Status = 0;
  while (waitpid(Pid, &Status, 0) < 0)
    if (errno != EINTR)
      return std::nullopt;
  return Status;
}

void recordStatus(std::optional<int> Reaped, ProcessResult &Result) {
  if (!Reaped) {
    Result.Crashed = true;
    Result.Error = "its exit status was lost (is SIGCHLD ignored?)";
    return;
  }
  int Status = *Reaped;
  if (WIFEXITED(Status)) {
    Result.End = ProcessEnd::Exited;
    Result.ExitCode = WEXITSTATUS(Status);
    return;
  }
  if (!WIFSIGNALED(Status))
    return;
  Result.End = ProcessEnd::Signalled;
  Result.Crashed = true;
  Result.Signal = WTERMSIG(Status);
  Result.CoreDumped = WCOREDUMP(Status);
  Result.Error = describeSignal(Result.Signal);
  if (Result.CoreDumped)
    Result.Error += " (core dumped)";
}

/// Runs an already started child to its end, within the time limit.
void superviseChild(pid_t Pid, Clock::time_point Start, ProcessResult &Result) {
  std::optional<Clock::time_point> Deadline;
  if (Result.TimeLimitSeconds)
    Deadline = Start + std::chrono::seconds(Result.TimeLimitSeconds);
  bool TimedOut = !waitForEnd(Pid, Deadline);
  if (TimedOut)
    stopGroup(Pid);
  Result.Seconds = std::chrono::duration<double>(Clock::now() - Start).count();
  // Whatever the child started and left running (orphaned workers, or the
  // stubborn part of a timed-out group) ends with it. Daemons that made
  // their own session escape this, as they mean to.
  kill(-Pid, SIGKILL);
  recordStatus(reap(Pid), Result);
  reapGroup(Pid);
  if (TimedOut || WasInterrupted) {
    Result.End = TimedOut ? ProcessEnd::TimedOut : ProcessEnd::Interrupted;
    Result.TimedOut = TimedOut;
    Result.Crashed = false;
    Result.Error.clear();
    Result.ExitCode = -1;
  }
}

struct SignalDescription {
  int Signal;
  const char *Name;
  const char *Meaning;
};

const SignalDescription KnownSignals[] = {
    {SIGSEGV, "SIGSEGV", "a segmentation fault, an invalid memory access"},
    {SIGABRT, "SIGABRT",
     "aborted, by std::abort(), a failed assert() or an uncaught exception"},
    {SIGKILL, "SIGKILL",
     "killed, perhaps by the system's out-of-memory killer"},
    {SIGBUS, "SIGBUS",
     "a bus error, an invalid memory access (a truncated mapped file?)"},
    {SIGFPE, "SIGFPE", "an arithmetic error, such as an integer division by 0"},
    {SIGILL, "SIGILL", "an illegal instruction (built for another CPU?)"},
    {SIGTRAP, "SIGTRAP", "a trap, such as __builtin_trap() or a breakpoint"},
    {SIGTERM, "SIGTERM", "terminated by another process"},
    {SIGINT, "SIGINT", "interrupted"},
    {SIGHUP, "SIGHUP", "its terminal hung up"},
    {SIGQUIT, "SIGQUIT", "quit"},
    {SIGPIPE, "SIGPIPE", "a write to a closed pipe or socket"},
    {SIGXCPU, "SIGXCPU", "over its CPU time limit (ulimit -t)"},
    {SIGXFSZ, "SIGXFSZ", "over its file size limit (ulimit -f)"},
    {SIGSYS, "SIGSYS", "a bad system call"},
};

} // namespace

ProcessResult runProcess(llvm::ArrayRef<std::string> Args,
                         llvm::StringRef Directory,
                         llvm::ArrayRef<std::string> Environment,
                         llvm::StringRef LogPath, unsigned TimeoutSeconds) {
  ProcessResult Result;
  Result.TimeLimitSeconds = TimeoutSeconds;
  std::string Log = LogPath.empty() ? "/dev/null" : LogPath.str();
  int LogFd = open(Log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (LogFd < 0) {
    Result.Error =
        "cannot write its log '" + Log + "': " + std::strerror(errno);
    return Result;
  }

  InterruptForwarding Forwarding;
  OrphanAdoption Adoption;
  auto Start = Clock::now();
  auto Pid = spawnChild(Args, Directory, childEnvironment(Environment), LogFd,
                        Forwarding.originalMask());
  if (!Pid) {
    Result.Error = llvm::toString(Pid.takeError());
    // Callers show the log's end when a build step fails: say it there too.
    llvm::raw_fd_ostream(LogFd, /*shouldClose=*/false)
        << "skyline-check: " << Result.Error << "\n";
    close(LogFd);
    return Result;
  }
  close(LogFd);
  Forwarding.started(*Pid);
  superviseChild(*Pid, Start, Result);
  return Result;
}

std::string describeSignal(int Signal) {
  for (const SignalDescription &Known : KnownSignals)
    if (Known.Signal == Signal)
      return std::string(Known.Name) + ": " + Known.Meaning;
  const char *Text = strsignal(Signal);
  return "signal " + std::to_string(Signal) + " (" + (Text ? Text : "unknown") +
         ")";
}

std::string describeProcessEnd(const ProcessResult &Result) {
  switch (Result.End) {
  case ProcessEnd::NotStarted:
    return "could not start: " + Result.Error;
  case ProcessEnd::Exited:
    return "exited with code " + std::to_string(Result.ExitCode);
  case ProcessEnd::Signalled:
    return "crashed (" + Result.Error + ")";
  case ProcessEnd::TimedOut:
    return "did not finish within " + std::to_string(Result.TimeLimitSeconds) +
           " s";
  case ProcessEnd::Interrupted:
    return "was stopped because skyline-check was interrupted";
  }
  return "ended";
}

std::string tailOfFile(llvm::StringRef Path, unsigned Lines) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  if (!Buffer)
    return "";
  llvm::StringRef Text = (*Buffer)->getBuffer().rtrim();
  size_t Start = Text.size();
  for (unsigned I = 0; I < Lines && Start != llvm::StringRef::npos && Start > 0;
       ++I)
    Start = Text.rfind('\n', Start - 1);
  return (Start == llvm::StringRef::npos ? Text : Text.drop_front(Start + 1))
      .str();
}

std::string failureOfOutput(llvm::StringRef Path, unsigned Lines) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  if (!Buffer)
    return "";
  llvm::StringRef Text = (*Buffer)->getBuffer().rtrim();
  size_t What = Text.rfind("what():");
  if (What == llvm::StringRef::npos)
    return tailOfFile(Path, Lines);
  size_t Start = Text.rfind('\n', What);
  Start = Start == llvm::StringRef::npos ? 0 : Start + 1;
  if (Start > 1) {
    size_t Before = Text.rfind('\n', Start - 2);
    Before = Before == llvm::StringRef::npos ? 0 : Before + 1;
    if (Text.substr(Before).starts_with("terminate called"))
      Start = Before;
  }
  llvm::SmallVector<llvm::StringRef, 8> Kept;
  llvm::StringRef Rest = Text.drop_front(Start);
  while (!Rest.empty() && Kept.size() < Lines) {
    auto [Line, Next] = Rest.split('\n');
    // LibTorch's c10::Error: its message, then where it was raised and
    // the frames, which say less.
    if (Line.starts_with("Exception raised from") ||
        Line.starts_with("frame #"))
      break;
    Kept.push_back(Line);
    Rest = Next;
  }
  return llvm::join(Kept, "\n");
}

} // namespace skyline
