//===- RunReport.cpp - The report: runs, fits, predictions ----------------===//

#include "skyline/RunReport.h"

#include "skyline/ProgramModelYAML.h"
#include "skyline/Units.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

namespace skyline {

void nameLayers(Measurement &M, const std::vector<ScopeEntry> &Scopes,
                const ProgramModel &Model) {
  for (MeasuredRun &Run : M.Runs)
    for (LayerMeasure &Layer : Run.Layers) {
      if (Layer.Scope < 0 || size_t(Layer.Scope) >= Scopes.size() ||
          Scopes[Layer.Scope].Id != Layer.Scope)
        continue;
      const ScopeEntry &Scope = Scopes[Layer.Scope];
      Layer.Name = Scope.Module;
      Layer.File = Scope.File;
      Layer.Line = Scope.Line;
      for (const ModuleSite &Module : Model.Modules)
        if (Module.Name == Scope.Module) {
          Layer.Type = Module.Type;
          break;
        }
    }
}

//===----------------------------------------------------------------------===//
// The terminal
//===----------------------------------------------------------------------===//

namespace {

const MeasuredRun *shownRun(const Measurement &M, int64_t DeclaredBatchSize) {
  const MeasuredRun *Last = nullptr;
  for (const MeasuredRun &Run : M.Runs) {
    if (Run.OutOfMemory)
      continue;
    if (Run.BatchSize == DeclaredBatchSize)
      return &Run;
    Last = &Run;
  }
  return Last;
}

void printLayers(const MeasuredRun &Run, llvm::raw_ostream &OS) {
  std::vector<LayerMeasure> Layers = Run.Layers;
  std::stable_sort(
      Layers.begin(), Layers.end(), [](const auto &A, const auto &B) {
        return A.ForwardMs + A.BackwardMs > B.ForwardMs + B.BackwardMs;
      });
  if (Layers.empty())
    return;
  OS << "time by layer call at batch size " << Run.BatchSize
     << " (self time, ms per iteration):\n"
     << "     forward    backward   activations   weights  layer\n";
  for (size_t I = 0; I < Layers.size() && I < 5; ++I) {
    const LayerMeasure &Layer = Layers[I];
    OS << llvm::format("  %10.3f  %10.3f  %12s  %8s  ", Layer.ForwardMs,
                       Layer.BackwardMs,
                       formatBytes(Layer.ActivationBytes).c_str(),
                       formatBytes(Layer.WeightBytes).c_str())
       << (Layer.Name.empty() ? "(unscoped)" : Layer.Name);
    if (!Layer.File.empty())
      OS << " (" << Layer.File << ":" << Layer.Line << ")";
    OS << "\n";
  }
}

} // namespace

void printRunTable(const Measurement &M, int64_t DeclaredBatchSize,
                   llvm::raw_ostream &OS) {
  OS << "device: " << M.DeviceType;
  if (!M.DeviceName.empty() &&
      !llvm::StringRef(M.DeviceName).equals_insensitive(M.DeviceType))
    OS << " (" << M.DeviceName << ")";
  if (M.Threads > 0)
    OS << ", " << M.Threads << " threads";
  if (!M.MallocThresholdsUsed.empty())
    OS << ", malloc thresholds " << M.MallocThresholdsUsed;
  OS << ", memory capacity " << formatBytes(M.MemoryCapacityBytes) << "\n";
  // The times hold for the program run the same way, which is up to the user.
  if (!M.GlibcTunables.empty())
    OS << "malloc: the runs had GLIBC_TUNABLES=" << M.GlibcTunables
       << "; train with it set to get these times (docs/user-guide.md)\n";
  OS << "batch size iterations iteration ms (median ± sd)    samples/s    peak "
        "memory\n";
  for (const MeasuredRun &Run : M.Runs) {
    if (Run.OutOfMemory) {
      OS << llvm::format("%10lld", (long long)Run.BatchSize)
         << "          -  out of memory (the run crossed the capacity)\n";
      continue;
    }
    std::string Time = llvm::formatv("{0:F2} ± {1:F2}", Run.IterationMs.Median,
                                     Run.IterationMs.Stddev)
                           .str();
    OS << llvm::format("%10lld %10u %28s %12.1f %14s", (long long)Run.BatchSize,
                       Run.Iterations, Time.c_str(), Run.Throughput,
                       formatBytes(Run.PeakBytes).c_str());
    // How far apart the runs were says how far to trust one of them.
    if (Run.TimingRunMedians.size() > 1 && Run.IterationMs.Median > 0) {
      auto Share = [&](double Ms) {
        return (Ms / Run.IterationMs.Median - 1) * 100;
      };
      OS << llvm::formatv("  fastest of {0} runs ({1:F1}%..+{2:F1}%)",
                          Run.TimingRunMedians.size(),
                          Share(*llvm::min_element(Run.TimingRunMedians)),
                          Share(*llvm::max_element(Run.TimingRunMedians)));
    }
    OS << "\n";
  }
  if (const MeasuredRun *Run = shownRun(M, DeclaredBatchSize)) {
    if (!Run->Memory.empty()) {
      OS << "peak memory at batch size " << Run->BatchSize << ":";
      for (const auto &[Kind, Bytes] : Run->Memory)
        OS << " " << Kind << " " << formatBytes(Bytes);
      OS << "\n";
    }
    if (!Run->TimeSplitMs.empty()) {
      OS << "iteration time at batch size " << Run->BatchSize << ":";
      for (const auto &[Phase, Ms] : Run->TimeSplitMs)
        OS << llvm::format(" %s %.2f ms", Phase.c_str(), Ms);
      OS << "\n";
    }
    printLayers(*Run, OS);
  }
  for (const std::string &Problem : M.Problems)
    OS << "skyline-check: warning: " << Problem << "\n";
}

void printPredictions(const Analysis &A, llvm::raw_ostream &OS) {
  auto PrintFit = [&](const char *What, const std::optional<LinearFit> &Fit,
                      const std::string &Problem, const char *Unit,
                      double Scale) {
    OS << What << ": ";
    if (Fit)
      OS << llvm::formatv(
          "{0:F4} + {1:F6} x batch size {2} (R² {3:F4}, {4} points)",
          Fit->Intercept / Scale, Fit->Slope / Scale, Unit, Fit->RSquared,
          Fit->Points);
    if (!Problem.empty())
      OS << (Fit ? "; " : "") << "cannot predict: " << Problem;
    OS << "\n";
  };
  PrintFit("iteration time", A.IterationMs, A.TimeProblem, "ms", 1.0);
  PrintFit("peak memory", A.PeakBytes, A.MemoryProblem, "MiB", 1048576.0);
  if (!A.Predictions.empty()) {
    OS << "predicted:\n batch size iteration ms    samples/s    peak memory\n";
    for (const Prediction &P : A.Predictions)
      OS << llvm::format("%11lld %12.2f %12.1f %14s", (long long)P.BatchSize,
                         P.IterationMs, P.Throughput,
                         formatBytes(P.PeakBytes).c_str())
         << (P.Fits ? "" : "  (does not fit)")
         << (P.BatchSize == A.CurrentBatchSize ? "  current" : "")
         << (A.Suggested && P.BatchSize == A.Suggested->BatchSize
                 ? "  suggested"
                 : "")
         << (A.MaxBatchSize && P.BatchSize == *A.MaxBatchSize
                 ? "  largest that fits"
                 : "")
         << (P.Extrapolated ? "  (extrapolated)" : "") << "\n";
  }
  if (A.MaxBatchSize)
    OS << "largest batch size that fits: " << *A.MaxBatchSize << " ("
       << formatBytes(A.UsableBytes) << " usable of "
       << formatBytes(A.CapacityBytes) << ")\n";
  if (A.DataBound)
    OS << "the dataset holds fewer than " << A.DataBound + 1
       << " samples (a batch of " << A.DataBound + 1
       << " was the whole of it): no larger size is suggested\n";
  if (A.DatasetSamples >= 2)
    OS << "the training data holds " << A.DatasetSamples
       << " samples: no size past half of it (" << A.DatasetSamples / 2
       << ") is suggested\n";
  if (A.FailureBound)
    OS << "the run at batch size " << A.FailureBound + 1
       << " failed (above): no size from it on is suggested\n";
  if (A.Suggested)
    OS << "suggested batch size: " << A.Suggested->BatchSize << " ("
       << formatShare(A.Suggested->Gain) << " more throughput than "
       << A.CurrentBatchSize << ")\n";
  else
    OS << "suggested batch size: none (" << A.NoSuggestionReason << ")\n";
}

void printWhatIf(const Analysis &A, int64_t BatchSize, llvm::raw_ostream &OS) {
  std::optional<Prediction> P = predictAt(A, BatchSize);
  if (!P) {
    OS << "what if batch size " << BatchSize << ": cannot predict: "
       << (!A.TimeProblem.empty() ? A.TimeProblem : A.MemoryProblem) << "\n";
    return;
  }
  // Three significant digits at least: a 0.067 ms iteration is not "0.07".
  int Decimals =
      P->IterationMs > 0
          ? std::clamp(2 - int(std::floor(std::log10(P->IterationMs))), 2, 9)
          : 2;
  OS << llvm::formatv(
      "what if batch size {0}: iteration {1} ms, {2:F1} samples/s, peak "
      "memory {3} ({4}){5}\n",
      BatchSize, llvm::format("%.*f", Decimals, P->IterationMs), P->Throughput,
      formatBytes(P->PeakBytes),
      P->Fits ? "fits" : "does not fit under " + formatBytes(A.UsableBytes),
      P->Extrapolated ? ", extrapolated outside the sizes measured" : "");
}

//===----------------------------------------------------------------------===//
// YAML
//===----------------------------------------------------------------------===//

namespace {

void emitRun(YAML::Emitter &Out, const MeasuredRun &Run) {
  Out << YAML::BeginMap;
  Out << YAML::Key << "batch_size" << YAML::Value << Run.BatchSize;
  Out << YAML::Key << "oom" << YAML::Value << Run.OutOfMemory;
  Out << YAML::Key << "iterations" << YAML::Value << Run.Iterations;
  Out << YAML::Key << "iteration_ms" << YAML::Value << YAML::Flow
      << YAML::BeginMap << YAML::Key << "median" << YAML::Value
      << Run.IterationMs.Median << YAML::Key << "mean" << YAML::Value
      << Run.IterationMs.Mean << YAML::Key << "stddev" << YAML::Value
      << Run.IterationMs.Stddev << YAML::Key << "min" << YAML::Value
      << Run.IterationMs.Min << YAML::Key << "max" << YAML::Value
      << Run.IterationMs.Max << YAML::EndMap;
  Out << YAML::Key << "throughput" << YAML::Value << Run.Throughput;
  Out << YAML::Key << "time_split_ms" << YAML::Value << YAML::Flow
      << YAML::BeginMap;
  for (const auto &[Phase, Ms] : Run.TimeSplitMs)
    Out << YAML::Key << Phase << YAML::Value << Ms;
  Out << YAML::EndMap;
  Out << YAML::Key << "peak_bytes" << YAML::Value << Run.PeakBytes;
  Out << YAML::Key << "memory" << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto &[Kind, Bytes] : Run.Memory)
    Out << YAML::Key << Kind << YAML::Value << Bytes;
  Out << YAML::EndMap;
  Out << YAML::Key << "peak_bytes_by_phase" << YAML::Value << YAML::Flow
      << YAML::BeginMap;
  for (const auto &[Phase, Bytes] : Run.PeakBytesByPhase)
    Out << YAML::Key << Phase << YAML::Value << Bytes;
  Out << YAML::EndMap;
  Out << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
  for (const LayerMeasure &Layer : Run.Layers) {
    Out << YAML::Flow << YAML::BeginMap;
    Out << YAML::Key << "name" << YAML::Value
        << (Layer.Name.empty() ? "(unscoped)" : Layer.Name);
    Out << YAML::Key << "type" << YAML::Value << Layer.Type;
    Out << YAML::Key << "file" << YAML::Value << Layer.File;
    Out << YAML::Key << "line" << YAML::Value << Layer.Line;
    Out << YAML::Key << "forward_ms" << YAML::Value << Layer.ForwardMs;
    Out << YAML::Key << "backward_ms" << YAML::Value << Layer.BackwardMs;
    if (Layer.GpuMs >= 0)
      Out << YAML::Key << "gpu_ms" << YAML::Value << Layer.GpuMs;
    Out << YAML::Key << "activation_bytes" << YAML::Value
        << Layer.ActivationBytes;
    // Unknown where the run has no memory kinds (it ended early).
    if (!Run.Memory.empty())
      Out << YAML::Key << "weight_bytes" << YAML::Value << Layer.WeightBytes;
    Out << YAML::Key << "scope" << YAML::Value << Layer.Scope;
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq;
  Out << YAML::Key << "wall_seconds" << YAML::Value << Run.WallSeconds;
  Out << YAML::Key << "ended_early" << YAML::Value << Run.EndedEarly;
  if (Run.IterationsAsked)
    Out << YAML::Key << "iterations_asked" << YAML::Value
        << Run.IterationsAsked;
  if (!Run.Stopped.empty())
    Out << YAML::Key << "stopped" << YAML::Value << Run.Stopped;
  if (Run.EpochEndIterations)
    Out << YAML::Key << "epoch_end_iterations" << YAML::Value
        << Run.EpochEndIterations;
  if (Run.EpochIterations)
    Out << YAML::Key << "epoch_iterations" << YAML::Value
        << Run.EpochIterations;
  if (Run.DatasetSamples)
    Out << YAML::Key << "dataset_size" << YAML::Value << Run.DatasetSamples;
  if (Run.DatasetsGcd && Run.DatasetsGcd != Run.DatasetSamples)
    Out << YAML::Key << "datasets_gcd" << YAML::Value << Run.DatasetsGcd;
  if (!Run.GpuMsSource.empty())
    Out << YAML::Key << "gpu_ms_source" << YAML::Value << Run.GpuMsSource;
  if (Run.DynamicMallocMs > 0)
    Out << YAML::Key << "dynamic_malloc_ms" << YAML::Value
        << Run.DynamicMallocMs;
  if (!Run.TimingRunMedians.empty())
    Out << YAML::Key << "timing_runs" << YAML::Value << YAML::Flow
        << Run.TimingRunMedians;
  Out << YAML::Key << "breakdown" << YAML::Value;
  if (Run.Breakdown)
    Out << YAML::Flow << YAML::BeginMap << YAML::Key << "iterations"
        << YAML::Value << Run.Breakdown->Iterations << YAML::Key
        << "iteration_ms" << YAML::Value << Run.Breakdown->IterationMs
        << YAML::Key << "wall_seconds" << YAML::Value
        << Run.Breakdown->WallSeconds << YAML::Key << "ended_early"
        << YAML::Value << Run.Breakdown->EndedEarly << YAML::EndMap;
  else
    Out << YAML::Null;
  Out << YAML::EndMap;
}

void emitFit(YAML::Emitter &Out, const char *Key,
             const std::optional<LinearFit> &Fit, const std::string &Problem) {
  Out << YAML::Key << Key << YAML::Value << YAML::BeginMap;
  if (Fit) {
    Out << YAML::Key << "intercept" << YAML::Value << Fit->Intercept;
    Out << YAML::Key << "slope" << YAML::Value << Fit->Slope;
    Out << YAML::Key << "r_squared" << YAML::Value << Fit->RSquared;
    Out << YAML::Key << "points" << YAML::Value << Fit->Points;
    Out << YAML::Key << "residuals" << YAML::Value << YAML::Flow
        << Fit->Residuals;
  }
  Out << YAML::Key << "can_predict" << YAML::Value << (Fit && Problem.empty());
  if (!Problem.empty())
    Out << YAML::Key << "problem" << YAML::Value << Problem;
  Out << YAML::EndMap;
}

void emitPrediction(YAML::Emitter &Out, const Prediction &P) {
  Out << YAML::Flow << YAML::BeginMap;
  Out << YAML::Key << "batch_size" << YAML::Value << P.BatchSize;
  Out << YAML::Key << "iteration_ms" << YAML::Value << P.IterationMs;
  Out << YAML::Key << "throughput" << YAML::Value << P.Throughput;
  Out << YAML::Key << "peak_bytes" << YAML::Value << P.PeakBytes;
  Out << YAML::Key << "fits" << YAML::Value << P.Fits;
  Out << YAML::Key << "extrapolated" << YAML::Value << P.Extrapolated;
  Out << YAML::EndMap;
}

void emitAnalysis(YAML::Emitter &Out, const Analysis &A) {
  Out << YAML::Key << "fits" << YAML::Value << YAML::BeginMap;
  emitFit(Out, "iteration_ms", A.IterationMs, A.TimeProblem);
  emitFit(Out, "peak_bytes", A.PeakBytes, A.MemoryProblem);
  Out << YAML::EndMap;
  Out << YAML::Key << "capacity" << YAML::Value << YAML::Flow << YAML::BeginMap;
  Out << YAML::Key << "capacity_bytes" << YAML::Value << A.CapacityBytes;
  Out << YAML::Key << "usable_bytes" << YAML::Value << A.UsableBytes;
  Out << YAML::Key << "max_batch_size" << YAML::Value;
  if (A.MaxBatchSize)
    Out << *A.MaxBatchSize;
  else
    Out << YAML::Null;
  Out << YAML::Key << "first_out_of_memory" << YAML::Value;
  if (A.FirstOutOfMemory)
    Out << *A.FirstOutOfMemory;
  else
    Out << YAML::Null;
  Out << YAML::EndMap;
  Out << YAML::Key << "predictions" << YAML::Value << YAML::BeginSeq;
  for (const Prediction &P : A.Predictions)
    emitPrediction(Out, P);
  Out << YAML::EndSeq;
  Out << YAML::Key << "suggestion" << YAML::Value;
  if (A.Suggested) {
    Out << YAML::BeginMap;
    Out << YAML::Key << "batch_size" << YAML::Value << A.Suggested->BatchSize;
    Out << YAML::Key << "from" << YAML::Value << A.CurrentBatchSize;
    Out << YAML::Key << "gain" << YAML::Value << A.Suggested->Gain;
    Out << YAML::Key << "predicted" << YAML::Value;
    emitPrediction(Out, A.Suggested->At);
    Out << YAML::EndMap;
  } else {
    Out << YAML::BeginMap << YAML::Key << "batch_size" << YAML::Value
        << YAML::Null << YAML::Key << "reason" << YAML::Value
        << A.NoSuggestionReason << YAML::EndMap;
  }
}

} // namespace

std::string reportToYAML(const SavedReport &Report, const Analysis *Model) {
  const Measurement &M = Report.Measured;
  YAML::Emitter Out;
  Out.SetDoublePrecision(6);
  Out << YAML::BeginMap;
  Out << YAML::Key << "schema_version" << YAML::Value << ReportSchemaVersion;
  Out << YAML::Key << "skyline_version" << YAML::Value << Report.SkylineVersion;
  if (const auto &Site = Report.Program.BatchSize) {
    Out << YAML::Key << "batch_size" << YAML::Value << YAML::Flow
        << YAML::BeginMap;
    Out << YAML::Key << "name" << YAML::Value << Site->Name;
    Out << YAML::Key << "value" << YAML::Value << Site->Value;
    Out << YAML::Key << "file" << YAML::Value << Site->Literal.File;
    Out << YAML::Key << "line" << YAML::Value << Site->Literal.Line;
    Out << YAML::EndMap;
  }
  Out << YAML::Key << "environment" << YAML::Value << YAML::Flow
      << YAML::BeginMap;
  Out << YAML::Key << "torch_version" << YAML::Value << M.TorchVersion;
  Out << YAML::Key << "threads" << YAML::Value << M.Threads;
  if (!M.MallocThresholdsUsed.empty())
    Out << YAML::Key << "malloc_thresholds" << YAML::Value
        << M.MallocThresholdsUsed;
  if (!M.GlibcTunables.empty())
    Out << YAML::Key << "glibc_tunables" << YAML::Value << M.GlibcTunables;
  Out << YAML::EndMap;
  Out << YAML::Key << "device" << YAML::Value << YAML::BeginMap;
  Out << YAML::Key << "type" << YAML::Value << M.DeviceType;
  Out << YAML::Key << "name" << YAML::Value << M.DeviceName;
  Out << YAML::Key << "memory_capacity_bytes" << YAML::Value
      << M.MemoryCapacityBytes;
  Out << YAML::EndMap;
  Out << YAML::Key << "time" << YAML::Value << YAML::BeginMap;
  Out << YAML::Key << "build_seconds" << YAML::Value << Report.BuildSeconds;
  double RunSeconds = 0;
  for (const MeasuredRun &Run : M.Runs)
    RunSeconds += Run.WallSeconds;
  Out << YAML::Key << "run_seconds" << YAML::Value << RunSeconds;
  Out << YAML::Key << "time_budget_seconds" << YAML::Value
      << M.TimeBudgetSeconds;
  Out << YAML::Key << "time_budget_spent" << YAML::Value << M.TimeBudgetSpent
      << YAML::EndMap;
  if (M.LargerThanTheData)
    Out << YAML::Key << "larger_than_the_data" << YAML::Value
        << M.LargerThanTheData;
  if (M.FirstFailure)
    Out << YAML::Key << "first_failure" << YAML::Value << M.FirstFailure;
  Out << YAML::Key << "runs" << YAML::Value << YAML::BeginSeq;
  for (const MeasuredRun &Run : M.Runs)
    emitRun(Out, Run);
  Out << YAML::EndSeq;
  Out << YAML::Key << "problems" << YAML::Value << YAML::BeginSeq;
  for (const std::string &Problem : M.Problems)
    Out << Problem;
  Out << YAML::EndSeq;
  if (Model)
    emitAnalysis(Out, *Model);
  Out << YAML::Key << "program" << YAML::Value;
  emitProgramModel(Out, Report.Program);
  Out << YAML::EndMap;
  return std::string(Out.c_str()) + "\n";
}

namespace {

template <typename T>
T get(const YAML::Node &Node, const char *Key, T Default = T()) {
  return Node && Node[Key] && !Node[Key].IsNull() ? Node[Key].as<T>() : Default;
}

MeasuredRun readRun(const YAML::Node &Node) {
  MeasuredRun Run;
  Run.BatchSize = Node["batch_size"].as<int64_t>();
  Run.OutOfMemory = get<bool>(Node, "oom");
  Run.Iterations = get<unsigned>(Node, "iterations");
  const YAML::Node Ms = Node["iteration_ms"];
  Run.IterationMs = {get<double>(Ms, "median"), get<double>(Ms, "mean"),
                     get<double>(Ms, "stddev"), get<double>(Ms, "min"),
                     get<double>(Ms, "max")};
  Run.Throughput = get<double>(Node, "throughput");
  Run.PeakBytes = get<int64_t>(Node, "peak_bytes");
  for (const char *Phase :
       {"data", "forward", "backward", "optimizer", "other"})
    if (Node["time_split_ms"] && Node["time_split_ms"][Phase])
      Run.TimeSplitMs.push_back(
          {Phase, Node["time_split_ms"][Phase].as<double>()});
  for (const char *Kind : {"weights", "gradients", "optimizer_state",
                           "activations", "data", "temporaries", "untracked"})
    if (Node["memory"] && Node["memory"][Kind])
      Run.Memory.push_back({Kind, Node["memory"][Kind].as<int64_t>()});
  for (const auto &Phase : Node["peak_bytes_by_phase"])
    Run.PeakBytesByPhase.push_back(
        {Phase.first.as<std::string>(), Phase.second.as<int64_t>()});
  for (const YAML::Node &Row : Node["layers"]) {
    LayerMeasure Layer;
    Layer.Name = get<std::string>(Row, "name");
    if (Layer.Name == "(unscoped)")
      Layer.Name.clear();
    Layer.Type = get<std::string>(Row, "type");
    Layer.File = get<std::string>(Row, "file");
    Layer.Line = get<unsigned>(Row, "line");
    Layer.ForwardMs = get<double>(Row, "forward_ms");
    Layer.BackwardMs = get<double>(Row, "backward_ms");
    Layer.GpuMs = get<double>(Row, "gpu_ms", -1);
    Layer.ActivationBytes = get<int64_t>(Row, "activation_bytes");
    Layer.WeightBytes = get<int64_t>(Row, "weight_bytes");
    Layer.Scope = get<int>(Row, "scope", -1);
    Run.Layers.push_back(Layer);
  }
  Run.WallSeconds = get<double>(Node, "wall_seconds");
  Run.EndedEarly = get<bool>(Node, "ended_early");
  Run.IterationsAsked = get<unsigned>(Node, "iterations_asked");
  Run.Stopped = get<std::string>(Node, "stopped");
  Run.EpochEndIterations = get<unsigned>(Node, "epoch_end_iterations");
  Run.EpochIterations = get<unsigned>(Node, "epoch_iterations");
  Run.DatasetSamples = get<int64_t>(Node, "dataset_size");
  Run.DatasetsGcd = get<int64_t>(Node, "datasets_gcd", Run.DatasetSamples);
  Run.TimingRunMedians = get<std::vector<double>>(Node, "timing_runs");
  Run.GpuMsSource = get<std::string>(Node, "gpu_ms_source");
  Run.DynamicMallocMs = get<double>(Node, "dynamic_malloc_ms");
  if (const YAML::Node B = Node["breakdown"]; B && B.IsMap())
    Run.Breakdown = BreakdownRun{
        get<unsigned>(B, "iterations"), get<double>(B, "iteration_ms"),
        get<double>(B, "wall_seconds"), get<bool>(B, "ended_early")};
  return Run;
}

llvm::Error notAReport(llvm::StringRef Path, const std::string &Why) {
  return llvm::createStringError(
      std::errc::invalid_argument,
      "'%s' is not a skyline-check report: %s; write one with "
      "--report=FILE",
      Path.str().c_str(), Why.c_str());
}

} // namespace

llvm::Expected<SavedReport> readReport(llvm::StringRef Path) {
  YAML::Node Root;
  try {
    Root = YAML::LoadFile(Path.str());
  } catch (const YAML::BadFile &) {
    return llvm::createStringError(
        std::errc::no_such_file_or_directory,
        "cannot read report '%s': no such file or not readable",
        Path.str().c_str());
  } catch (const YAML::Exception &E) {
    return notAReport(Path, E.what());
  }
  try {
    if (!Root.IsMap() || !Root["schema_version"] || !Root["runs"])
      return notAReport(Path, "no schema_version or runs");
    SavedReport Report;
    Report.SchemaVersion = Root["schema_version"].as<int>();
    if (Report.SchemaVersion < 1 || Report.SchemaVersion > ReportSchemaVersion)
      return notAReport(
          Path, "schema_version " + std::to_string(Report.SchemaVersion) +
                    " is not one this skyline-check reads (1 to " +
                    std::to_string(ReportSchemaVersion) + ")");
    Report.SkylineVersion = get<std::string>(Root, "skyline_version");
    Measurement &M = Report.Measured;
    M.DeviceType = get<std::string>(Root["device"], "type", "cpu");
    M.DeviceName = get<std::string>(Root["device"], "name");
    M.MemoryCapacityBytes =
        get<int64_t>(Root["device"], "memory_capacity_bytes");
    M.TorchVersion = get<std::string>(Root["environment"], "torch_version");
    M.Threads = get<int>(Root["environment"], "threads");
    M.MallocThresholdsUsed =
        get<std::string>(Root["environment"], "malloc_thresholds");
    M.GlibcTunables = get<std::string>(Root["environment"], "glibc_tunables");
    Report.BuildSeconds = get<double>(Root["time"], "build_seconds");
    M.TimeBudgetSeconds = get<double>(Root["time"], "time_budget_seconds");
    M.TimeBudgetSpent = get<bool>(Root["time"], "time_budget_spent");
    M.LargerThanTheData = get<int64_t>(Root, "larger_than_the_data");
    M.FirstFailure = get<int64_t>(Root, "first_failure");
    for (const YAML::Node &Run : Root["runs"])
      M.Runs.push_back(readRun(Run));
    for (const YAML::Node &Problem : Root["problems"])
      M.Problems.push_back(Problem.as<std::string>());
    if (Root["program"]) {
      std::string Error;
      std::optional<ProgramModel> Program =
          programModelFromNode(Root["program"], Error);
      if (!Program)
        return notAReport(Path, "its program model: " + Error);
      Report.Program = std::move(*Program);
    } else if (Root["batch_size"]) { // schema 1: the batch size alone
      BatchSizeSite Site;
      Site.Name = get<std::string>(Root["batch_size"], "name");
      Site.Value = get<int64_t>(Root["batch_size"], "value");
      Site.Literal.File = get<std::string>(Root["batch_size"], "file");
      Site.Literal.Line = get<unsigned>(Root["batch_size"], "line");
      Report.Program.BatchSize = Site;
    }
    return Report;
  } catch (const YAML::Exception &E) {
    return notAReport(Path, E.what());
  }
}

} // namespace skyline
