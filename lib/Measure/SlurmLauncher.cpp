//===- SlurmLauncher.cpp - The sweep's runs as Slurm jobs or steps --------===//

#include "skyline/SlurmLauncher.h"

#include "skyline/MeasuredRunYAML.h"
#include "skyline/Units.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace skyline {
namespace {

/// Runs on the node: writes its facts to $1, then execs the rest. Written
/// to a temporary renamed, so a half-written file is never read.
constexpr const char *NodeWrapper = R"sh(f=$1; shift
{
  echo "name=${SLURMD_NODENAME:-$(hostname -s 2>/dev/null)}"
  echo "job=${SLURM_JOB_ID:-}${SLURM_STEP_ID:+.$SLURM_STEP_ID}"
  m=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
  [ -n "$m" ] || m=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
  echo "cpu_model=$m"
  echo "cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null)"
  echo "cpus_allocated=${SLURM_CPUS_ON_NODE:-}"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu_model=$(nvidia-smi --query-gpu=name --format=csv,noheader ${CUDA_VISIBLE_DEVICES:+-i "$CUDA_VISIBLE_DEVICES"} 2>/dev/null | head -n 1)"
  fi
} >"$f.tmp" 2>/dev/null && mv -f "$f.tmp" "$f"
exec "$@")sh";

/// $0: the job name; $1: the allocation, where inside one. Cancels what
/// squeue lists of ours, then waits until it lists none (a cancelled job
/// stays listed while it completes).
constexpr const char *CancelScript = R"sh(ours() {
  if [ -n "$1" ]; then
    squeue -h -s -j "$1" -o '%i %j' 2>/dev/null | awk -v n="$0" '$2 == n { print $1 }'
  else
    squeue -h -n "$0" -o '%i' 2>/dev/null
  fi
}
ids=$(ours "$1")
[ -z "$ids" ] || scancel $ids 2>/dev/null
i=0
while [ $i -lt 100 ]; do
  [ -z "$(ours "$1")" ] && exit 0
  sleep 0.2
  i=$((i + 1))
done
exit 1)sh";

/// srun's and slurmstepd's own lines ("srun: error: ...",
/// "slurmstepd-vm: error: *** STEP 6.0 ON vm CANCELLED ...").
bool isSlurmLine(llvm::StringRef Line) {
  return Line.starts_with("srun:") || Line.starts_with("slurmstepd");
}

/// The job or step a line names, or "".
std::string jobStepIn(llvm::StringRef Line) {
  static const llvm::Regex Patterns[] = {
      llvm::Regex("StepId=([0-9]+(\\.[0-9]+)?)"),
      llvm::Regex("\\*\\*\\* (JOB|STEP) ([0-9]+(\\.[0-9]+)?) "),
      llvm::Regex("[Jj]ob ([0-9]+) queued"),
      llvm::Regex("step for job ([0-9]+)"),
      llvm::Regex("[Jj]ob allocation ([0-9]+)")};
  llvm::SmallVector<llvm::StringRef, 4> Groups;
  for (const llvm::Regex &Pattern : Patterns)
    if (Pattern.match(Line, &Groups))
      return (Groups[1] == "JOB" || Groups[1] == "STEP" ? Groups[2] : Groups[1])
          .str();
  return "";
}

/// "exceeded memory limit (328441856 > 104857600)": the limit.
int64_t memoryLimitIn(llvm::StringRef Line) {
  static const llvm::Regex Pattern("memory limit \\(([0-9]+) > ([0-9]+)\\)");
  llvm::SmallVector<llvm::StringRef, 3> Groups;
  int64_t Limit = 0;
  if (Pattern.match(Line, &Groups))
    Groups[2].getAsInteger(10, Limit);
  return Limit;
}

/// The end a Slurm line says, or None. Queue: where srun said the job or
/// step waited.
SlurmEnd endOfLine(llvm::StringRef Line, bool Queued) {
  if (Line.contains("exceeded memory limit") || Line.contains("oom_kill") ||
      Line.contains("oom-kill"))
    return SlurmEnd::OutOfMemory;
  if (Line.contains("DUE TO TIME LIMIT"))
    return SlurmEnd::TimeLimit;
  if (Line.contains("DUE TO NODE FAILURE") || Line.contains("NODE_FAIL") ||
      Line.contains("Node failure"))
    return SlurmEnd::NodeFailure;
  if (Line.contains("CANCELLED AT") ||
      Line.contains("Job has been cancelled") ||
      Line.contains("Force Terminated"))
    return SlurmEnd::Cancelled;
  if (Line.contains("Unable to allocate resources") ||
      Line.contains("Unable to create step"))
    return Queued || Line.contains("Requested nodes are busy")
               ? SlurmEnd::QueueTimeout
               : SlurmEnd::Refused;
  return SlurmEnd::None;
}

