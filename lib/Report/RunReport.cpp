//===- RunReport.cpp - The report: runs, fits, predictions ----------------===//

#include "skyline/RunReport.h"

#include "skyline/Experiments.h"
#include "skyline/InputFile.h"
#include "skyline/MeasuredRunYAML.h"
#include "skyline/OtherWork.h"
#include "skyline/ProgramModelYAML.h"
#include "skyline/TerminalText.h"
#include "skyline/Units.h"
#include "skyline/YamlFields.h"

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

void nameObservedCall(Measurement &M, const std::vector<ScopeEntry> &Scopes) {
  if (!M.AtOwnBatchSize)
    return;
  for (const MeasuredRun &Run : M.Runs) {
    if (Run.ObservedScope < 0 || size_t(Run.ObservedScope) >= Scopes.size() ||
        Scopes[Run.ObservedScope].Id != Run.ObservedScope)
      continue;
    const ScopeEntry &Scope = Scopes[Run.ObservedScope];
    M.ObservedBy = "'" + Scope.Module + "' (" + Scope.File + ":" +
                   std::to_string(Scope.Line) + ")";
    return;
  }
}

void nameSetupStatements(Measurement &M, const std::vector<SetupEntry> &Table) {
  for (MeasuredRun &Run : M.Runs)
    llvm::erase_if(Run.SetupStatements, [&](SetupMeasure &Setup) {
      if (Setup.Statement < 0 || size_t(Setup.Statement) >= Table.size() ||
          Table[Setup.Statement].Id != Setup.Statement)
        return true;
      const SetupEntry &Entry = Table[Setup.Statement];
      Setup.File = Entry.File;
      Setup.Line = Entry.Line;
      Setup.Text = Entry.Text;
      return false;
    });
}

void nameHostSyncs(Measurement &M, const std::vector<HostSyncEntry> &Table) {
  for (MeasuredRun &Run : M.Runs)
    llvm::erase_if(Run.HostSyncs, [&](HostSyncMeasure &Sync) {
      if (Sync.Sync < 0 || size_t(Sync.Sync) >= Table.size() ||
          Table[Sync.Sync].Id != Sync.Sync)
        return true;
      const HostSyncEntry &Entry = Table[Sync.Sync];
      Sync.File = Entry.File;
      Sync.Line = Entry.Line;
      Sync.Kind = Entry.Kind;
      Sync.Text = Entry.Text;
      return false;
    });
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

/// The setup kind by statement: what the program made before training and
/// the peak still held, by the line that made it (the largest five).
void printSetupStatements(const MeasuredRun &Run, llvm::raw_ostream &OS) {
  if (Run.SetupStatements.empty())
    return;
  OS << "made before training and held at the peak:";
  for (size_t I = 0; I < Run.SetupStatements.size() && I < 5; ++I) {
    const SetupMeasure &Setup = Run.SetupStatements[I];
    OS << (I ? ", " : " ") << formatBytes(Setup.Bytes) << " by "
       << escapeForTerminal(Setup.File) << ":" << Setup.Line << " '"
       << escapeForTerminal(Setup.Text) << "'";
  }
  if (Run.SetupStatements.size() > 5)
    OS << " and " << Run.SetupStatements.size() - 5 << " more statements";
  OS << "\n";
}

/// The host syncs' ms per iteration, most first, with their share of the
/// mean iteration (skyline-host-sync's figure).
void printHostSyncs(const MeasuredRun &Run, llvm::raw_ostream &OS) {
  std::vector<const HostSyncMeasure *> Syncs;
  for (const HostSyncMeasure &Sync : Run.HostSyncs)
    if (!Sync.File.empty())
      Syncs.push_back(&Sync);
  if (Syncs.empty() || Run.IterationMs.Mean <= 0)
    return;
  llvm::stable_sort(Syncs, [](const auto *A, const auto *B) {
    return A->Ms > B->Ms;
  });
  OS << "host syncs at batch size " << Run.BatchSize
     << " (ms per iteration, share of the mean):";
  for (size_t I = 0; I < Syncs.size() && I < 5; ++I)
    OS << (I ? ", " : " ") << "'" << escapeForTerminal(Syncs[I]->Text)
       << "' at " << escapeForTerminal(Syncs[I]->File) << ":"
       << Syncs[I]->Line
       << llvm::format(" %.3f ms (%s)", Syncs[I]->Ms,
                       formatShare(Syncs[I]->Ms / Run.IterationMs.Mean).c_str());
  if (Syncs.size() > 5)
    OS << " and " << Syncs.size() - 5 << " more";
  OS << "\n";
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
       << (Layer.Name.empty() ? "(unscoped)" : escapeForTerminal(Layer.Name));
    if (!Layer.File.empty())
      OS << " (" << escapeForTerminal(Layer.File) << ":" << Layer.Line << ")";
    OS << "\n";
  }
}

} // namespace

