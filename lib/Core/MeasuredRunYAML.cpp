//===- MeasuredRunYAML.cpp - A measured run, read and written -------------===//

#include "skyline/MeasuredRunYAML.h"

#include "skyline/InputFile.h"

#include <yaml-cpp/yaml.h>

#include <cmath>

namespace skyline {

namespace key = rt::key;

namespace {

/// iteration_ms and throughput, checked: a run that fit and measured
/// iterations took time, and a 0 would divide the throughput and the fits
/// by nothing. Reads Run.OutOfMemory and Run.Iterations, so call it after
/// them.
void readIterationTimes(const YamlFields &Node, MeasuredRun &Run) {
  YamlFields Ms = Node.sub(key::IterationMs);
  Run.IterationMs = {Ms.number<double>(key::Median, Least::Zero),
                     Ms.number<double>(key::Mean, Least::Zero),
                     Ms.number<double>(key::Stddev, Least::Zero),
                     Ms.number<double>(key::Min, Least::Zero),
                     Ms.number<double>(key::Max, Least::Zero)};
  if (!Run.OutOfMemory && Run.Iterations > 0 && !(Run.IterationMs.Median > 0))
    throw BadValue{Ms.key(key::Median),
                   "is " + quotedValue(Ms[key::Median]) +
                       "; it must be a finite number above 0 in a run that "
                       "fit and measured " +
                       std::to_string(Run.Iterations) + " iterations"};
  Run.Throughput = Node.number<double>(key::Throughput, Least::Zero);
}

/// The mapping at Key, {name: figure} with Enum's names, in Enum's order;
/// a name it does not hold is left out.
template <typename Enum, typename Figure>
void readNamedFigures(const YamlFields &Node, const char *Key,
                      std::vector<std::pair<Enum, Figure>> &Into) {
  YamlFields Figures = Node.sub(Key);
  for (Enum Name : allOf<Enum>())
    if (Figures[nameOf(Name)])
      Into.push_back({Name, Figures.number<Figure>(nameOf(Name), Least::Zero)});
}

/// readNamedFigures' counterpart: Key: {name: figure, ...} on one line.
template <typename Enum, typename Figure>
void emitNamedFigures(YAML::Emitter &Out, const char *Key,
                      const std::vector<std::pair<Enum, Figure>> &Figures) {
  Out << YAML::Key << Key << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto &[Name, Value] : Figures)
    Out << YAML::Key << nameOf(Name) << YAML::Value << Value;
  Out << YAML::EndMap;
}

/// peak_bytes, the peak by phase and by kind: what a breakdown run splits.
void readPeakBytes(const YamlFields &Node, MeasuredRun &Run) {
  Run.PeakBytes = Node.number<int64_t>(key::PeakBytes, Least::Zero);
  Node.forEachEntry(key::PeakBytesByPhase,
                    [&](const std::string &Name, const YAML::Node &Bytes,
                        const std::string &Key) {
                      Run.PeakBytesByPhase.push_back(
                          {checkedName<Phase>(YAML::Node(Name), Key),
                           checkedNumber<int64_t>(Bytes, Key, Least::Zero)});
                    });
  readNamedFigures(Node, key::Memory, Run.Memory);
}

/// The setup kind by statement; a report's rows also name the statement.
void readSetupStatements(const YamlFields &Node, MeasuredRun &Run, bool Named) {
  Node.forEach(key::SetupStatements,
               [&](const YAML::Node &Entry, const std::string &Key) {
                 YamlFields Row(Entry, Key);
                 if (!Row[key::Statement])
                   throw BadValue{Row.key(key::Statement),
                                  "is missing; every setup statement has one"};
                 SetupMeasure Setup;
                 Setup.Statement = Row.number<int>(key::Statement, Least::Zero);
                 Setup.Bytes = Row.number<int64_t>(key::Bytes, Least::Zero);
                 if (Named) {
                   Setup.File = Row.get<std::string>("file");
                   Setup.Line = Row.get<unsigned>("line");
                   Setup.Text = Row.get<std::string>("text");
                 }
                 Run.SetupStatements.push_back(std::move(Setup));
               });
}

/// The host syncs' time; a report's rows also name the sync.
void readHostSyncs(const YamlFields &Node, MeasuredRun &Run, bool Named) {
  Node.forEach(key::HostSyncs, [&](const YAML::Node &Entry,
                                   const std::string &Key) {
    YamlFields Row(Entry, Key);
    if (!Row[key::Sync])
      throw BadValue{Row.key(key::Sync), "is missing; every host sync has one"};
    HostSyncMeasure Sync;
    Sync.Sync = Row.number<int>(key::Sync, Least::Zero);
    Sync.Calls = Row.number<double>(key::Calls, Least::Zero);
    Sync.Ms = Row.number<double>(key::Ms, Least::Zero);
    if (Named) {
      Sync.File = Row.get<std::string>("file");
      Sync.Line = Row.get<unsigned>("line");
      Sync.Kind = Row.get<std::string>("kind");
      Sync.Text = Row.get<std::string>("text");
    }
    Run.HostSyncs.push_back(std::move(Sync));
  });
}

void readTimeSplit(const YamlFields &Node, MeasuredRun &Run) {
  readNamedFigures(Node, key::TimeSplitMs, Run.TimeSplitMs);
}

/// A layer's figures, in the result file and the report alike.
void readLayerFigures(const YamlFields &Row, LayerMeasure &Layer) {
  Layer.ForwardMs = Row.number<double>(key::ForwardMs, Least::Zero);
  Layer.BackwardMs = Row.number<double>(key::BackwardMs, Least::Zero);
  Layer.GpuMs = Row.number<double>(key::GpuMs, Least::Zero, -1);
  Layer.ActivationBytes =
      Row.number<int64_t>(key::ActivationBytes, Least::Zero);
  Layer.WeightBytes = Row.number<int64_t>(key::WeightBytes, Least::Zero);
}

GpuTimeSource gpuTimeSource(const YamlFields &Node) {
  return optionalName<GpuTimeSource>(Node, key::GpuMsSource)
      .value_or(GpuTimeSource::None);
}

//===----------------------------------------------------------------------===//
// The result file
//===----------------------------------------------------------------------===//

/// A result file's times, bytes and layers, each checked: the program under
/// measurement writes this file, and a value no run gives (NaN, a negative
/// time) would reach the fits and the gate.
void readResultFigures(const YamlFields &Root, MeasuredRun &Run) {
  readIterationTimes(Root, Run);
  readPeakBytes(Root, Run);
  readSetupStatements(Root, Run, /*Named=*/false);
  readHostSyncs(Root, Run, /*Named=*/false);
  readTimeSplit(Root, Run);
  Root.forEach(key::Layers, [&](const YAML::Node &Node,
                                const std::string &Key) {
    YamlFields Layer(Node, Key);
    LayerMeasure Row;
    if (!Layer[key::Scope])
      throw BadValue{Layer.key(key::Scope), "is missing; every layer has one"};
    Row.Scope = Layer.get<int>(key::Scope);
    readLayerFigures(Layer, Row);
    Run.Layers.push_back(Row);
  });
}

/// observed_batch_size: {size, scope}, where the runtime wrote it.
void readObservedBatchSize(const YamlFields &Root, MeasuredRun &Run) {
  if (!Root[key::ObservedBatchSize])
    return;
  YamlFields Observed = Root.sub(key::ObservedBatchSize);
  Run.ObservedBatchSize = Observed.number<int64_t>(key::Size, Least::Zero);
  Run.ObservedScope = Observed.get<int>(key::Scope, -1);
}

void readResultProgress(const YamlFields &Root, MeasuredRun &Run) {
  Run.Mode =
      optionalName<RunMode>(Root, key::Mode).value_or(RunMode::Breakdown);
  Run.Stopped = optionalName<StopReason>(Root, key::Stopped);
  Run.EndedEarly = Root.get<bool>(key::EndedEarly);
  Run.Warmup = Root.get<unsigned>(key::Warmup);
  Run.IterationsAsked = Root.get<unsigned>(key::IterationsAsked);
  Run.MinIterations = Root.get<unsigned>(key::MinIterations);
  Run.IterationsReached = Root.get<unsigned>(key::IterationsReached);
  // Loading the first batch is the loop's, and grows with the batch size.
  Run.LoopBegan = Root.get<bool>(key::LoopBegan);
  Run.OutOfMemoryBeforeLoop =
      Run.OutOfMemory && Run.IterationsReached == 0 && !Run.LoopBegan;
  Run.EpochEndIterations = Root.get<unsigned>(key::EpochEndIterations);
  Run.EveryIterationAnEpoch = Root.get<bool>(key::EveryIterationAnEpoch);
  Run.EpochIterations = Root.get<unsigned>(key::EpochIterations);
  Run.DatasetSamples = Root.number<int64_t>(key::DatasetSize, Least::Zero);
  Run.DatasetsGcd = Root.number<int64_t>(key::DatasetsGcd, Least::Zero);
}

MeasuredRun readResultFields(const YAML::Node &Node) {
  if (!Node.IsMap())
    throw BadValue{"the document",
                   "is " + quotedValue(Node) + "; it must be a mapping"};
  YamlFields Root(Node, "");
  for (const char *Key : {key::BatchSize, key::OutOfMemory, key::Iterations,
                          key::IterationMs, key::Throughput, key::PeakBytes})
    if (!Root[Key])
      throw BadValue{Key, "is missing; the runtime writes it in every result"};
  MeasuredRun Run;
  Run.BatchSize = Root.number<int64_t>(key::BatchSize, Least::Zero);
  Run.OutOfMemory = Root.get<bool>(key::OutOfMemory);
  Run.Iterations = Root.get<unsigned>(key::Iterations);
  readObservedBatchSize(Root, Run);
  // 0: the program has no literal the run set, and no iteration showed its
  // batch (a run that ended before its first module call).
  if (Run.BatchSize == 0 && Run.Iterations > 0 && !Run.OutOfMemory)
    throw BadValue{key::BatchSize, "is 0 in a run that measured " +
                                       std::to_string(Run.Iterations) +
                                       " iterations; it must be at least 1"};
  readResultProgress(Root, Run);
  readResultFigures(Root, Run);
  Run.TorchVersion = Root.get<std::string>(key::TorchVersion);
  Run.Threads = Root.number<int>(key::Threads, Least::Zero);
  Run.CudnnBenchmark = Root.get<bool>(key::CudnnBenchmark);
  Run.Autocast = Root.get<bool>(key::Autocast);
  Run.ChannelsLast = Root.get<bool>(key::ChannelsLast);
  Run.TrialNotApplied = Root.get<std::string>(key::TrialNotApplied);
  YamlFields Device = Root.sub(key::Device);
  Run.Device = optionalName<DeviceType>(Device, key::Type);
  Run.DeviceName = Device.get<std::string>(key::Name);
  Run.Cuda = optionalName<rt::CudaUse>(Device, key::Cuda);
  YamlFields Gpu = Root.sub(key::Gpu);
  Run.DeviceCapacityBytes =
      Gpu.number<int64_t>(key::MemoryCapacityBytes, Least::Zero);
  Run.GpuMsSource = gpuTimeSource(Gpu);
  Run.GpuNote = Gpu.get<std::string>(key::Note);
  YamlFields Evaluation = Root.sub(key::Evaluation);
  auto Times = [&](const char *Key, std::vector<double> &Into) {
    Evaluation.forEach(Key, [&](const YAML::Node &Ms, const std::string &At) {
      Into.push_back(checkedNumber<double>(Ms, At, Least::Zero));
    });
  };
  Times(key::UnguardedMs, Run.EvaluationUnguardedMs);
  Times(key::GuardedMs, Run.EvaluationGuardedMs);
  Run.EvaluationUnguardedPeakBytes =
      Evaluation.number<int64_t>(key::UnguardedPeakBytes, Least::Zero);
  Run.EvaluationGuardedPeakBytes =
      Evaluation.number<int64_t>(key::GuardedPeakBytes, Least::Zero);
  return Run;
}

} // namespace

