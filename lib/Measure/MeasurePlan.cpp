//===- MeasurePlan.cpp - What a measure bundle's runs need ----------------===//

#include "skyline/MeasurePlan.h"

#include "skyline/InputFile.h"
#include "skyline/ProgramModelYAML.h"
#include "skyline/YamlFields.h"

#include <yaml-cpp/yaml.h>

#include <array>
#include <utility>

namespace skyline {

namespace {

template <typename Enum, size_t N>
using NameTable = std::array<std::pair<Enum, const char *>, N>;

constexpr NameTable<DeviceChoice, 3> DeviceNames{
    {{DeviceChoice::Auto, "auto"},
     {DeviceChoice::CPU, "cpu"},
     {DeviceChoice::CUDA, "cuda"}}};
constexpr NameTable<BreakdownRuns, 3> BreakdownNames{
    {{BreakdownRuns::All, "all"},
     {BreakdownRuns::Declared, "declared"},
     {BreakdownRuns::None, "none"}}};
constexpr NameTable<MallocThresholds, 2> MallocNames{
    {{MallocThresholds::Pinned, "pinned"},
     {MallocThresholds::Dynamic, "dynamic"}}};
constexpr NameTable<LauncherChoice, 2> LauncherNames{
    {{LauncherChoice::Local, "local"}, {LauncherChoice::Slurm, "slurm"}}};

template <typename Enum, size_t N>
const char *nameIn(const NameTable<Enum, N> &Table, Enum Value) {
  for (const auto &[Known, Name] : Table)
    if (Known == Value)
      return Name;
  return Table.front().second;
}

template <typename Enum, size_t N>
Enum readName(const YamlFields &Fields, const char *Key,
              const NameTable<Enum, N> &Table, Enum Default) {
  YAML::Node Value = Fields[Key];
  if (!Value)
    return Default;
  std::string Name = convertValue<std::string>(Value, Fields.key(Key));
  std::string Names;
  for (const auto &[Known, Text] : Table) {
    if (Name == Text)
      return Known;
    Names += (Names.empty() ? "" : ", ") + std::string(Text);
  }
  throw BadValue{Fields.key(Key),
                 "is " + quotedValue(Value) + "; it must be one of " + Names};
}

void emitWords(YAML::Emitter &Out, const char *Key,
               const std::vector<std::string> &Words) {
  Out << YAML::Key << Key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const std::string &Word : Words)
    Out << Word;
  Out << YAML::EndSeq;
}

std::vector<std::string> readWords(const YamlFields &Fields, const char *Key) {
  std::vector<std::string> Words;
  Fields.forEach(Key, [&](const YAML::Node &Word, const std::string &Where) {
    Words.push_back(convertValue<std::string>(Word, Where));
  });
  return Words;
}

void emitOptions(YAML::Emitter &Out, const MeasureOptions &O) {
  Out << YAML::Key << "options" << YAML::Value << YAML::BeginMap;
  Out << YAML::Key << "device" << YAML::Value << nameIn(DeviceNames, O.Device);
  Out << YAML::Key << "memory_budget_bytes" << YAML::Value << O.MemoryBudget;
  Out << YAML::Key << "memory_margin" << YAML::Value << O.MemoryMargin;
  Out << YAML::Key << "max_runs" << YAML::Value << O.MaxRuns;
  Out << YAML::Key << "round_to" << YAML::Value << O.RoundTo;
  Out << YAML::Key << "throughput_slack" << YAML::Value << O.ThroughputSlack;
  Out << YAML::Key << "min_gain" << YAML::Value << O.MinGain;
  Out << YAML::Key << "warmup" << YAML::Value << O.Warmup;
  Out << YAML::Key << "timing_runs" << YAML::Value << O.TimingRuns;
  Out << YAML::Key << "iterations" << YAML::Value << O.Iterations;
  Out << YAML::Key << "min_iterations" << YAML::Value << O.MinIterations;
  Out << YAML::Key << "tolerance" << YAML::Value << O.Tolerance;
  Out << YAML::Key << "time_budget_seconds" << YAML::Value
      << O.TimeBudgetSeconds;
  Out << YAML::Key << "quiet_wait_seconds" << YAML::Value << O.QuietWaitSeconds;
  Out << YAML::Key << "breakdown" << YAML::Value
      << nameIn(BreakdownNames, O.Breakdown);
  Out << YAML::Key << "breakdown_iterations" << YAML::Value
      << O.BreakdownIterations;
  Out << YAML::Key << "run_timeout_seconds" << YAML::Value
      << O.RunTimeoutSeconds;
  Out << YAML::Key << "run_dir" << YAML::Value << O.RunDir;
  emitWords(Out, "run_args", O.RunArgs);
  Out << YAML::Key << "malloc_thresholds" << YAML::Value
      << nameIn(MallocNames, O.Malloc);
  Out << YAML::Key << "whole_batches_only" << YAML::Value << O.WholeBatchesOnly;
  Out << YAML::Key << "launcher" << YAML::Value
      << nameIn(LauncherNames, O.Launcher);
  emitWords(Out, "slurm_args", O.SlurmArgs);
  Out << YAML::Key << "queue_timeout_seconds" << YAML::Value
      << O.QueueTimeoutSeconds;
  Out << YAML::Key << "parallel_runs" << YAML::Value << O.ParallelRuns;
  if (O.Experiments)
    emitWords(Out, "experiments", *O.Experiments);
  Out << YAML::EndMap;
}

MeasureOptions readOptions(const YamlFields &F) {
  MeasureOptions O;
  O.Device = readName(F, "device", DeviceNames, O.Device);
  O.MemoryBudget =
      F.number<int64_t>("memory_budget_bytes", Least::One, O.MemoryBudget);
  O.MemoryMargin =
      F.number<double>("memory_margin", Least::Zero, O.MemoryMargin);
  O.MaxRuns = F.number<unsigned>("max_runs", Least::One, O.MaxRuns);
  O.RoundTo = F.number<int64_t>("round_to", Least::One, O.RoundTo);
  O.ThroughputSlack =
      F.number<double>("throughput_slack", Least::Zero, O.ThroughputSlack);
  O.MinGain = F.number<double>("min_gain", Least::Zero, O.MinGain);
  O.Warmup = F.number<unsigned>("warmup", Least::Zero, O.Warmup);
  O.TimingRuns = F.number<unsigned>("timing_runs", Least::One, O.TimingRuns);
  O.Iterations = F.number<unsigned>("iterations", Least::One, O.Iterations);
  O.MinIterations =
      F.number<unsigned>("min_iterations", Least::One, O.MinIterations);
  O.Tolerance = F.number<double>("tolerance", Least::Zero, O.Tolerance);
  O.TimeBudgetSeconds =
      F.number<double>("time_budget_seconds", Least::Zero, O.TimeBudgetSeconds);
  O.QuietWaitSeconds =
      F.number<double>("quiet_wait_seconds", Least::Zero, O.QuietWaitSeconds);
  O.Breakdown = readName(F, "breakdown", BreakdownNames, O.Breakdown);
  O.BreakdownIterations = F.number<unsigned>("breakdown_iterations", Least::One,
                                             O.BreakdownIterations);
  O.RunTimeoutSeconds = F.number<unsigned>("run_timeout_seconds", Least::One,
                                           O.RunTimeoutSeconds);
  O.RunDir = F.get<std::string>("run_dir");
  O.RunArgs = readWords(F, "run_args");
  O.Malloc = readName(F, "malloc_thresholds", MallocNames, O.Malloc);
  O.WholeBatchesOnly = F.get<bool>("whole_batches_only");
  O.Launcher = readName(F, "launcher", LauncherNames, O.Launcher);
  O.SlurmArgs = readWords(F, "slurm_args");
  O.QueueTimeoutSeconds = F.number<unsigned>("queue_timeout_seconds",
                                             Least::One, O.QueueTimeoutSeconds);
  O.ParallelRuns =
      F.number<unsigned>("parallel_runs", Least::One, O.ParallelRuns);
  if (F["experiments"])
    O.Experiments = readWords(F, "experiments");
  return O;
}

void emitKey(YAML::Emitter &Out, const MeasurementKey &Key) {
  Out << YAML::Key << "measured_with" << YAML::Value << YAML::BeginMap;
  Out << YAML::Key << "sources" << YAML::Value << Key.Sources;
  Out << YAML::Key << "compile_flags" << YAML::Value << Key.Flags;
  Out << YAML::Key << "libtorch" << YAML::Value << Key.LibTorch;
  Out << YAML::Key << "device" << YAML::Value << Key.Device;
  Out << YAML::EndMap;
}

MeasurementKey readKey(const YamlFields &With) {
  MeasurementKey Key;
  Key.Sources = With.get<std::string>("sources");
  Key.Flags = With.get<std::string>("compile_flags");
  Key.LibTorch = With.get<std::string>("libtorch");
  Key.Device = With.get<std::string>("device");
  return Key;
}

llvm::Error notAPlan(llvm::StringRef Path, const std::string &Why) {
  return llvm::createStringError(
      std::errc::invalid_argument,
      "'%s' is not a measure plan: %s; write one with skyline-check "
      "--bundle=DIR",
      Path.str().c_str(), Why.c_str());
}

llvm::Expected<MeasurePlan> readPlanNode(const YAML::Node &Node,
                                         llvm::StringRef Path) {
  if (!Node.IsMap() || !Node["plan_version"] || !Node["program"])
    return notAPlan(Path, "no plan_version or program");
  YamlFields Root(Node, "");
  MeasurePlan Plan;
  Plan.Version = Root.get<int>("plan_version");
  if (Plan.Version != MeasurePlanVersion)
    return notAPlan(Path, "plan_version " + std::to_string(Plan.Version) +
                              " is not one this tool reads (" +
                              std::to_string(MeasurePlanVersion) + ")");
  Plan.SkylineVersion = Root.get<std::string>("skyline_version");
  Plan.DeclaredBatchSize =
      Root.number<int64_t>("declared_batch_size", Least::Zero);
  Plan.BuildSeconds = Root.number<double>("build_seconds", Least::Zero);
  Plan.Options = readOptions(Root.sub("options"));
  if (Root["measured_with"])
    Plan.Key = readKey(Root.sub("measured_with"));
  std::string Error;
  std::optional<ProgramModel> Program =
      programModelFromNode(Node["program"], Error);
  if (!Program)
    return notAPlan(Path, "its program model: " + Error);
  Plan.Program = std::move(*Program);
  return std::move(Plan);
}

} // namespace