void printRunTable(const Measurement &M, int64_t DeclaredBatchSize,
                   llvm::raw_ostream &OS) {
  OS << "device: " << nameOf(M.Device);
  if (!M.DeviceName.empty() &&
      !llvm::StringRef(M.DeviceName).equals_insensitive(nameOf(M.Device)))
    OS << " (" << escapeForTerminal(M.DeviceName) << ")";
  if (M.Threads > 0)
    OS << ", " << M.Threads << (M.Threads == 1 ? " thread" : " threads");
  if (!M.MallocThresholdsUsed.empty())
    OS << ", malloc thresholds " << escapeForTerminal(M.MallocThresholdsUsed);
  OS << ", memory capacity " << formatBytes(M.MemoryCapacityBytes) << "\n";
  // The times hold for the program run the same way, which is up to the user.
  if (!M.GlibcTunables.empty())
    OS << "malloc: the runs had GLIBC_TUNABLES="
       << escapeForTerminal(M.GlibcTunables)
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
    // Other work held the CPUs during the kept run: its time is suspect.
    if (Run.OtherWorkCores >= BusyCoresLimit)
      OS << llvm::formatv("  other work held {0:f1} cores", Run.OtherWorkCores);
    OS << "\n";
  }
  if (const MeasuredRun *Run = shownRun(M, DeclaredBatchSize)) {
    if (!Run->Memory.empty()) {
      OS << "peak memory at batch size " << Run->BatchSize << ":";
      for (const auto &[Kind, Bytes] : Run->Memory)
        OS << " " << nameOf(Kind) << " " << formatBytes(Bytes);
      OS << "\n";
      printSetupStatements(*Run, OS);
    }
    if (!Run->TimeSplitMs.empty()) {
      OS << "iteration time at batch size " << Run->BatchSize << ":";
      for (const auto &[Part, Ms] : Run->TimeSplitMs)
        OS << llvm::format(" %s %.2f ms", nameOf(Part), Ms);
      OS << "\n";
    }
    printHostSyncs(*Run, OS);
    printLayers(*Run, OS);
  }
  for (const std::string &Problem : M.Problems)
    OS << "skyline-check: warning: " << Problem << "\n";
}

