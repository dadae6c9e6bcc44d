//===- RunResult.cpp - Writing one run's result ---------------------------===//

#include "skyline/runtime/RunResult.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace skyline::rt {

Summary summarize(std::vector<double> Values) {
  Summary S;
  if (Values.empty())
    return S;
  std::sort(Values.begin(), Values.end());
  size_t N = Values.size();
  S.Min = Values.front();
  S.Max = Values.back();
  S.Median = N % 2 ? Values[N / 2] : (Values[N / 2 - 1] + Values[N / 2]) / 2;
  double Sum = 0;
  for (double V : Values)
    Sum += V;
  S.Mean = Sum / N;
  double Squares = 0;
  for (double V : Values)
    Squares += (V - S.Mean) * (V - S.Mean);
  S.Stddev = N > 1 ? std::sqrt(Squares / (N - 1)) : 0;
  return S;
}

const char *runModeName(RunMode M) {
  return M == RunMode::Timing ? "timing" : "breakdown";
}

const char *stopReasonName(StopReason R) {
  switch (R) {
  case StopReason::Continue:
    return "continue";
  case StopReason::Count:
    return "count";
  case StopReason::Stable:
    return "stable";
  case StopReason::TimeLimit:
    return "time_limit";
  case StopReason::EndedEarly:
    return "ended_early";
  case StopReason::OutOfMemory:
    return "out_of_memory";
  }
  return "count";
}

double relativeMedianError(const double *Values, int N) {
  N = std::min(N, MaxMeasuredIterations);
  if (N < 2)
    return std::numeric_limits<double>::infinity();
  // Called at an iteration boundary: a copy on the stack, no allocation.
  std::array<double, MaxMeasuredIterations> Sorted;
  std::copy(Values, Values + N, Sorted.begin());
  std::sort(Sorted.begin(), Sorted.begin() + N);
  double Median =
      N % 2 ? Sorted[N / 2] : (Sorted[N / 2 - 1] + Sorted[N / 2]) / 2;
  double Sum = 0;
  for (int I = 0; I < N; ++I)
    Sum += Sorted[I];
  double Mean = Sum / N, Squares = 0;
  for (int I = 0; I < N; ++I)
    Squares += (Sorted[I] - Mean) * (Sorted[I] - Mean);
  if (Median <= 0)
    return std::numeric_limits<double>::infinity();
  return 1.2533 * std::sqrt(Squares / (N - 1)) / std::sqrt(double(N)) / Median;
}

StopReason whenToStop(const StoppingRule &Rule, const double *IterationMs,
                      int Measured, double ElapsedSeconds, int Spent) {
  int Max = std::max(1, Rule.MaxIterations);
  if (std::max(Measured, Spent) >= Max)
    return StopReason::Count;
  if (Measured < std::min(std::max(1, Rule.MinIterations), Max))
    return StopReason::Continue;
  if (Rule.TimeLimitSeconds > 0 && ElapsedSeconds >= Rule.TimeLimitSeconds)
    return StopReason::TimeLimit;
  if (Rule.Tolerance > 0 &&
      relativeMedianError(IterationMs, Measured) <= Rule.Tolerance)
    return StopReason::Stable;
  return StopReason::Continue;
}

RunResult::Breakdown breakDown(const PhaseBytes &AtPeak, int64_t Weights,
                               int64_t Gradients, int64_t OptimizerState) {
  auto At = [&](Phase P) { return AtPeak[size_t(P)]; };
  RunResult::Breakdown B;
  int64_t Construction = At(Phase::Construction);
  int64_t Training = At(Phase::Backward) + At(Phase::Optimizer);
  B.Weights = std::min(Weights, Construction);
  B.Untracked = Construction - B.Weights; // e.g. a dataset held in memory
  B.Gradients = std::min(Gradients, Training);
  B.OptimizerState = std::min(OptimizerState, Training - B.Gradients);
  B.Temporaries = Training - B.Gradients - B.OptimizerState;
  B.Data = At(Phase::Data);
  B.Activations = At(Phase::Forward);
  return B;
}

namespace {

/// A YAML double-quoted scalar: device names hold `:`, `(` and `@`.
void writeQuoted(std::FILE *Out, const std::string &Text) {
  std::fputc('"', Out);
  for (char C : Text) {
    if (C == '"' || C == '\\')
      std::fputc('\\', Out);
    if (static_cast<unsigned char>(C) >= 0x20)
      std::fputc(C, Out);
  }
  std::fputc('"', Out);
}

void writeBreakdown(std::FILE *Out, const RunResult &R);

/// A CUDA run's device memory, allocator peak and CUPTI state.
void writeGpu(std::FILE *Out, const RunResult::GpuInfo &G) {
  std::fprintf(Out,
               "gpu: {memory_total_bytes: %lld, memory_free_bytes: %lld, "
               "memory_capacity_bytes: %lld, allocator_peak_bytes: %lld, "
               "allocator_peak_reserved_bytes: %lld, "
               "allocator_reserved_bytes: %lld, host_peak_bytes: %lld, "
               "cupti: %s, kernels: %llu, dropped_records: %llu, "
               "gpu_ms_source: %s, tagged_peak_bytes: %lld, note: ",
               (long long)G.MemoryTotalBytes, (long long)G.MemoryFreeBytes,
               (long long)G.MemoryCapacityBytes,
               (long long)G.AllocatorPeakBytes,
               (long long)G.AllocatorPeakReservedBytes,
               (long long)G.AllocatorReservedBytes, (long long)G.HostPeakBytes,
               G.CuptiLoaded ? "true" : "false", (unsigned long long)G.Kernels,
               (unsigned long long)G.DroppedRecords,
               G.GpuMsSource.empty() ? "none" : G.GpuMsSource.c_str(),
               (long long)G.TaggedPeakBytes);
  writeQuoted(Out, G.Note);
  std::fprintf(Out, "}\n");
}

} // namespace

