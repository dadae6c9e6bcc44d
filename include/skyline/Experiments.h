//===- Experiments.h - Measured trials of a change, with a fix-it -*- C++ -*-===//
//
// An experiment is one class, registered by one line in
// Experiments/Experiments.def, with a docs page (docs/experiments/<name>.md)
// and a rule id of its own: where it applies, the trials it asks the sweep
// for (a timing run at the declared batch size that differs from the
// baseline by one setting), and the finding it makes of them. A trial's
// effect is a finding only where it is outside the runs' noise, the noise
// model of the batch-size suggestion (runSpread); otherwise the report lists
// it as tried, with no clear effect. --experiments chooses them.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_EXPERIMENTS_H
#define SKYLINE_EXPERIMENTS_H

#include "skyline/Findings.h"
#include "skyline/Measure.h"
#include "skyline/Measurement.h"
#include "skyline/Model.h"
#include "skyline/ProgramModel.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace skyline {

/// What the machine offers a trial.
struct MachineInfo {
  unsigned Cpus = 1;          // the CPUs the runs may use
  unsigned PhysicalCores = 1; // of them, distinct cores (SMT siblings once)
};
MachineInfo thisMachine();

class Experiment {
public:
  virtual ~Experiment();
  /// The experiment's rule, as a rule declares itself (docs page included).
  virtual const RuleInfo &info() const = 0;
  /// Its name on the command line (threads).
  virtual llvm::StringRef name() const = 0;
  /// Extra runs it costs; the defaults cost at most one each.
  virtual unsigned extraRuns() const = 0;
  /// Its trial measures its own baseline in its run (TrialRequest::Paired).
  virtual bool pairedTrial() const { return false; }
  /// Where a finding without a fix-it points; none: the batch size literal,
  /// else the training loop.
  virtual std::optional<SourceSpan> place(const ProgramModel &) const {
    return std::nullopt;
  }
  /// The trials worth running, from the program and what the sweep measured
  /// (the baseline's settings); none where the experiment does not apply.
  virtual std::vector<TrialRequest> plan(const ProgramModel &Program,
                                         const Measurement &SoFar,
                                         const MachineInfo &Machine) const = 0;
  /// The fix-it that makes the program run as Trial did.
  virtual std::vector<TextEdit> fixIt(const ProgramModel &Program,
                                      const TrialRun &Trial) const = 0;
};

/// The threads experiment's trial count: the usable CPUs where Current is
/// not that, else the physical cores where fewer, else half; 0: none.
int64_t threadsWorthTrying(int64_t Current, const MachineInfo &Machine);

/// The share of Run's iteration spent loading the next batch (its
/// breakdown's data part); 0 where it had no breakdown.
double dataShare(const MeasuredRun &Run);

/// The loader workers experiment tries workers where loading is at least
/// this share of an iteration.
inline constexpr double MinDataShare = 0.2;

/// The workers worth a trial at DataShare: enough to load a batch while the
/// model trains on one (DataShare / (1 - DataShare), at least 1), each on a
/// CPU the training leaves (at most the CPUs less one, and 8); 0: none
/// (little loading, or one CPU).
int64_t loaderWorkersWorthTrying(double DataShare, const MachineInfo &Machine);

/// Every experiment, in the catalog's order.
std::vector<std::unique_ptr<Experiment>> createExperiments();

/// --experiments=LIST: all, none, default, or names (comma separated).
/// Empty: the default (those costing at most one extra run). An unknown
/// name is an error that lists the known ones.
llvm::Expected<std::vector<std::string>>
selectExperiments(llvm::StringRef List);

/// The trials of the Selected experiments, for MeasureOptions::PlanTrials.
std::vector<TrialRequest> planTrials(llvm::ArrayRef<std::string> Selected,
                                     const ProgramModel &Program,
                                     const Measurement &SoFar,
                                     const MachineInfo &Machine);

/// MeasureOptions::PlanTrials for the Selected experiments on Program;
/// none where none is selected.
std::function<std::vector<TrialRequest>(const Measurement &)>
trialPlanner(std::vector<std::string> Selected, ProgramModel Program);

/// A trial against the baseline run at its batch size, in the suggestion's
/// noise model: Gain is the trial's throughput over the baseline's less 1
/// (from the kept, fastest times), Range its 90% interval, centred on it:
/// ln(1 + Gain) +- t x s x sqrt(1/n_baseline + 1/n_trial), s and t the
/// runs' pooled spread (runSpread).
/// A paired trial (TrialRun::paired) compares its own two arms pass by
/// pass: d = ln(baseline / trial) of each pair, Gain = exp(mean d) - 1, and
/// its 90% interval exp(mean d +- t(n-1) x sd(d) / sqrt(n)) - 1, so the
/// interval holds its point either way. Its peaks are compared as well:
/// the trial's is less by MinMemorySaving and MinMemorySavingBytes or more
/// (a CPU's peak repeats to the byte; a GPU's allocator rounds blocks).
enum class TrialVerdict {
  Faster,           // the interval is above 0: a finding with its fix-it
  Slower,           // below 0: the program's own setting is better
  NoClearEffect,    // the interval holds 0
  LessMemory,       // no clear effect on time, a clear saving of memory: a
                    // finding with its fix-it
  LessMemorySlower, // slower beyond the noise, but a clear saving of memory:
                    // a trade the finding states, with its fix-it
  Failed,           // the trial measured nothing (its Problem says why)
  NotTried,         // it cannot run on this machine (its NotTried says why)
};
inline constexpr double MinMemorySaving = 0.05;
inline constexpr int64_t MinMemorySavingBytes = int64_t(1) << 20;
struct TrialEffect {
  TrialVerdict Verdict = TrialVerdict::Failed;
  double BaselineMs = 0, TrialMs = 0;
  double Gain = 0;
  Interval Range;
  /// A paired trial's peaks and the share of the baseline's the trial
  /// saved; 0 for others.
  int64_t BaselinePeakBytes = 0, TrialPeakBytes = 0;
  double MemorySaving = 0;
  bool SavesMemory = false;
  /// The pairs a paired trial compared; 0 for others.
  unsigned Pairs = 0;
};
TrialEffect trialEffect(const Measurement &M, const MeasuredRun *Baseline,
                        const TrialRun &Trial);

/// "faster", "slower", "no clear effect", "failed".
const char *verdictName(TrialVerdict Verdict);

/// The baseline a trial is compared with: the run at its batch size.
const MeasuredRun *trialBaseline(const Measurement &M, const TrialRun &Trial);

/// The experiments' findings: a warning with the fix-it for a trial that
/// was surely faster, a note for one with no clear effect, one slower or
/// one that failed. At: where a finding without a fix-it points.
std::vector<Finding> experimentFindings(const ProgramModel &Program,
                                        const Measurement &M);

} // namespace skyline

#endif // SKYLINE_EXPERIMENTS_H
