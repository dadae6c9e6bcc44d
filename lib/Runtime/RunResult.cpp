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

double relativeMedianError(const double *Values, int N) {
  N = std::min(N, MaxMeasuredIterations);
  if (N < 2)
    return std::numeric_limits<double>::infinity();
  // Called at an iteration boundary: a copy on the stack, no allocation.
  std::array<double, MaxMeasuredIterations> Sorted;
  std::copy(Values, Values + N, Sorted.begin());
  std::sort(Sorted.begin(), Sorted.begin() + N);
  auto Middle = [&] {
    return N % 2 ? Sorted[N / 2] : (Sorted[N / 2 - 1] + Sorted[N / 2]) / 2;
  };
  auto Quantile = [&](double Q) { // linear between the sorted values
    double At = Q * double(N - 1);
    size_t Low = size_t(At);
    double High = Low + 1 < size_t(N) ? Sorted[Low + 1] : Sorted[Low];
    return Sorted[Low] + (At - double(Low)) * (High - Sorted[Low]);
  };
  double Median = Middle();
  if (Median <= 0)
    return std::numeric_limits<double>::infinity();
  // The spread from the quartiles and the median absolute deviation, not
  // the sd: an iteration another process held up moves the median little
  // and the sd much, and would keep the run going for tens of iterations
  // more. Times that alternate (an optimizer step every other iteration)
  // have a MAD of the majority's jitter alone; their quartiles span both.
  double Quartiles = (Quantile(0.75) - Quantile(0.25)) / 1.349;
  for (int I = 0; I < N; ++I)
    Sorted[size_t(I)] = std::fabs(Sorted[size_t(I)] - Median);
  std::nth_element(Sorted.begin(), Sorted.begin() + N / 2, Sorted.begin() + N);
  double Deviation = Sorted[size_t(N / 2)];
  if (N % 2 == 0)
    Deviation = (Deviation +
                 *std::max_element(Sorted.begin(), Sorted.begin() + N / 2)) /
                2;
  double Spread = std::max(1.4826 * Deviation, Quartiles);
  return 1.2533 * Spread / std::sqrt(double(N)) / Median;
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
                               int64_t Gradients, int64_t OptimizerState,
                               int64_t Setup) {
  auto At = [&](Phase P) { return AtPeak[size_t(P)]; };
  RunResult::Breakdown B;
  int64_t Construction = At(Phase::Construction);
  int64_t Training = At(Phase::Backward) + At(Phase::Optimizer);
  B.Weights = std::min(Weights, Construction);
  // A dataset held in memory is its statement's; untracked is what no
  // statement before the loop made (static initialisers, LibTorch's own).
  B.Setup = std::clamp<int64_t>(Setup, 0, Construction - B.Weights);
  B.Untracked = Construction - B.Weights - B.Setup;
  B.Gradients = std::min(Gradients, Training);
  B.OptimizerState = std::min(OptimizerState, Training - B.Gradients);
  B.Temporaries = Training - B.Gradients - B.OptimizerState;
  B.Data = At(Phase::Data);
  B.Activations = At(Phase::Forward);
  return B;
}

void takeOutWorkspace(RunResult &Result, const WorkspaceBytes &W) {
  if (!W.Bytes)
    return;
  RunResult::Breakdown &M = Result.Memory;
  int64_t Forward = std::min(W.ByPhase[size_t(Phase::Forward)], M.Activations);
  int64_t Backward =
      std::min(W.ByPhase[size_t(Phase::Backward)], M.Temporaries);
  M.Activations -= Forward;
  M.Temporaries -= Backward;
  M.Workspace += Forward + Backward;
  int64_t Scoped = 0;
  RunResult::Layer *Unscoped = nullptr;
  for (RunResult::Layer &Layer : Result.Layers) {
    if (Layer.ScopeId < 0) {
      Unscoped = &Layer;
      continue;
    }
    if (Layer.ScopeId < MaxScopes) {
      Layer.ActivationBytes = std::max<int64_t>(
          0, Layer.ActivationBytes - W.ForwardByScope[size_t(Layer.ScopeId)]);
      Scoped += Layer.ActivationBytes;
    }
  }
  if (Unscoped)
    Unscoped->ActivationBytes = std::max<int64_t>(0, M.Activations - Scoped);
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
  std::fprintf(
      Out,
      "%s: {memory_total_bytes: %lld, memory_free_bytes: %lld, "
      "%s: %lld, allocator_peak_bytes: %lld, "
      "allocator_peak_reserved_bytes: %lld, "
      "allocator_reserved_bytes: %lld, host_peak_bytes: %lld, "
      "cupti: %s, kernels: %llu, dropped_records: %llu, "
      "%s: %s, tagged_peak_bytes: %lld, %s: %s, %s: ",
      key::Gpu, (long long)G.MemoryTotalBytes, (long long)G.MemoryFreeBytes,
      key::MemoryCapacityBytes, (long long)G.MemoryCapacityBytes,
      (long long)G.AllocatorPeakBytes, (long long)G.AllocatorPeakReservedBytes,
      (long long)G.AllocatorReservedBytes, (long long)G.HostPeakBytes,
      G.CuptiLoaded ? "true" : "false", (unsigned long long)G.Kernels,
      (unsigned long long)G.DroppedRecords, key::GpuMsSource,
      G.GpuMsSource.empty() ? nameOf(GpuTimeSource::None)
                            : G.GpuMsSource.c_str(),
      (long long)G.TaggedPeakBytes, key::Clock, G.Clock.c_str(), key::Note);
  writeQuoted(Out, G.Note);
  std::fprintf(Out, "}\n");
}

} // namespace

