// The Slurm launcher without a Slurm: the srun and cancel commands it builds,
// what srun's and slurmstepd's lines (copied from Slurm 22.05) say of a run's
// end, and the launcher's outcomes with a scripted runner in place of
// runProcess. The real cluster is test/lit/slurm's.

#include "skyline/SlurmLauncher.h"

#include "skyline/MeasuredRunYAML.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <deque>
#include <fstream>

using namespace skyline;

namespace {

SlurmSetup setupOf(std::string Allocation = "") {
  SlurmSetup Setup;
  Setup.Srun = "/usr/bin/srun";
  Setup.JobName = "skyline-vm-42";
  Setup.AllocationId = std::move(Allocation);
  Setup.UserArgs = {"-p", "gpu", "--gres=gpu:1"};
  Setup.QueueTimeoutSeconds = 60;
  return Setup;
}

TEST(SlurmLauncherTest, SrunCommandPutsTheUsersArgsAfterOursButTheName) {
  std::vector<std::string> Args =
      srunCommand(setupOf(), {"SKYLINE_BATCH_SIZE=8", "CUDA_VISIBLE_DEVICES="},
                  "/w/runs/batch-8.node", {"/w/prog", "--epochs=1"});
  ASSERT_EQ(Args.size(), 18u);
  std::vector<std::string> Head(Args.begin(), Args.begin() + 13);
  EXPECT_EQ(
      Head,
      (std::vector<std::string>{
          "/usr/bin/srun", "--nodes=1", "--ntasks=1", "--immediate=60", "-p",
          "gpu", "--gres=gpu:1", "--job-name=skyline-vm-42", "/usr/bin/env",
          "SKYLINE_BATCH_SIZE=8", "CUDA_VISIBLE_DEVICES=", "/bin/sh", "-c"}));
  EXPECT_NE(Args[13].find("exec \"$@\""), std::string::npos);
  EXPECT_EQ(std::vector<std::string>(Args.begin() + 14, Args.end()),
            (std::vector<std::string>{"skyline-node", "/w/runs/batch-8.node",
                                      "/w/prog", "--epochs=1"}));
}

TEST(SlurmLauncherTest, NoQueueTimeoutWaitsAsLongAsItTakes) {
  SlurmSetup Setup = setupOf();
  Setup.QueueTimeoutSeconds = 0;
  Setup.UserArgs.clear();
  std::vector<std::string> Args = srunCommand(Setup, {}, "/n", {"/p"});
  EXPECT_EQ(
      std::vector<std::string>(Args.begin(), Args.begin() + 5),
      (std::vector<std::string>{"/usr/bin/srun", "--nodes=1", "--ntasks=1",
                                "--job-name=skyline-vm-42", "/usr/bin/env"}));
}

TEST(SlurmLauncherTest, CancelCommandNamesTheJobsAndTheAllocation) {
  std::vector<std::string> Inside = cancelCommand(setupOf("12"));
  ASSERT_EQ(Inside.size(), 5u);
  EXPECT_EQ(Inside[0], "/bin/sh");
  EXPECT_NE(Inside[2].find("scancel $ids"), std::string::npos);
  EXPECT_EQ(Inside[3], "skyline-vm-42");
  EXPECT_EQ(Inside[4], "12");
  EXPECT_EQ(cancelCommand(setupOf())[4], "");
}

TEST(SlurmLauncherTest, MemoryLimitIsOutOfMemoryWithTheLimit) {
  SlurmVerdict V = readSlurmEnd(
      "epoch 1\n"
      "slurmstepd-vm: error: StepId=5.0 exceeded memory limit (328441856 > "
      "104857600), being killed\n"
      "srun: Exceeded job memory limit\n"
      "srun: Job step aborted: Waiting up to 7 seconds for job step to "
      "finish.\n"
      "srun: error: vm: task 0: Killed\n");
  EXPECT_EQ(V.End, SlurmEnd::OutOfMemory);
  EXPECT_EQ(V.MemoryLimitBytes, 104857600);
  EXPECT_EQ(V.JobStep, "5.0");
  EXPECT_EQ(V.Line, "slurmstepd-vm: error: StepId=5.0 exceeded memory limit "
                    "(328441856 > 104857600), being killed");
}

TEST(SlurmLauncherTest, TimeLimit) {
  SlurmVerdict V = readSlurmEnd(
      "srun: Job step aborted: Waiting up to 7 seconds for job step to "
      "finish.\n"
      "slurmstepd-vm: error: *** STEP 6.0 ON vm CANCELLED AT "
      "2026-12-04T18:01:54 DUE TO TIME LIMIT ***\n"
      "srun: error: vm: task 0: Terminated\n");
  EXPECT_EQ(V.End, SlurmEnd::TimeLimit);
  EXPECT_EQ(V.JobStep, "6.0");
}

TEST(SlurmLauncherTest, CancelledRunningAndPending) {
  SlurmVerdict Running =
      readSlurmEnd("slurmstepd-vm: error: *** STEP 8.1 ON vm CANCELLED AT "
                   "2026-12-04T18:02:14 ***\nsrun: error: vm: task 0: "
                   "Killed\n");
  EXPECT_EQ(Running.End, SlurmEnd::Cancelled);
  EXPECT_EQ(Running.JobStep, "8.1");
  SlurmVerdict Pending = readSlurmEnd(
      "srun: job 7 queued and waiting for resources\n"
      "srun: Job has been cancelled\n"
      "srun: error: Unable to allocate resources: Job/step already "
      "completing or completed\n");
  EXPECT_EQ(Pending.End, SlurmEnd::Cancelled);
  EXPECT_EQ(Pending.JobStep, "7");
  EXPECT_EQ(Pending.Line, "srun: Job has been cancelled");
}

TEST(SlurmLauncherTest, QueueTimeoutOfAJobAndOfAStep) {
  SlurmVerdict Job = readSlurmEnd(
      "srun: job 4 queued and waiting for resources\n"
      "srun: error: Unable to allocate resources: Requested nodes are busy\n");
  EXPECT_EQ(Job.End, SlurmEnd::QueueTimeout);
  EXPECT_EQ(Job.JobStep, "4");
  SlurmVerdict Step = readSlurmEnd(
      "srun: error: Unable to create step for job 9: Requested nodes are "
      "busy\n");
  EXPECT_EQ(Step.End, SlurmEnd::QueueTimeout);
  EXPECT_EQ(Step.JobStep, "9");
}

TEST(SlurmLauncherTest, RefusedAndTheProgramsOwnLines) {
  SlurmVerdict Refused = readSlurmEnd(
      "srun: error: invalid partition specified: nopart\n"
      "srun: error: Unable to allocate resources: Invalid partition name "
      "specified\n");
  EXPECT_EQ(Refused.End, SlurmEnd::Refused);
  // A program may print anything: only srun's and slurmstepd's lines count.
  EXPECT_EQ(readSlurmEnd("loss CANCELLED AT step 3 DUE TO TIME LIMIT\n"
                         "exceeded memory limit (5 > 4)\n")
                .End,
            SlurmEnd::None);
}

TEST(SlurmLauncherTest, NodeFacts) {
  std::optional<RunNode> Node = parseNodeFacts(
      "name=gpu07\njob=12.3\ncpu_model=AMD EPYC 7763 64-Core Processor\n"
      "cores=128\ncpus_allocated=16\ngpu_model=NVIDIA H200\n");
  ASSERT_TRUE(Node);
  EXPECT_EQ(Node->Name, "gpu07");
  EXPECT_EQ(Node->JobStep, "12.3");
  EXPECT_EQ(Node->CpuModel, "AMD EPYC 7763 64-Core Processor");
  EXPECT_EQ(Node->Cores, 128u);
  EXPECT_EQ(Node->CpusAllocated, 16u);
  EXPECT_EQ(Node->GpuModel, "NVIDIA H200");
  EXPECT_FALSE(parseNodeFacts("cores=4\n"));
}

TEST(SlurmLauncherTest, VisibilityCheckNamesTheDirectory) {
  EXPECT_EQ(describeVisibilityCheck("/tmp/work", "/tmp/work/build/prog",
                                    /*Found=*/false, 0, ""),
            "the work directory /tmp/work is not shared with the node: a job "
            "there wrote a file into it that this machine does not see; give "
            "--work-dir a directory on a file system the nodes share (a home "
            "or project directory, not /tmp or a local disk)");
  EXPECT_EQ(describeVisibilityCheck("/w", "/w/build/prog", true, 1, "gpu07"),
            "node gpu07 sees the work directory /w but cannot run the "
            "instrumented program /w/build/prog (exit code 1); is it on a "
            "file system the node shares, and can the node's user run it?");
  EXPECT_FALSE(describeVisibilityCheck("/w", "/w/p", true, 0, "gpu07"));
}

TEST(SlurmLauncherTest, TheReportKeepsEachRunsNode) {
  MeasuredRun Run;
  Run.BatchSize = 8;
  Run.Node = RunNode{"gpu07", "12.3",        "AMD EPYC 7763", 128,
                     16,      "NVIDIA H200", 1073741824};
  YAML::Emitter Out;
  emitReportRun(Out, Run);
  std::string Text = Out.c_str();
  EXPECT_NE(Text.find("node: {name: gpu07, job: 12.3, cpu_model: AMD EPYC "
                      "7763, cores: 128, cpus_allocated: 16, gpu_model: "
                      "NVIDIA H200, memory_limit_bytes: 1073741824}"),
            std::string::npos)
      << Text;
  MeasuredRun Back = readReportRun(YamlFields(YAML::Load(Text), "runs[0]"));
  ASSERT_TRUE(Back.Node);
  EXPECT_EQ(Back.Node->Name, "gpu07");
  EXPECT_EQ(Back.Node->JobStep, "12.3");
  EXPECT_EQ(Back.Node->CpuModel, "AMD EPYC 7763");
  EXPECT_EQ(Back.Node->Cores, 128u);
  EXPECT_EQ(Back.Node->CpusAllocated, 16u);
  EXPECT_EQ(Back.Node->GpuModel, "NVIDIA H200");
  EXPECT_EQ(Back.Node->MemoryLimitBytes, 1073741824);
  // A local run has none.
  YAML::Emitter Local;
  emitReportRun(Local, MeasuredRun{});
  EXPECT_EQ(std::string(Local.c_str()).find("node:"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// The launcher with a scripted srun
//===----------------------------------------------------------------------===//

const char *const ResultYaml =
    "schema_version: 1\nbatch_size: 8\noom: false\niterations: 8\n"
    "iteration_ms: {median: 2.5, mean: 2.6, stddev: 0.1, min: 2.4, max: "
    "2.9}\nthroughput: 3200\npeak_bytes: 123456\n";

const char *const NodeFacts =
    "name=vm\njob=31.0\ncpu_model=Test CPU\ncores=2\ncpus_allocated=1\n";

/// What one scripted srun does: its output, whether the node wrote its
/// facts and the program its result, and its exit code.
struct ScriptedRun {
  std::string Output;
  bool WritesNode = true;
  bool WritesResult = true;
  int ExitCode = 0;
  std::string Node = NodeFacts; // what the node's wrapper writes
};

void writeFile(const std::string &Path, llvm::StringRef Text) {
  std::ofstream(Path) << Text.str();
}

std::string readFileText(const std::string &Path) {
  std::ifstream In(Path);
  return std::string(std::istreambuf_iterator<char>(In), {});
}

/// Stands for runProcess: records each command, plays the next run.
struct ScriptedSlurm {
  std::deque<ScriptedRun> Runs;
  std::vector<std::vector<std::string>> Commands;

  CommandRunner runner() {
    return [this](llvm::ArrayRef<std::string> Args, llvm::StringRef,
                  llvm::ArrayRef<std::string>, llvm::StringRef Log, unsigned) {
      Commands.emplace_back(Args.begin(), Args.end());
      ProcessResult Result;
      Result.End = ProcessEnd::Exited;
      Result.ExitCode = 0;
      if (Args.size() > 1 && Args[1] == "-c" && Args[0] == "/bin/sh")
        return Result; // the cancel command
      ScriptedRun Run = Runs.empty() ? ScriptedRun() : Runs.front();
      if (!Runs.empty())
        Runs.pop_front();
      for (size_t I = 0; I + 1 < Args.size(); ++I) {
        llvm::StringRef Arg = Args[I];
        if (Arg == "skyline-node" && Run.WritesNode)
          writeFile(Args[I + 1], Run.Node);
        if (Arg.consume_front("SKYLINE_RESULT=") && Run.WritesResult)
          writeFile(Arg.str(), ResultYaml);
      }
      writeFile(Log.str(), Run.Output);
      Result.ExitCode = Run.ExitCode;
      return Result;
    };
  }

  bool cancelled() const {
    for (const auto &Command : Commands)
      if (Command[0] == "/bin/sh")
        return true;
    return false;
  }
};

/// A directory with stand-ins for srun, squeue and scancel on PATH while
/// the launcher is made; the work directory is below it.
class SlurmLauncherRunTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("slurm-test", Dir));
    std::string Bin = (Dir + "/bin").str();
    llvm::sys::fs::create_directories(Bin);
    for (const char *Tool : {"srun", "squeue", "scancel"}) {
      std::string Path = Bin + "/" + Tool;
      writeFile(Path, "#!/bin/sh\nexit 0\n");
      llvm::sys::fs::setPermissions(Path, llvm::sys::fs::all_exe |
                                              llvm::sys::fs::owner_all);
    }
    const char *Path = std::getenv("PATH");
    SavedPath = Path ? Path : "";
    setenv("PATH", Bin.c_str(), 1);
    unsetenv("SLURM_JOB_ID");
    Options.WorkDir = (Dir + "/work").str();
    Options.QueueTimeoutSeconds = 30;
  }
  void TearDown() override {
    setenv("PATH", SavedPath.c_str(), 1);
    llvm::sys::fs::remove_directories(Dir);
  }

  std::unique_ptr<SlurmLauncher> make() {
    auto Launcher =
        SlurmLauncher::create((Dir + "/work/prog").str(), Options,
                              Options.WorkDir + "/runs", Slurm.runner());
    EXPECT_TRUE(bool(Launcher)) << llvm::toString(Launcher.takeError());
    return Launcher ? std::move(*Launcher) : nullptr;
  }

  RunRequest at8() const {
    RunRequest Request;
    Request.BatchSize = 8;
    return Request;
  }

  llvm::SmallString<128> Dir;
  std::string SavedPath;
  MeasureOptions Options;
  ScriptedSlurm Slurm;
};

TEST_F(SlurmLauncherRunTest, SrunMissingIsAnErrorSayingWhatToDo) {
  llvm::sys::fs::remove((Dir + "/bin/srun").str());
  auto Launcher = SlurmLauncher::create("/p", Options, "/w/runs");
  ASSERT_FALSE(bool(Launcher));
  EXPECT_EQ(llvm::toString(Launcher.takeError()),
            "--launcher=slurm: 'srun' is not on PATH; run skyline-check where "
            "Slurm's commands are (a login node, or after 'module load "
            "slurm'), or measure here with --launcher=local");
}

TEST_F(SlurmLauncherRunTest, ARunGetsItsNode) {
  std::unique_ptr<SlurmLauncher> Launcher = make();
  ASSERT_TRUE(Launcher);
  EXPECT_EQ(Launcher->describe().substr(0, 41),
            "each run a job of its own, named skyline-");
  Slurm.Runs = {ScriptedRun(), ScriptedRun()}; // the check, the run
  llvm::Expected<RunOutcome> Outcome = Launcher->run(at8());
  ASSERT_TRUE(bool(Outcome)) << llvm::toString(Outcome.takeError());
  ASSERT_TRUE(Outcome->Run) << Outcome->Problem;
  ASSERT_TRUE(Outcome->Run->Node);
  EXPECT_EQ(Outcome->Run->Node->Name, "vm");
  EXPECT_EQ(Outcome->Run->Node->CpuModel, "Test CPU");
  EXPECT_EQ(Outcome->Run->Node->Cores, 2u);
  ASSERT_EQ(Slurm.Commands.size(), 2u);
  // The check runs `test -x` on the executable; the run, the program.
  EXPECT_EQ(Slurm.Commands[0].back(), (Dir + "/work/prog").str());
  EXPECT_EQ(Slurm.Commands[0][Slurm.Commands[0].size() - 2], "test -x \"$0\"");
  EXPECT_EQ(Slurm.Commands[1].back(), (Dir + "/work/prog").str());
  EXPECT_FALSE(Slurm.cancelled());
  // The second run is not checked again.
  Slurm.Runs = {ScriptedRun()};
  ASSERT_TRUE(bool(Launcher->run(at8())));
  EXPECT_EQ(Slurm.Commands.size(), 3u);
}

TEST_F(SlurmLauncherRunTest, AWorkDirectoryTheNodeDoesNotSeeStopsTheSweep) {
  std::unique_ptr<SlurmLauncher> Launcher = make();
  ASSERT_TRUE(Launcher);
  ScriptedRun Check;
  Check.WritesNode = false;
  Slurm.Runs = {Check};
  llvm::Expected<RunOutcome> Outcome = Launcher->run(at8());
  ASSERT_FALSE(bool(Outcome));
  EXPECT_EQ(llvm::toString(Outcome.takeError()),
            "the work directory " + (Dir + "/work").str() +
                " is not shared with the node: a job there wrote a file into "
                "it that this machine does not see; give --work-dir a "
                "directory on a file system the nodes share (a home or "
                "project directory, not /tmp or a local disk)");
  EXPECT_EQ(Slurm.Commands.size(), 1u); // no run
}

TEST_F(SlurmLauncherRunTest, SlurmsMemoryLimitIsAnOutOfMemoryRun) {
  std::unique_ptr<SlurmLauncher> Launcher = make();
  ASSERT_TRUE(Launcher);
  ScriptedRun Killed;
  Killed.WritesResult = false;
  Killed.ExitCode = 137;
  Killed.Output = "slurmstepd-vm: error: StepId=31.0 exceeded memory limit "
                  "(328441856 > 104857600), being killed\n"
                  "srun: error: vm: task 0: Killed\n";
  Slurm.Runs = {ScriptedRun(), Killed};
  llvm::Expected<RunOutcome> Outcome = Launcher->run(at8());
  ASSERT_TRUE(bool(Outcome)) << llvm::toString(Outcome.takeError());
  ASSERT_TRUE(Outcome->Run);
  EXPECT_TRUE(Outcome->Run->OutOfMemory);
  EXPECT_EQ(Outcome->Run->Stopped, StopReason::OutOfMemory);
  ASSERT_TRUE(Outcome->Run->Node);
  EXPECT_EQ(Outcome->Run->Node->MemoryLimitBytes, 104857600);
  ASSERT_EQ(Launcher->notes().size(), 1u);
  EXPECT_EQ(Launcher->notes()[0],
            "the run at batch size 8 ran out of memory: Slurm's memory limit "
            "on node vm (100 MiB, its --mem) killed it (slurmstepd-vm: error: "
            "StepId=31.0 exceeded memory limit (328441856 > 104857600), being "
            "killed); the sweep stays below it; more memory: --mem in "
            "--slurm-args");
  EXPECT_TRUE(Slurm.cancelled());
}

TEST_F(SlurmLauncherRunTest, ACancelledJobStopsTheSweep) {
  std::unique_ptr<SlurmLauncher> Launcher = make();
  ASSERT_TRUE(Launcher);
  ScriptedRun Cancelled;
  Cancelled.WritesResult = false;
  Cancelled.ExitCode = 137;
  Cancelled.Output = "slurmstepd-vm: error: *** JOB 31 ON vm CANCELLED AT "
                     "2026-12-04T18:02:14 ***\n";
  Slurm.Runs = {ScriptedRun(), Cancelled};
  llvm::Expected<RunOutcome> Outcome = Launcher->run(at8());
  ASSERT_FALSE(bool(Outcome));
  EXPECT_EQ(llvm::toString(Outcome.takeError()),
            "the run at batch size 8 was cancelled: Slurm job 31 ended before "
            "the program did (slurmstepd-vm: error: *** JOB 31 ON vm "
            "CANCELLED AT 2026-12-04T18:02:14 ***; scancel, preemption or an "
            "administrator); the sweep stops");
  EXPECT_TRUE(Slurm.cancelled());
}

TEST_F(SlurmLauncherRunTest, ATimeLimitIsAFailedRun) {
  std::unique_ptr<SlurmLauncher> Launcher = make();
  ASSERT_TRUE(Launcher);
  ScriptedRun Expired;
  Expired.WritesResult = false;
  Expired.ExitCode = 143;
  Expired.Output = "slurmstepd-vm: error: *** STEP 31.0 ON vm CANCELLED AT "
                   "2026-12-04T18:01:54 DUE TO TIME LIMIT ***\n";
  Slurm.Runs = {ScriptedRun(), Expired};
  llvm::Expected<RunOutcome> Outcome = Launcher->run(at8());
  ASSERT_TRUE(bool(Outcome)) << llvm::toString(Outcome.takeError());
  EXPECT_FALSE(Outcome->Run);
  EXPECT_EQ(Outcome->Problem,
            "the run at batch size 8 was stopped at Slurm's time limit "
            "(slurmstepd-vm: error: *** STEP 31.0 ON vm CANCELLED AT "
            "2026-12-04T18:01:54 DUE TO TIME LIMIT ***): give its job more "
            "time (--time in --slurm-args, or the allocation's), or ask for "
            "fewer iterations (--iterations, --time-budget)");
}

TEST_F(SlurmLauncherRunTest, AQueueTimeoutStopsTheSweepBeforeTheFirstRun) {
  std::unique_ptr<SlurmLauncher> Launcher = make();
  ASSERT_TRUE(Launcher);
  ScriptedRun Waited;
  Waited.WritesNode = false;
  Waited.ExitCode = 1;
  Waited.Output =
      "srun: job 4 queued and waiting for resources\n"
      "srun: error: Unable to allocate resources: Requested nodes are busy\n";
  Slurm.Runs = {Waited};
  llvm::Expected<RunOutcome> Outcome = Launcher->run(at8());
  ASSERT_FALSE(bool(Outcome));
  EXPECT_EQ(llvm::toString(Outcome.takeError()),
            "the Slurm job for the check that the nodes see the work "
            "directory was still waiting to start after --queue-timeout (30 "
            "s) and was withdrawn (srun: error: Unable to allocate resources: "
            "Requested nodes are busy); choose a partition or resources that "
            "are free sooner (--slurm-args), or wait longer "
            "(--queue-timeout)");
  EXPECT_TRUE(Slurm.cancelled());
}

TEST(SlurmLauncherTest, CommandsTogetherRunAtOnceEachWithItsLog) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("together", Dir));
  std::vector<std::string> Logs = {(Dir + "/a.log").str(),
                                   (Dir + "/b.log").str()};
  // Each marks that it started and waits for the other's mark: one after
  // the other, the first would give up and print nothing.
  auto Meet = [&](llvm::StringRef Mine, llvm::StringRef Theirs,
                  llvm::StringRef Then) {
    std::string D = Dir.str().str();
    return ": > " + D + "/" + Mine.str() + "; i=0; while [ ! -e " + D + "/" +
           Theirs.str() + " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); "
           "done; [ -e " + D + "/" + Theirs.str() + " ] && " + Then.str();
  };
  int Interrupt = 0;
  std::vector<ProcessResult> Ends = runCommandsTogether(
      {{"/bin/sh", "-c", Meet("a.up", "b.up", "echo a")},
       {"/bin/sh", "-c", Meet("b.up", "a.up", "{ echo b >&2; exit 3; }")}},
      Logs, "", 30, Interrupt);
  EXPECT_EQ(Interrupt, 0);
  ASSERT_EQ(Ends.size(), 2u);
  EXPECT_EQ(Ends[0].End, ProcessEnd::Exited);
  EXPECT_EQ(Ends[0].ExitCode, 0);
  EXPECT_EQ(Ends[1].ExitCode, 3);
  EXPECT_EQ(readFileText(Logs[0]), "a\n");
  EXPECT_EQ(readFileText(Logs[1]), "b\n");
  llvm::sys::fs::remove_directories(Dir);
}