/// Which end wins where several lines speak: the cause before its echoes
/// (a memory kill is followed by "task 0: Killed", a cancelled pending job
/// by "Unable to allocate resources").
int rank(SlurmEnd End) {
  switch (End) {
  case SlurmEnd::None:
    return 0;
  case SlurmEnd::Refused:
    return 1;
  case SlurmEnd::QueueTimeout:
    return 2;
  case SlurmEnd::Cancelled:
    return 3;
  case SlurmEnd::NodeFailure:
    return 4;
  case SlurmEnd::TimeLimit:
    return 5;
  case SlurmEnd::OutOfMemory:
    return 6;
  }
  return 0;
}

std::string readText(llvm::StringRef Path) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/true);
  return Buffer ? (*Buffer)->getBuffer().str() : std::string();
}

std::optional<RunNode> readNodeFile(llvm::StringRef Path) {
  if (!llvm::sys::fs::exists(Path))
    return std::nullopt;
  return parseNodeFacts(readText(Path));
}

/// srun exits 128 + N where a signal N ended the program ("srun: error: vm:
/// task 0: Segmentation fault"): read as the crash a local run would be.
ProcessResult asLocalEnd(ProcessResult Process, llvm::StringRef Output) {
  if (Process.End != ProcessEnd::Exited || Process.ExitCode <= 128 ||
      Process.ExitCode >= 128 + 65 || !Output.contains(": task 0: "))
    return Process;
  Process.Signal = Process.ExitCode - 128;
  Process.ExitCode = -1;
  Process.End = ProcessEnd::Signalled;
  Process.Crashed = true;
  Process.Error = describeSignal(Process.Signal);
  return Process;
}

/// srun's first error line, for a run that never started.
std::string srunError(llvm::StringRef Output) {
  llvm::SmallVector<llvm::StringRef, 16> Lines;
  Output.split(Lines, '\n');
  for (llvm::StringRef Line : Lines)
    if (Line.starts_with("srun: error:") || Line.starts_with("srun: fatal:"))
      return Line.trim().str();
  return "";
}

std::string hostName() {
  char Name[256] = {};
  if (gethostname(Name, sizeof(Name) - 1) != 0)
    return "host";
  llvm::StringRef Short = llvm::StringRef(Name).split('.').first;
  return Short.empty() ? "host" : Short.str();
}

//===----------------------------------------------------------------------===//
// Cancelling on an interrupt
//===----------------------------------------------------------------------===//

constexpr int CancelSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int NumCancelSignals = std::size(CancelSignals);
/// The cancel command as the handler runs it, prepared before the run.
char *const *CancelArgv = nullptr;
struct sigaction PreviousCancelActions[NumCancelSignals];

/// Async-signal-safe only (fork, execve, waitpid, sigaction, raise). Reached
/// when runProcess hands an interrupt on, once srun is gone: cancels what
/// the launcher started, then hands the signal on as runProcess did.
extern "C" void cancelOnInterrupt(int Signal) {
  int SavedErrno = errno;
  if (char *const *Argv = CancelArgv) {
    pid_t Pid = fork();
    if (Pid == 0) {
      execve(Argv[0], Argv, environ);
      _exit(127);
    }
    int Status = 0;
    while (Pid > 0 && waitpid(Pid, &Status, 0) < 0 && errno == EINTR) {
    }
  }
  for (int I = 0; I < NumCancelSignals; ++I)
    if (CancelSignals[I] == Signal)
      sigaction(Signal, &PreviousCancelActions[I], nullptr);
  raise(Signal); // blocked until this returns, then the previous action
  errno = SavedErrno;
}

/// While a run's srun lives: an interrupt that runProcess hands on comes
/// here first. Signals ignored before (nohup) stay ignored.
class CancelOnInterrupt {
public:
  explicit CancelOnInterrupt(llvm::ArrayRef<std::string> Command) {
    for (const std::string &Arg : Command)
      Argv.push_back(const_cast<char *>(Arg.c_str()));
    Argv.push_back(nullptr);
    CancelArgv = Argv.data();
    for (int I = 0; I < NumCancelSignals; ++I) {
      sigaction(CancelSignals[I], nullptr, &PreviousCancelActions[I]);
      Installed[I] = false;
      if (PreviousCancelActions[I].sa_handler == SIG_IGN &&
          !(PreviousCancelActions[I].sa_flags & SA_SIGINFO))
        continue;
      struct sigaction Action = {};
      Action.sa_handler = cancelOnInterrupt;
      sigfillset(&Action.sa_mask);
      Installed[I] = sigaction(CancelSignals[I], &Action, nullptr) == 0;
    }
  }
  ~CancelOnInterrupt() {
    for (int I = 0; I < NumCancelSignals; ++I)
      if (Installed[I])
        sigaction(CancelSignals[I], &PreviousCancelActions[I], nullptr);
    CancelArgv = nullptr;
  }
  CancelOnInterrupt(const CancelOnInterrupt &) = delete;
  CancelOnInterrupt &operator=(const CancelOnInterrupt &) = delete;

private:
  std::vector<char *> Argv;
  bool Installed[NumCancelSignals] = {};
};