namespace {

const char *boolName(bool Value) { return Value ? "true" : "false"; }

void writeInteger(std::FILE *Out, const char *Key, long long Value) {
  std::fprintf(Out, "%s: %lld\n", Key, Value);
}

void writeBool(std::FILE *Out, const char *Key, bool Value) {
  std::fprintf(Out, "%s: %s\n", Key, boolName(Value));
}

void writeName(std::FILE *Out, const char *Key, const char *Name) {
  std::fprintf(Out, "%s: %s\n", Key, Name);
}

/// How long the run took and how far it got.
void writeProgress(std::FILE *Out, const RunResult &R) {
  writeName(Out, key::Mode, nameOf(R.Mode));
  writeName(Out, key::Stopped, nameOf(R.Stopped));
  writeBool(Out, key::EndedEarly, R.EndedEarly);
  writeInteger(Out, key::Warmup, R.Warmup);
  writeInteger(Out, key::IterationsAsked, R.IterationsAsked);
  writeInteger(Out, key::MinIterations, R.MinIterations);
  writeInteger(Out, key::IterationsReached, R.IterationsReached);
  if (R.LoopBegan)
    writeBool(Out, key::LoopBegan, true);
  writeInteger(Out, key::EpochEndIterations, R.EpochEndIterations);
  writeBool(Out, key::EveryIterationAnEpoch, R.EveryIterationAnEpoch);
  writeInteger(Out, key::EpochIterations, R.EpochIterations);
  writeInteger(Out, key::DatasetSize, R.DatasetSamples);
  writeInteger(Out, key::DatasetsGcd, R.DatasetsGcd);
}

void writeEnvironment(std::FILE *Out, const RunResult &R) {
  std::fprintf(Out, "%s: ", key::TorchVersion);
  writeQuoted(Out, R.TorchVersion);
  std::fprintf(Out, "\n");
  writeInteger(Out, key::Threads, R.Threads);
  writeBool(Out, key::CudnnBenchmark, R.CudnnBenchmark);
  writeBool(Out, key::Autocast, R.Autocast);
  if (R.ChannelsLast)
    writeBool(Out, key::ChannelsLast, true);
  if (!R.TrialNotApplied.empty()) {
    std::fprintf(Out, "%s: ", key::TrialNotApplied);
    writeQuoted(Out, R.TrialNotApplied);
    std::fprintf(Out, "\n");
  }
  std::fprintf(Out, "%s: {%s: %s, %s: ", key::Device, key::Type,
               R.DeviceType.c_str(), key::Name);
  writeQuoted(Out, R.DeviceName);
  std::fprintf(Out, ", %s: %s}\n", key::Cuda, nameOf(R.Cuda));
}

void writeTimes(std::FILE *Out, const RunResult &R) {
  const Summary &Ms = R.IterationMs;
  std::fprintf(Out, "%s: {%s: %.4f, %s: %.4f, %s: %.4f, %s: %.4f, %s: %.4f}\n",
               key::IterationMs, key::Median, Ms.Median, key::Mean, Ms.Mean,
               key::Stddev, Ms.Stddev, key::Min, Ms.Min, key::Max, Ms.Max);
  std::fprintf(Out, "%s: %.3f\n", key::Throughput, R.Throughput);
  // Timed in every run: two clock reads a sync.
  if (!R.HostSyncs.empty()) {
    std::fprintf(Out, "%s:\n", key::HostSyncs);
    for (const RunResult::HostSync &Sync : R.HostSyncs)
      std::fprintf(Out, "  - {%s: %d, %s: %.4f, %s: %.4f}\n", key::Sync,
                   Sync.Id, key::Calls, Sync.Calls, key::Ms, Sync.Ms);
  }
}

void writeList(std::FILE *Out, const char *Key,
               const std::vector<double> &Values) {
  std::fprintf(Out, "  %s: [", Key);
  for (size_t I = 0; I < Values.size(); ++I)
    std::fprintf(Out, "%s%.4f", I ? ", " : "", Values[I]);
  std::fprintf(Out, "]\n");
}

void writeEvaluation(std::FILE *Out, const RunResult::EvaluationPasses &E) {
  std::fprintf(Out, "%s:\n", key::Evaluation);
  writeList(Out, key::UnguardedMs, E.UnguardedMs);
  writeList(Out, key::GuardedMs, E.GuardedMs);
  std::fprintf(Out, "  %s: %lld\n  %s: %lld\n", key::UnguardedPeakBytes,
               static_cast<long long>(E.UnguardedPeakBytes),
               key::GuardedPeakBytes,
               static_cast<long long>(E.GuardedPeakBytes));
}

} // namespace