llvm::Expected<MeasuredRun> readRunResult(llvm::StringRef Path) {
  auto Root = loadYamlInput(Path, "run result", RunResultLimits);
  if (!Root)
    return Root.takeError();
  try {
    return readResultFields(*Root);
  } catch (const BadValue &Bad) {
    return llvm::createStringError(
        std::errc::invalid_argument,
        "run result '%s': %s %s; the measured program wrote this file "
        "(skyline-check's runtime never writes such a value): check that the "
        "program does not write to $%s itself, and measure again",
        Path.str().c_str(), Bad.Key.c_str(), Bad.Problem.c_str(),
        static_cast<const char *>(rt::env::Result));
  } catch (const std::exception &E) {
    return llvm::createStringError(std::errc::invalid_argument,
                                   "unreadable run result '%s': %s",
                                   Path.str().c_str(), E.what());
  }
}

//===----------------------------------------------------------------------===//
// The report's runs
//===----------------------------------------------------------------------===//

namespace {

void readReportTimes(const YamlFields &Node, MeasuredRun &Run) {
  readIterationTimes(Node, Run);
  readTimeSplit(Node, Run);
  Node.forEach("timing_runs",
               [&](const YAML::Node &Median, const std::string &Key) {
                 Run.TimingRunMedians.push_back(
                     checkedNumber<double>(Median, Key, Least::Zero));
               });
  Run.WallSeconds = Node.number<double>("wall_seconds", Least::Zero);
  Run.DynamicMallocMs = Node.number<double>("dynamic_malloc_ms", Least::Zero);
}

LayerMeasure readReportLayer(const YamlFields &Row) {
  LayerMeasure Layer;
  Layer.Name = Row.get<std::string>(key::Name);
  if (Layer.Name == "(unscoped)")
    Layer.Name.clear();
  Layer.Type = Row.get<std::string>(key::Type);
  Layer.File = Row.get<std::string>("file");
  Layer.Line = Row.get<unsigned>("line");
  readLayerFigures(Row, Layer);
  Layer.Scope = Row.get<int>(key::Scope, -1);
  return Layer;
}

/// Where a scheduler ran the run (--launcher=slurm).
void emitRunNode(YAML::Emitter &Out, const RunNode &Node) {
  Out << YAML::Key << "node" << YAML::Value << YAML::Flow << YAML::BeginMap;
  Out << YAML::Key << key::Name << YAML::Value << Node.Name;
  if (!Node.JobStep.empty())
    Out << YAML::Key << "job" << YAML::Value << Node.JobStep;
  Out << YAML::Key << "cpu_model" << YAML::Value << Node.CpuModel;
  Out << YAML::Key << "cores" << YAML::Value << Node.Cores;
  if (Node.CpusAllocated)
    Out << YAML::Key << "cpus_allocated" << YAML::Value << Node.CpusAllocated;
  if (!Node.GpuModel.empty())
    Out << YAML::Key << "gpu_model" << YAML::Value << Node.GpuModel;
  if (Node.MemoryLimitBytes)
    Out << YAML::Key << "memory_limit_bytes" << YAML::Value
        << Node.MemoryLimitBytes;
  Out << YAML::EndMap;
}

RunNode readRunNode(const YamlFields &Fields) {
  RunNode Node;
  Node.Name = Fields.get<std::string>(key::Name);
  Node.JobStep = Fields.get<std::string>("job");
  Node.CpuModel = Fields.get<std::string>("cpu_model");
  Node.Cores = Fields.get<unsigned>("cores");
  Node.CpusAllocated = Fields.get<unsigned>("cpus_allocated");
  Node.GpuModel = Fields.get<std::string>("gpu_model");
  Node.MemoryLimitBytes =
      Fields.number<int64_t>("memory_limit_bytes", Least::Zero);
  return Node;
}

} // namespace