bool writeRunResult(const RunResult &R, const std::string &Path) {
  std::string Temp = Path + ".tmp";
  std::FILE *Out = std::fopen(Temp.c_str(), "w");
  if (!Out)
    return false;
  std::fprintf(Out, "schema_version: 1\n");
  std::fprintf(Out, "batch_size: %lld\n", static_cast<long long>(R.BatchSize));
  std::fprintf(Out, "oom: %s\n", R.OutOfMemory ? "true" : "false");
  std::fprintf(Out, "iterations: %d\n", R.Iterations);
  std::fprintf(Out, "mode: %s\n", runModeName(R.Mode));
  std::fprintf(Out, "stopped: %s\n", stopReasonName(R.Stopped));
  std::fprintf(Out, "ended_early: %s\n", R.EndedEarly ? "true" : "false");
  std::fprintf(Out,
               "warmup: %d\niterations_asked: %d\nmin_iterations: %d\n"
               "iterations_reached: %d\nepoch_end_iterations: %d\n",
               R.Warmup, R.IterationsAsked, R.MinIterations,
               R.IterationsReached, R.EpochEndIterations);
  std::fprintf(Out, "every_iteration_an_epoch: %s\n",
               R.EveryIterationAnEpoch ? "true" : "false");
  std::fprintf(Out, "epoch_iterations: %d\n", R.EpochIterations);
  std::fprintf(Out, "dataset_size: %lld\ndatasets_gcd: %lld\n",
               static_cast<long long>(R.DatasetSamples),
               static_cast<long long>(R.DatasetsGcd));
  std::fprintf(Out, "torch_version: ");
  writeQuoted(Out, R.TorchVersion);
  std::fprintf(Out, "\nthreads: %d\n", R.Threads);
  std::fprintf(Out, "device: {type: %s, name: ", R.DeviceType.c_str());
  writeQuoted(Out, R.DeviceName);
  std::fprintf(Out, "}\n");
  std::fprintf(
      Out,
      "iteration_ms: {median: %.4f, mean: %.4f, stddev: %.4f, min: %.4f, "
      "max: %.4f}\n",
      R.IterationMs.Median, R.IterationMs.Mean, R.IterationMs.Stddev,
      R.IterationMs.Min, R.IterationMs.Max);
  std::fprintf(Out, "throughput: %.3f\n", R.Throughput);
  std::fprintf(Out, "peak_bytes: %lld\n", static_cast<long long>(R.PeakBytes));
  if (R.Mode == RunMode::Breakdown)
    writeBreakdown(Out, R);
  if (R.Gpu.Used)
    writeGpu(Out, R.Gpu);
  bool Ok = std::fflush(Out) == 0 && !std::ferror(Out);
  Ok = std::fclose(Out) == 0 && Ok;
  return Ok && std::rename(Temp.c_str(), Path.c_str()) == 0;
}

namespace {

/// What only a breakdown run measures: phases, kinds, layers.
void writeBreakdown(std::FILE *Out, const RunResult &R) {
  std::fprintf(Out, "peak_bytes_by_phase:\n");
  for (size_t I = 0; I < NumPhases; ++I)
    std::fprintf(Out, "  %s: %lld\n", phaseName(Phase(I)),
                 static_cast<long long>(R.PeakByPhase[I]));
  const RunResult::Breakdown &M = R.Memory;
  if (R.HasMemoryBreakdown)
    std::fprintf(
        Out,
        "memory: {weights: %lld, gradients: %lld, optimizer_state: %lld, "
        "activations: %lld, data: %lld, temporaries: %lld, untracked: "
        "%lld}\n",
        (long long)M.Weights, (long long)M.Gradients,
        (long long)M.OptimizerState, (long long)M.Activations,
        (long long)M.Data, (long long)M.Temporaries, (long long)M.Untracked);
  double Phases = 0;
  for (double Ms : R.TimeSplitMs)
    Phases += Ms;
  std::fprintf(Out,
               "time_split_ms: {data: %.4f, forward: %.4f, backward: %.4f, "
               "optimizer: %.4f, other: %.4f}\n",
               R.TimeSplitMs[size_t(Phase::Data)],
               R.TimeSplitMs[size_t(Phase::Forward)],
               R.TimeSplitMs[size_t(Phase::Backward)],
               R.TimeSplitMs[size_t(Phase::Optimizer)],
               std::max(0.0, R.IterationMs.Mean - Phases));
  std::fprintf(Out, "layers:%s\n", R.Layers.empty() ? " []" : "");
  for (const RunResult::Layer &Layer : R.Layers) {
    std::fprintf(Out,
                 "  - {scope: %d, forward_ms: %.4f, backward_ms: %.4f, "
                 "activation_bytes: %lld",
                 Layer.ScopeId, Layer.ForwardMs, Layer.BackwardMs,
                 static_cast<long long>(Layer.ActivationBytes));
    if (R.HasMemoryBreakdown)
      std::fprintf(Out, ", weight_bytes: %lld",
                   static_cast<long long>(Layer.WeightBytes));
    if (Layer.GpuMs >= 0) // CUDA runs only
      std::fprintf(Out, ", gpu_ms: %.4f", Layer.GpuMs);
    std::fprintf(Out, "}\n");
  }
}

} // namespace

} // namespace skyline::rt