bool writeRunResult(const RunResult &R, const std::string &Path) {
  std::string Temp = Path + ".tmp";
  std::FILE *Out = std::fopen(Temp.c_str(), "w");
  if (!Out)
    return false;
  writeInteger(Out, key::SchemaVersion, 1);
  writeInteger(Out, key::BatchSize, R.BatchSize);
  std::fprintf(Out, "%s: {%s: %lld, %s: %d}\n", key::ObservedBatchSize,
               key::Size, static_cast<long long>(R.ObservedBatchSize),
               key::Scope, R.ObservedScope);
  writeBool(Out, key::OutOfMemory, R.OutOfMemory);
  writeInteger(Out, key::Iterations, R.Iterations);
  writeProgress(Out, R);
  writeEnvironment(Out, R);
  writeTimes(Out, R);
  writeInteger(Out, key::PeakBytes, R.PeakBytes);
  if (R.Mode == RunMode::Breakdown)
    writeBreakdown(Out, R);
  if (R.Gpu.Used)
    writeGpu(Out, R.Gpu);
  if (!R.Evaluation.UnguardedMs.empty() || !R.Evaluation.GuardedMs.empty())
    writeEvaluation(Out, R.Evaluation);
  bool Ok = std::fflush(Out) == 0 && !std::ferror(Out);
  Ok = std::fclose(Out) == 0 && Ok;
  return Ok && std::rename(Temp.c_str(), Path.c_str()) == 0;
}

namespace {

/// What only a breakdown run measures: phases, kinds, layers.
void writeBreakdown(std::FILE *Out, const RunResult &R) {
  std::fprintf(Out, "%s:\n", key::PeakBytesByPhase);
  for (Phase P : allOf<Phase>())
    std::fprintf(Out, "  %s: %lld\n", nameOf(P),
                 static_cast<long long>(R.PeakByPhase[size_t(P)]));
  if (R.HasMemoryBreakdown) {
    const RunResult::Breakdown &M = R.Memory;
    const int64_t Bytes[] = {M.Weights,     M.Gradients, M.OptimizerState,
                             M.Activations, M.Data,      M.Temporaries,
                             M.Setup,       M.Untracked, M.Workspace};
    static_assert(std::size(Bytes) == NumMemoryKinds);
    std::fprintf(Out, "%s: {", key::Memory);
    for (MemoryKind Kind : allOf<MemoryKind>())
      if (Kind != MemoryKind::Workspace || M.Workspace) // CUDA only
        std::fprintf(Out, "%s%s: %lld", Kind == MemoryKind::Weights ? "" : ", ",
                     nameOf(Kind), static_cast<long long>(Bytes[size_t(Kind)]));
    std::fprintf(Out, "}\n");
    std::fprintf(Out, "%s:%s\n", key::SetupStatements,
                 R.SetupStatements.empty() ? " []" : "");
    for (const auto &[Id, Bytes] : R.SetupStatements)
      std::fprintf(Out, "  - {%s: %d, %s: %lld}\n", key::Statement, Id,
                   key::Bytes, static_cast<long long>(Bytes));
  }
  double Phases = 0;
  for (double Ms : R.TimeSplitMs)
    Phases += Ms;
  const double Split[] = {R.TimeSplitMs[size_t(Phase::Data)],
                          R.TimeSplitMs[size_t(Phase::Forward)],
                          R.TimeSplitMs[size_t(Phase::Backward)],
                          R.TimeSplitMs[size_t(Phase::Optimizer)],
                          std::max(0.0, R.IterationMs.Mean - Phases)};
  static_assert(std::size(Split) == NumTimeParts);
  std::fprintf(Out, "%s: {", key::TimeSplitMs);
  for (TimePart Part : allOf<TimePart>())
    std::fprintf(Out, "%s%s: %.4f", Part == TimePart::Data ? "" : ", ",
                 nameOf(Part), Split[size_t(Part)]);
  std::fprintf(Out, "}\n");
  std::fprintf(Out, "%s:%s\n", key::Layers, R.Layers.empty() ? " []" : "");
  for (const RunResult::Layer &Layer : R.Layers) {
    std::fprintf(Out, "  - {%s: %d, %s: %.4f, %s: %.4f, %s: %lld", key::Scope,
                 Layer.ScopeId, key::ForwardMs, Layer.ForwardMs,
                 key::BackwardMs, Layer.BackwardMs, key::ActivationBytes,
                 static_cast<long long>(Layer.ActivationBytes));
    if (R.HasMemoryBreakdown)
      std::fprintf(Out, ", %s: %lld", key::WeightBytes,
                   static_cast<long long>(Layer.WeightBytes));
    if (Layer.GpuMs >= 0) // CUDA runs only
      std::fprintf(Out, ", %s: %.4f", key::GpuMs, Layer.GpuMs);
    std::fprintf(Out, "}\n");
  }
}

} // namespace

} // namespace skyline::rt