namespace {

/// Past this an interval's end says nothing (an extrapolation far past the
/// sizes measured): it is printed as unbounded.
constexpr double UnboundedAbove = 1e15;

/// "(6.20..7.40)": a 90% interval in a table or a line.
std::string bracket(Interval Range, const char *Format) {
  char Low[32], High[32];
  std::snprintf(Low, sizeof(Low), Format, Range.Low);
  std::snprintf(High, sizeof(High), Format, Range.High);
  bool Unbounded = !(Range.High < UnboundedAbove);
  return std::string("(") + Low + ".." + (Unbounded ? "unbounded" : High) + ")";
}

/// printf's format for a time in ms: three significant digits at least (a
/// 0.067 ms iteration is not "0.07"), two decimals at least.
int msDecimals(double Ms) {
  return Ms > 0 ? std::clamp(2 - int(std::floor(std::log10(Ms))), 2, 9) : 2;
}
std::string msFormat(double Ms) {
  return "%." + std::to_string(msDecimals(Ms)) + "f";
}

std::string bracketBytes(Interval Range) {
  bool Unbounded = !(Range.High < UnboundedAbove);
  return "(" + formatBytes(int64_t(std::max(0.0, Range.Low))) + ".." +
         (Unbounded ? std::string("unbounded")
                    : formatBytes(int64_t(Range.High))) +
         ")";
}

} // namespace

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
    OS << "predicted, with 90% intervals:\n"
       << " batch size    iteration ms                 samples/s"
          "                    peak memory\n";
    for (const Prediction &P : A.Predictions)
      OS << llvm::format("%11lld %9.2f %-17s %10.1f %-21s %10s %s",
                         (long long)P.BatchSize, P.IterationMs,
                         bracket(P.IterationMsRange, "%.2f").c_str(),
                         P.Throughput,
                         bracket(P.ThroughputRange, "%.1f").c_str(),
                         formatBytes(P.PeakBytes).c_str(),
                         bracketBytes(P.PeakBytesRange).c_str())
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
       << A.CurrentBatchSize << "; 90% interval "
       << formatShareRange(A.Suggested->GainRange.Low,
                           A.Suggested->GainRange.High)
       << (A.Suggested->MeasuredOnly
               ? "; measured: the time could not be modelled"
               : "")
       << ")\n";
  else
    OS << "suggested batch size: none (" << A.NoSuggestionReason << ")\n";
}

void printOwnBatchSize(const Measurement &M, const Analysis &A,
                       llvm::raw_ostream &OS) {
  OS << "measured at the program's own batch size";
  if (A.OneSize) {
    const Prediction &P = *A.OneSize;
    OS << ", " << P.BatchSize << " (observed: the first dimension of what "
       << (M.ObservedBy.empty() ? std::string("its first module call")
                                : escapeForTerminal(M.ObservedBy))
       << " returned each iteration)";
    std::string Ms = msFormat(P.IterationMs);
    OS << ":\n  iteration " << llvm::format(Ms.c_str(), P.IterationMs) << " ms "
       << bracket(P.IterationMsRange, Ms.c_str())
       << llvm::formatv(", {0:F1} samples/s {1}, peak memory {2} (90% "
                        "intervals of a new run)\n",
                        P.Throughput, bracket(P.ThroughputRange, "%.1f"),
                        formatBytes(P.PeakBytes));
  } else {
    OS << ": nothing ran its iterations to give its figures\n";
  }
  OS << "other batch sizes were not predicted: the program's batch size is "
        "not a constant skyline-check can change, so only its own size ran; "
        "name the variable, field or macro that holds it with "
        "--batch-size-var=NAME, or change the argument, configuration or "
        "environment variable the program reads it from (the runs pass "
        "--run-arg and the environment on as given)\n";
}

void printWhatIf(const Analysis &A, int64_t BatchSize, llvm::raw_ostream &OS) {
  std::optional<Prediction> P = predictAt(A, BatchSize);
  if (!P) {
    OS << "what if batch size " << BatchSize << ": cannot predict: "
       << (!A.TimeProblem.empty() ? A.TimeProblem : A.MemoryProblem) << "\n";
    return;
  }
  int Decimals = msDecimals(P->IterationMs);
  std::string MsFormat = msFormat(P->IterationMs);
  OS << llvm::formatv(
      "what if batch size {0}: iteration {1} ms {2}, {3:F1} samples/s {4}, "
      "peak memory {5} {6} ({7}){8}\n",
      BatchSize, llvm::format("%.*f", Decimals, P->IterationMs),
      bracket(P->IterationMsRange, MsFormat.c_str()), P->Throughput,
      bracket(P->ThroughputRange, "%.1f"), formatBytes(P->PeakBytes),
      bracketBytes(P->PeakBytesRange),
      P->Fits ? "fits" : "does not fit under " + formatBytes(A.UsableBytes),
      P->Extrapolated ? ", extrapolated outside the sizes measured" : "");
}

