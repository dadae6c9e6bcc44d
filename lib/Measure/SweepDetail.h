//===- SweepDetail.h - What Sweep.cpp and SweepPlan.cpp share ---*- C++ -*-===//
//
// Shared by the sweep's runs (Sweep.cpp) and its arithmetic on the sizes
// measured so far (SweepPlan.cpp): the state nextBatchSize reads, and
// whether a size gets another timing run.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_LIB_MEASURE_SWEEPDETAIL_H
#define SKYLINE_LIB_MEASURE_SWEEPDETAIL_H

#include "skyline/Sweep.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace skyline::detail {

/// nextBatchSize's state from the sizes so far: the repeatable sizes'
/// points, the first size too large, the data's limit, the memory the
/// sweep aims at, and the runs and the time a size has left; the caller
/// adds the decision and where the probes start.
SweepState sweepState(const std::vector<SizeRuns> &Sizes,
                      llvm::ArrayRef<MeasuredRun> Unmeasured,
                      std::optional<int64_t> FirstOutOfMemory,
                      int64_t CapacityBytes, const MeasureOptions &Options,
                      unsigned RunsLeft, double SecondsLeft);

/// Whether another run confirms a size's fastest one: its median within
/// FastestAgreement of the fastest's. The kept run is the fastest; alone,
/// it could be a run that caught the machine at its quietest, or the only
/// one outside a slow spell that caught the rest.
bool fastestIsConfirmed(const SizeRuns &Size);

/// "5%": FastestAgreement as the messages say it.
std::string agreementPercent();

/// Why a size gets a timing run past --timing-runs, if it does: its data
/// gives its runs fewer iterations than --min-iterations together (a median
/// of single iterations is a median of runs of one), no second run confirms
/// its fastest, or other work held half a core or more during its fastest
/// (both with --timing-runs of 2 or more).
std::optional<std::string> whyAnotherRun(const SizeRuns &Size,
                                         unsigned TimingRuns,
                                         unsigned MinIterations);

/// The most timing runs a size gets: --timing-runs, and as many again
/// for the sizes whyAnotherRun gives a reason. Twice again chased a
/// lucky fastest run on a machine whose speed moved: mnist's 64 got six
/// extra runs of 0.85 s, and none came within 5% of it.
unsigned mostTimingRuns(unsigned TimingRuns);

} // namespace skyline::detail

#endif // SKYLINE_LIB_MEASURE_SWEEPDETAIL_H
