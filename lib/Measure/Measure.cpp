//===- Measure.cpp - Training bursts at several batch sizes ---------------===//

#include "skyline/Measure.h"

#include "skyline/Process.h"
#include "skyline/runtime/ExitCodes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <yaml-cpp/yaml.h>

namespace skyline {
namespace {

std::string describeFailure(const ProcessResult &R, int64_t BatchSize,
                            llvm::StringRef Log) {
  std::string What = "the run at batch size " + std::to_string(BatchSize);
  if (!R.Error.empty() && !R.Crashed)
    What += " could not start: " + R.Error;
  else if (R.TimedOut)
    What += " " + describeProcessEnd(R) +
            " (a hang, or iterations too slow: see --run-timeout)";
  else if (R.Crashed)
    What += " crashed (" + R.Error + ")";
  else if (R.ExitCode == rt::ExitResultNotWritten)
    What +=
        " could not write its result file (is the work directory writable?)";
  else
    What +=
        " ended with exit code " + std::to_string(R.ExitCode) +
        " before its measured iterations (does it reach optimizer.step() often "
        "enough? see --iterations)";
  std::string Tail = tailOfFile(Log, 12);
  if (!Tail.empty())
    What += "; the end of its output (" + Log.str() + "):\n" + Tail;
  return What;
}

/// The first run says where the program ran; older results say nothing and
/// leave the defaults.
void describeDevice(const MeasuredRun &Run, Measurement &Result) {
  if (!Run.DeviceType.empty())
    Result.DeviceType = Run.DeviceType;
  if (!Run.DeviceName.empty())
    Result.DeviceName = Run.DeviceName;
  Result.TorchVersion = Run.TorchVersion;
  Result.Threads = Run.Threads;
}

} // namespace

std::optional<int64_t> parseByteSize(llvm::StringRef Text) {
  Text = Text.trim();
  size_t Digits = 0;
  while (Digits < Text.size() && (isdigit(Text[Digits]) || Text[Digits] == '.'))
    ++Digits;
  double Number = 0;
  if (Digits == 0 || Text.take_front(Digits).getAsDouble(Number))
    return std::nullopt;
  llvm::StringRef Unit = Text.drop_front(Digits).trim();
  struct {
    const char *Name;
    double Scale;
  } Units[] = {{"", 1},
               {"B", 1},
               {"KiB", 1024.0},
               {"MiB", 1048576.0},
               {"GiB", 1073741824.0},
               {"KB", 1e3},
               {"MB", 1e6},
               {"GB", 1e9}};
  for (const auto &U : Units)
    if (Unit.equals_insensitive(U.Name) && (Unit == U.Name || Unit.size() > 1))
      return int64_t(Number * U.Scale);
  return std::nullopt;
}

int64_t nextBatchSize(int64_t LastFit,
                      std::optional<int64_t> FirstOutOfMemory) {
  if (!FirstOutOfMemory)
    return LastFit * 2;
  return LastFit + (*FirstOutOfMemory - LastFit) / 2;
}

llvm::Expected<MeasuredRun> readRunResult(llvm::StringRef Path) {
  try {
    YAML::Node Root = YAML::LoadFile(Path.str());
    MeasuredRun Run;
    Run.BatchSize = Root["batch_size"].as<int64_t>();
    Run.OutOfMemory = Root["oom"].as<bool>();
    Run.Iterations = Root["iterations"].as<unsigned>();
    YAML::Node Ms = Root["iteration_ms"];
    Run.IterationMs = {Ms["median"].as<double>(), Ms["mean"].as<double>(),
                       Ms["stddev"].as<double>(), Ms["min"].as<double>(),
                       Ms["max"].as<double>()};
    Run.Throughput = Root["throughput"].as<double>();
    Run.PeakBytes = Root["peak_bytes"].as<int64_t>();
    for (const auto &Phase : Root["peak_bytes_by_phase"])
      Run.PeakBytesByPhase.push_back(
          {Phase.first.as<std::string>(), Phase.second.as<int64_t>()});
    for (const char *Kind : {"weights", "gradients", "optimizer_state",
                             "activations", "data", "temporaries", "untracked"})
      if (Root["memory"] && Root["memory"][Kind])
        Run.Memory.push_back({Kind, Root["memory"][Kind].as<int64_t>()});
    for (const char *Phase :
         {"data", "forward", "backward", "optimizer", "other"})
      if (Root["time_split_ms"] && Root["time_split_ms"][Phase])
        Run.TimeSplitMs.push_back(
            {Phase, Root["time_split_ms"][Phase].as<double>()});
    Run.TorchVersion = Root["torch_version"].as<std::string>("");
    Run.Threads = Root["threads"].as<int>(0);
    if (YAML::Node Device = Root["device"]) {
      Run.DeviceType = Device["type"].as<std::string>("");
      Run.DeviceName = Device["name"].as<std::string>("");
    }
    for (const YAML::Node &Layer : Root["layers"]) {
      LayerMeasure Row;
      Row.Scope = Layer["scope"].as<int>();
      Row.ForwardMs = Layer["forward_ms"].as<double>(0);
      Row.BackwardMs = Layer["backward_ms"].as<double>(0);
      Row.GpuMs = Layer["gpu_ms"].as<double>(-1);
      Row.ActivationBytes = Layer["activation_bytes"].as<int64_t>(0);
      Row.WeightBytes = Layer["weight_bytes"].as<int64_t>(0);
      Run.Layers.push_back(Row);
    }
    return Run;
  } catch (const YAML::Exception &E) {
    return llvm::createStringError(std::errc::invalid_argument,
                                   "unreadable run result '%s': %s",
                                   Path.str().c_str(), E.what());
  }
}

llvm::Expected<Measurement> measure(llvm::StringRef Executable,
                                    int64_t DeclaredBatchSize,
                                    const MeasureOptions &Options,
                                    llvm::raw_ostream &Progress) {
  Measurement Result;
  Result.MemoryCapacityBytes = Options.MemoryBudget;
  std::string RunsDir = Options.WorkDir + "/runs";
  llvm::sys::fs::create_directories(RunsDir);

  int64_t BatchSize = DeclaredBatchSize;
  int64_t LastFit = 0;
  std::optional<int64_t> FirstOutOfMemory;
  for (unsigned Index = 0; Index < Options.MaxRuns; ++Index) {
    std::string Stem = RunsDir + "/batch-" + std::to_string(BatchSize);
    std::string Log = Stem + ".log", ResultPath = Stem + ".yaml";
    llvm::sys::fs::remove(ResultPath);
    std::vector<std::string> Env = {
        "SKYLINE_RESULT=" + ResultPath,
        "SKYLINE_BATCH_SIZE=" + std::to_string(BatchSize),
        "SKYLINE_WARMUP=" + std::to_string(Options.Warmup),
        "SKYLINE_ITERATIONS=" + std::to_string(Options.Iterations),
        "SKYLINE_MEMORY_BUDGET=" + std::to_string(Options.MemoryBudget)};
    if (Options.Device == DeviceChoice::CPU)
      Env.push_back("CUDA_VISIBLE_DEVICES=");
    std::vector<std::string> Args = {Executable.str()};
    Args.insert(Args.end(), Options.RunArgs.begin(), Options.RunArgs.end());
    Progress << "skyline-check: run " << Index + 1 << "/" << Options.MaxRuns
             << " at batch size " << BatchSize << "...";
    Progress.flush();
    ProcessResult Process =
        runProcess(Args, Options.RunDir, Env, Log, Options.RunTimeoutSeconds);
    Progress << llvm::format(" %.1f s\n", Process.Seconds);

    bool Finished =
        Process.ExitCode == 0 || Process.ExitCode == rt::ExitOutOfMemory;
    if (!Finished || !llvm::sys::fs::exists(ResultPath)) {
      std::string Problem = describeFailure(Process, BatchSize, Log);
      if (Result.Runs.empty())
        return llvm::createStringError(std::errc::invalid_argument, "%s",
                                       Problem.c_str());
      Result.Problems.push_back(Problem); // keep what was measured
      break;
    }
    auto Run = readRunResult(ResultPath);
    if (!Run)
      return Run.takeError();
    Run->WallSeconds = Process.Seconds;
    Run->Log = Log;
    if (Run->BatchSize != BatchSize)
      Result.Problems.push_back("the run asked for batch size " +
                                std::to_string(BatchSize) + " used " +
                                std::to_string(Run->BatchSize));
    if (Result.Runs.empty())
      describeDevice(*Run, Result);
    Result.Runs.push_back(*Run);
    if (Run->OutOfMemory)
      FirstOutOfMemory =
          FirstOutOfMemory ? std::min(*FirstOutOfMemory, BatchSize) : BatchSize;
    else
      LastFit = std::max(LastFit, BatchSize);
    if (!LastFit) // even the declared size does not fit
      break;
    int64_t Next = nextBatchSize(LastFit, FirstOutOfMemory);
    if (Next <= LastFit || (FirstOutOfMemory && Next >= *FirstOutOfMemory))
      break; // converged
    BatchSize = Next;
  }
  return Result;
}

} // namespace skyline