//===----------------------------------------------------------------------===//
// Several commands at once
//===----------------------------------------------------------------------===//

volatile sig_atomic_t TogetherSignal = 0;

extern "C" void recordInterrupt(int Signal) {
  if (!TogetherSignal)
    TogetherSignal = Signal;
}

/// While several commands run: an interrupt is recorded, for the loop that
/// waits for them to stop them.
class RecordInterrupts {
public:
  RecordInterrupts() {
    TogetherSignal = 0;
    for (int I = 0; I < NumCancelSignals; ++I) {
      sigaction(CancelSignals[I], nullptr, &Previous[I]);
      Installed[I] = false;
      if (Previous[I].sa_handler == SIG_IGN &&
          !(Previous[I].sa_flags & SA_SIGINFO))
        continue;
      struct sigaction Action = {};
      Action.sa_handler = recordInterrupt;
      Installed[I] = sigaction(CancelSignals[I], &Action, nullptr) == 0;
    }
  }
  ~RecordInterrupts() {
    for (int I = 0; I < NumCancelSignals; ++I)
      if (Installed[I])
        sigaction(CancelSignals[I], &Previous[I], nullptr);
  }
  RecordInterrupts(const RecordInterrupts &) = delete;
  RecordInterrupts &operator=(const RecordInterrupts &) = delete;

private:
  struct sigaction Previous[NumCancelSignals];
  bool Installed[NumCancelSignals] = {};
};

/// Starts Args in a process group of its own, stdin from /dev/null, stdout
/// and stderr to Log; the pid, or -1.
pid_t spawnInGroup(const std::vector<std::string> &Args, llvm::StringRef Log,
                   llvm::StringRef Directory) {
  posix_spawn_file_actions_t Files;
  posix_spawn_file_actions_init(&Files);
  posix_spawn_file_actions_addopen(&Files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&Files, 1, Log.str().c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&Files, 1, 2);
  std::string Dir = Directory.str();
  if (!Dir.empty())
    posix_spawn_file_actions_addchdir_np(&Files, Dir.c_str());
  posix_spawnattr_t Attributes;
  posix_spawnattr_init(&Attributes);
  posix_spawnattr_setpgroup(&Attributes, 0);
  sigset_t Default, Empty;
  sigemptyset(&Empty);
  sigemptyset(&Default);
  for (int Signal : CancelSignals)
    sigaddset(&Default, Signal);
  posix_spawnattr_setsigdefault(&Attributes, &Default);
  posix_spawnattr_setsigmask(&Attributes, &Empty);
  posix_spawnattr_setflags(&Attributes, POSIX_SPAWN_SETPGROUP |
                                            POSIX_SPAWN_SETSIGDEF |
                                            POSIX_SPAWN_SETSIGMASK);
  std::vector<char *> Argv;
  for (const std::string &Arg : Args)
    Argv.push_back(const_cast<char *>(Arg.c_str()));
  Argv.push_back(nullptr);
  pid_t Pid = -1;
  if (posix_spawnp(&Pid, Argv[0], &Files, &Attributes, Argv.data(), environ) !=
      0)
    Pid = -1;
  posix_spawn_file_actions_destroy(&Files);
  posix_spawnattr_destroy(&Attributes);
  return Pid;
}

void endedWith(ProcessResult &Result, int Status) {
  if (WIFEXITED(Status)) {
    Result.End = ProcessEnd::Exited;
    Result.ExitCode = WEXITSTATUS(Status);
  } else if (WIFSIGNALED(Status) && Result.End == ProcessEnd::NotStarted) {
    Result.End = ProcessEnd::Signalled;
    Result.Signal = WTERMSIG(Status);
    Result.Crashed = true;
    Result.Error = describeSignal(Result.Signal);
  }
}

} // namespace