MeasuredRun readReportRun(const YamlFields &Node) {
  MeasuredRun Run;
  if (!Node[key::BatchSize])
    throw BadValue{Node.key(key::BatchSize), "is missing; every run has one"};
  Run.BatchSize = Node.number<int64_t>(key::BatchSize, Least::One);
  Run.ObservedBatchSize =
      Node.number<int64_t>(key::ObservedBatchSize, Least::Zero);
  Run.OutOfMemory = Node.get<bool>(key::OutOfMemory);
  Run.OutOfMemoryBeforeLoop =
      Run.OutOfMemory && Node.get<bool>(key::OutOfMemoryBeforeLoop);
  Run.Iterations = Node.get<unsigned>(key::Iterations);
  readReportTimes(Node, Run);
  readPeakBytes(Node, Run);
  readSetupStatements(Node, Run, /*Named=*/true);
  readHostSyncs(Node, Run, /*Named=*/true);
  Node.forEach(key::Layers, [&](const YAML::Node &Row, const std::string &Key) {
    Run.Layers.push_back(readReportLayer(YamlFields(Row, Key)));
  });
  Run.EndedEarly = Node.get<bool>(key::EndedEarly);
  Run.Probed = Node.get<bool>("probe");
  Run.IterationsAsked = Node.get<unsigned>(key::IterationsAsked);
  Run.Stopped = optionalName<StopReason>(Node, key::Stopped);
  Run.EpochEndIterations = Node.get<unsigned>(key::EpochEndIterations);
  Run.EpochIterations = Node.get<unsigned>(key::EpochIterations);
  Run.DatasetSamples = Node.number<int64_t>(key::DatasetSize, Least::Zero);
  Run.DatasetsGcd =
      Node.number<int64_t>(key::DatasetsGcd, Least::Zero, Run.DatasetSamples);
  Run.GpuMsSource = gpuTimeSource(Node);
  Run.GpuNote = Node.get<std::string>(key::GpuNote);
  Run.OtherWorkCores = Node.number<double>("other_work_cores", Least::Zero, -1);
  Run.StealCores = Node.number<double>("steal_cores", Least::Zero, -1);
  if (const YAML::Node N = Node["node"]; N && N.IsMap())
    Run.Node = readRunNode(YamlFields(N, Node.key("node")));
  if (const YAML::Node B = Node["breakdown"]; B && B.IsMap()) {
    YamlFields Breakdown(B, Node.key("breakdown"));
    Run.Breakdown =
        BreakdownRun{Breakdown.get<unsigned>(key::Iterations),
                     Breakdown.number<double>(key::IterationMs, Least::Zero),
                     Breakdown.number<double>("wall_seconds", Least::Zero),
                     Breakdown.get<bool>(key::EndedEarly)};
  }
  return Run;
}