//===----------------------------------------------------------------------===//
// YAML
//===----------------------------------------------------------------------===//

namespace {

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
  auto Range = [&](const char *Key, Interval R) {
    Out << YAML::Key << Key << YAML::Value << YAML::Flow << YAML::BeginSeq
        << R.Low << R.High << YAML::EndSeq;
  };
  Range("iteration_ms_90", P.IterationMsRange);
  Range("throughput_90", P.ThroughputRange);
  Range("peak_bytes_90", P.PeakBytesRange);
  Out << YAML::EndMap;
}

void emitUncertainty(YAML::Emitter &Out, const char *Key,
                     const TimeUncertainty &U) {
  Out << YAML::Key << Key << YAML::Value << YAML::Flow << YAML::BeginMap;
  Out << YAML::Key << "run_spread" << YAML::Value << U.RunSigma;
  Out << YAML::Key << "degrees_of_freedom" << YAML::Value << U.Dof;
  Out << YAML::Key << "curvature" << YAML::Value << U.Curvature;
  Out << YAML::Key << "curvature_points" << YAML::Value << U.CurvaturePoints;
  Out << YAML::Key << "quantile" << YAML::Value << U.Quantile;
  Out << YAML::EndMap;
}

void emitAnalysis(YAML::Emitter &Out, const Analysis &A) {
  Out << YAML::Key << "fits" << YAML::Value << YAML::BeginMap;
  emitFit(Out, "iteration_ms", A.IterationMs, A.TimeProblem);
  emitFit(Out, "peak_bytes", A.PeakBytes, A.MemoryProblem);
  Out << YAML::EndMap;
  Out << YAML::Key << "uncertainty" << YAML::Value << YAML::BeginMap;
  emitUncertainty(Out, "iteration_ms", A.Time);
  emitUncertainty(Out, "peak_bytes", A.Memory);
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
    Out << YAML::Key << "gain_90" << YAML::Value << YAML::Flow << YAML::BeginSeq
        << A.Suggested->GainRange.Low << A.Suggested->GainRange.High
        << YAML::EndSeq;
    Out << YAML::Key << "measured_only" << YAML::Value
        << A.Suggested->MeasuredOnly;
    Out << YAML::Key << "predicted" << YAML::Value;
    emitPrediction(Out, A.Suggested->At);
    Out << YAML::EndMap;
  } else {
    Out << YAML::BeginMap << YAML::Key << "batch_size" << YAML::Value
        << YAML::Null << YAML::Key << "reason" << YAML::Value
        << A.NoSuggestionReason;
    // The pick whose interval reached below --min-gain: what more runs
    // would have decided.
    if (A.Unsure)
      Out << YAML::Key << "unsure" << YAML::Value << YAML::Flow
          << YAML::BeginMap << YAML::Key << "batch_size" << YAML::Value
          << A.Unsure->BatchSize << YAML::Key << "gain" << YAML::Value
          << A.Unsure->Gain << YAML::Key << "gain_90" << YAML::Value
          << YAML::Flow << YAML::BeginSeq << A.Unsure->GainRange.Low
          << A.Unsure->GainRange.High << YAML::EndSeq << YAML::EndMap;
    Out << YAML::EndMap;
  }
}