std::vector<ProcessResult>
runCommandsTogether(llvm::ArrayRef<std::vector<std::string>> Commands,
                    llvm::ArrayRef<std::string> LogPaths,
                    llvm::StringRef Directory, unsigned TimeoutSeconds,
                    int &Interrupt) {
  using Clock = std::chrono::steady_clock;
  RecordInterrupts Recording;
  std::vector<ProcessResult> Results(Commands.size());
  std::vector<pid_t> Pids(Commands.size(), -1);
  auto Start = Clock::now();
  for (size_t I = 0; I < Commands.size(); ++I) {
    Results[I].TimeLimitSeconds = TimeoutSeconds;
    Pids[I] = spawnInGroup(Commands[I], LogPaths[I], Directory);
    if (Pids[I] < 0)
      Results[I].Error = "cannot start " + Commands[I][0];
  }
  std::optional<Clock::time_point> Stopping;
  for (;;) {
    bool Running = false;
    for (size_t I = 0; I < Pids.size(); ++I) {
      if (Pids[I] < 0)
        continue;
      int Status = 0;
      if (waitpid(Pids[I], &Status, WNOHANG) == Pids[I]) {
        endedWith(Results[I], Status);
        Results[I].Seconds =
            std::chrono::duration<double>(Clock::now() - Start).count();
        Pids[I] = -1;
        continue;
      }
      Running = true;
    }
    if (!Running)
      break;
    auto Now = Clock::now();
    bool TimedOut = TimeoutSeconds > 0 &&
                    Now - Start > std::chrono::seconds(TimeoutSeconds);
    if ((TogetherSignal || TimedOut) && !Stopping) {
      Stopping = Now;
      for (size_t I = 0; I < Pids.size(); ++I)
        if (Pids[I] > 0) {
          kill(-Pids[I], SIGTERM);
          Results[I].End =
              TogetherSignal ? ProcessEnd::Interrupted : ProcessEnd::TimedOut;
          Results[I].TimedOut = !TogetherSignal;
        }
    }
    if (Stopping && Now - *Stopping > std::chrono::seconds(2))
      for (pid_t Pid : Pids)
        if (Pid > 0)
          kill(-Pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  Interrupt = TogetherSignal;
  return Results;
}

//===----------------------------------------------------------------------===//
// Commands and what their output says
//===----------------------------------------------------------------------===//

SlurmVerdict readSlurmEnd(llvm::StringRef Output) {
  SlurmVerdict Verdict;
  llvm::SmallVector<llvm::StringRef, 64> Lines;
  Output.split(Lines, '\n');
  bool Queued = false;
  for (llvm::StringRef Line : Lines) {
    Line = Line.trim();
    if (!isSlurmLine(Line))
      continue;
    if (Verdict.JobStep.empty() || Line.contains("StepId=") ||
        Line.contains("*** "))
      if (std::string Id = jobStepIn(Line); !Id.empty())
        Verdict.JobStep = Id;
    if (Line.contains("queued and waiting") ||
        Line.contains("step creation temporarily disabled"))
      Queued = true;
    SlurmEnd End = endOfLine(Line, Queued);
    if (rank(End) <= rank(Verdict.End))
      continue;
    Verdict.End = End;
    Verdict.Line = Line.str();
    if (End == SlurmEnd::OutOfMemory)
      Verdict.MemoryLimitBytes = memoryLimitIn(Line);
  }
  return Verdict;
}

std::vector<std::string> srunCommand(const SlurmSetup &Setup,
                                     llvm::ArrayRef<std::string> Environment,
                                     llvm::StringRef NodeFile,
                                     llvm::ArrayRef<std::string> Program) {
  std::vector<std::string> Args = {Setup.Srun, "--nodes=1", "--ntasks=1"};
  if (Setup.QueueTimeoutSeconds > 0)
    Args.push_back("--immediate=" + std::to_string(Setup.QueueTimeoutSeconds));
  if (!Setup.PinnedNode.empty())
    Args.push_back("--nodelist=" + Setup.PinnedNode);
  // The user's after ours, so that theirs win where both say; but the name
  // is how the jobs are found again to cancel them.
  Args.insert(Args.end(), Setup.UserArgs.begin(), Setup.UserArgs.end());
  Args.push_back("--job-name=" + Setup.JobName);
  Args.push_back("/usr/bin/env");
  Args.insert(Args.end(), Environment.begin(), Environment.end());
  Args.insert(Args.end(),
              {"/bin/sh", "-c", NodeWrapper, "skyline-node", NodeFile.str()});
  Args.insert(Args.end(), Program.begin(), Program.end());
  return Args;
}

bool choosesNodes(llvm::ArrayRef<std::string> Args) {
  for (llvm::StringRef Arg : Args) {
    for (llvm::StringRef Long : {"--nodelist", "--constraint", "--nodefile"})
      if (Arg == Long || Arg.starts_with((Long + "=").str()))
        return true;
    // A short option takes its value attached or as the next argument.
    for (llvm::StringRef Short : {"-w", "-C", "-F"})
      if (Arg.starts_with(Short))
        return true;
  }
  return false;
}

std::string describeNodeKind(const RunNode &Node) {
  std::string Text = Node.CpuModel.empty() ? "CPU model unknown" : Node.CpuModel;
  if (Node.CpusAllocated)
    Text += ", " + std::to_string(Node.CpusAllocated) + " of " +
            std::to_string(Node.Cores) + " CPUs";
  else
    Text += ", " + std::to_string(Node.Cores) + " CPUs";
  Text += Node.GpuModel.empty() ? ", no GPU" : ", " + Node.GpuModel;
  return Text;
}

bool sameNodeKind(const RunNode &A, const RunNode &B) {
  return A.CpuModel == B.CpuModel && A.Cores == B.Cores &&
         A.CpusAllocated == B.CpusAllocated && A.GpuModel == B.GpuModel;
}

std::vector<std::string> cancelCommand(const SlurmSetup &Setup) {
  return {"/bin/sh", "-c", CancelScript, Setup.JobName, Setup.AllocationId};
}

std::optional<RunNode> parseNodeFacts(llvm::StringRef Text) {
  RunNode Node;
  llvm::SmallVector<llvm::StringRef, 8> Lines;
  Text.split(Lines, '\n');
  for (llvm::StringRef Line : Lines) {
    auto [Key, Value] = Line.split('=');
    Value = Value.trim();
    if (Key == "name")
      Node.Name = Value.str();
    else if (Key == "job")
      Node.JobStep = Value.str();
    else if (Key == "cpu_model")
      Node.CpuModel = Value.str();
    else if (Key == "cores")
      Value.getAsInteger(10, Node.Cores);
    else if (Key == "cpus_allocated")
      Value.getAsInteger(10, Node.CpusAllocated);
    else if (Key == "gpu_model")
      Node.GpuModel = Value.str();
  }
  if (Node.Name.empty())
    return std::nullopt;
  return Node;
}

std::optional<std::string> describeVisibilityCheck(llvm::StringRef WorkDir,
                                                   llvm::StringRef Executable,
                                                   bool Found, int ExitCode,
                                                   llvm::StringRef Node) {
  std::string Where = Node.empty() ? "the node" : "node " + Node.str();
  if (!Found)
    return "the work directory " + WorkDir.str() + " is not shared with " +
           Where +
           ": a job there wrote a file into it that this machine does not "
           "see; give --work-dir a directory on a file system the nodes "
           "share (a home or project directory, not /tmp or a local disk)";
  if (ExitCode != 0)
    return Where + " sees the work directory " + WorkDir.str() +
           " but cannot run the instrumented program " + Executable.str() +
           " (exit code " + std::to_string(ExitCode) +
           "); is it on a file system the node shares, and can the node's "
           "user run it?";
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The launcher
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<SlurmLauncher>>
SlurmLauncher::create(llvm::StringRef Executable, const MeasureOptions &Options,
                      std::string RunsDir, CommandRunner Runner) {
  SlurmSetup Setup;
  for (const char *Tool : {"srun", "squeue", "scancel"}) {
    llvm::ErrorOr<std::string> Path = llvm::sys::findProgramByName(Tool);
    if (!Path)
      return llvm::createStringError(
          std::errc::no_such_file_or_directory,
          "--launcher=slurm: '%s' is not on PATH; run skyline-check where "
          "Slurm's commands are (a login node, or after 'module load slurm'), "
          "or measure here with --launcher=local",
          Tool);
    if (llvm::StringRef(Tool) == "srun")
      Setup.Srun = *Path;
  }
  Setup.JobName = "skyline-" + hostName() + "-" + std::to_string(getpid());
  if (const char *Job = std::getenv("SLURM_JOB_ID"))
    Setup.AllocationId = Job;
  Setup.UserArgs = Options.SlurmArgs;
  Setup.QueueTimeoutSeconds = Options.QueueTimeoutSeconds;
  llvm::SmallString<256> Absolute(Executable);
  llvm::sys::fs::make_absolute(Absolute);
  llvm::SmallString<256> Runs(RunsDir);
  llvm::sys::fs::make_absolute(Runs);
  return std::unique_ptr<SlurmLauncher>(
      new SlurmLauncher(Absolute.str().str(), Options, Runs.str().str(),
                        std::move(Setup), std::move(Runner)));
}

SlurmLauncher::SlurmLauncher(std::string Executable,
                             const MeasureOptions &Options, std::string RunsDir,
                             SlurmSetup Setup, CommandRunner Runner)
    : Executable(std::move(Executable)), Options(Options),
      RunsDir(std::move(RunsDir)), Setup(std::move(Setup)),
      Runner(std::move(Runner)) {}

std::string SlurmLauncher::describe() const {
  std::string Text = Setup.AllocationId.empty()
                         ? "each run a job of its own"
                         : "each run a step of job " + Setup.AllocationId;
  Text += ", named " + Setup.JobName;
  if (!Setup.UserArgs.empty())
    Text += ", srun " + llvm::join(Setup.UserArgs, " ");
  return Text;
}

void SlurmLauncher::cancelLeftovers() {
  Runner(cancelCommand(Setup), "", {}, "", /*TimeoutSeconds=*/30);
}

ProcessResult SlurmLauncher::srun(llvm::ArrayRef<std::string> Environment,
                                  llvm::StringRef NodeFile,
                                  llvm::ArrayRef<std::string> Program,
                                  llvm::StringRef Log,
                                  unsigned TimeoutSeconds) {
  std::vector<std::string> Cancel = cancelCommand(Setup);
  CancelOnInterrupt Guard(Cancel);
  return Runner(srunCommand(Setup, Environment, NodeFile, Program),
                Options.RunDir, {}, Log, TimeoutSeconds);
}

/// The error for an end that stops the sweep, or none.
static std::optional<std::string> sweepEnding(const SlurmVerdict &Verdict,
                                              llvm::StringRef What,
                                              unsigned QueueTimeout) {
  std::string Job = Verdict.JobStep.empty() ? std::string("its Slurm job")
                                            : "Slurm job " + Verdict.JobStep;
  switch (Verdict.End) {
  case SlurmEnd::QueueTimeout:
    return "the Slurm job for " + What.str() +
           " was still waiting to start after --queue-timeout (" +
           std::to_string(QueueTimeout) + " s) and was withdrawn (" +
           Verdict.Line +
           "); choose a partition or resources that are free sooner "
           "(--slurm-args), or wait longer (--queue-timeout)";
  case SlurmEnd::Refused:
    return "srun refused the job for " + What.str() + " (" + Verdict.Line +
           "); check --slurm-args";
  case SlurmEnd::Cancelled:
    return What.str() + " was cancelled: " + Job +
           " ended before the program did (" + Verdict.Line +
           "; scancel, preemption or an administrator); the sweep stops";
  case SlurmEnd::NodeFailure:
    return "the node under " + What.str() + " failed (" + Verdict.Line +
           "); the sweep stops; measure again once Slurm has it back, or on "
           "another node (--slurm-args=\"--exclude=...\")";
  case SlurmEnd::None:
  case SlurmEnd::TimeLimit:
  case SlurmEnd::OutOfMemory:
    return std::nullopt;
  }
  return std::nullopt;
}

llvm::Error SlurmLauncher::checkVisibility() {
  llvm::sys::fs::create_directories(RunsDir);
  std::string Stem = RunsDir + "/node-check-" + std::to_string(getpid());
  std::string NodeFile = Stem + ".txt", Log = Stem + ".log";
  llvm::sys::fs::remove(NodeFile);
  // The node says its name, then tries the executable's permission.
  ProcessResult Process =
      srun({}, NodeFile, {"/bin/sh", "-c", "test -x \"$0\"", Executable}, Log,
           Options.QueueTimeoutSeconds + Options.RunTimeoutSeconds);
  std::string Output = readText(Log);
  SlurmVerdict Verdict = readSlurmEnd(Output);
  const char *What = "the check that the nodes see the work directory";
  if (auto Ending = sweepEnding(Verdict, What, Options.QueueTimeoutSeconds)) {
    cancelLeftovers();
    return llvm::createStringError(std::errc::io_error, "%s", Ending->c_str());
  }
  bool Found = llvm::sys::fs::exists(NodeFile);
  std::optional<RunNode> Node = readNodeFile(NodeFile);
  if (!Found && !Process.Error.empty())
    return llvm::createStringError(std::errc::io_error,
                                   "%s could not start srun: %s", What,
                                   Process.Error.c_str());
  if (!Found)
    if (std::string Error = srunError(Output); !Error.empty())
      return llvm::createStringError(std::errc::io_error,
                                     "srun refused %s (%s); check "
                                     "--slurm-args",
                                     What, Error.c_str());
  if (auto Problem = describeVisibilityCheck(
          llvm::sys::path::parent_path(RunsDir), Executable, Found,
          Process.ExitCode, Node ? llvm::StringRef(Node->Name) : ""))
    return llvm::createStringError(std::errc::io_error, "%s", Problem->c_str());
  llvm::sys::fs::remove(NodeFile);
  llvm::sys::fs::remove(Log);
  Checked = true;
  if (Node)
    return holdToOneKind(*Node, What);
  return llvm::Error::success();
}

llvm::Error SlurmLauncher::holdToOneKind(const RunNode &Node,
                                         llvm::StringRef What) {
  if (!Kind) {
    Kind = Node;
    bool Pin = !choosesNodes(Setup.UserArgs);
    if (Pin)
      Setup.PinnedNode = Node.Name;
    if (Progress)
      *Progress << "skyline-check: "
                << (Pin ? "every run goes to node " + Node.Name +
                              ", where the first job ran"
                        : "every run must find a node like " + Node.Name +
                              ", where the first job ran")
                << " (" << describeNodeKind(Node)
                << "): a fit never mixes kinds of node"
                << (Pin ? "; --slurm-args with --nodelist or --constraint "
                          "chooses the nodes instead"
                        : "")
                << "\n";
    return llvm::Error::success();
  }
  if (sameNodeKind(*Kind, Node))
    return llvm::Error::success();
  return llvm::createStringError(
      std::errc::invalid_argument,
      "%s ran on node %s (%s), unlike node %s where the first job ran (%s): "
      "a fit never mixes kinds of node, so the sweep stops; choose nodes of "
      "one kind with --slurm-args (a partition, --constraint or --nodelist)",
      What.str().c_str(), Node.Name.c_str(), describeNodeKind(Node).c_str(),
      Kind->Name.c_str(), describeNodeKind(*Kind).c_str());
}

SlurmLauncher::Prepared SlurmLauncher::prepare(const RunRequest &Request) {
  Prepared P;
  P.Files = runFiles(RunsDir, Request);
  P.NodeFile = llvm::StringRef(P.Files.Result).drop_back(5).str() + ".node";
  llvm::sys::fs::create_directories(RunsDir);
  llvm::sys::fs::remove(P.Files.Result);
  llvm::sys::fs::remove(P.NodeFile);
  std::vector<std::string> Program = {Executable};
  Program.insert(Program.end(), Options.RunArgs.begin(), Options.RunArgs.end());
  P.Command =
      srunCommand(Setup, runEnvironment(Request, Options, P.Files.Result),
                  P.NodeFile, Program);
  return P;
}

/// The same run, whatever its time limit (the sweep sets it when it asks).
static bool sameRun(const RunRequest &A, const RunRequest &B) {
  return A.BatchSize == B.BatchSize && A.Mode == B.Mode && A.Pass == B.Pass &&
         A.Tag == B.Tag && A.Malloc == B.Malloc &&
         A.ProbeIterations == B.ProbeIterations;
}

void SlurmLauncher::expect(llvm::ArrayRef<RunRequest> Requests) {
  Expected.assign(Requests.begin(), Requests.end());
  Done.clear();
}

llvm::Expected<RunOutcome> SlurmLauncher::run(const RunRequest &Request) {
  if (!Checked)
    if (llvm::Error E = checkVisibility())
      return std::move(E);
  auto IsThis = [&](const auto &Entry) {
    return sameRun(Entry.first, Request);
  };
  auto Found = llvm::find_if(Done, IsThis);
  if (Found == Done.end() && Options.ParallelRuns > 1) {
    auto At = llvm::find_if(
        Expected, [&](const RunRequest &R) { return sameRun(R, Request); });
    if (At != Expected.end()) {
      size_t Count =
          std::min<size_t>(Options.ParallelRuns, Expected.end() - At);
      std::vector<RunRequest> Batch(At, At + Count);
      Batch.front() = Request; // its time limit as the sweep set it now
      Expected.erase(At, At + Count);
      runTogether(Batch);
      Found = llvm::find_if(Done, IsThis);
    }
  }
  if (Found != Done.end()) {
    llvm::Expected<RunOutcome> Outcome = std::move(Found->second);
    Done.erase(Found);
    return Outcome;
  }
  Prepared P = prepare(Request);
  std::vector<std::string> Cancel = cancelCommand(Setup);
  CancelOnInterrupt Guard(Cancel);
  // The run's own limit counts from when it starts, after its wait.
  ProcessResult Process =
      Runner(P.Command, Options.RunDir, {}, P.Files.Log,
             Options.QueueTimeoutSeconds + Options.RunTimeoutSeconds);
  return outcome(Request, Process, P.Files, readNodeFile(P.NodeFile));
}

void SlurmLauncher::runTogether(llvm::ArrayRef<RunRequest> Requests) {
  std::vector<Prepared> Runs;
  std::vector<std::vector<std::string>> Commands;
  std::vector<std::string> Logs;
  for (const RunRequest &Request : Requests) {
    Runs.push_back(prepare(Request));
    Commands.push_back(Runs.back().Command);
    Logs.push_back(Runs.back().Files.Log);
  }
  int Interrupt = 0;
  std::vector<ProcessResult> Ends = runCommandsTogether(
      Commands, Logs, Options.RunDir,
      Options.QueueTimeoutSeconds + Options.RunTimeoutSeconds, Interrupt);
  if (Interrupt) {
    cancelLeftovers();
    raise(Interrupt); // as runProcess hands an interrupt on
  }
  for (size_t I = 0; I < Requests.size(); ++I)
    Done.emplace_back(Requests[I], outcome(Requests[I], Ends[I], Runs[I].Files,
                                           readNodeFile(Runs[I].NodeFile)));
}

llvm::Expected<RunOutcome> SlurmLauncher::outcome(const RunRequest &Request,
                                                  const ProcessResult &Process,
                                                  const RunFiles &Files,
                                                  std::optional<RunNode> Node) {
  std::string Output = readText(Files.Log);
  SlurmVerdict Verdict = readSlurmEnd(Output);
  std::string What = runName(Request.Mode, Request.BatchSize);
  bool Ended = Process.End != ProcessEnd::Exited || Process.ExitCode != 0;
  // Whatever ended it early, none of its job may stay behind.
  if (Ended && (Verdict.End != SlurmEnd::None || Process.TimedOut ||
                Process.End == ProcessEnd::Interrupted))
    cancelLeftovers();
  if (auto Ending = sweepEnding(Verdict, What, Options.QueueTimeoutSeconds))
    return llvm::createStringError(std::errc::io_error, "%s", Ending->c_str());
  if (!Node) {
    if (std::string Error = srunError(Output); !Error.empty() && Ended)
      return llvm::createStringError(std::errc::io_error,
                                     "srun refused the job for %s (%s); check "
                                     "--slurm-args",
                                     What.c_str(), Error.c_str());
  }
  if (Node)
    if (llvm::Error E = holdToOneKind(*Node, What))
      return std::move(E);
  if (Verdict.End == SlurmEnd::OutOfMemory)
    return outOfMemory(Request, Process, Files, Verdict,
                       Node.value_or(RunNode()));
  if (Verdict.End == SlurmEnd::TimeLimit) {
    RunOutcome Outcome;
    Outcome.Seconds = Process.Seconds;
    Outcome.Problem = What + " was stopped at Slurm's time limit (" +
                      Verdict.Line +
                      "): give its job more time (--time in --slurm-args, or "
                      "the allocation's), or ask for fewer iterations "
                      "(--iterations, --time-budget)";
    return Outcome;
  }
  llvm::Expected<RunOutcome> Outcome =
      outcomeOfRun(Request, asLocalEnd(Process, Output), Files, Options,
                   [&](MeasuredRun &Run) { Run.Node = Node; });
  if (Outcome && Outcome->Run && !Outcome->Run->Node)
    Outcome->Run->Node = Node; // an out-of-memory run the program caught
  return Outcome;
}

RunOutcome SlurmLauncher::outOfMemory(const RunRequest &Request,
                                      const ProcessResult &Process,
                                      const RunFiles &Files,
                                      const SlurmVerdict &Verdict,
                                      RunNode Node) {
  MeasuredRun Oom;
  if (llvm::sys::fs::exists(Files.Result)) {
    if (auto Partial = readRunResult(Files.Result)) {
      Oom = std::move(*Partial);
      Oom.OutOfMemoryBeforeLoop = Oom.IterationsReached == 0 && !Oom.LoopBegan;
    } else {
      llvm::consumeError(Partial.takeError());
    }
  }
  Oom.BatchSize = Request.BatchSize;
  Oom.Mode = Request.Mode;
  Oom.OutOfMemory = true;
  Oom.Stopped = StopReason::OutOfMemory;
  Oom.EndedEarly = false;
  Oom.WallSeconds = Process.Seconds;
  Oom.Log = Files.Log;
  Node.MemoryLimitBytes = Verdict.MemoryLimitBytes;
  std::string Where = Node.Name.empty() ? "" : " on node " + Node.Name;
  std::string Limit =
      Verdict.MemoryLimitBytes
          ? " (" + formatBytes(Verdict.MemoryLimitBytes) + ", its --mem)"
          : "";
  Notes.push_back(runName(Request.Mode, Request.BatchSize) +
                  " ran out of memory: Slurm's memory limit" + Where + Limit +
                  " killed it (" + Verdict.Line +
                  "); the sweep stays below it; more memory: --mem in "
                  "--slurm-args");
  Oom.Node = std::move(Node);
  RunOutcome Outcome;
  Outcome.Seconds = Process.Seconds;
  Outcome.Run = std::move(Oom);
  return Outcome;
}

} // namespace skyline
