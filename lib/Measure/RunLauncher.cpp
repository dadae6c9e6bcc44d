//===- RunLauncher.cpp - One run of the instrumented program --------------===//

#include "skyline/Sweep.h"

#include "skyline/MeasuredRunYAML.h"
#include "skyline/OtherWork.h"
#include "skyline/Units.h"
#include "skyline/runtime/ExitCodes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

namespace skyline {
namespace {

/// What, then the end of the process's output; where the log was cut (a
/// program that printed megabytes) it says so: the end shown follows a gap.
std::string withLogTail(std::string What, llvm::StringRef Log,
                        const ProcessResult &R) {
  std::string Tail = failureOfOutput(Log, 12);
  if (Tail.empty())
    return What;
  std::string Cut;
  if (R.OutputBytesCut) {
    uint64_t Head = std::min<uint64_t>(R.OutputBytes, LogHeadBytes);
    uint64_t Kept = R.OutputBytes - R.OutputBytesCut - Head;
    Cut = ", cut to its first " + formatBytes(int64_t(Head)) + " and last " +
          formatBytes(int64_t(Kept)) + " of " +
          formatBytes(int64_t(R.OutputBytes));
  }
  return What + "; the end of its output (" + Log.str() + Cut + "):\n" + Tail;
}

/// The runtime could not write the result: say why when the program is to
/// blame.
std::string describeResultNotWritten(llvm::StringRef ResultPath) {
  llvm::StringRef Dir = llvm::sys::path::parent_path(ResultPath);
  if (!llvm::sys::fs::is_directory(Dir))
    return " could not write its result file: its directory " + Dir.str() +
           " is gone (does the program delete it, or its work directory?)";
  return " could not write its result file (is the work directory writable?)";
}

/// A program that returned before its first measured iteration.
std::string describeNoIterations(const MeasuredRun &Run, RunMode Mode,
                                 const ProcessResult &R, llvm::StringRef Log) {
  int ExitCode = R.ExitCode;
  std::string What =
      runName(Mode, Run.BatchSize) + " ended with exit code " +
      std::to_string(ExitCode) + " after " +
      std::to_string(Run.IterationsReached) +
      " iteration(s), before its first measured one (it asks for " +
      std::to_string(Run.Warmup) + " warm-up and " +
      (Run.MinIterations < Run.IterationsAsked
           ? std::to_string(Run.MinIterations) + " to "
           : std::string()) +
      std::to_string(Run.IterationsAsked) +
      " measured; does it reach optimizer.step() often enough? see --warmup "
      "and --iterations)";
  return withLogTail(What, Log, R);
}

std::string describeFailure(const ProcessResult &R, int64_t BatchSize,
                            llvm::StringRef Log, llvm::StringRef ResultPath,
                            RunMode Mode, std::optional<unsigned> Reached) {
  std::string What = runName(Mode, BatchSize);
  if (!R.Error.empty() && !R.Crashed)
    What += " could not start: " + R.Error;
  else if (R.TimedOut)
    What += " " + describeProcessEnd(R) +
            " (a hang, or iterations too slow: see --run-timeout)";
  else if (R.Crashed)
    What += " crashed (" + R.Error + ")";
  else if (R.End == ProcessEnd::Interrupted)
    What += " " + describeProcessEnd(R);
  else if (R.ExitCode == rt::ExitResultNotWritten)
    What += describeResultNotWritten(ResultPath);
  else if (R.ExitCode != 0 && Reached)
    What += " ended with exit code " + std::to_string(R.ExitCode) + " after " +
            std::to_string(*Reached) +
            " iteration(s): a program that exits non-zero is a failure";
  else
    What +=
        " ended with exit code " + std::to_string(R.ExitCode) +
        " before its measured iterations (does it reach optimizer.step() often "
        "enough? see --iterations)";
  return withLogTail(What, Log, R);
}

/// What a program that returned non-zero reached, from the result it wrote
/// on its way out; none without a readable one.
std::optional<unsigned> reachedBeforeFailing(llvm::StringRef ResultPath) {
  auto Partial = readRunResult(ResultPath);
  if (!Partial) {
    llvm::consumeError(Partial.takeError());
    return std::nullopt;
  }
  return Partial->IterationsReached;
}

/// --device=cuda: why a run that did not use a GPU is an error, and what to
/// do; none when it used one (or ran out of memory before saying).
std::optional<std::string> notOnCuda(const MeasuredRun &Run, RunMode Mode) {
  if (Run.Device == DeviceType::CUDA)
    return std::nullopt;
  rt::CudaUse Use = Run.Cuda.value_or(rt::CudaUse::Unknown);
  if (Run.OutOfMemory && Use == rt::CudaUse::Unknown)
    return std::nullopt;
  std::string Why;
  switch (Use) {
  case rt::CudaUse::NotBuilt:
    Why = "the program's LibTorch has no CUDA (a CPU-only build): build it "
          "against a LibTorch with CUDA (-DTorch_DIR=<libtorch>/share/cmake/"
          "Torch)";
    break;
  case rt::CudaUse::Hidden:
    Why = "CUDA_VISIBLE_DEVICES is set and empty, which hides every GPU from "
          "the program: unset it, or name a GPU";
    break;
  case rt::CudaUse::NoDevice:
    Why = "no CUDA device is visible to the program "
          "(torch::cuda::is_available() is false: no GPU, no driver, or "
          "CUDA_VISIBLE_DEVICES names none): measure on a machine with a GPU";
    break;
  case rt::CudaUse::Unused:
    Why = "a GPU is there, but by the end of warm-up the program had "
          "allocated nothing on it; move the model and each batch to it "
          "(.to(torch::kCUDA))";
    break;
  case rt::CudaUse::Used: // a CUDA run that wrote a CPU device: not ours
  case rt::CudaUse::Unknown:
    Why = "the program did not say that it used a GPU (it ended before its "
          "first iteration, or was built with an older runtime)";
    break;
  }
  return "--device=cuda, but " + runName(Mode, Run.BatchSize) + " ran on " +
         "the CPU: " + Why + "; or measure with --device=cpu or --device=auto";
}

/// The last bytes of a run's output, where an exception's message ends up.
std::string logTail(llvm::StringRef Log, size_t Bytes = 64 * 1024) {
  auto Buffer = llvm::MemoryBuffer::getFile(Log, /*IsText=*/true);
  if (!Buffer)
    return "";
  llvm::StringRef Text = (*Buffer)->getBuffer();
  return Text.take_back(Bytes).str();
}

} // namespace

std::string runName(RunMode Mode, int64_t BatchSize) {
  // 0: no size is set, the program runs at its own.
  return std::string(Mode == RunMode::Breakdown ? "the breakdown run"
                                                : "the run") +
         (BatchSize > 0 ? " at batch size " + std::to_string(BatchSize)
                        : std::string(" at the program's own batch size"));
}

MallocSetting runsMallocSetting(MallocThresholds Choice) {
  const char *Tunables = std::getenv("GLIBC_TUNABLES");
  return mallocSetting(Choice,
                       Tunables ? std::optional<llvm::StringRef>(Tunables)
                                : std::nullopt,
                       std::getenv("MALLOC_MMAP_THRESHOLD_") ||
                           std::getenv("MALLOC_TRIM_THRESHOLD_"));
}

RunFiles runFiles(llvm::StringRef RunsDir, const RunRequest &Request) {
  std::string Stem =
      RunsDir.str() + "/batch-" + std::to_string(Request.BatchSize) +
      (Request.Mode == RunMode::Breakdown ? "-breakdown" : "") +
      (Request.Pass > 1 ? "-run" + std::to_string(Request.Pass) : "") +
      (Request.Tag.empty() ? "" : "-" + Request.Tag);
  return {Stem + ".log", Stem + ".yaml"};
}

std::vector<std::string> runEnvironment(const RunRequest &Request,
                                        const MeasureOptions &Options,
                                        llvm::StringRef ResultPath) {
  bool Breakdown = Request.Mode == RunMode::Breakdown;
  unsigned Most =
      Breakdown ? std::min(Options.BreakdownIterations, Options.Iterations)
                : Options.Iterations;
  unsigned Fewest = Breakdown ? Most : std::min(Options.MinIterations, Most);
  unsigned Warmup = Options.Warmup;
  if (!Breakdown && Request.ProbeIterations > 0) {
    Most = Fewest = Request.ProbeIterations;
    Warmup = std::min(Warmup, ProbeWarmup);
  }
  auto Set = [](const char *Variable, const std::string &Value) {
    return std::string(Variable) + "=" + Value;
  };
  namespace env = rt::env;
  std::vector<std::string> Env = {
      Set(env::Result, ResultPath.str()),
      Set(env::BatchSize, std::to_string(Request.BatchSize)),
      Set(env::Mode, nameOf(Request.Mode)),
      Set(env::Warmup, std::to_string(Warmup)),
      Set(env::Iterations, std::to_string(std::max(Most, 1u))),
      Set(env::MinIterations, std::to_string(std::max(Fewest, 1u))),
      // On CUDA the device's memory is the limit: no host budget (the
      // runtime lifts it too, once a run with --device=auto uses a GPU).
      Set(env::MemoryBudget, std::to_string(Options.Device == DeviceChoice::CUDA
                                                ? 0
                                                : Options.MemoryBudget))};
  Env.insert(Env.end(), Request.Env.begin(), Request.Env.end());
  if (!Breakdown) {
    Env.push_back(Set(env::Tolerance, std::to_string(Options.Tolerance)));
    if (Request.TimeLimitSeconds > 0)
      Env.push_back(
          Set(env::TimeLimit, std::to_string(Request.TimeLimitSeconds)));
  }
  if (Options.Device == DeviceChoice::CPU)
    Env.push_back("CUDA_VISIBLE_DEVICES=");
  if (auto Tunables = runsMallocSetting(Request.Malloc).GlibcTunables)
    Env.push_back("GLIBC_TUNABLES=" + *Tunables);
  return Env;
}

RunOutcome finishedRunOutcome(const RunRequest &Request, MeasuredRun Run,
                              const ProcessResult &Process,
                              llvm::StringRef Log) {
  RunOutcome Outcome;
  Outcome.Seconds = Process.Seconds;
  Run.WallSeconds = Process.Seconds;
  Run.Log = Log.str();
  // An evaluation trial measures passes, not iterations: the sweep reads
  // them (Sweep::runTrials).
  bool Evaluated =
      !Run.EvaluationUnguardedMs.empty() || !Run.EvaluationGuardedMs.empty();
  if (Run.EndedEarly && Run.Iterations == 0 && !Run.OutOfMemory &&
      !Evaluated) {
    Outcome.Problem = describeNoIterations(Run, Request.Mode, Process, Log);
    if (Process.ExitCode == 0)
      Outcome.Unmeasured = std::move(Run);
    return Outcome;
  }
  Outcome.Run = std::move(Run);
  return Outcome;
}

RunOutcome failedRunOutcome(const RunRequest &Request,
                            const ProcessResult &Process, const RunFiles &Files,
                            std::optional<unsigned> Reached) {
  RunOutcome Outcome;
  Outcome.Seconds = Process.Seconds;
  Outcome.Problem = describeFailure(Process, Request.BatchSize, Files.Log,
                                    Files.Result, Request.Mode, Reached);
  return Outcome;
}

ProcessLauncher::ProcessLauncher(llvm::StringRef Executable,
                                 const MeasureOptions &Options,
                                 std::string RunsDir)
    : Executable(Executable.str()), Options(Options),
      RunsDir(std::move(RunsDir)) {}

llvm::Expected<RunOutcome> ProcessLauncher::run(const RunRequest &Request) {
  RunFiles Files = runFiles(RunsDir, Request);
  // Again at each run: the last program may have deleted it.
  llvm::sys::fs::create_directories(RunsDir);
  llvm::sys::fs::remove(Files.Result);
  std::vector<std::string> Args = {Executable};
  Args.insert(Args.end(), Options.RunArgs.begin(), Options.RunArgs.end());
  std::optional<CpuTimes> Before = readCpuTimes();
  ProcessResult Process = runProcess(
      Args, Options.RunDir, runEnvironment(Request, Options, Files.Result),
      Files.Log, Options.RunTimeoutSeconds);
  std::optional<CpuTimes> After = readCpuTimes();
  return outcomeOfRun(Request, Process, Files, Options, [&](MeasuredRun &Run) {
    if (!Before || !After)
      return;
    Run.OtherWorkCores =
        otherWorkCores(*Before, *After, Process.CpuSeconds, Process.Seconds);
    Run.StealCores = stealCores(*Before, *After, Process.Seconds);
  });
}

llvm::Expected<RunOutcome>
outcomeOfRun(const RunRequest &Request, const ProcessResult &Process,
             const RunFiles &Files, const MeasureOptions &Options,
             llvm::function_ref<void(MeasuredRun &)> Annotate) {
  bool Finished =
      Process.ExitCode == 0 || Process.ExitCode == rt::ExitOutOfMemory;
  bool HasResult = llvm::sys::fs::exists(Files.Result);
  // A device out-of-memory the program caught and ended on (exit 1 after
  // printing it), or one that killed it before the runtime could write:
  // cuBLAS's and cuDNN's come from outside the caching allocator.
  if (!Finished && (Process.Error.empty() || Process.Crashed) &&
      !Process.TimedOut && rt::saysOutOfMemory(logTail(Files.Log))) {
    MeasuredRun Oom;
    if (HasResult) {
      if (auto Partial = readRunResult(Files.Result)) {
        Oom = std::move(*Partial);
        Oom.OutOfMemoryBeforeLoop =
            Oom.IterationsReached == 0 && !Oom.LoopBegan;
      } else {
        llvm::consumeError(Partial.takeError());
      }
    }
    Oom.BatchSize = Request.BatchSize;
    Oom.Mode = Request.Mode;
    Oom.OutOfMemory = true;
    Oom.Stopped = StopReason::OutOfMemory;
    Oom.EndedEarly = false;
    RunOutcome Outcome;
    Outcome.Seconds = Process.Seconds;
    Oom.WallSeconds = Process.Seconds;
    Oom.Log = Files.Log;
    Outcome.Run = std::move(Oom);
    return Outcome;
  }
  if (!Finished || !HasResult)
    return failedRunOutcome(Request, Process, Files,
                            HasResult ? reachedBeforeFailing(Files.Result)
                                      : std::nullopt);
  auto Run = readRunResult(Files.Result);
  if (!Run) {
    // The runtime writes it whole (a temporary renamed): the program, or
    // something else, wrote over it.
    RunOutcome Outcome;
    Outcome.Seconds = Process.Seconds;
    Outcome.Problem = runName(Request.Mode, Request.BatchSize) +
                      " left a result file that cannot be read (does the "
                      "program write to the file that SKYLINE_RESULT "
                      "names?): " +
                      llvm::toString(Run.takeError());
    return Outcome;
  }
  if (Options.Device == DeviceChoice::CUDA)
    if (std::optional<std::string> Problem = notOnCuda(*Run, Request.Mode))
      return llvm::createStringError(std::errc::invalid_argument, "%s",
                                     Problem->c_str());
  if (Annotate)
    Annotate(*Run);
  return finishedRunOutcome(Request, std::move(*Run), Process, Files.Log);
}

} // namespace skyline
