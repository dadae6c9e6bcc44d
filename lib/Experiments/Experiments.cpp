//===- Experiments.cpp - The registry, the selection and the verdicts -----===//

#include "skyline/Experiments.h"

#include "skyline/OtherWork.h"
#include "skyline/Units.h"

#include "ExperimentFactories.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sched.h>
#include <set>

namespace skyline {

Experiment::~Experiment() = default;

std::vector<std::unique_ptr<Experiment>> createExperiments() {
  std::vector<std::unique_ptr<Experiment>> All;
#define SKYLINE_EXPERIMENT(Name) All.push_back(create##Name());
#include "Experiments.def"
  return All;
}

namespace {

/// The distinct cores (package, core id in sysfs) of the CPUs this process
/// may use; none where sysfs or the affinity mask does not say.
std::optional<unsigned> physicalCores() {
  cpu_set_t Set;
  CPU_ZERO(&Set);
  if (sched_getaffinity(0, sizeof(Set), &Set) != 0)
    return std::nullopt;
  std::set<std::pair<std::string, std::string>> Cores;
  for (int Cpu = 0; Cpu < CPU_SETSIZE; ++Cpu) {
    if (!CPU_ISSET(Cpu, &Set))
      continue;
    std::string Dir =
        "/sys/devices/system/cpu/cpu" + std::to_string(Cpu) + "/topology/";
    auto Package = llvm::MemoryBuffer::getFile(Dir + "physical_package_id",
                                               /*IsText=*/true);
    auto Core = llvm::MemoryBuffer::getFile(Dir + "core_id", /*IsText=*/true);
    if (!Package || !Core)
      return std::nullopt;
    Cores.insert({(*Package)->getBuffer().trim().str(),
                  (*Core)->getBuffer().trim().str()});
  }
  if (Cores.empty())
    return std::nullopt;
  return unsigned(Cores.size());
}

} // namespace

MachineInfo thisMachine() {
  MachineInfo Machine;
  Machine.Cpus = usableCpus();
  Machine.PhysicalCores =
      std::min(Machine.Cpus, physicalCores().value_or(Machine.Cpus));
  return Machine;
}

llvm::Expected<std::vector<std::string>>
selectExperiments(llvm::StringRef List) {
  std::vector<std::unique_ptr<Experiment>> All = createExperiments();
  std::vector<std::string> Names, Chosen;
  for (const auto &E : All)
    Names.push_back(E->name().str());
  auto Defaults = [&] {
    std::vector<std::string> Cheap;
    for (const auto &E : All)
      if (E->extraRuns() <= 1)
        Cheap.push_back(E->name().str());
    return Cheap;
  };
  List = List.trim();
  if (List.empty() || List == "default")
    return Defaults();
  if (List == "none")
    return Chosen;
  if (List == "all")
    return Names;
  llvm::SmallVector<llvm::StringRef, 4> Parts;
  List.split(Parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef Part : Parts) {
    Part = Part.trim();
    if (!llvm::is_contained(Names, Part))
      return llvm::createStringError(
          "--experiments: no experiment '%s'; the experiments are %s (or "
          "all, none, default)",
          Part.str().c_str(), llvm::join(Names, ", ").c_str());
    if (!llvm::is_contained(Chosen, Part))
      Chosen.push_back(Part.str());
  }
  return Chosen;
}

std::vector<TrialRequest> planTrials(llvm::ArrayRef<std::string> Selected,
                                     const ProgramModel &Program,
                                     const Measurement &SoFar,
                                     const MachineInfo &Machine) {
  std::vector<TrialRequest> Trials;
  for (const auto &E : createExperiments())
    if (llvm::is_contained(Selected, E->name()))
      llvm::append_range(Trials, E->plan(Program, SoFar, Machine));
  return Trials;
}

std::function<std::vector<TrialRequest>(const Measurement &)>
trialPlanner(std::vector<std::string> Selected, ProgramModel Program) {
  if (Selected.empty())
    return nullptr;
  return [Selected = std::move(Selected),
          Program = std::move(Program)](const Measurement &SoFar) {
    return planTrials(Selected, Program, SoFar, thisMachine());
  };
}

std::optional<SourceSpan> constructionOf(const ModuleSite *Module) {
  if (!Module || Module->File.empty())
    return std::nullopt;
  SourceSpan At;
  At.File = Module->File;
  At.Line = Module->Line;
  At.Column = Module->Column;
  return At;
}

std::optional<TextEdit> atMainStart(const ThreadSettings &Main,
                                    llvm::ArrayRef<llvm::StringRef> Statements) {
  if (!Main.MainStart)
    return std::nullopt;
  std::string Text;
  for (llvm::StringRef Statement : Statements)
    Text += "\n" + Main.MainIndent + Statement.str();
  return TextEdit{*Main.MainStart, Text};
}

std::vector<TrialRequest> gpuSettingTrial(const Experiment &E,
                                          const Measurement &SoFar,
                                          llvm::StringRef Setting,
                                          llvm::StringRef WhyNotOnTheCpu,
                                          bool ProgramHasIt, std::string Env) {
  TrialRequest Trial;
  Trial.Experiment = E.name().str();
  Trial.Value = 1;
  Trial.Setting = Setting.str();
  if (SoFar.Device != DeviceType::CUDA) {
    Trial.NotTried = WhyNotOnTheCpu.str();
    return {Trial};
  }
  if (ProgramHasIt)
    return {};
  Trial.Env = {std::move(Env)};
  return {Trial};
}

const MeasuredRun *trialBaseline(const Measurement &M, const TrialRun &Trial) {
  for (const MeasuredRun &Run : M.Runs)
    if (Run.BatchSize == Trial.BatchSize && !Run.OutOfMemory &&
        Run.Iterations > 0 && Run.IterationMs.Median > 0)
      return &Run;
  return nullptr;
}

namespace {

TrialVerdict verdictOf(const Interval &Range) {
  return Range.Low > 0    ? TrialVerdict::Faster
         : Range.High < 0 ? TrialVerdict::Slower
                          : TrialVerdict::NoClearEffect;
}

/// Trial's two arms pass by pass (TrialVerdict's comment).
TrialEffect pairedEffect(const TrialRun &Trial) {
  TrialEffect Effect;
  size_t Pairs =
      std::min(Trial.BaselineSamplesMs.size(), Trial.TrialSamplesMs.size());
  if (Pairs < 2 || !Trial.Problem.empty())
    return Effect;
  std::vector<double> Logs;
  for (size_t I = 0; I < Pairs; ++I) {
    double Baseline = Trial.BaselineSamplesMs[I];
    double Tried = Trial.TrialSamplesMs[I];
    if (!(Baseline > 0) || !(Tried > 0))
      return Effect;
    Logs.push_back(std::log(Baseline / Tried));
  }
  double Mean = 0;
  for (double D : Logs)
    Mean += D;
  Mean /= double(Pairs);
  double Square = 0;
  for (double D : Logs)
    Square += (D - Mean) * (D - Mean);
  double Spread = std::sqrt(Square / double(Pairs - 1));
  double Half =
      studentT90(unsigned(Pairs - 1)) * Spread / std::sqrt(double(Pairs));
  Effect.Pairs = unsigned(Pairs);
  Effect.BaselineMs = medianOf(Trial.BaselineSamplesMs);
  Effect.TrialMs = medianOf(Trial.TrialSamplesMs);
  Effect.Gain = std::exp(Mean) - 1;
  Effect.Range = {std::exp(Mean - Half) - 1, std::exp(Mean + Half) - 1};
  Effect.BaselinePeakBytes = Trial.BaselinePeakBytes;
  Effect.TrialPeakBytes = Trial.PeakBytes;
  int64_t Saved = Trial.BaselinePeakBytes - Trial.PeakBytes;
  if (Trial.BaselinePeakBytes > 0)
    Effect.MemorySaving = double(Saved) / double(Trial.BaselinePeakBytes);
  Effect.SavesMemory = Saved >= MinMemorySavingBytes &&
                       Effect.MemorySaving >= MinMemorySaving;
  Effect.Verdict = verdictOf(Effect.Range);
  // Memory is measured to the byte, time against noise: a clear saving is
  // worth stating whatever the time did, and "slower" must not hide it.
  if (Effect.SavesMemory && Effect.Verdict == TrialVerdict::NoClearEffect)
    Effect.Verdict = TrialVerdict::LessMemory;
  if (Effect.SavesMemory && Effect.Verdict == TrialVerdict::Slower)
    Effect.Verdict = TrialVerdict::LessMemorySlower;
  return Effect;
}

} // namespace

TrialEffect trialEffect(const Measurement &M, const MeasuredRun *Baseline,
                        const TrialRun &Trial) {
  if (!Trial.NotTried.empty()) {
    TrialEffect Listed;
    Listed.Verdict = TrialVerdict::NotTried;
    return Listed;
  }
  if (Trial.paired())
    return pairedEffect(Trial);
  TrialEffect Effect;
  if (!Trial.Problem.empty() || !Baseline || !(Trial.IterationMs > 0))
    return Effect;
  Effect.BaselineMs = Baseline->IterationMs.Median;
  Effect.TrialMs = Trial.IterationMs;
  double LogGain = std::log(Effect.BaselineMs / Effect.TrialMs);
  Effect.Gain = std::exp(LogGain) - 1;
  TimeUncertainty U = runSpread(M);
  double Runs = double(std::max<size_t>(1, Baseline->TimingRunMedians.size()));
  double TrialRuns = double(std::max<size_t>(1, Trial.TimingRunMedians.size()));
  double Half = U.Quantile * U.RunSigma * std::sqrt(1 / Runs + 1 / TrialRuns);
  Effect.Range = {std::exp(LogGain - Half) - 1, std::exp(LogGain + Half) - 1};
  Effect.Verdict = verdictOf(Effect.Range);
  return Effect;
}

const char *verdictName(TrialVerdict Verdict) {
  switch (Verdict) {
  case TrialVerdict::Faster:
    return "faster";
  case TrialVerdict::Slower:
    return "slower";
  case TrialVerdict::NoClearEffect:
    return "no clear effect";
  case TrialVerdict::LessMemory:
    return "less memory";
  case TrialVerdict::LessMemorySlower:
    return "less memory, slower";
  case TrialVerdict::Failed:
    return "failed";
  case TrialVerdict::NotTried:
    return "not tried";
  }
  return "failed";
}

namespace {

std::string percent(double Share) {
  return llvm::formatv("{0:F1}%", Share * 100).str();
}

/// Where a finding without a fix-it points: the batch size literal, else
/// the training loop.
SourceSpan findingPlace(const ProgramModel &Program) {
  if (Program.BatchSize)
    return Program.BatchSize->Literal;
  SourceSpan At;
  if (!Program.TrainingLoops.empty()) {
    At.File = Program.TrainingLoops.front().File;
    At.Line = Program.TrainingLoops.front().Line;
    At.Column = Program.TrainingLoops.front().Column;
  }
  return At;
}

/// A paired trial's finding: time and peak memory of its two arms.
Finding pairedFinding(const Experiment &E, const ProgramModel &Program,
                      const TrialRun &Trial, const TrialEffect &Effect,
                      const std::string &Tried, Finding F) {
  std::string Measured =
      llvm::formatv("a pass took {0:F3} ms against {1:F3} ms ({2} throughput; "
                    "90% interval {3} to {4}, {5} pairs of passes) and held "
                    "at most {6} against {7} ({8}{9})",
                    Effect.TrialMs, Effect.BaselineMs,
                    (Effect.Gain >= 0 ? "+" : "") + percent(Effect.Gain),
                    percent(Effect.Range.Low), percent(Effect.Range.High),
                    Effect.Pairs, formatBytes(Effect.TrialPeakBytes),
                    formatBytes(Effect.BaselinePeakBytes),
                    Effect.MemorySaving > 0 ? "-" : "+",
                    percent(std::fabs(Effect.MemorySaving)))
          .str();
  F.Figures = {{"gain", Effect.Gain},
               {"gainLow", Effect.Range.Low},
               {"gainHigh", Effect.Range.High},
               {"trialMs", Effect.TrialMs},
               {"baselineMs", Effect.BaselineMs},
               {"trialPeakBytes", double(Effect.TrialPeakBytes)},
               {"baselinePeakBytes", double(Effect.BaselinePeakBytes)},
               {"memorySaving", Effect.MemorySaving},
               {"value", double(Trial.Value)}};
  switch (Effect.Verdict) {
  case TrialVerdict::Faster:
  case TrialVerdict::LessMemory:
  case TrialVerdict::LessMemorySlower: {
    F.Level = DiagLevel::Warning;
    F.Edits = E.fixIt(Program, Trial);
    if (!F.Edits.empty())
      F.At = F.Edits.front().Range;
    const char *Verdict =
        Effect.Verdict == TrialVerdict::LessMemorySlower
            ? ": less memory, but slower beyond the passes' noise: a trade of "
              "time for memory"
        : Effect.Verdict == TrialVerdict::LessMemory
            ? ": less memory, and no clear effect on time"
        : Effect.SavesMemory ? ": faster beyond the passes' noise, and less "
                               "memory"
                             : ": faster beyond the passes' noise";
    F.Message = Tried + " " + Measured + Verdict;
    return F;
  }
  case TrialVerdict::Slower:
    F.Message = Tried + " " + Measured +
                ": slower beyond the passes' noise; the program's own loop "
                "is better";
    return F;
  default:
    F.Message = Tried + " " + Measured +
                ": no clear effect (the time's interval holds 0, and the "
                "peak is not 5% and 1 MiB less)";
    return F;
  }
}

Finding trialFinding(const Experiment &E, const ProgramModel &Program,
                     const TrialRun &Trial, const TrialEffect &Effect) {
  Finding F;
  F.Rule = E.info().Id.str();
  F.At = E.place(Program).value_or(findingPlace(Program));
  F.Level = DiagLevel::Note;
  std::string Tried =
      llvm::formatv("experiment {0}: with {1} at batch size {2}", E.name(),
                    Trial.Setting, Trial.BatchSize)
          .str();
  if (Effect.Verdict == TrialVerdict::NotTried) {
    F.Message = llvm::formatv("experiment {0}: not tried: {1}", E.name(),
                              Trial.NotTried)
                    .str();
    return F;
  }
  if (E.pairedTrial()) // not at the training batch size
    Tried = llvm::formatv("experiment {0}: with {1}", E.name(), Trial.Setting)
                .str();
  if (Effect.Verdict == TrialVerdict::Failed) {
    F.Message = Tried + " the trial failed, and nothing else changed: " +
                (Trial.Problem.empty() ? std::string("it measured no pair of "
                                                     "passes")
                                       : Trial.Problem);
    return F;
  }
  if (Trial.paired())
    return pairedFinding(E, Program, Trial, Effect, Tried, std::move(F));
  std::string Measured =
      llvm::formatv("an iteration took {0:F3} ms against {1:F3} ms ({2} "
                    "throughput; 90% interval {3} to {4})",
                    Effect.TrialMs, Effect.BaselineMs,
                    (Effect.Gain >= 0 ? "+" : "") + percent(Effect.Gain),
                    percent(Effect.Range.Low), percent(Effect.Range.High))
          .str();
  F.Figures = {{"gain", Effect.Gain},
               {"gainLow", Effect.Range.Low},
               {"gainHigh", Effect.Range.High},
               {"trialMs", Effect.TrialMs},
               {"baselineMs", Effect.BaselineMs},
               {"value", double(Trial.Value)}};
  if (Effect.Verdict == TrialVerdict::Faster) {
    F.Level = DiagLevel::Warning;
    F.Edits = E.fixIt(Program, Trial);
    if (!F.Edits.empty())
      F.At = F.Edits.front().Range;
    F.Message = Tried + " " + Measured + ", faster beyond the runs' noise";
    return F;
  }
  F.Message = Tried + " " + Measured +
              (Effect.Verdict == TrialVerdict::Slower
                   ? ": slower beyond the runs' noise; the program's own "
                     "setting is better"
                   : ": no clear effect (the interval holds 0)");
  return F;
}

} // namespace

std::vector<Finding> experimentFindings(const ProgramModel &Program,
                                        const Measurement &M) {
  std::vector<Finding> Findings;
  std::vector<std::unique_ptr<Experiment>> All = createExperiments();
  for (const TrialRun &Trial : M.Trials) {
    auto E = llvm::find_if(
        All, [&](const auto &X) { return X->name() == Trial.Experiment; });
    if (E == All.end())
      continue; // a report from a later skyline-check
    TrialEffect Effect = trialEffect(M, trialBaseline(M, Trial), Trial);
    Findings.push_back(trialFinding(**E, Program, Trial, Effect));
  }
  return Findings;
}

} // namespace skyline
