//===- SlurmLauncher.h - The sweep's runs as Slurm jobs or steps -*- C++
//-*-===//
//
// --launcher=slurm: each run of the sweep goes through `srun`. Inside an
// allocation (salloc, sbatch: SLURM_JOB_ID is set) a run is a job step of
// it; outside one, a job of its own. A small wrapper on the node notes where
// the run ran (node, CPU model and cores, GPU) before the program starts, and
// the run's output comes back through srun into its log as a local run's
// does; the result file is written on the node, into the work directory,
// which the nodes must see (checked before the first run).
//
// Slurm's own ends are read from srun's and slurmstepd's lines: a job that
// waited longer than --queue-timeout, a cancelled or preempted job, a failed
// node (each ends the sweep with an error), a time limit (a failed run), and
// Slurm's memory limit (an out-of-memory run, with the limit). Whatever ends
// a run early, and an interrupt of skyline-check, cancels every job and step
// it started (scancel), and waits until squeue lists none of them.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_SLURMLAUNCHER_H
#define SKYLINE_SLURMLAUNCHER_H

#include "skyline/Sweep.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace skyline {

/// How Slurm ended a run, as srun's and slurmstepd's lines say.
enum class SlurmEnd {
  None,         // Slurm did not end it: the program's own end
  QueueTimeout, // still pending after --queue-timeout (srun --immediate)
  Refused,      // srun could not start it (partition, account, options)
  Cancelled,    // scancel, preemption, an administrator
  NodeFailure,  // the node failed under it
  TimeLimit,    // its job's or step's time limit expired
  OutOfMemory,  // Slurm's memory limit killed it
};

struct SlurmVerdict {
  SlurmEnd End = SlurmEnd::None;
  std::string Line;             // the line that says so, trimmed
  std::string JobStep;          // "12" or "12.3", where a line names it
  int64_t MemoryLimitBytes = 0; // OutOfMemory: the limit, where said
};

/// Reads a run's output, in which srun's and slurmstepd's own lines are
/// among the program's; only theirs count.
SlurmVerdict readSlurmEnd(llvm::StringRef Output);

/// What every srun of one skyline-check has in common.
struct SlurmSetup {
  std::string Srun;    // srun's path
  std::string JobName; // of every job and step it starts
  /// SLURM_JOB_ID where skyline-check runs inside an allocation (each run a
  /// step of it); empty: each run is a job of its own.
  std::string AllocationId;
  std::vector<std::string> UserArgs; // --slurm-args, after ours
  unsigned QueueTimeoutSeconds = 0;  // 0: wait as long as it takes
  /// The node every run goes to (--nodelist), once the first job has run:
  /// empty before that, and where --slurm-args chooses the nodes.
  std::string PinnedNode;
};

/// Whether Args choose the nodes themselves (--nodelist, -w, --constraint,
/// -C, --nodefile, -F): then the sweep pins none.
bool choosesNodes(llvm::ArrayRef<std::string> Args);

/// "Intel Xeon 8480, 2 of 2 CPUs, no GPU": what makes runs on two nodes
/// comparable, as a phrase.
std::string describeNodeKind(const RunNode &Node);

/// Whether runs on A and B may share a fit: the same CPU model, online
/// CPUs, CPUs given to the job and GPU model.
bool sameNodeKind(const RunNode &A, const RunNode &B);

/// The srun command of one run: srun, its options, then on the node
/// `env Environment... /bin/sh -c <wrapper> skyline-node NodeFile Program...`
/// (the wrapper writes the node's facts to NodeFile, then execs Program).
/// The environment goes on the command line, so that the program sees it
/// whatever srun's --export.
std::vector<std::string> srunCommand(const SlurmSetup &Setup,
                                     llvm::ArrayRef<std::string> Environment,
                                     llvm::StringRef NodeFile,
                                     llvm::ArrayRef<std::string> Program);

/// The shell command that cancels every job (outside an allocation) or
/// step (inside one) named Setup.JobName and waits until squeue lists none
/// of them, at most about 20 s.
std::vector<std::string> cancelCommand(const SlurmSetup &Setup);

/// The facts the wrapper wrote ("name=vm" lines); none where Text has no
/// node name.
std::optional<RunNode> parseNodeFacts(llvm::StringRef Text);

/// "the work directory ... is not visible": why a node's check failed, or
/// none where it passed. CheckFile: where the node was to write; Found:
/// whether this machine sees it.
std::optional<std::string> describeVisibilityCheck(llvm::StringRef WorkDir,
                                                   llvm::StringRef Executable,
                                                   bool Found, int ExitCode,
                                                   llvm::StringRef Node);

