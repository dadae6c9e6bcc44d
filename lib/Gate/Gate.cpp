//===- Gate.cpp - CI's regression gate against a baseline report ----------===//

#include "skyline/Gate.h"

#include "skyline/Model.h"
#include "skyline/Rules.h"
#include "skyline/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>

namespace skyline {
namespace {

/// A time the gate can compare: a NaN, an infinity or a time of zero from a
/// hand-edited or broken report would compare as "no drop" and pass.
bool hasValidTime(const MeasuredRun &Run) {
  return Run.Iterations > 0 && std::isfinite(Run.IterationMs.Median) &&
         Run.IterationMs.Median > 0 && std::isfinite(Run.IterationMs.Stddev) &&
         Run.IterationMs.Stddev >= 0;
}

/// The runs that fit at BatchSize, in the order they ran.
std::vector<const MeasuredRun *> runsAt(const Measurement &M,
                                        int64_t BatchSize) {
  std::vector<const MeasuredRun *> Runs;
  for (const MeasuredRun &Run : M.Runs)
    if (Run.BatchSize == BatchSize && !Run.OutOfMemory && hasValidTime(Run))
      Runs.push_back(&Run);
  return Runs;
}

bool ranOutOfMemoryAt(const Measurement &M, int64_t BatchSize) {
  return std::any_of(M.Runs.begin(), M.Runs.end(), [&](const MeasuredRun &Run) {
    return Run.BatchSize == BatchSize && Run.OutOfMemory;
  });
}

/// The fastest run: interference from other work only ever slows a run.
const MeasuredRun *fastest(const std::vector<const MeasuredRun *> &Runs) {
  const MeasuredRun *Best = nullptr;
  for (const MeasuredRun *Run : Runs)
    if (!Best || Run->IterationMs.Median < Best->IterationMs.Median)
      Best = Run;
  return Best;
}

/// Baseline median over current median, less 1: negative is slower.
struct ThroughputComparison {
  double Change = 0;
  /// The change's 90% half-width, as a share: the model's noise (Model.h,
  /// runSpread) of each side's timing runs at the size.
  double Noise = 0;
};

/// The timing runs behind a size's figure: every run's, at least one each.
unsigned timingRuns(llvm::ArrayRef<const MeasuredRun *> Runs) {
  unsigned Count = 0;
  for (const MeasuredRun *Run : Runs)
    Count += std::max<unsigned>(1, unsigned(Run->TimingRunMedians.size()));
  return Count;
}

ThroughputComparison compareThroughput(const Measurement &Baseline,
                                       const MeasuredRun &Then,
                                       const Measurement &Current,
                                       llvm::ArrayRef<const MeasuredRun *> Now) {
  ThroughputComparison C;
  const MeasuredRun &Best = *fastest(Now);
  C.Change = Then.IterationMs.Median / Best.IterationMs.Median - 1;
  TimeUncertainty B = runSpread(Baseline), N = runSpread(Current);
  double Sigma = std::sqrt(B.RunSigma * B.RunSigma / timingRuns({&Then}) +
                           N.RunSigma * N.RunSigma / timingRuns(Now));
  C.Noise = 1 - std::exp(-studentT90(B.Dof + N.Dof) * Sigma);
  return C;
}

/// From the median, the figure the gate compares.
double samplesPerSecond(const MeasuredRun &Run) {
  return double(Run.BatchSize) / Run.IterationMs.Median * 1000;
}

bool isThroughputDrop(const ThroughputComparison &C,
                      const GateOptions &Options) {
  return -C.Change > Options.MaxThroughputDrop && -C.Change > C.Noise;
}

Finding regression(llvm::StringRef Rule, const SourceSpan &At,
                   std::string Message) {
  Finding F;
  F.Rule = Rule.str();
  F.Level = DiagLevel::Error;
  F.At = At;
  F.Message = std::move(Message);
  return F;
}

/// At: code scanning rejects a SARIF result without a location, so even the
/// environment's warnings point at the batch-size literal.
void checkEnvironment(const Measurement &Baseline, const Measurement &Current,
                      const SourceSpan &At, GateVerdict &Verdict) {
  auto Mismatch = [&](const char *What, const std::string &Then,
                      const std::string &Now) {
    if (Then.empty() || Now.empty() || Then == Now)
      return;
    Finding F;
    F.Rule = rules::baselineEnvironment().Id.str();
    F.Level = DiagLevel::Warning;
    F.At = At;
    F.Message =
        llvm::formatv(
            "the baseline ran with {0} {1}, this run with {2}: the comparison "
            "may not be fair",
            What, Then, Now)
            .str();
    Verdict.Findings.push_back(std::move(F));
  };
  Mismatch("LibTorch", Baseline.TorchVersion, Current.TorchVersion);
  Mismatch("device", nameOf(Baseline.Device), nameOf(Current.Device));
  Mismatch("device name", Baseline.DeviceName, Current.DeviceName);
  Mismatch("threads", Baseline.Threads ? std::to_string(Baseline.Threads) : "",
           Current.Threads ? std::to_string(Current.Threads) : "");
  Mismatch("malloc thresholds", Baseline.MallocThresholdsUsed,
           Current.MallocThresholdsUsed);
  Mismatch("memory capacity", std::to_string(Baseline.MemoryCapacityBytes),
           std::to_string(Current.MemoryCapacityBytes));
}

} // namespace

std::optional<std::string> whyAnotherProgram(const ProgramModel &Baseline,
                                             const ProgramModel &Current) {
  if (Baseline.Sources.empty() || Current.Sources.empty())
    return std::nullopt;
  // Paths differ between checkouts and machines; file names do not.
  auto Names = [](const ProgramModel &Program) {
    std::vector<std::string> Result;
    for (const std::string &Source : Program.Sources)
      Result.push_back(llvm::sys::path::filename(Source).str());
    return Result;
  };
  std::vector<std::string> Then = Names(Baseline), Now = Names(Current);
  for (const std::string &Name : Now)
    if (llvm::is_contained(Then, Name))
      return std::nullopt;
  return "the baseline describes another program (its sources: " +
         llvm::join(Then, ", ") + "; this run's: " + llvm::join(Now, ", ") +
         ")";
}

void compareExperiments(const Measurement &Baseline, const Measurement &Current,
                        GateVerdict &Verdict) {
  auto Same = [](const TrialRun &A, const TrialRun &B) {
    return A.Experiment == B.Experiment && A.Value == B.Value &&
           A.IntraOpThreads == B.IntraOpThreads;
  };
  // A trial listed as not tried (a GPU experiment on a CPU run) ran in
  // neither: nothing to compare, and nothing missing.
  for (const TrialRun &Now : Current.Trials) {
    if (!Now.NotTried.empty())
      continue;
    const TrialRun *Then = nullptr;
    for (const TrialRun &Candidate : Baseline.Trials)
      if (Same(Candidate, Now) && Candidate.NotTried.empty())
        Then = &Candidate;
    if (!Then) {
      Verdict.ExperimentsNotCompared.push_back(
          Now.Experiment + " (" + Now.Setting +
          "): the baseline did not try it");
      continue;
    }
    Verdict.Experiments.push_back(
        {Now.Experiment, Now.Setting,
         trialEffect(Baseline, trialBaseline(Baseline, *Then), *Then),
         trialEffect(Current, trialBaseline(Current, Now), Now)});
  }
  for (const TrialRun &Then : Baseline.Trials)
    if (Then.NotTried.empty() &&
        llvm::none_of(Current.Trials,
                      [&](const TrialRun &Now) {
                        return Same(Then, Now) && Now.NotTried.empty();
                      }))
      Verdict.ExperimentsNotCompared.push_back(
          Then.Experiment + " (" + Then.Setting +
          "): only the baseline tried it");
}

std::optional<int64_t> gateBatchSize(const SavedReport &Baseline) {
  if (Baseline.Program.BatchSize)
    return Baseline.Program.BatchSize->Value;
  for (const MeasuredRun &Run : Baseline.Measured.Runs)
    if (!Run.OutOfMemory)
      return Run.BatchSize;
  return std::nullopt;
}

bool needsMoreRuns(const SavedReport &Baseline, const Measurement &Current,
                   const GateOptions &Options) {
  std::optional<int64_t> BatchSize = gateBatchSize(Baseline);
  if (!BatchSize)
    return false;
  const MeasuredRun *Then = fastest(runsAt(Baseline.Measured, *BatchSize));
  std::vector<const MeasuredRun *> Now = runsAt(Current, *BatchSize);
  if (!Then || Now.empty() || Now.size() >= Options.Repeats)
    return false;
  return isThroughputDrop(
      compareThroughput(Baseline.Measured, *Then, Current, Now), Options);
}

GateVerdict compareWithBaseline(const SavedReport &Baseline,
                                const Measurement &Current,
                                const SourceSpan &At,
                                const GateOptions &Options) {
  GateVerdict Verdict;
  checkEnvironment(Baseline.Measured, Current, At, Verdict);
  compareExperiments(Baseline.Measured, Current, Verdict);
  std::optional<int64_t> BatchSize = gateBatchSize(Baseline);
  if (!BatchSize) {
    Verdict.CannotCompare = "the baseline has no run that fit";
    return Verdict;
  }
  Verdict.BatchSize = *BatchSize;
  const MeasuredRun *Then = fastest(runsAt(Baseline.Measured, *BatchSize));
  std::vector<const MeasuredRun *> Now = runsAt(Current, *BatchSize);
  Verdict.RunsCompared = Now.size();
  if (!Then) {
    Verdict.CannotCompare =
        llvm::formatv("the baseline has no run at its batch size {0} with a "
                      "valid time (a finite median above 0 ms)",
                      *BatchSize)
            .str();
    return Verdict;
  }
  if (Then->PeakBytes <= 0) {
    Verdict.CannotCompare =
        llvm::formatv("the baseline's peak memory at batch size {0} is {1} "
                      "bytes, not a measurement",
                      *BatchSize, Then->PeakBytes)
            .str();
    return Verdict;
  }
  if (Now.empty() && ranOutOfMemoryAt(Current, *BatchSize)) {
    Verdict.Regressed = true;
    Verdict.Findings.push_back(
        regression(rules::memoryRegression().Id, At,
                   llvm::formatv("batch size {0} now runs out of memory; the "
                                 "baseline's peak there was {1}",
                                 *BatchSize, formatBytes(Then->PeakBytes))
                       .str()));
    return Verdict;
  }
  if (Now.empty()) {
    Verdict.CannotCompare =
        llvm::formatv("this run has no run at the baseline's batch size {0} "
                      "with a valid time (a finite median above 0 ms)",
                      *BatchSize)
            .str();
    return Verdict;
  }

  const MeasuredRun &Best = *fastest(Now);
  ThroughputComparison Throughput =
      compareThroughput(Baseline.Measured, *Then, Current, Now);
  Verdict.ThroughputChange = Throughput.Change;
  Verdict.ThroughputNoise = Throughput.Noise;
  if (isThroughputDrop(Throughput, Options)) {
    Verdict.Regressed = true;
    Verdict.Findings.push_back(regression(
        rules::throughputRegression().Id, At,
        llvm::formatv(
            "throughput at batch size {0} dropped {1} against the baseline "
            "({2:F1} -> "
            "{3:F1} samples/s, best of {4} run{5}; allowed {6}, noise {7})",
            *BatchSize, formatShare(-Throughput.Change),
            samplesPerSecond(*Then), samplesPerSecond(Best), Now.size(),
            Now.size() == 1 ? "" : "s", formatShare(Options.MaxThroughputDrop),
            formatShare(Throughput.Noise))
            .str()));
  }

  int64_t PeakNow = Now.front()->PeakBytes;
  for (const MeasuredRun *Run : Now)
    PeakNow = std::min(PeakNow, Run->PeakBytes);
  if (PeakNow <= 0) {
    Verdict.CannotCompare =
        llvm::formatv("this run's peak memory at batch size {0} is {1} bytes, "
                      "not a measurement",
                      *BatchSize, PeakNow)
            .str();
    return Verdict;
  }
  Verdict.MemoryChange = double(PeakNow) / double(Then->PeakBytes) - 1;
  if (*Verdict.MemoryChange > Options.MaxMemoryGrowth) {
    Verdict.Regressed = true;
    Verdict.Findings.push_back(regression(
        rules::memoryRegression().Id, At,
        llvm::formatv("peak memory at batch size {0} grew {1} against the "
                      "baseline ({2} -> {3}; allowed {4})",
                      *BatchSize, formatShare(*Verdict.MemoryChange),
                      formatBytes(Then->PeakBytes), formatBytes(PeakNow),
                      formatShare(Options.MaxMemoryGrowth))
            .str()));
  }
  return Verdict;
}

} // namespace skyline