std::string measurePlanToYAML(const MeasurePlan &Plan) {
  YAML::Emitter Out;
  Out.SetDoublePrecision(17);
  Out << YAML::BeginMap;
  Out << YAML::Key << "plan_version" << YAML::Value << Plan.Version;
  Out << YAML::Key << "skyline_version" << YAML::Value << Plan.SkylineVersion;
  Out << YAML::Key << "declared_batch_size" << YAML::Value
      << Plan.DeclaredBatchSize;
  Out << YAML::Key << "build_seconds" << YAML::Value << Plan.BuildSeconds;
  emitOptions(Out, Plan.Options);
  if (Plan.Key)
    emitKey(Out, *Plan.Key);
  Out << YAML::Key << "program" << YAML::Value;
  emitProgramModel(Out, Plan.Program);
  Out << YAML::EndMap;
  return std::string(Out.c_str()) + "\n";
}

llvm::Expected<MeasurePlan> readMeasurePlan(llvm::StringRef Path) {
  auto Root = loadYamlInput(Path, "measure plan", ReportLimits);
  if (!Root)
    return Root.takeError();
  try {
    return readPlanNode(*Root, Path);
  } catch (const BadValue &Bad) {
    return llvm::createStringError(
        std::errc::invalid_argument, "measure plan '%s': %s %s",
        Path.str().c_str(), Bad.Key.c_str(), Bad.Problem.c_str());
  } catch (const YAML::Exception &E) {
    return notAPlan(Path, E.what());
  }
}

std::string bundlePlanPath(llvm::StringRef BundleDir) {
  return (BundleDir + "/plan.yaml").str();
}

std::string bundleRunsPath(llvm::StringRef BundleDir) {
  return (BundleDir + "/runs.yaml").str();
}

} // namespace skyline