TEST_F(SlurmLauncherRunTest, ExpectedRunsGoTogether) {
  // An srun that does what the node would: the facts, the result, a second.
  std::string Srun = (Dir + "/bin/srun").str();
  writeFile(Srun, "#!/bin/sh\nfor a; do\n"
                  "  [ \"$prev\" = skyline-node ] && printf 'name=vm\\ncpu_model=Test "
                  "CPU\\ncores=2\\ncpus_allocated=1\\n' > \"$a\"\n"
                  "  case $a in SKYLINE_RESULT=*) /bin/cp \"$RESULT_FILE\" "
                  "\"${a#SKYLINE_RESULT=}\";; esac\n"
                  "  prev=$a\ndone\n"
                  // Meet the other run: one after the other, neither would.
                  // (builtins only: the runs' PATH is the fake's bin)
                  ": > \"$MARKS/$$\"; i=0\n"
                  "marks() { set -- \"$MARKS\"/*; echo $#; }\n"
                  "while [ $(marks) -lt 2 ] && [ $i -lt 200 ]; "
                  "do /bin/sleep 0.05; i=$((i+1)); done\n"
                  "[ $(marks) -ge 2 ] || exit 9\n");
  std::string Result = (Dir + "/result.yaml").str();
  writeFile(Result, ResultYaml);
  setenv("RESULT_FILE", Result.c_str(), 1);
  std::string Marks = (Dir + "/marks").str();
  ASSERT_FALSE(llvm::sys::fs::create_directory(Marks));
  setenv("MARKS", Marks.c_str(), 1);
  Options.ParallelRuns = 2;
  std::unique_ptr<SlurmLauncher> Launcher = make();
  ASSERT_TRUE(Launcher);
  RunRequest Second = at8();
  Second.Pass = 2;
  RunRequest Other = at8();
  Other.BatchSize = 16;
  Other.Pass = 2;
  Launcher->expect({Second, Other});
  llvm::Expected<RunOutcome> A = Launcher->run(Second);
  llvm::Expected<RunOutcome> B = Launcher->run(Other);
  unsetenv("RESULT_FILE");
  unsetenv("MARKS");
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
  ASSERT_TRUE(A->Run) << A->Problem;
  ASSERT_TRUE(B->Run) << B->Problem;
  EXPECT_EQ(A->Run->Node->Name, "vm");
  EXPECT_EQ(Slurm.Commands.size(), 1u); // the check alone went by Runner
}

