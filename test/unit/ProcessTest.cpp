// Running a child: exit codes, crashes named by signal, the log, and nothing
// left behind after a timeout, a crash or an interrupted skyline-check. The
// children are small shell scripts; a background `sleep` stands for what a
// training program forks (data loader workers), and writes its pid to a file
// so that the test can check it is gone. Escapees stand for what leaves the
// child's process group: a compiler that ninja runs in a group of its own
// (bash's `set -m`), a daemon in its own session (`setsid`).

#include "skyline/Process.h"
#include "skyline/WorkDirLock.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <optional>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace skyline;

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto Patience = std::chrono::seconds(10);

std::string readFile(const std::string &Path) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  return Buffer ? (*Buffer)->getBuffer().str() : "";
}

/// A zombie counts as gone: it runs nothing, and whoever reaps orphans here
/// (pid 1 of a container) may be slow to.
bool isRunning(pid_t Pid) {
  if (kill(Pid, 0) != 0)
    return errno != ESRCH;
  // Not readFile(): MemoryBuffer trusts the size /proc reports, 0.
  std::ifstream StatFile("/proc/" + std::to_string(Pid) + "/stat");
  std::string Stat;
  std::getline(StatFile, Stat);
  size_t Paren = Stat.rfind(')');
  return Paren == std::string::npos || Paren + 2 >= Stat.size() ||
         Stat[Paren + 2] != 'Z';
}

