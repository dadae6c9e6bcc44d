//===- SweepPlan.cpp - What the sizes measured say of the runs to come ----===//
//
// The sweep's arithmetic on the sizes measured so far (SizeRuns): where the
// next size goes (sweepState, for nextBatchSize), which sizes the decision
// rests on, what a run will cost, a probe's iterations, how far the data
// goes, whether a size gets another timing run and how many rounds settle
// an unsure decision. Nothing here launches a run or says anything: the
// Sweep object (Sweep.cpp) runs what these plan.
//
//===----------------------------------------------------------------------===//

#include "SweepDetail.h"

#include "skyline/Model.h"
#include "skyline/OtherWork.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

namespace skyline {
namespace {

/// The iterations a size's timing runs measured, all together.
unsigned measuredIterations(const SizeRuns &Size) {
  unsigned Total = 0;
  for (const MeasuredRun &Run : Size.Timing)
    Total += Run.Iterations;
  return Total;
}

} // namespace

namespace detail {

SweepState sweepState(const std::vector<SizeRuns> &Sizes,
                      llvm::ArrayRef<MeasuredRun> Unmeasured,
                      std::optional<int64_t> FirstOutOfMemory,
                      int64_t CapacityBytes, const MeasureOptions &Options,
                      unsigned RunsLeft, double SecondsLeft) {
  SweepState State;
  for (const SizeRuns &Size : Sizes)
    if (Size.Repeatable)
      State.Fitted.push_back({Size.BatchSize, Size.peakBytes(),
                              Size.fastest().IterationMs.Median});
  State.FirstOutOfMemory = FirstOutOfMemory;
  std::vector<RunLength> Lengths;
  for (const SizeRuns &Size : Sizes)
    Lengths.push_back({Size.BatchSize, Size.first().IterationsReached,
                       Size.first().EndedEarly});
  State.DataLimit = dataLimit(Lengths, Options.Warmup);
  // Where a run saw the loader's dataset, a batch of half of it is the
  // largest with an iteration an epoch that spans no epoch's end; where
  // every batch must be whole, no batch outgrows another loader given the
  // size (a test set) either.
  for (const SizeRuns &Size : Sizes) {
    const MeasuredRun &Run = Size.first();
    int64_t Limit = Run.DatasetSamples / 2;
    if (Options.WholeBatchesOnly && Run.DatasetsGcd > 0)
      Limit = std::min(Limit, Run.DatasetsGcd);
    if (Limit > 0)
      State.DataLimit =
          State.DataLimit ? std::min(State.DataLimit, Limit) : Limit;
  }
  if (int64_t Limit = firstEpochDataLimit(Sizes, Unmeasured, Options.Warmup))
    State.DataLimit =
        State.DataLimit ? std::min(State.DataLimit, Limit) : Limit;
  State.TargetBytes = int64_t(double(CapacityBytes) *
                              (1 - std::clamp(Options.MemoryMargin, 0.0, 1.0)));
  State.RunsLeft = std::max(RunsLeft, 1u);
  // After the declared size and its double, half the runs reach the
  // capacity and half go where the time bends.
  State.RunsForBends = (Options.MaxRuns - std::min(Options.MaxRuns, 2u)) / 2;
  if (Options.TimeBudgetSeconds > 0) {
    State.SecondsPerSize = std::max(SecondsLeft, 0.0) / State.RunsLeft;
    bool Breakdown = Options.Breakdown == BreakdownRuns::All;
    State.IterationsPerSize =
        std::max(Options.TimingRuns, 1u) *
            (Options.Warmup +
             std::min(Options.MinIterations, Options.Iterations)) +
        (Breakdown ? Options.Warmup + Options.BreakdownIterations : 0);
  }
  return State;
}

bool fastestIsConfirmed(const SizeRuns &Size) {
  double Bound = Size.fastest().IterationMs.Median * (1 + FastestAgreement);
  return llvm::count_if(Size.wholeRuns(), [&](const MeasuredRun &Run) {
           return Run.IterationMs.Median <= Bound;
         }) >= 2; // the fastest and another
}

std::string agreementPercent() {
  return std::to_string(std::lround(FastestAgreement * 100)) + "%";
}

std::optional<std::string> whyAnotherRun(const SizeRuns &Size,
                                         unsigned TimingRuns,
                                         unsigned MinIterations) {
  if (measuredIterations(Size) < MinIterations)
    return std::string("few iterations a run");
  // Other work that held the CPUs during the kept run slowed it, and its
  // confirming run likely shared the spell: one more run may find the
  // machine quiet. Said first: it is the likelier cause of runs that
  // disagree, and the one the user can act on. One such run a size: on a
  // machine busy throughout, more would only cost time.
  double Busy = Size.fastest().OtherWorkCores;
  if (TimingRuns >= 2 && Busy >= BusyCoresLimit &&
      Size.Timing.size() <= TimingRuns)
    return llvm::formatv("other work held {0:f1} cores during the fastest",
                         Busy)
        .str();
  if (TimingRuns >= 2 && !fastestIsConfirmed(Size))
    return "no other run within " + agreementPercent() + " of the fastest";
  return std::nullopt;
}

unsigned mostTimingRuns(unsigned TimingRuns) {
  return 2 * std::max(TimingRuns, 1u);
}

} // namespace detail

const SizeRuns *bestMeasured(const std::vector<SizeRuns> &Sizes) {
  const SizeRuns *Best = nullptr;
  auto Throughput = [](const SizeRuns &Size) {
    return double(Size.BatchSize) / Size.fastest().IterationMs.Median;
  };
  for (const SizeRuns &Size : Sizes)
    if (Size.Repeatable && Size.fastest().IterationMs.Median > 0 &&
        (!Best || Throughput(Size) > Throughput(*Best)))
      Best = &Size;
  return Best;
}

std::vector<int64_t> decisionSizes(const std::vector<SizeRuns> &Sizes,
                                   int64_t DeclaredBatchSize,
                                   int64_t Decision) {
  std::vector<const SizeRuns *> Timed;
  for (const SizeRuns &Size : Sizes)
    if (Size.Repeatable && Size.fastest().IterationMs.Median > 0)
      Timed.push_back(&Size);
  if (Timed.empty())
    return {};
  const SizeRuns *Best = bestMeasured(Sizes);
  int64_t Anchor = Decision > 0 ? Decision : Best->BatchSize;
  const SizeRuns *Below = nullptr, *Above = nullptr;
  std::vector<int64_t> Chosen = {Best->BatchSize};
  for (const SizeRuns *Size : Timed) {
    if (Size->BatchSize == DeclaredBatchSize)
      Chosen.push_back(Size->BatchSize);
    if (Size->BatchSize <= Anchor &&
        (!Below || Size->BatchSize > Below->BatchSize))
      Below = Size;
    if (Size->BatchSize > Anchor &&
        (!Above || Size->BatchSize < Above->BatchSize))
      Above = Size;
  }
  for (const SizeRuns *Size : {Below, Above})
    if (Size)
      Chosen.push_back(Size->BatchSize);
  llvm::sort(Chosen);
  Chosen.erase(std::unique(Chosen.begin(), Chosen.end()), Chosen.end());
  return Chosen;
}

namespace {

/// What the measured sizes say of a run at BatchSize before it is launched:
/// a process's start (the least any size's first run spent outside its
/// iterations) and the time a sample took at the nearest measured size.
struct RunCost {
  double StartSeconds = -1; // < 0: nothing measured yet
  double MsPerSample = 0;
};

RunCost predictedRunCost(const std::vector<SizeRuns> &Sizes,
                         int64_t BatchSize) {
  RunCost Cost;
  double Nearest = 0;
  for (const SizeRuns &Size : Sizes) {
    const MeasuredRun &First = Size.first();
    double Ms = Size.fastest().IterationMs.Median;
    if (First.OutOfMemory || !(Ms > 0) || Size.BatchSize <= 0)
      continue;
    double Outside =
        std::max(First.WallSeconds -
                     First.IterationsReached * First.IterationMs.Mean / 1000,
                 0.0);
    Cost.StartSeconds =
        Cost.StartSeconds < 0 ? Outside : std::min(Cost.StartSeconds, Outside);
    double Distance =
        std::fabs(std::log(double(BatchSize) / double(Size.BatchSize)));
    if (Cost.MsPerSample == 0 || Distance < Nearest) {
      Nearest = Distance;
      Cost.MsPerSample = Ms / double(Size.BatchSize);
    }
  }
  return Cost;
}

} // namespace

double predictedTimingRunSeconds(const std::vector<SizeRuns> &Sizes,
                                 int64_t BatchSize, unsigned Iterations) {
  RunCost Cost = predictedRunCost(Sizes, BatchSize);
  if (Cost.StartSeconds < 0)
    return 0;
  return Cost.StartSeconds +
         Iterations * Cost.MsPerSample * double(BatchSize) / 1000;
}

int64_t firstEpochDataLimit(const std::vector<SizeRuns> &Sizes,
                            llvm::ArrayRef<MeasuredRun> Unmeasured,
                            unsigned Warmup) {
  int64_t Samples = 0;
  auto See = [&](const MeasuredRun &Run) {
    Samples = std::max(Samples, Run.DatasetSamples);
    return Run.EpochIterations == 0;
  };
  for (const SizeRuns &Size : Sizes)
    for (const MeasuredRun &Run : Size.Timing)
      if (!See(Run))
        return 0; // it goes on into a second epoch
  for (const MeasuredRun &Run : Unmeasured)
    if (!See(Run))
      return 0;
  return Samples / int64_t(Warmup + 2);
}

unsigned probeIterations(const std::vector<SizeRuns> &Sizes, int64_t BatchSize,
                         unsigned MinIterations) {
  unsigned Most = std::max(MinIterations, 1u);
  double IterationMs = predictedRunCost(Sizes, BatchSize).MsPerSample *
                       double(std::max<int64_t>(BatchSize, 1));
  if (!(IterationMs > 0))
    return 1;
  double Fit = std::floor(ProbeIterationSeconds * 1000 / IterationMs);
  return unsigned(std::clamp(Fit, 1.0, double(Most)));
}

std::optional<unsigned> roundsToSettle(const MeasuredGain &Gain, double MinGain,
                                       unsigned MostRounds) {
  if (!(MinGain > -1))
    return std::nullopt;
  for (unsigned R = 1; R <= MostRounds; ++R) {
    double Share = 1.0 / (Gain.FromRuns + R) + 1.0 / (Gain.ToRuns + R);
    double Low = Gain.LogRatio - studentT90(Gain.Dof + 2 * R) * Gain.RunSigma *
                                     std::sqrt(Share);
    if (Low >= std::log1p(MinGain))
      return R;
  }
  return std::nullopt;
}

} // namespace skyline
