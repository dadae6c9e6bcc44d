//===- RunReport.cpp - Measured runs as a table and as YAML ---------------===//

#include "skyline/RunReport.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

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

void printRunTable(const Measurement &M, const std::vector<ScopeEntry> &Scopes,
                   llvm::raw_ostream &OS) {
  OS << "device: " << M.DeviceType << ", memory budget "
     << llvm::format("%.1f MiB", double(M.MemoryCapacityBytes) / 1048576.0) << "\n";
  OS << "batch size iterations iteration ms (median ± sd)    samples/s    peak memory\n";
  for (const MeasuredRun &Run : M.Runs) {
    if (Run.OutOfMemory) {
      OS << llvm::format("%10lld", (long long)Run.BatchSize)
         << "          -  out of memory (the run crossed the budget)\n";
      continue;
    }
    std::string Time = llvm::formatv("{0:F2} ± {1:F2}", Run.IterationMs.Median,
                                     Run.IterationMs.Stddev)
                           .str();
    OS << llvm::format("%10lld %10u %28s %12.1f %10.1f MiB\n", (long long)Run.BatchSize,
                       Run.Iterations, Time.c_str(), Run.Throughput,
                       double(Run.PeakBytes) / 1048576.0);
  }
  // The memory at the peak of the last run that fit, by kind.
  for (auto It = M.Runs.rbegin(); It != M.Runs.rend(); ++It) {
    if (It->OutOfMemory || It->Memory.empty())
      continue;
    OS << "peak memory at batch size " << It->BatchSize << ":";
    for (const auto &[Kind, Bytes] : It->Memory)
      OS << llvm::format(" %s %.1f MiB", Kind.c_str(), double(Bytes) / 1048576.0);
    OS << "\n";
    if (!It->TimeSplitMs.empty()) {
      OS << "iteration time at batch size " << It->BatchSize << ":";
      for (const auto &[Phase, Ms] : It->TimeSplitMs)
        OS << llvm::format(" %s %.2f ms", Phase.c_str(), Ms);
      OS << "\n";
    }
    std::vector<LayerMeasure> Layers = It->Layers;
    std::stable_sort(Layers.begin(), Layers.end(), [](const auto &A, const auto &B) {
      return A.ForwardMs + A.BackwardMs > B.ForwardMs + B.BackwardMs;
    });
    if (!Layers.empty())
      OS << "time by layer call at batch size " << It->BatchSize
         << " (self time, ms per iteration):\n"
         << "     forward    backward  activations  layer\n";
    for (size_t I = 0; I < Layers.size() && I < 5; ++I) {
      const LayerMeasure &Layer = Layers[I];
      OS << llvm::format("  %10.3f  %10.3f  %7.1f MiB  ", Layer.ForwardMs, Layer.BackwardMs,
                         double(Layer.ActivationBytes) / 1048576.0)
         << (Layer.Name.empty() ? "(unscoped)" : Layer.Name);
      if (!Layer.File.empty())
        OS << " (" << Layer.File << ":" << Layer.Line << ")";
      OS << "\n";
    }
    break;
  }
  for (const std::string &Problem : M.Problems)
    OS << "skyline-check: warning: " << Problem << "\n";
}

std::string runReportToYAML(const ProgramModel &Model, const Measurement &M,
                            const std::vector<ScopeEntry> &Scopes, double BuildSeconds) {
  YAML::Emitter Out;
  Out.SetDoublePrecision(6);
  Out << YAML::BeginMap;
  Out << YAML::Key << "schema_version" << YAML::Value << 1;
  if (Model.BatchSize) {
    Out << YAML::Key << "batch_size" << YAML::Value << YAML::BeginMap;
    Out << YAML::Key << "name" << YAML::Value << Model.BatchSize->Name;
    Out << YAML::Key << "value" << YAML::Value << Model.BatchSize->Value;
    Out << YAML::Key << "file" << YAML::Value << Model.BatchSize->Literal.File;
    Out << YAML::Key << "line" << YAML::Value << Model.BatchSize->Literal.Line;
    Out << YAML::EndMap;
  }
  Out << YAML::Key << "device" << YAML::Value << YAML::BeginMap;
  Out << YAML::Key << "type" << YAML::Value << M.DeviceType;
  Out << YAML::Key << "name" << YAML::Value << (M.DeviceType == "cpu" ? "CPU" : M.DeviceType);
  Out << YAML::Key << "memory_capacity_bytes" << YAML::Value << M.MemoryCapacityBytes;
  Out << YAML::EndMap;
  Out << YAML::Key << "time" << YAML::Value << YAML::BeginMap;
  Out << YAML::Key << "build_seconds" << YAML::Value << BuildSeconds;
  double RunSeconds = 0;
  for (const MeasuredRun &Run : M.Runs)
    RunSeconds += Run.WallSeconds;
  Out << YAML::Key << "run_seconds" << YAML::Value << RunSeconds << YAML::EndMap;
  Out << YAML::Key << "runs" << YAML::Value << YAML::BeginSeq;
  for (const MeasuredRun &Run : M.Runs) {
    Out << YAML::BeginMap;
    Out << YAML::Key << "batch_size" << YAML::Value << Run.BatchSize;
    Out << YAML::Key << "oom" << YAML::Value << Run.OutOfMemory;
    Out << YAML::Key << "iterations" << YAML::Value << Run.Iterations;
    Out << YAML::Key << "iteration_ms" << YAML::Value << YAML::Flow << YAML::BeginMap
        << YAML::Key << "median" << YAML::Value << Run.IterationMs.Median << YAML::Key
        << "mean" << YAML::Value << Run.IterationMs.Mean << YAML::Key << "stddev"
        << YAML::Value << Run.IterationMs.Stddev << YAML::Key << "min" << YAML::Value
        << Run.IterationMs.Min << YAML::Key << "max" << YAML::Value << Run.IterationMs.Max
        << YAML::EndMap;
    Out << YAML::Key << "throughput" << YAML::Value << Run.Throughput;
    Out << YAML::Key << "time_split_ms" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto &[Phase, Ms] : Run.TimeSplitMs)
      Out << YAML::Key << Phase << YAML::Value << Ms;
    Out << YAML::EndMap;
    Out << YAML::Key << "peak_bytes" << YAML::Value << Run.PeakBytes;
    Out << YAML::Key << "memory" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto &[Kind, Bytes] : Run.Memory)
      Out << YAML::Key << Kind << YAML::Value << Bytes;
    Out << YAML::EndMap;
    Out << YAML::Key << "peak_bytes_by_phase" << YAML::Value << YAML::Flow << YAML::BeginMap;
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
      Out << YAML::Key << "activation_bytes" << YAML::Value << Layer.ActivationBytes;
      Out << YAML::Key << "weight_bytes" << YAML::Value << Layer.WeightBytes;
      Out << YAML::EndMap;
    }
    Out << YAML::EndSeq;
    Out << YAML::Key << "wall_seconds" << YAML::Value << Run.WallSeconds;
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq;
  Out << YAML::Key << "problems" << YAML::Value << YAML::BeginSeq;
  for (const std::string &Problem : M.Problems)
    Out << Problem;
  Out << YAML::EndSeq << YAML::EndMap;
  return std::string(Out.c_str()) + "\n";
}

} // namespace skyline