TEST_F(SlurmLauncherRunTest, InsideAnAllocationEachRunIsAStep) {
  setenv("SLURM_JOB_ID", "77", 1);
  std::unique_ptr<SlurmLauncher> Launcher = make();
  unsetenv("SLURM_JOB_ID");
  ASSERT_TRUE(Launcher);
  EXPECT_EQ(Launcher->setup().AllocationId, "77");
  EXPECT_EQ(Launcher->describe().substr(0, 36),
            "each run a step of job 77, named sky");
}

} // namespace

namespace {

bool hasArg(const std::vector<std::string> &Command, llvm::StringRef Arg) {
  return llvm::is_contained(Command, Arg);
}

TEST_F(SlurmLauncherRunTest, EveryRunGoesToTheFirstJobsNode) {
  std::unique_ptr<SlurmLauncher> Launcher = make();
  ASSERT_TRUE(Launcher);
  std::string Said;
  llvm::raw_string_ostream Progress(Said);
  Launcher->sayTo(Progress);
  Slurm.Runs = {ScriptedRun(), ScriptedRun(), ScriptedRun()};
  ASSERT_TRUE(bool(Launcher->run(at8())));
  ASSERT_TRUE(bool(Launcher->run(at8())));
  ASSERT_EQ(Slurm.Commands.size(), 3u);
  // The check goes anywhere; the runs after it, to its node.
  EXPECT_FALSE(hasArg(Slurm.Commands[0], "--nodelist=vm"));
  EXPECT_TRUE(hasArg(Slurm.Commands[1], "--nodelist=vm"));
  EXPECT_TRUE(hasArg(Slurm.Commands[2], "--nodelist=vm"));
  EXPECT_EQ(Said, "skyline-check: every run goes to node vm, where the first "
                  "job ran (Test CPU, 1 of 2 CPUs, no GPU): a fit never mixes "
                  "kinds of node; --slurm-args with --nodelist or "
                  "--constraint chooses the nodes instead\n");
}

TEST_F(SlurmLauncherRunTest, ARunOnAnotherKindOfNodeStopsTheSweep) {
  Options.SlurmArgs = {"--constraint=gpu"};
  std::unique_ptr<SlurmLauncher> Launcher = make();
  ASSERT_TRUE(Launcher);
  ScriptedRun Other;
  Other.Node = "name=gpu08\njob=32\ncpu_model=Other CPU\ncores=64\n"
               "cpus_allocated=8\ngpu_model=NVIDIA A100\n";
  Slurm.Runs = {ScriptedRun(), ScriptedRun(), Other};
  ASSERT_TRUE(bool(Launcher->run(at8())));
  // The user's --constraint chooses the nodes: no --nodelist of ours.
  EXPECT_FALSE(hasArg(Slurm.Commands[1], "--nodelist=vm"));
  llvm::Expected<RunOutcome> Outcome = Launcher->run(at8());
  ASSERT_FALSE(bool(Outcome));
  EXPECT_EQ(llvm::toString(Outcome.takeError()),
            "the run at batch size 8 ran on node gpu08 (Other CPU, 8 of 64 "
            "CPUs, NVIDIA A100), unlike node vm where the first job ran (Test "
            "CPU, 1 of 2 CPUs, no GPU): a fit never mixes kinds of node, so "
            "the sweep stops; choose nodes of one kind with --slurm-args (a "
            "partition, --constraint or --nodelist)");
}

TEST(SlurmLauncherTest, WhichArgumentsChooseTheNodes) {
  EXPECT_TRUE(choosesNodes({"-p", "gpu", "--nodelist=gpu[01-04]"}));
  EXPECT_TRUE(choosesNodes({"-w", "gpu01"}));
  EXPECT_TRUE(choosesNodes({"-Cv100"}));
  EXPECT_TRUE(choosesNodes({"--constraint", "h100"}));
  EXPECT_FALSE(choosesNodes({"-p", "gpu", "--gres=gpu:1", "--exclusive"}));
  EXPECT_FALSE(choosesNodes({"--nodes=1", "--wait=0", "--cpus-per-task=4"}));
}

TEST(SlurmLauncherTest, NodesOfOneKind) {
  RunNode A{"a", "1", "Xeon", 16, 4, "NVIDIA H100", 0};
  RunNode B = A;
  B.Name = "b";
  B.JobStep = "2";
  EXPECT_TRUE(sameNodeKind(A, B)); // another node, the same kind
  B.GpuModel = "NVIDIA A100";
  EXPECT_FALSE(sameNodeKind(A, B));
  B = A;
  B.CpusAllocated = 8;
  EXPECT_FALSE(sameNodeKind(A, B));
  EXPECT_EQ(describeNodeKind(A), "Xeon, 4 of 16 CPUs, NVIDIA H100");
}

} // namespace