/// The experiments' trials (docs/report.md, "experiments"): what ran, and
/// the verdict against the baseline in the suggestion's noise model.
void emitTrials(YAML::Emitter &Out, const Measurement &M) {
  Out << YAML::Key << "experiments" << YAML::Value << YAML::BeginSeq;
  for (const TrialRun &Trial : M.Trials) {
    TrialEffect Effect = trialEffect(M, trialBaseline(M, Trial), Trial);
    Out << YAML::BeginMap;
    Out << YAML::Key << "experiment" << YAML::Value << Trial.Experiment;
    Out << YAML::Key << "setting" << YAML::Value << Trial.Setting;
    Out << YAML::Key << "value" << YAML::Value << Trial.Value;
    if (Trial.IntraOpThreads > 0)
      Out << YAML::Key << "intra_op_threads" << YAML::Value
          << Trial.IntraOpThreads;
    Out << YAML::Key << "batch_size" << YAML::Value << Trial.BatchSize;
    Out << YAML::Key << "verdict" << YAML::Value << verdictName(Effect.Verdict);
    if (!Trial.NotTried.empty()) {
      Out << YAML::Key << "not_tried" << YAML::Value << Trial.NotTried;
    } else if (!Trial.Problem.empty()) {
      Out << YAML::Key << "problem" << YAML::Value << Trial.Problem;
    } else {
      Out << YAML::Key << "iteration_ms" << YAML::Value << Trial.IterationMs;
      Out << YAML::Key << "timing_run_medians" << YAML::Value << YAML::Flow
          << Trial.TimingRunMedians;
      Out << YAML::Key << "peak_bytes" << YAML::Value << Trial.PeakBytes;
    }
    if (Trial.paired()) {
      Out << YAML::Key << "baseline_pass_ms" << YAML::Value << YAML::Flow
          << Trial.BaselineSamplesMs;
      Out << YAML::Key << "trial_pass_ms" << YAML::Value << YAML::Flow
          << Trial.TrialSamplesMs;
      Out << YAML::Key << "baseline_peak_bytes" << YAML::Value
          << Trial.BaselinePeakBytes;
    }
    if (Effect.Verdict != TrialVerdict::Failed &&
        Effect.Verdict != TrialVerdict::NotTried) {
      Out << YAML::Key << "baseline_ms" << YAML::Value << Effect.BaselineMs;
      Out << YAML::Key << "gain" << YAML::Value << Effect.Gain;
      Out << YAML::Key << "gain_90" << YAML::Value << YAML::Flow
          << YAML::BeginSeq << Effect.Range.Low << Effect.Range.High
          << YAML::EndSeq;
    }
    if (Trial.paired() && Effect.Verdict != TrialVerdict::Failed)
      Out << YAML::Key << "memory_saving" << YAML::Value
          << Effect.MemorySaving;
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq;
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
  Out << YAML::Key << "type" << YAML::Value << nameOf(M.Device);
  Out << YAML::Key << "name" << YAML::Value << M.DeviceName;
  Out << YAML::Key << "memory_capacity_bytes" << YAML::Value
      << M.MemoryCapacityBytes;
  Out << YAML::EndMap;
  Out << YAML::Key << "time" << YAML::Value << YAML::BeginMap;
  Out << YAML::Key << "build_seconds" << YAML::Value << Report.BuildSeconds;
  Out << YAML::Key << "run_seconds" << YAML::Value << totalRunSeconds(M);
  Out << YAML::Key << "time_budget_seconds" << YAML::Value
      << M.TimeBudgetSeconds;
  Out << YAML::Key << "time_budget_spent" << YAML::Value << M.TimeBudgetSpent
      << YAML::EndMap;
  if (const std::optional<MeasurementKey> &Key = Report.Key) {
    Out << YAML::Key << "measured_with" << YAML::Value << YAML::BeginMap;
    Out << YAML::Key << "sources" << YAML::Value << Key->Sources;
    Out << YAML::Key << "compile_flags" << YAML::Value << Key->Flags;
    Out << YAML::Key << "libtorch" << YAML::Value << Key->LibTorch;
    Out << YAML::Key << "device" << YAML::Value << Key->Device;
    Out << YAML::EndMap;
  }
  if (M.AtOwnBatchSize) {
    Out << YAML::Key << "own_batch_size" << YAML::Value << true;
    if (!M.ObservedBy.empty())
      Out << YAML::Key << "observed_by" << YAML::Value << M.ObservedBy;
  }
  if (M.LargerThanTheData)
    Out << YAML::Key << "larger_than_the_data" << YAML::Value
        << M.LargerThanTheData;
  if (M.FirstFailure)
    Out << YAML::Key << "first_failure" << YAML::Value << M.FirstFailure;
  Out << YAML::Key << "runs" << YAML::Value << YAML::BeginSeq;
  for (const MeasuredRun &Run : M.Runs)
    emitReportRun(Out, Run);
  Out << YAML::EndSeq;
  Out << YAML::Key << "problems" << YAML::Value << YAML::BeginSeq;
  for (const std::string &Problem : M.Problems)
    Out << Problem;
  Out << YAML::EndSeq;
  if (!M.Trials.empty())
    emitTrials(Out, M);
  if (Model)
    emitAnalysis(Out, *Model);
  Out << YAML::Key << "program" << YAML::Value;
  emitProgramModel(Out, Report.Program);
  Out << YAML::EndMap;
  return std::string(Out.c_str()) + "\n";
}

namespace {

TrialRun readTrial(const YamlFields &Node) {
  TrialRun Trial;
  Trial.Experiment = Node.get<std::string>("experiment");
  Trial.Setting = Node.get<std::string>("setting");
  Trial.Value = Node.number<int64_t>("value", Least::Zero);
  Trial.IntraOpThreads = Node.number<int64_t>("intra_op_threads", Least::Zero);
  Trial.BatchSize = Node.number<int64_t>("batch_size", Least::Zero);
  Trial.Problem = Node.get<std::string>("problem");
  Trial.NotTried = Node.get<std::string>("not_tried");
  Trial.IterationMs = Node.number<double>("iteration_ms", Least::Zero);
  Trial.PeakBytes = Node.number<int64_t>("peak_bytes", Least::Zero);
  Node.forEach("timing_run_medians",
               [&](const YAML::Node &Ms, const std::string &Key) {
                 Trial.TimingRunMedians.push_back(
                     convertValue<double>(Ms, Key));
               });
  auto Passes = [&](const char *Name, std::vector<double> &Into) {
    Node.forEach(Name, [&](const YAML::Node &Ms, const std::string &Key) {
      Into.push_back(checkedNumber<double>(Ms, Key, Least::Zero));
    });
  };
  Passes("baseline_pass_ms", Trial.BaselineSamplesMs);
  Passes("trial_pass_ms", Trial.TrialSamplesMs);
  Trial.BaselinePeakBytes =
      Node.number<int64_t>("baseline_peak_bytes", Least::Zero);
  return Trial;
}

llvm::Error notAReport(llvm::StringRef Path, const std::string &Why) {
  return llvm::createStringError(
      std::errc::invalid_argument,
      "'%s' is not a skyline-check report: %s; write one with "
      "--report=FILE",
      Path.str().c_str(), Why.c_str());
}

void readEnvironment(const YamlFields &Root, SavedReport &Report) {
  Measurement &M = Report.Measured;
  Report.SkylineVersion = Root.get<std::string>("skyline_version");
  YamlFields Device = Root.sub("device");
  M.Device = optionalName<DeviceType>(Device, "type").value_or(DeviceType::CPU);
  M.DeviceName = Device.get<std::string>("name");
  M.MemoryCapacityBytes =
      Device.number<int64_t>("memory_capacity_bytes", Least::AboveZero);
  YamlFields Environment = Root.sub("environment");
  M.TorchVersion = Environment.get<std::string>("torch_version");
  M.Threads = Environment.number<int>("threads", Least::Zero);
  M.MallocThresholdsUsed = Environment.get<std::string>("malloc_thresholds");
  M.GlibcTunables = Environment.get<std::string>("glibc_tunables");
  YamlFields Time = Root.sub("time");
  Report.BuildSeconds = Time.number<double>("build_seconds", Least::Zero);
  M.RunSeconds = Time.number<double>("run_seconds", Least::Zero);
  M.TimeBudgetSeconds = Time.number<double>("time_budget_seconds", Least::Zero);
  M.TimeBudgetSpent = Time.get<bool>("time_budget_spent");
  if (Root["measured_with"]) {
    YamlFields With = Root.sub("measured_with");
    MeasurementKey Key;
    Key.Sources = With.get<std::string>("sources");
    Key.Flags = With.get<std::string>("compile_flags");
    Key.LibTorch = With.get<std::string>("libtorch");
    Key.Device = With.get<std::string>("device");
    for (auto [Name, Value] :
         {std::pair<const char *, const std::string *>{"sources", &Key.Sources},
          {"compile_flags", &Key.Flags},
          {"libtorch", &Key.LibTorch},
          {"device", &Key.Device}})
      if (Value->empty())
        throw BadValue{With.key(Name), "is missing; it must be a string"};
    Report.Key = std::move(Key);
  }
  M.AtOwnBatchSize = Root.get<bool>("own_batch_size");
  M.ObservedBy = Root.get<std::string>("observed_by");
  M.LargerThanTheData =
      Root.number<int64_t>("larger_than_the_data", Least::Zero);
  M.FirstFailure = Root.number<int64_t>("first_failure", Least::Zero);
}

/// The report's content once it parsed as YAML; BadValue where a value is
/// not one a report holds.
llvm::Expected<SavedReport> readReportNode(const YAML::Node &Node,
                                           llvm::StringRef Path) {
  if (!Node.IsMap() || !Node["schema_version"] || !Node["runs"])
    return notAReport(Path, "no schema_version or runs");
  YamlFields Root(Node, "");
  SavedReport Report;
  Report.SchemaVersion = Root.get<int>("schema_version");
  if (Report.SchemaVersion < 1 || Report.SchemaVersion > ReportSchemaVersion)
    return notAReport(Path, "schema_version " +
                                std::to_string(Report.SchemaVersion) +
                                " is not one this skyline-check reads (1 to " +
                                std::to_string(ReportSchemaVersion) + ")");
  readEnvironment(Root, Report);
  Measurement &M = Report.Measured;
  Root.forEach("runs", [&](const YAML::Node &Run, const std::string &Key) {
    M.Runs.push_back(readReportRun(YamlFields(Run, Key)));
  });
  Root.forEach("problems",
               [&](const YAML::Node &Problem, const std::string &Key) {
                 M.Problems.push_back(convertValue<std::string>(Problem, Key));
               });
  Root.forEach("experiments",
               [&](const YAML::Node &Trial, const std::string &Key) {
                 M.Trials.push_back(readTrial(YamlFields(Trial, Key)));
               });
  if (const YAML::Node Program = Root["program"]) {
    std::string Error;
    std::optional<ProgramModel> Model = programModelFromNode(Program, Error);
    if (!Model)
      return notAReport(Path, "its program model: " + Error);
    Report.Program = std::move(*Model);
  } else if (Root["batch_size"]) { // schema 1: the batch size alone
    YamlFields Saved = Root.sub("batch_size");
    BatchSizeSite Site;
    Site.Name = Saved.get<std::string>("name");
    Site.Value = Saved.number<int64_t>("value", Least::One);
    Site.Literal.File = Saved.get<std::string>("file");
    Site.Literal.Line = Saved.get<unsigned>("line");
    Report.Program.BatchSize = Site;
  }
  return std::move(Report);
}

} // namespace

llvm::Expected<SavedReport> readReport(llvm::StringRef Path,
                                       llvm::StringRef What) {
  auto Root = loadYamlInput(Path, What, ReportLimits);
  if (!Root)
    return Root.takeError();
  try {
    return readReportNode(*Root, Path);
  } catch (const BadValue &Bad) {
    return llvm::createStringError(
        std::errc::invalid_argument,
        "%s '%s': %s %s; write the report again with --report=FILE",
        What.str().c_str(), Path.str().c_str(), Bad.Key.c_str(),
        Bad.Problem.c_str());
  } catch (const YAML::Exception &E) {
    return notAReport(Path, E.what());
  } catch (const std::exception &E) {
    return notAReport(Path, E.what());
  }
}

} // namespace skyline