/// Runs a command as runProcess does: the seam a unit test replaces.
using CommandRunner = std::function<ProcessResult(
    llvm::ArrayRef<std::string> Args, llvm::StringRef Directory,
    llvm::ArrayRef<std::string> Environment, llvm::StringRef LogPath,
    unsigned TimeoutSeconds)>;

class SlurmLauncher : public RunLauncher {
public:
  /// Finds srun, squeue and scancel on PATH (an error names the missing
  /// one and what to do); SLURM_JOB_ID says whether this is an allocation.
  static llvm::Expected<std::unique_ptr<SlurmLauncher>>
  create(llvm::StringRef Executable, const MeasureOptions &Options,
         std::string RunsDir, CommandRunner Runner = runProcess);

  /// Before the first run, a job checks that the node sees the work
  /// directory and the executable (an error names the directory otherwise),
  /// and its node is the one every run must be like (sayTo hears which).
  llvm::Expected<RunOutcome> run(const RunRequest &Request) override;
  /// That check now, so that what it decides is said before the sweep's
  /// first run; run() does it where it was not done.
  llvm::Error checkBeforeTheRuns() {
    return Checked ? llvm::Error::success() : checkVisibility();
  }
  /// With --parallel-runs above 1: run() of an expected request starts it
  /// with the expected ones after it, up to that many at once, and answers
  /// their run() from what they gave.
  void expect(llvm::ArrayRef<RunRequest> Requests) override;

  /// "each run a job of its own" or "each run a step of job 12".
  std::string describe() const;
  /// What Slurm did to runs beyond their figures (a memory limit), for
  /// the measurement's problems.
  const std::vector<std::string> &notes() const { return Notes; }
  const SlurmSetup &setup() const { return Setup; }
  /// Where the launcher says what it decided (the node the runs are pinned
  /// to); nothing is said by default.
  void sayTo(llvm::raw_ostream &OS) { Progress = &OS; }

  /// Cancels what is left of the jobs and steps it started, and waits
  /// until squeue lists none.
  void cancelLeftovers();

private:
  SlurmLauncher(std::string Executable, const MeasureOptions &Options,
                std::string RunsDir, SlurmSetup Setup, CommandRunner Runner);
  llvm::Error checkVisibility();
  /// A fit never mixes kinds of node: the first job's node is the kind
  /// (where --slurm-args does not choose the nodes, every run then goes to
  /// that node); a run on another kind is an error.
  llvm::Error holdToOneKind(const RunNode &Node, llvm::StringRef What);
  /// What srun needs for one run, its files removed beforehand.
  struct Prepared {
    RunFiles Files;
    std::string NodeFile;
    std::vector<std::string> Command;
  };
  Prepared prepare(const RunRequest &Request);
  /// Runs Requests at once; their outcomes go to Done.
  void runTogether(llvm::ArrayRef<RunRequest> Requests);
  /// srun with Program on the node, its output to Log.
  ProcessResult srun(llvm::ArrayRef<std::string> Environment,
                     llvm::StringRef NodeFile,
                     llvm::ArrayRef<std::string> Program, llvm::StringRef Log,
                     unsigned TimeoutSeconds);
  llvm::Expected<RunOutcome> outcome(const RunRequest &Request,
                                     const ProcessResult &Process,
                                     const RunFiles &Files,
                                     std::optional<RunNode> Node);
  RunOutcome outOfMemory(const RunRequest &Request,
                         const ProcessResult &Process, const RunFiles &Files,
                         const SlurmVerdict &Verdict, RunNode Node);

  std::string Executable;
  MeasureOptions Options;
  std::string RunsDir;
  SlurmSetup Setup;
  CommandRunner Runner;
  bool Checked = false;
  std::optional<RunNode> Kind; // the first job's node
  llvm::raw_ostream *Progress = nullptr;
  std::vector<std::string> Notes;
  std::vector<RunRequest> Expected; // not yet run
  /// Outcomes of runs started with another, until the sweep asks.
  std::vector<std::pair<RunRequest, llvm::Expected<RunOutcome>>> Done;
};

/// How runs of several at once ended: ProcessResult for each command, run
/// at once, each with its output to its log (LogPaths), in Directory. An
/// interrupt (SIGINT, SIGTERM, SIGHUP) stops every one (SIGTERM, SIGKILL
/// after 2 s); Interrupt then holds the signal, for the caller to hand on.
std::vector<ProcessResult>
runCommandsTogether(llvm::ArrayRef<std::vector<std::string>> Commands,
                    llvm::ArrayRef<std::string> LogPaths,
                    llvm::StringRef Directory, unsigned TimeoutSeconds,
                    int &Interrupt);

} // namespace skyline

#endif // SKYLINE_SLURMLAUNCHER_H
