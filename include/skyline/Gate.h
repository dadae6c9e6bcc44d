//===- Gate.h - CI's regression gate against a baseline report --*- C++ -*-===//
//
// Compares the runs at the baseline's batch size with the baseline's run
// there. Peak memory is close to deterministic and is gated tightly.
// Throughput is noisy: a drop counts only when the best of the repeated
// runs is still slower than the baseline by more than the threshold and by
// more than the change's 90% interval allows: the noise of the model's
// intervals (Model.h, runSpread), each side's timing runs spreading as that
// side's sizes did. What cannot be compared fails the gate: it never
// passes what it did not check.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_GATE_H
#define SKYLINE_GATE_H

#include "skyline/Experiments.h"
#include "skyline/Findings.h"
#include "skyline/Measurement.h"
#include "skyline/RunReport.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace skyline {

struct GateOptions {
  double MaxThroughputDrop = 0.10; // --max-throughput-drop, a fraction
  double MaxMemoryGrowth = 0.02;   // --max-memory-growth, a fraction
  unsigned Repeats = 3;            // --gate-repeats: runs before a drop counts
};

/// An experiment both reports tried with the same setting value: its effect
/// then and now, each against its own report's runs. It changes no verdict:
/// the throughput the program lost is the throughput gate's; this says which
/// setting the program now misses (a trial that turned faster) or no longer
/// needs.
struct ExperimentComparison {
  std::string Experiment; // loader-workers
  std::string Setting;    // the current trial's
  TrialEffect Then, Now;
};

struct GateVerdict {
  int64_t BatchSize = 0;
  bool Regressed = false;
  /// Throughput and peak memory against the baseline's, less 1; none when
  /// either side has no run that fit at the batch size.
  std::optional<double> ThroughputChange, MemoryChange;
  double ThroughputNoise = 0; // the change's 90% half-width, a fraction
  unsigned RunsCompared = 0;
  /// Regressions (errors) and environment mismatches (warnings).
  std::vector<Finding> Findings;
  /// Why nothing could be compared (no valid run at the batch size on
  /// either side, no valid peak): the gate then fails, it never passes.
  std::string CannotCompare;
  /// The experiments both reports ran (same experiment, same value), and
  /// those only one ran ("threads: only this run tried it"), not compared.
  std::vector<ExperimentComparison> Experiments;
  std::vector<std::string> ExperimentsNotCompared;
};

/// The experiments of Baseline and Current, compared where both ran one.
void compareExperiments(const Measurement &Baseline, const Measurement &Current,
                        GateVerdict &Verdict);

/// Why Baseline is a report of another program than Current (none of its
/// sources has the file name of one of Current's), if it is.
std::optional<std::string> whyAnotherProgram(const ProgramModel &Baseline,
                                             const ProgramModel &Current);

/// The batch size the gate compares at: the baseline's declared one.
std::optional<int64_t> gateBatchSize(const SavedReport &Baseline);

/// Whether the current runs at the gate's size show a throughput drop that
/// more runs must confirm or clear (fewer than Repeats ran so far).
bool needsMoreRuns(const SavedReport &Baseline, const Measurement &Current,
                   const GateOptions &Options);

/// The verdict; At is where regressions point (the batch-size literal).
GateVerdict compareWithBaseline(const SavedReport &Baseline,
                                const Measurement &Current,
                                const SourceSpan &At,
                                const GateOptions &Options);

} // namespace skyline

#endif // SKYLINE_GATE_H
