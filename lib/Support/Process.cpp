//===- Process.cpp - Running a child with a log and a timeout -------------===//
//
// The child leads its own process group, so that everything it starts (data
// loader workers, helper processes) can be stopped with one kill(): on a
// timeout and when skyline-check itself is interrupted. What left the group
// (ninja runs each compiler in a group of its own; a daemon calls setsid())
// is found afterwards by its parent links: this process is the child
// subreaper during a run, so every orphan below it becomes its child, and
// nothing is left once the run ends. No cgroup is needed, nor used. The
// child's output reaches the log through a pipe that this process reads, so
// that the log can be bounded. POSIX, with Linux's /proc and prctl().
//
//===----------------------------------------------------------------------===//

#include "skyline/Process.h"

#include "skyline/Units.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <poll.h>
#include <set>
#include <spawn.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#endif
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace skyline {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// How long a stopped group has between SIGTERM and SIGKILL: enough to
/// flush a log or for ninja to remove partial outputs, short enough not to
/// stall the next run.
constexpr std::chrono::seconds GracePeriod(2);

/// The most the sweep of leftover processes waits for them to die: one
/// stuck in the kernel is left to it.
constexpr std::chrono::seconds SweepPatience(5);

/// What stops skyline-check from outside while a run is going; the run's group
/// does not get them from the terminal, since it is not the foreground group.
constexpr int InterruptSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int NumInterruptSignals = std::size(InterruptSignals);

// Shared with the signal handler, so plain sig_atomic_t values and actions
// written only while the signals are blocked.
volatile sig_atomic_t RunningGroup = 0;
volatile sig_atomic_t PendingSignal = 0; // the first interrupt of the run
volatile sig_atomic_t Interrupts = 0;
volatile sig_atomic_t WakeFd = -1; // wakes the supervising loop's poll()
struct sigaction PreviousActions[NumInterruptSignals];
bool Installed[NumInterruptSignals];

/// Async-signal-safe only. Records the signal and asks the run's group to
/// stop (SIGTERM: ninja then stops its compilers and removes their partial
/// outputs); an impatient second interrupt kills it. The supervising loop
/// does the rest and hands the signal on.
extern "C" void onInterrupt(int Signal) {
  int SavedErrno = errno;
  if (!PendingSignal)
    PendingSignal = Signal;
  pid_t Group = RunningGroup;
  if (Group > 0)
    kill(-Group, Interrupts == 0 ? SIGTERM : SIGKILL);
  Interrupts = Interrupts + 1;
  if (int Fd = WakeFd; Fd >= 0) {
    char Byte = 0;
    [[maybe_unused]] ssize_t Ignored = write(Fd, &Byte, 1);
  }
  errno = SavedErrno;
}

/// Catches interrupts while a run lives. Construct it before starting the
/// child: the signals stay blocked until started(), so none can come between
/// the spawn and the handler knowing the group.
class InterruptForwarding {
public:
  explicit InterruptForwarding(int Wake) {
    sigset_t Block = interruptSet();
    pthread_sigmask(SIG_BLOCK, &Block, &OriginalMask);
    PendingSignal = 0;
    Interrupts = 0;
    WakeFd = Wake;
    for (int I = 0; I < NumInterruptSignals; ++I)
      install(I);
  }

  ~InterruptForwarding() {
    sigset_t Block = interruptSet();
    pthread_sigmask(SIG_BLOCK, &Block, nullptr);
    RunningGroup = 0;
    WakeFd = -1;
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

  /// The interrupt received during the run, 0 if none.
  static int received() { return PendingSignal; }

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
    Action.sa_handler = onInterrupt;
    Action.sa_flags = SA_RESTART;
    sigfillset(&Action.sa_mask); // one interrupt at a time
    Installed[I] = sigaction(InterruptSignals[I], &Action, nullptr) == 0;
  }

  sigset_t OriginalMask;
};

/// A file descriptor closed with the object.
class FileDescriptor {
public:
  explicit FileDescriptor(int Fd = -1) : Fd(Fd) {}
  ~FileDescriptor() { reset(); }
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  int get() const { return Fd; }
  void reset(int New = -1) {
    if (Fd >= 0)
      close(Fd);
    Fd = New;
  }

private:
  int Fd;
};

/// Both ends of a new pipe, closed on exec; the read end does not block
/// (both ends when Nonblocking: a signal handler must never block on it).
bool makePipe(FileDescriptor &Read, FileDescriptor &Write, bool Nonblocking) {
  int Fds[2];
  if (pipe2(Fds, O_CLOEXEC | (Nonblocking ? O_NONBLOCK : 0)) != 0)
    return false;
  Read.reset(Fds[0]);
  Write.reset(Fds[1]);
  fcntl(Fds[0], F_SETFL, fcntl(Fds[0], F_GETFL) | O_NONBLOCK);
  return true;
}

bool writeAll(int Fd, const char *Data, size_t Size) {
  while (Size > 0) {
    ssize_t Done = write(Fd, Data, Size);
    if (Done < 0 && errno == EINTR)
      continue;
    if (Done <= 0)
      return false;
    Data += Done;
    Size -= size_t(Done);
  }
  return true;
}

/// The child's output on its way to the log: the first LogHeadBytes are
/// written as they come (a log can be followed during the run), the last
/// LogTailBytes are kept in a ring and written at the end, after a line
/// that says how much was cut between them. A program that prints megabytes
/// a step cannot fill the disk, and the end, where errors are, is kept.
class LogCapture {
public:
  explicit LogCapture(int Fd) : Fd(Fd) {}

  void add(const char *Data, size_t Size) {
    Total += Size;
    size_t ToHead = std::min<uint64_t>(Size, LogHeadBytes - HeadWritten);
    if (ToHead) {
      writeAll(Fd, Data, ToHead);
      HeadWritten += ToHead;
      LastHeadChar = Data[ToHead - 1];
      Data += ToHead;
      Size -= ToHead;
    }
    if (Size)
      addToTail(Data, Size);
  }

  /// Reads what the pipe holds now; false at its end (every writer gone).
  bool readFrom(int Pipe) {
    char Buffer[64 << 10];
    while (true) {
      ssize_t Got = read(Pipe, Buffer, sizeof(Buffer));
      if (Got > 0) {
        add(Buffer, size_t(Got));
        continue;
      }
      if (Got < 0 && errno == EINTR)
        continue;
      return Got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
  }

  /// Writes the kept tail; returns the bytes cut.
  uint64_t finish() {
    if (Ring.empty())
      return 0;
    std::string Tail = tail();
    uint64_t Cut = Total - HeadWritten - Tail.size();
    if (Cut) {
      // The tail starts at a line, so the cut is between whole lines.
      size_t Line = Tail.find('\n');
      if (Line != std::string::npos && Line < 4096) {
        Cut += Line + 1;
        Tail.erase(0, Line + 1);
      }
      std::string Note = std::string(LastHeadChar == '\n' ? "" : "\n") +
                         "[skyline-check: " + formatBytes(int64_t(Cut)) +
                         " of output cut here; the log keeps the first " +
                         formatBytes(LogHeadBytes) + " and the last " +
                         formatBytes(int64_t(Tail.size())) + "]\n";
      writeAll(Fd, Note.data(), Note.size());
    }
    writeAll(Fd, Tail.data(), Tail.size());
    return Cut;
  }

  uint64_t total() const { return Total; }

private:
  void addToTail(const char *Data, size_t Size) {
    if (Ring.empty())
      Ring.resize(LogTailBytes);
    if (Size >= Ring.size()) {
      Data += Size - Ring.size();
      Size = Ring.size();
    }
    size_t Free = Ring.size() - RingSize;
    if (Size > Free) {
      RingStart = (RingStart + (Size - Free)) % Ring.size();
      RingSize -= Size - Free;
    }
    size_t At = (RingStart + RingSize) % Ring.size();
    size_t First = std::min(Size, Ring.size() - At);
    std::memcpy(Ring.data() + At, Data, First);
    std::memcpy(Ring.data(), Data + First, Size - First);
    RingSize += Size;
  }

  std::string tail() const {
    std::string Text;
    Text.reserve(RingSize);
    size_t First = std::min(RingSize, Ring.size() - RingStart);
    Text.append(Ring.data() + RingStart, First);
    Text.append(Ring.data(), RingSize - First);
    return Text;
  }

  int Fd;
  uint64_t Total = 0;
  uint64_t HeadWritten = 0;
  char LastHeadChar = '\n';
  std::vector<char> Ring; // allocated once the head is full
  size_t RingStart = 0, RingSize = 0;
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
/// /dev/null and stdout and stderr to OutputFd.
llvm::Expected<pid_t> spawnChild(llvm::ArrayRef<std::string> Args,
                                 llvm::StringRef Directory,
                                 std::vector<std::string> Environment,
                                 int OutputFd, const sigset_t &Mask) {
  if (Args.empty())
    return llvm::createStringError(std::errc::invalid_argument,
                                   "no command to run");
  if (!Directory.empty() && !llvm::sys::fs::is_directory(Directory))
    return llvm::createStringError(std::errc::no_such_file_or_directory,
                                   "its working directory '%s' does not exist",
                                   Directory.str().c_str());
  SpawnSetup Setup;
  posix_spawn_file_actions_addopen(&Setup.Actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&Setup.Actions, OutputFd, 1);
  posix_spawn_file_actions_adddup2(&Setup.Actions, OutputFd, 2);
  std::string Dir = Directory.str();
  if (!Dir.empty())
    posix_spawn_file_actions_addchdir_np(&Setup.Actions, Dir.c_str());

  // SIGTERM must reach the program's default action (or its handler) for
  // the polite stop, even where skyline-check ignores it; SIGPIPE too,
  // should this process die and the log's pipe break.
  sigset_t Default;
  sigemptyset(&Default);
  sigaddset(&Default, SIGTERM);
  sigaddset(&Default, SIGPIPE);
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

/// Whether the child has ended, without reaping it: its zombie keeps the
/// group's id from being reused while we kill what is left of the group.
bool hasEnded(pid_t Pid) {
  while (true) {
    siginfo_t Info = {};
    if (waitid(P_PID, Pid, &Info, WEXITED | WNOWAIT | WNOHANG) == 0)
      return Info.si_pid == Pid;
    if (errno != EINTR)
      return true; // nothing left to wait for (SIGCHLD ignored reaps it)
  }
}

/// A descriptor that poll() finds readable once Pid has ended (Linux 5.3),
/// or -1: the loop then looks every few milliseconds.
int pidDescriptor(pid_t Pid) {
#if defined(__linux__) && defined(SYS_pidfd_open)
  return int(syscall(SYS_pidfd_open, Pid, 0));
#else
  (void)Pid;
  return -1;
#endif
}

/// Makes the run's orphans (what the program forked, once the program is
/// gone, whatever group or session they made) children of this process
/// while it runs, so that the sweep finds and reaps them: pid 1 of a
/// container may never reap them.
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

/// Pid's parent from /proc/Pid/stat, or -1 when it is gone.
pid_t parentOf(pid_t Pid) {
  std::string Path = "/proc/" + std::to_string(Pid) + "/stat";
  FileDescriptor File(open(Path.c_str(), O_RDONLY | O_CLOEXEC));
  if (File.get() < 0)
    return -1;
  char Buffer[512];
  ssize_t Size = read(File.get(), Buffer, sizeof(Buffer) - 1);
  if (Size <= 0)
    return -1;
  // "pid (comm) state ppid ...": comm may hold anything, ')' too.
  llvm::StringRef Stat(Buffer, size_t(Size));
  size_t Paren = Stat.rfind(')');
  if (Paren == llvm::StringRef::npos)
    return -1;
  llvm::SmallVector<llvm::StringRef, 3> Fields;
  Stat.drop_front(Paren + 1).split(Fields, ' ', 3, /*KeepEmpty=*/false);
  pid_t Parent = -1;
  if (Fields.size() < 2 || Fields[1].getAsInteger(10, Parent))
    return -1;
  return Parent;
}

/// The children that work beside the runs (BackgroundProcess): the sweep
/// does not end them.
std::mutex BackgroundMutex;
std::set<pid_t> &backgroundChildren() {
  static std::set<pid_t> Children;
  return Children;
}

std::set<pid_t> backgroundSnapshot() {
  std::lock_guard<std::mutex> Lock(BackgroundMutex);
  return backgroundChildren();
}

/// Every process below Root, zombies included, with its parent, but for
/// background children and what is below them; empty where /proc cannot
/// be read.
std::vector<std::pair<pid_t, pid_t>> descendantsOf(pid_t Root) {
  // Taken before /proc is read: a background child reaped meanwhile (and
  // its pid reused) is still left alone.
  std::set<pid_t> Background = backgroundSnapshot();
  std::multimap<pid_t, pid_t> Children;
  if (DIR *Proc = opendir("/proc")) {
    while (dirent *Entry = readdir(Proc)) {
      pid_t Pid = 0;
      if (llvm::StringRef(Entry->d_name).getAsInteger(10, Pid) || Pid <= 0)
        continue;
      pid_t Parent = parentOf(Pid);
      if (Parent > 0)
        Children.emplace(Parent, Pid);
    }
    closedir(Proc);
  }
  std::vector<std::pair<pid_t, pid_t>> Found; // (pid, parent)
  std::vector<pid_t> Queue = {Root};
  while (!Queue.empty()) {
    pid_t Parent = Queue.back();
    Queue.pop_back();
    auto [Begin, End] = Children.equal_range(Parent);
    for (auto It = Begin; It != End; ++It) {
      if (Background.count(It->second))
        continue;
      Found.emplace_back(It->second, Parent);
      Queue.push_back(It->second);
    }
  }
  return Found;
}

/// Kills and reaps every process below this one, until none is left: the
/// run's group, compilers ninja put in groups of their own, daemons that
/// made their own session. A killed parent's children come here (this
/// process is the subreaper), so the walk repeats. Bounded: a process may be
/// stuck in the kernel. Memory, on the GPU too, is free only once they are
/// gone, before the next run starts.
void endDescendants() {
  pid_t Self = getpid();
  auto Until = Clock::now() + SweepPatience;
  auto Pause = milliseconds(1);
  while (true) {
    auto Left = descendantsOf(Self);
    for (auto [Pid, Parent] : Left) {
      kill(Pid, SIGKILL);
      if (Parent == Self)
        waitpid(Pid, nullptr, WNOHANG);
    }
    if (Left.empty() || Clock::now() >= Until)
      return;
    std::this_thread::sleep_for(Pause);
    Pause = std::min(Pause * 2, milliseconds(20));
  }
}

/// The child's wait status; none when someone else took it (SIGCHLD set to
/// SIG_IGN reaps children unasked). CpuSeconds gets the CPU time it used.
std::optional<int> reap(pid_t Pid, double &CpuSeconds) {
  int Status = 0;
  rusage Usage{};
  while (wait4(Pid, &Status, 0, &Usage) < 0)
    if (errno != EINTR)
      return std::nullopt;
  auto Seconds = [](const timeval &T) { return T.tv_sec + T.tv_usec / 1e6; };
  CpuSeconds = Seconds(Usage.ru_utime) + Seconds(Usage.ru_stime);
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

/// What the supervising loop watches: the log's pipe, the signal handler's
/// wake-up pipe, and the child's end.
struct Watched {
  int Output; // -1 once every writer has closed it
  int Wake;
  int ChildFd; // -1: no pidfd, poll briefly instead
};

/// Waits until Until at most for output, an interrupt or the child's end,
/// and takes in the output.
void waitForEvents(Watched &W, LogCapture &Capture, Clock::time_point Until) {
  pollfd Fds[3];
  int Count = 0;
  auto Watch = [&](int Fd) {
    if (Fd >= 0)
      Fds[Count++] = {Fd, POLLIN, 0};
  };
  Watch(W.Output);
  Watch(W.Wake);
  Watch(W.ChildFd);
  auto Longest = W.ChildFd >= 0 ? milliseconds(1000) : milliseconds(5);
  auto Left = std::chrono::duration_cast<milliseconds>(Until - Clock::now());
  int Timeout =
      int(std::clamp(Left + milliseconds(1), milliseconds(0), Longest).count());
  if (poll(Fds, nfds_t(Count), Timeout) <= 0)
    return;
  if (W.Output >= 0 && !Capture.readFrom(W.Output))
    W.Output = -1; // closed with its FileDescriptor
  char Drain[64];
  while (read(W.Wake, Drain, sizeof(Drain)) > 0)
    ;
}

/// Runs an already started child to its end: within the time limit, or
/// until an interrupt. Output is taken in all along.
void waitForChild(pid_t Pid, Clock::time_point Start, Watched &W,
                  LogCapture &Capture, ProcessResult &Result) {
  const auto Never = Clock::time_point::max();
  auto Deadline = Result.TimeLimitSeconds
                      ? Start + std::chrono::seconds(Result.TimeLimitSeconds)
                      : Never;
  auto KillAt = Never; // SIGKILL to the group, after a SIGTERM
  bool Interrupted = false;
  while (!hasEnded(Pid)) {
    auto Now = Clock::now();
    if (InterruptForwarding::received() && !Interrupted) {
      Interrupted = true; // the handler has sent SIGTERM
      KillAt = std::min(KillAt, Now + GracePeriod);
    }
    if (Now >= Deadline) {
      Deadline = Never; // from now on only KillAt counts
      if (!Interrupted) {
        Result.TimedOut = true;
        kill(-Pid, SIGTERM); // a chance to flush its output
        KillAt = Now + GracePeriod;
      }
    }
    if (Now >= KillAt) {
      kill(-Pid, SIGKILL);
      KillAt = Never;
    }
    waitForEvents(W, Capture, std::min(Deadline, KillAt));
  }
}

/// Runs the child to its end, then ends whatever it left and records how
/// it ended.
void superviseChild(pid_t Pid, Clock::time_point Start, Watched &W,
                    LogCapture &Capture, ProcessResult &Result) {
  waitForChild(Pid, Start, W, Capture, Result);
  Result.Seconds = std::chrono::duration<double>(Clock::now() - Start).count();
  RunningGroup = 0; // the group's id is free once the child is reaped
  kill(-Pid, SIGKILL);
  recordStatus(reap(Pid, Result.CpuSeconds), Result);
  // Nothing the child started outlives the run: not orphaned workers, not
  // compilers in their own groups, not a daemon in its own session.
  endDescendants();
  // Every writer is gone now; bounded all the same (a writer the sweep could
  // not end).
  W.ChildFd = -1; // readable from now on
  for (auto Until = Clock::now() + std::chrono::seconds(1);
       W.Output >= 0 && Clock::now() < Until;)
    waitForEvents(W, Capture, Until);
  Result.OutputBytes = Capture.total();
  Result.OutputBytesCut = Capture.finish();
  int Signal = InterruptForwarding::received();
  if (Result.TimedOut || Signal) {
    Result.End =
        Result.TimedOut ? ProcessEnd::TimedOut : ProcessEnd::Interrupted;
    Result.Crashed = false;
    Result.Error.clear();
    Result.ExitCode = -1;
    Result.Signal = Result.TimedOut ? 0 : Signal;
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
  FileDescriptor LogFd(
      open(Log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (LogFd.get() < 0) {
    Result.Error =
        "cannot write its log '" + Log + "': " + std::strerror(errno);
    return Result;
  }
  FileDescriptor OutputRead, OutputWrite, WakeRead, WakeWrite;
  if (!makePipe(OutputRead, OutputWrite, false) ||
      !makePipe(WakeRead, WakeWrite, true)) {
    Result.Error = std::string("cannot make a pipe: ") + std::strerror(errno);
    return Result;
  }
  // Fewer wake-ups for a program that prints a lot; the default where the
  // system allows less.
  fcntl(OutputWrite.get(), F_SETPIPE_SZ, 1 << 20);

  int Interrupt = 0;
  {
    InterruptForwarding Forwarding(WakeWrite.get());
    OrphanAdoption Adoption;
    auto Start = Clock::now();
    auto Pid = spawnChild(Args, Directory, childEnvironment(Environment),
                          OutputWrite.get(), Forwarding.originalMask());
    OutputWrite.reset(); // the child's copies alone keep the pipe open
    if (!Pid) {
      Result.Error = llvm::toString(Pid.takeError());
      // Callers show the log's end when a build step fails: say it there too.
      llvm::raw_fd_ostream(LogFd.get(), /*shouldClose=*/false)
          << "skyline-check: " << Result.Error << "\n";
      return Result; // a pending interrupt reaches its handler on the way
    }
    FileDescriptor ChildFd(pidDescriptor(*Pid));
    Forwarding.started(*Pid);
    Watched W{OutputRead.get(), WakeRead.get(), ChildFd.get()};
    LogCapture Capture(LogFd.get());
    superviseChild(*Pid, Start, W, Capture, Result);
    Interrupt = InterruptForwarding::received();
  }
  // Everything the run started is gone: now the interrupt may end this
  // process, through the handler that was there before (LLVM's removes its
  // temporary files) or the default action (the shell sees 128 + signal).
  if (Interrupt)
    raise(Interrupt);
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

llvm::Expected<std::unique_ptr<BackgroundProcess>>
BackgroundProcess::start(llvm::ArrayRef<std::string> Args,
                         llvm::StringRef Directory, llvm::StringRef LogPath) {
  // Everything the child needs is made before fork: a server has threads.
  std::vector<char *> Argv;
  for (const std::string &Arg : Args)
    Argv.push_back(const_cast<char *>(Arg.c_str()));
  Argv.push_back(nullptr);
  std::string Dir = Directory.str();
  int Log = ::open(LogPath.str().c_str(),
                   O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (Log < 0)
    return llvm::createStringError(
        std::error_code(errno, std::generic_category()), "cannot write %s",
        LogPath.str().c_str());
  int In = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::string Failed = "skyline-check: cannot start " + Args[0] + "\n";
  pid_t Parent = getpid();
  pid_t Pid;
  {
    // Listed before a sweep in another thread can see it.
    std::lock_guard<std::mutex> Lock(BackgroundMutex);
    Pid = ::fork();
    if (Pid > 0)
      backgroundChildren().insert(Pid);
  }
  if (Pid == 0) {
#ifdef __linux__
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != Parent || In < 0 || ::chdir(Dir.c_str()) != 0)
      ::_exit(127);
    ::dup2(In, 0);
    ::dup2(Log, 1);
    ::dup2(Log, 2);
    ::execv(Argv[0], Argv.data());
    // Said in the log, which would be empty otherwise.
    [[maybe_unused]] ssize_t Said = ::write(2, Failed.data(), Failed.size());
    ::_exit(127);
  }
  int Errno = errno;
  ::close(Log);
  if (In >= 0)
    ::close(In);
  if (Pid < 0)
    return llvm::createStringError(
        std::error_code(Errno, std::generic_category()), "cannot start %s",
        Args[0].c_str());
  return std::unique_ptr<BackgroundProcess>(new BackgroundProcess(Pid));
}

int BackgroundProcess::wait() {
  if (Waited)
    return -1;
  int Status = 0;
  pid_t Got;
  while ((Got = ::waitpid(Pid, &Status, 0)) < 0 && errno == EINTR)
    ;
  Waited = true;
  {
    std::lock_guard<std::mutex> Lock(BackgroundMutex);
    backgroundChildren().erase(Pid);
  }
  return Got == Pid && WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
}

BackgroundProcess::~BackgroundProcess() {
  if (Waited)
    return;
  ::kill(Pid, SIGKILL);
  wait();
}

} // namespace skyline