void emitReportRun(YAML::Emitter &Out, const MeasuredRun &Run) {
  Out << YAML::BeginMap;
  Out << YAML::Key << key::BatchSize << YAML::Value << Run.BatchSize;
  Out << YAML::Key << key::OutOfMemory << YAML::Value << Run.OutOfMemory;
  if (Run.OutOfMemoryBeforeLoop)
    Out << YAML::Key << key::OutOfMemoryBeforeLoop << YAML::Value << true;
  Out << YAML::Key << key::Iterations << YAML::Value << Run.Iterations;
  Out << YAML::Key << key::IterationMs << YAML::Value << YAML::Flow
      << YAML::BeginMap << YAML::Key << key::Median << YAML::Value
      << Run.IterationMs.Median << YAML::Key << key::Mean << YAML::Value
      << Run.IterationMs.Mean << YAML::Key << key::Stddev << YAML::Value
      << Run.IterationMs.Stddev << YAML::Key << key::Min << YAML::Value
      << Run.IterationMs.Min << YAML::Key << key::Max << YAML::Value
      << Run.IterationMs.Max << YAML::EndMap;
  Out << YAML::Key << key::Throughput << YAML::Value << Run.Throughput;
  emitNamedFigures(Out, key::TimeSplitMs, Run.TimeSplitMs);
  Out << YAML::Key << key::PeakBytes << YAML::Value << Run.PeakBytes;
  emitNamedFigures(Out, key::Memory, Run.Memory);
  if (!Run.SetupStatements.empty()) {
    Out << YAML::Key << key::SetupStatements << YAML::Value << YAML::BeginSeq;
    for (const SetupMeasure &Setup : Run.SetupStatements)
      Out << YAML::Flow << YAML::BeginMap << YAML::Key << "file" << YAML::Value
          << Setup.File << YAML::Key << "line" << YAML::Value << Setup.Line
          << YAML::Key << "text" << YAML::Value << Setup.Text << YAML::Key
          << key::Bytes << YAML::Value << Setup.Bytes << YAML::Key
          << key::Statement << YAML::Value << Setup.Statement << YAML::EndMap;
    Out << YAML::EndSeq;
  }
  if (!Run.HostSyncs.empty()) {
    Out << YAML::Key << key::HostSyncs << YAML::Value << YAML::BeginSeq;
    for (const HostSyncMeasure &Sync : Run.HostSyncs)
      Out << YAML::Flow << YAML::BeginMap << YAML::Key << "file" << YAML::Value
          << Sync.File << YAML::Key << "line" << YAML::Value << Sync.Line
          << YAML::Key << "kind" << YAML::Value << Sync.Kind << YAML::Key
          << "text" << YAML::Value << Sync.Text << YAML::Key << key::Calls
          << YAML::Value << Sync.Calls << YAML::Key << key::Ms << YAML::Value
          << Sync.Ms << YAML::Key << key::Sync << YAML::Value << Sync.Sync
          << YAML::EndMap;
    Out << YAML::EndSeq;
  }
  emitNamedFigures(Out, key::PeakBytesByPhase, Run.PeakBytesByPhase);
  Out << YAML::Key << key::Layers << YAML::Value << YAML::BeginSeq;
  for (const LayerMeasure &Layer : Run.Layers) {
    Out << YAML::Flow << YAML::BeginMap;
    Out << YAML::Key << key::Name << YAML::Value
        << (Layer.Name.empty() ? "(unscoped)" : Layer.Name);
    Out << YAML::Key << key::Type << YAML::Value << Layer.Type;
    Out << YAML::Key << "file" << YAML::Value << Layer.File;
    Out << YAML::Key << "line" << YAML::Value << Layer.Line;
    Out << YAML::Key << key::ForwardMs << YAML::Value << Layer.ForwardMs;
    Out << YAML::Key << key::BackwardMs << YAML::Value << Layer.BackwardMs;
    if (Layer.GpuMs >= 0)
      Out << YAML::Key << key::GpuMs << YAML::Value << Layer.GpuMs;
    Out << YAML::Key << key::ActivationBytes << YAML::Value
        << Layer.ActivationBytes;
    // Unknown where the run has no memory kinds (it ended early).
    if (!Run.Memory.empty())
      Out << YAML::Key << key::WeightBytes << YAML::Value << Layer.WeightBytes;
    Out << YAML::Key << key::Scope << YAML::Value << Layer.Scope;
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq;
  Out << YAML::Key << "wall_seconds" << YAML::Value << Run.WallSeconds;
  Out << YAML::Key << key::EndedEarly << YAML::Value << Run.EndedEarly;
  if (Run.IterationsAsked)
    Out << YAML::Key << key::IterationsAsked << YAML::Value
        << Run.IterationsAsked;
  if (Run.Stopped)
    Out << YAML::Key << key::Stopped << YAML::Value << nameOf(*Run.Stopped);
  if (Run.EpochEndIterations)
    Out << YAML::Key << key::EpochEndIterations << YAML::Value
        << Run.EpochEndIterations;
  if (Run.EpochIterations)
    Out << YAML::Key << key::EpochIterations << YAML::Value
        << Run.EpochIterations;
  if (Run.DatasetSamples)
    Out << YAML::Key << key::DatasetSize << YAML::Value << Run.DatasetSamples;
  if (Run.DatasetsGcd && Run.DatasetsGcd != Run.DatasetSamples)
    Out << YAML::Key << key::DatasetsGcd << YAML::Value << Run.DatasetsGcd;
  if (Run.GpuMsSource != GpuTimeSource::None)
    Out << YAML::Key << key::GpuMsSource << YAML::Value
        << nameOf(Run.GpuMsSource);
  if (!Run.GpuNote.empty())
    Out << YAML::Key << key::GpuNote << YAML::Value << Run.GpuNote;
  if (Run.DynamicMallocMs > 0)
    Out << YAML::Key << "dynamic_malloc_ms" << YAML::Value
        << Run.DynamicMallocMs;
  if (!Run.TimingRunMedians.empty())
    Out << YAML::Key << "timing_runs" << YAML::Value << YAML::Flow
        << Run.TimingRunMedians;
  if (Run.Probed)
    Out << YAML::Key << "probe" << YAML::Value << true;
  Out << YAML::Key << "breakdown" << YAML::Value;
  if (Run.Breakdown)
    Out << YAML::Flow << YAML::BeginMap << YAML::Key << key::Iterations
        << YAML::Value << Run.Breakdown->Iterations << YAML::Key
        << key::IterationMs << YAML::Value << Run.Breakdown->IterationMs
        << YAML::Key << "wall_seconds" << YAML::Value
        << Run.Breakdown->WallSeconds << YAML::Key << key::EndedEarly
        << YAML::Value << Run.Breakdown->EndedEarly << YAML::EndMap;
  else
    Out << YAML::Null;
  // Hundredths of a core: the figure says whether the CPUs were shared.
  if (Run.OtherWorkCores >= 0)
    Out << YAML::Key << "other_work_cores" << YAML::Value
        << std::round(Run.OtherWorkCores * 100) / 100;
  if (Run.StealCores >= 0)
    Out << YAML::Key << "steal_cores" << YAML::Value
        << std::round(Run.StealCores * 100) / 100;
  if (Run.Node)
    emitRunNode(Out, *Run.Node);
  if (Run.ObservedBatchSize)
    Out << YAML::Key << key::ObservedBatchSize << YAML::Value
        << Run.ObservedBatchSize;
  Out << YAML::EndMap;
}

} // namespace skyline