/// Orphans are killed at once but reaped by someone else: give them time.
bool endsSoon(pid_t Pid) {
  for (auto Until = Clock::now() + Patience; Clock::now() < Until;) {
    if (!isRunning(Pid))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

/// The pid a script wrote with `echo $! > FILE`, once it is complete.
std::optional<pid_t> waitForPid(const std::string &Path) {
  for (auto Until = Clock::now() + Patience; Clock::now() < Until;) {
    std::string Text = readFile(Path);
    if (!Text.empty() && Text.back() == '\n')
      return std::atoi(Text.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

class ProcessTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> Path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("skyline-process", Path));
    Dir = Path.str().str();
    Log = Dir + "/run.log";
    PidFile = Dir + "/grandchild.pid";
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  /// Runs `sh -c Script` in Dir, without core files.
  ProcessResult runScript(const std::string &Script, unsigned Timeout = 0) {
    return runProcess({"/bin/sh", "-c", "ulimit -c 0; " + Script}, Dir, {}, Log,
                      Timeout);
  }

  /// A script whose background child, a stand-in for what a training program
  /// forks, sleeps long and says its pid; then Rest.
  std::string withGrandchild(const std::string &Rest) {
    return "sleep 1000 & echo $! > " + PidFile + "; " + Rest;
  }

  /// A script whose background children leave its process group: one in a
  /// group of its own, one in a session of its own; each says its pid in
  /// Name.pid. Then Rest. Run by bash, for `set -m`.
  std::string withEscapees(const std::string &Rest) {
    return "set -m; sleep 1000 & echo $! > " + Dir + "/group.pid; set +m; " +
           "setsid sh -c 'echo $$ > " + Dir + "/session.tmp; mv " + Dir +
           "/session.tmp " + Dir + "/session.pid; exec sleep 1000' & " + Rest;
  }

  /// The escapees' pids, once both have said them.
  std::vector<pid_t> escapees() {
    std::vector<pid_t> Pids;
    for (const char *Name : {"/group.pid", "/session.pid"})
      if (auto Pid = waitForPid(Dir + Name))
        Pids.push_back(*Pid);
    return Pids;
  }

  std::string Dir, Log, PidFile;
};

TEST_F(ProcessTest, ExitCodes) {
  ProcessResult Success = runScript("exit 0");
  EXPECT_EQ(Success.End, ProcessEnd::Exited);
  EXPECT_EQ(Success.ExitCode, 0);
  EXPECT_FALSE(Success.Crashed);
  EXPECT_FALSE(Success.TimedOut);
  EXPECT_TRUE(Success.Error.empty());

  ProcessResult Failure = runScript("exit 3");
  EXPECT_EQ(Failure.End, ProcessEnd::Exited);
  EXPECT_EQ(Failure.ExitCode, 3);
  EXPECT_FALSE(Failure.Crashed);
  EXPECT_EQ(describeProcessEnd(Failure), "exited with code 3");
}

TEST_F(ProcessTest, CpuTimeIsTheChildsOwn) {
  // A shell loop burns CPU; a sleep takes wall time and next to no CPU. The
  // figures are CPU time, which a busy machine does not inflate.
  ProcessResult Busy =
      runScript("i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done");
  ASSERT_EQ(Busy.ExitCode, 0);
  EXPECT_GT(Busy.CpuSeconds, 0.05);
  ProcessResult Idle = runScript("sleep 0.3");
  ASSERT_EQ(Idle.ExitCode, 0);
  EXPECT_GE(Idle.Seconds, 0.3);
  EXPECT_LT(Idle.CpuSeconds, 0.1);
  EXPECT_LT(Idle.CpuSeconds, Busy.CpuSeconds);
}

TEST_F(ProcessTest, OutputGoesToTheLogReplacingTheOld) {
  {
    std::FILE *Old = std::fopen(Log.c_str(), "w");
    ASSERT_TRUE(Old);
    std::fputs("stale output of an earlier, longer run\n", Old);
    std::fclose(Old);
  }
  ProcessResult Result = runScript("echo to stdout; echo to stderr >&2");
  EXPECT_EQ(Result.ExitCode, 0);
  EXPECT_EQ(readFile(Log), "to stdout\nto stderr\n");
  EXPECT_EQ(tailOfFile(Log, 1), "to stderr");
}

TEST_F(ProcessTest, DirectoryAndEnvironment) {
  setenv("SKYLINE_PROCESS_TEST", "parent", 1);
  ProcessResult Result =
      runProcess({"sh", "-c", "pwd; echo \"$SKYLINE_PROCESS_TEST\"; read X"},
                 Dir, {"SKYLINE_PROCESS_TEST=child"}, Log, 0);
  unsetenv("SKYLINE_PROCESS_TEST");
  // `read` fails at once: stdin is /dev/null, not the terminal.
  EXPECT_EQ(Result.ExitCode, 1);
  llvm::SmallString<128> RealDir;
  llvm::sys::fs::real_path(Dir, RealDir);
  EXPECT_EQ(readFile(Log), RealDir.str().str() + "\nchild\n");
}

TEST_F(ProcessTest, CannotStart) {
  ProcessResult Missing =
      runProcess({Dir + "/no-such-program"}, "", {}, Log, 0);
  EXPECT_EQ(Missing.End, ProcessEnd::NotStarted);
  EXPECT_FALSE(Missing.Crashed);
  EXPECT_NE(Missing.Error.find("cannot run"), std::string::npos)
      << Missing.Error;
  EXPECT_EQ(describeProcessEnd(Missing), "could not start: " + Missing.Error);
  EXPECT_EQ(readFile(Log), "skyline-check: " + Missing.Error + "\n")
      << "build steps show the log's end";

  ProcessResult NoDir =
      runProcess({"/bin/true"}, Dir + "/no-such-directory", {}, Log, 0);
  EXPECT_EQ(NoDir.End, ProcessEnd::NotStarted);
  EXPECT_NE(NoDir.Error.find("no-such-directory"), std::string::npos);

  ProcessResult NoLog =
      runProcess({"/bin/true"}, "", {}, Dir + "/no-such-directory/log", 0);
  EXPECT_EQ(NoLog.End, ProcessEnd::NotStarted);
  EXPECT_NE(NoLog.Error.find("log"), std::string::npos);
}

TEST_F(ProcessTest, CrashesAreNamedBySignal) {
  ProcessResult Segfault = runScript("kill -SEGV $$");
  EXPECT_EQ(Segfault.End, ProcessEnd::Signalled);
  EXPECT_EQ(Segfault.Signal, SIGSEGV);
  EXPECT_TRUE(Segfault.Crashed);
  EXPECT_EQ(Segfault.ExitCode, -1);
  EXPECT_EQ(describeProcessEnd(Segfault),
            "crashed (SIGSEGV: a segmentation fault, an invalid memory "
            "access)");

  ProcessResult Abort = runScript("kill -ABRT $$");
  EXPECT_EQ(Abort.Signal, SIGABRT);
  EXPECT_EQ(Abort.Error.rfind("SIGABRT: aborted", 0), 0u) << Abort.Error;

  ProcessResult Killed = runScript("kill -KILL $$");
  EXPECT_EQ(Killed.Signal, SIGKILL);
  EXPECT_NE(Killed.Error.find("out-of-memory killer"), std::string::npos);

  EXPECT_EQ(describeSignal(SIGRTMIN + 1).rfind("signal ", 0), 0u);
}

TEST_F(ProcessTest, TimeoutStopsTheWholeGroup) {
  ProcessResult Result = runScript(withGrandchild("sleep 1000"), 1);
  EXPECT_EQ(Result.End, ProcessEnd::TimedOut);
  EXPECT_TRUE(Result.TimedOut);
  EXPECT_FALSE(Result.Crashed);
  EXPECT_TRUE(Result.Error.empty());
  EXPECT_GE(Result.Seconds, 1.0);
  EXPECT_LT(Result.Seconds, 2.5) << "the shell ends at SIGTERM: no grace used";
  EXPECT_EQ(describeProcessEnd(Result), "did not finish within 1 s");
  auto Grandchild = waitForPid(PidFile);
  ASSERT_TRUE(Grandchild);
  EXPECT_TRUE(endsSoon(*Grandchild));
}

TEST_F(ProcessTest, IgnoringSigtermDoesNotSaveIt) {
  // Ignored signals stay ignored across exec: the sleeps ignore it too.
  ProcessResult Result =
      runScript("trap '' TERM; " + withGrandchild("sleep 1000"), 1);
  EXPECT_EQ(Result.End, ProcessEnd::TimedOut);
  EXPECT_GE(Result.Seconds, 2.9) << "SIGKILL only after the grace period";
  EXPECT_LT(Result.Seconds, 6.0);
  auto Grandchild = waitForPid(PidFile);
  ASSERT_TRUE(Grandchild);
  EXPECT_TRUE(endsSoon(*Grandchild));
}

TEST_F(ProcessTest, LeftoversEndWithTheChild) {
  ProcessResult Exited = runScript(withGrandchild("exit 0"));
  EXPECT_EQ(Exited.ExitCode, 0);
  auto Grandchild = waitForPid(PidFile);
  ASSERT_TRUE(Grandchild);
  EXPECT_TRUE(endsSoon(*Grandchild));

  llvm::sys::fs::remove(PidFile);
  ProcessResult Crashed = runScript(withGrandchild("kill -SEGV $$"));
  EXPECT_EQ(Crashed.Signal, SIGSEGV);
  Grandchild = waitForPid(PidFile);
  ASSERT_TRUE(Grandchild);
  EXPECT_TRUE(endsSoon(*Grandchild));
}

// ninja runs each compiler in a group of its own; a daemon calls setsid():
// killing the child's group misses both, the sweep of this process's
// descendants does not.
TEST_F(ProcessTest, NothingOutlivesTheRunOutsideItsGroup) {
  ProcessResult Result = runProcess(
      {"bash", "-c", withEscapees("sleep 0.2; exit 0")}, Dir, {}, Log, 0);
  EXPECT_EQ(Result.ExitCode, 0);
  std::vector<pid_t> Escaped = escapees();
  ASSERT_EQ(Escaped.size(), 2u);
  // Reaped by runProcess (this process was their subreaper): gone at once,
  // not even zombies.
  for (pid_t Pid : Escaped)
    EXPECT_NE(kill(Pid, 0), 0) << "pid " << Pid << " outlived the run";
}

TEST_F(ProcessTest, NothingOutlivesATimeoutOutsideItsGroup) {
  ProcessResult Result =
      runProcess({"bash", "-c", withEscapees("sleep 1000")}, Dir, {}, Log, 1);
  EXPECT_EQ(Result.End, ProcessEnd::TimedOut);
  std::vector<pid_t> Escaped = escapees();
  ASSERT_EQ(Escaped.size(), 2u);
  for (pid_t Pid : Escaped)
    EXPECT_NE(kill(Pid, 0), 0) << "pid " << Pid << " outlived the run";
}

// A program that prints megabytes cannot fill the disk: the log keeps its
// head and its end, where the error is, and says what was cut.
TEST_F(ProcessTest, TheLogIsBoundedAndKeepsItsEnd) {
  ProcessResult Result =
      runScript("echo first line; yes 'a line of output' | head -n 300000; "
                "echo the last line >&2; exit 3");
  EXPECT_EQ(Result.ExitCode, 3);
  uint64_t Written = 11 + 300000 * 17 + 14;
  EXPECT_EQ(Result.OutputBytes, Written);
  EXPECT_GT(Result.OutputBytesCut, Written - LogHeadBytes - LogTailBytes);
  std::string Text = readFile(Log);
  EXPECT_LT(Text.size(), LogHeadBytes + LogTailBytes + 200);
  EXPECT_EQ(Text.rfind("first line\na line of output\n", 0), 0u);
  EXPECT_NE(Text.find(" of output cut here; the log keeps the first 256 KiB "
                      "and the last "),
            std::string::npos)
      << Text.substr(LogHeadBytes - 100, 300);
  EXPECT_EQ(tailOfFile(Log, 2), "a line of output\nthe last line");
  // The kept tail starts at a line.
  size_t Note = Text.find("[skyline-check:");
  size_t AfterNote = Text.find('\n', Note) + 1;
  EXPECT_EQ(Text.substr(AfterNote, 17), "a line of output\n");
}

TEST_F(ProcessTest, RestoresTheSignalHandlers) {
  struct sigaction Before, After;
  sigaction(SIGINT, nullptr, &Before);
  runScript("exit 0");
  sigaction(SIGINT, nullptr, &After);
  EXPECT_EQ(Before.sa_handler, After.sa_handler);
}

/// Plays skyline-check in a forked process: runs a long script with a
/// grandchild, after Setup. Returns the forked process's pid.
pid_t forkRunner(const std::string &Script, void (*Setup)()) {
  pid_t Pid = fork();
  if (Pid != 0)
    return Pid;
  Setup();
  runProcess({"/bin/sh", "-c", Script}, "", {}, "/dev/null", 0);
  _exit(0); // not reached when the interrupt ends this process
}

/// The forked runner's wait status, or nullopt (and it killed) if it hangs.
std::optional<int> waitForRunner(pid_t Pid) {
  for (auto Until = Clock::now() + Patience; Clock::now() < Until;) {
    int Status = 0;
    if (waitpid(Pid, &Status, WNOHANG) == Pid)
      return Status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(Pid, SIGKILL);
  waitpid(Pid, nullptr, 0);
  return std::nullopt;
}

void defaultInterrupts() {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
}

class InterruptTest : public ProcessTest,
                      public ::testing::WithParamInterface<int> {};

TEST_P(InterruptTest, KillsTheRunThenDiesOfIt) {
  pid_t Runner = forkRunner(withGrandchild("sleep 1000"), defaultInterrupts);
  ASSERT_GT(Runner, 0);
  auto Grandchild = waitForPid(PidFile);
  ASSERT_TRUE(Grandchild);
  kill(Runner, GetParam());
  auto Status = waitForRunner(Runner);
  ASSERT_TRUE(Status);
  EXPECT_TRUE(WIFSIGNALED(*Status));
  EXPECT_EQ(WTERMSIG(*Status), GetParam());
  EXPECT_TRUE(endsSoon(*Grandchild));
}

// The interrupt reaches the child's group as SIGTERM first (ninja then stops
// its compilers and removes their partial outputs), and whatever left the
// group is gone before this process dies of the signal.
TEST_P(InterruptTest, StopsTheGroupPolitelyAndLeavesNothing) {
  std::string Stopped = Dir + "/stopped";
  std::string Script = "trap 'echo stopped > " + Stopped + "; exit 1' TERM; " +
                       withEscapees(withGrandchild("sleep 1000 & wait"));
  pid_t Runner = fork();
  ASSERT_GE(Runner, 0);
  if (Runner == 0) {
    defaultInterrupts();
    runProcess({"bash", "-c", Script}, "", {}, "/dev/null", 0);
    _exit(0); // not reached when the interrupt ends this process
  }
  std::vector<pid_t> Escaped = escapees();
  ASSERT_EQ(Escaped.size(), 2u);
  auto Grandchild = waitForPid(PidFile);
  ASSERT_TRUE(Grandchild);
  kill(Runner, GetParam());
  auto Status = waitForRunner(Runner);
  ASSERT_TRUE(Status);
  EXPECT_TRUE(WIFSIGNALED(*Status));
  EXPECT_EQ(WTERMSIG(*Status), GetParam());
  EXPECT_EQ(readFile(Stopped), "stopped\n") << "SIGTERM came first";
  Escaped.push_back(*Grandchild);
  for (pid_t Pid : Escaped)
    EXPECT_TRUE(endsSoon(Pid)) << "pid " << Pid << " outlived the run";
}

INSTANTIATE_TEST_SUITE_P(Signals, InterruptTest,
                         ::testing::Values(SIGINT, SIGTERM));

// A handler installed before the run (LLVM's removes temporary files) still
// gets the signal, after the run's group is killed.
void exitSevenOnTerm() {
  signal(SIGTERM, [](int) { _exit(7); });
}

TEST_F(ProcessTest, InterruptReachesThePreviousHandler) {
  pid_t Runner = forkRunner(withGrandchild("sleep 1000"), exitSevenOnTerm);
  ASSERT_GT(Runner, 0);
  auto Grandchild = waitForPid(PidFile);
  ASSERT_TRUE(Grandchild);
  kill(Runner, SIGTERM);
  auto Status = waitForRunner(Runner);
  ASSERT_TRUE(Status);
  EXPECT_TRUE(WIFEXITED(*Status));
  EXPECT_EQ(WEXITSTATUS(*Status), 7);
  EXPECT_TRUE(endsSoon(*Grandchild));
}

// The work directory's lock (WorkDirLock.h): a second instance is refused
// with the holder's pid; the lock goes with its holder, whatever the file
// says.
TEST_F(ProcessTest, WorkDirLockNamesItsHolder) {
  std::string Work = Dir + "/work";
  std::string Ready = Dir + "/ready";
  int ToHolder[2];
  ASSERT_EQ(pipe(ToHolder), 0);
  pid_t Holder = fork();
  ASSERT_GE(Holder, 0);
  if (Holder == 0) {
    close(ToHolder[1]);
    if (llvm::Error E = lockWorkDirectory(Work)) {
      llvm::consumeError(std::move(E));
      _exit(1);
    }
    std::ofstream(Ready) << "1\n";
    char Byte;
    [[maybe_unused]] ssize_t Got = read(ToHolder[0], &Byte, 1); // until told
    _exit(0);
  }
  close(ToHolder[0]);
  ASSERT_TRUE(waitForPid(Ready));

  llvm::Error Refused = lockWorkDirectory(Work);
  ASSERT_TRUE(bool(Refused));
  std::string Message = llvm::toString(std::move(Refused));
  std::string Expected = "the work directory '" + Work +
                         "' is in use by another skyline-check (pid " +
                         std::to_string(Holder) + ", started ";
  EXPECT_EQ(Message.rfind(Expected, 0), 0u) << Message;
  EXPECT_NE(Message.find(" UTC): wait for it to end, or give this run a work "
                         "directory of its own with --work-dir=DIR"),
            std::string::npos)
      << Message;

  close(ToHolder[1]); // the holder ends, and its lock with it
  int Status = 0;
  ASSERT_EQ(waitpid(Holder, &Status, 0), Holder);
  ASSERT_TRUE(WIFEXITED(Status) && WEXITSTATUS(Status) == 0);
  // The file still names the dead holder: no matter.
  EXPECT_NE(readFile(Work + "/.lock").find(std::to_string(Holder)),
            std::string::npos);
  EXPECT_FALSE(bool(lockWorkDirectory(Work)));
  EXPECT_EQ(readFile(Work + "/.lock")
                .rfind("pid " + std::to_string(getpid()) + "\nstarted ", 0),
            0u);
  EXPECT_FALSE(bool(lockWorkDirectory(Work))) << "held here already";
}

} // namespace
