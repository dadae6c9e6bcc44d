//===- Model.cpp - Predictions from the measured runs ---------------------===//
//
// Least-squares lines of iteration time and peak memory against batch size,
// the largest batch size under the memory cap, and the suggested size: the
// smallest (rounded) whose predicted throughput is within a slack of the best.
//
//===----------------------------------------------------------------------===//

#include "skyline/Model.h"

#include "ModelDetail.h"
#include "skyline/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace skyline {
namespace {

/// Rounds to the nearest integer, saturating: a line evaluated far out can
/// leave the int64 range, and converting such a double is undefined.
int64_t roundSaturated(double Value) {
  if (std::isnan(Value))
    return 0;
  constexpr double Limit = 9.2e18; // just below 2^63
  if (Value >= Limit)
    return std::numeric_limits<int64_t>::max();
  if (Value <= -Limit)
    return std::numeric_limits<int64_t>::min();
  return std::llround(Value);
}

std::string formatFixed(double Value, int Decimals) {
  char Buffer[64];
  std::snprintf(Buffer, sizeof(Buffer), "%.*f", Decimals, Value);
  return Buffer;
}

/// "3.1", "5", "-5.7": fixed decimals without trailing zeros.
std::string formatTrimmed(double Value, int Decimals) {
  std::string Text = formatFixed(Value, Decimals);
  if (Text.find('.') == std::string::npos)
    return Text;
  while (Text.back() == '0')
    Text.pop_back();
  if (Text.back() == '.')
    Text.pop_back();
  return Text == "-0" ? "0" : Text;
}

std::string percent(double Fraction) {
  if (std::optional<std::string> Far = formatFarShare(Fraction))
    return *Far;
  return formatTrimmed(Fraction * 100, 1) + "%";
}

/// The smallest K in [Lo, Hi) for which Holds is true, Hi when none; Holds
/// must be false and then true as K grows.
template <typename Predicate>
int64_t firstWhere(int64_t Lo, int64_t Hi, Predicate Holds) {
  while (Lo < Hi) {
    int64_t Mid = Lo + (Hi - Lo) / 2;
    if (Holds(Mid))
      Hi = Mid;
    else
      Lo = Mid + 1;
  }
  return Lo;
}

/// The runs the lines are fitted to.
struct Points {
  std::vector<double> BatchSizes, IterationMs, PeakBytes;
  std::set<int64_t> DistinctSizes;
};

Points collectPoints(const Measurement &M) {
  Points P;
  for (const MeasuredRun &Run : M.Runs) {
    if (Run.OutOfMemory || Run.Iterations == 0 || Run.BatchSize <= 0)
      continue;
    P.BatchSizes.push_back(double(Run.BatchSize));
    P.IterationMs.push_back(Run.IterationMs.Median);
    P.PeakBytes.push_back(double(Run.PeakBytes));
    P.DistinctSizes.insert(Run.BatchSize);
  }
  return P;
}

/// One value a measured batch size, by size: of the runs at one size (the
/// gate's repeats), the one Keep prefers.
std::vector<std::pair<int64_t, double>>
oneBySize(const Points &P, const std::vector<double> &Values,
          double (*Keep)(double, double)) {
  std::map<int64_t, double> Kept;
  for (size_t I = 0; I < P.BatchSizes.size(); ++I) {
    auto [It, New] = Kept.try_emplace(int64_t(P.BatchSizes[I]), Values[I]);
    if (!New)
      It->second = Keep(It->second, Values[I]);
  }
  return {Kept.begin(), Kept.end()};
}

double lower(double A, double B) { return std::min(A, B); }
double higher(double A, double B) { return std::max(A, B); }

std::optional<int64_t> firstOutOfMemory(const Measurement &M) {
  std::optional<int64_t> First;
  for (const MeasuredRun &Run : M.Runs)
    if (Run.OutOfMemory && Run.BatchSize > 0 &&
        (!First || Run.BatchSize < *First))
      First = Run.BatchSize;
  return First;
}

int64_t usableBytes(int64_t Capacity, double Margin) {
  if (Capacity <= 0)
    return 0;
  double Kept = 1 - std::clamp(Margin, 0.0, 1.0);
  return std::max<int64_t>(0,
                           roundSaturated(std::floor(double(Capacity) * Kept)));
}

/// Why no line can be fitted, when fewer than two batch sizes ran.
std::string describeTooFewSizes(const Measurement &M, const Points &P) {
  // A program that runs at its own size and fails at the next did not run
  // out of memory: its batch size is tied to other code (a tensor shaped
  // with a fixed batch dimension, a view by a constant).
  if (P.DistinctSizes.size() == 1 && M.FirstFailure > *P.DistinctSizes.begin())
    return "only batch size " + std::to_string(*P.DistinctSizes.begin()) +
           " ran: the program failed at " + std::to_string(M.FirstFailure) +
           " (its own error is in the warning above), so its batch size is "
           "tied to other code (a tensor shaped with a fixed batch "
           "dimension, a view or reshape by a constant); make that code "
           "follow the batch size, then measure again";
  if (P.DistinctSizes.size() == 1)
    return "only one batch size ran without running out of memory (" +
           std::to_string(*P.DistinctSizes.begin()) +
           "); at least two are needed";
  if (M.Runs.empty())
    return "no batch size was measured";
  return "no batch size ran its iterations without running out of memory";
}

/// 1 / y²: least squares of the relative errors, for a quantity whose noise
/// grows with it; none (unweighted) unless every y is positive.
std::vector<double> relativeWeights(llvm::ArrayRef<double> Y) {
  if (!llvm::all_of(Y, [](double V) { return V > 0; }))
    return {};
  std::vector<double> Weights;
  for (double V : Y)
    Weights.push_back(1 / (V * V));
  return Weights;
}

/// Fits Y against the batch sizes. The fit is kept whenever one exists (the
/// report shows its R² and residuals); the predictions go through the
/// measured sizes, so a line that does not fit them is no reason not to
/// predict. Problem says why it cannot: too few sizes, or (Rising) a
/// quantity that does not grow.
void fitQuantity(const Measurement &M, const Points &P,
                 llvm::ArrayRef<double> Y, llvm::StringRef Quantity,
                 std::optional<LinearFit> &Fit, std::string &Problem,
                 bool Relative, bool Rising) {
  if (P.DistinctSizes.size() < 2) {
    Problem = describeTooFewSizes(M, P);
    return;
  }
  llvm::Expected<LinearFit> Line = fitLine(
      P.BatchSizes, Y, Relative ? relativeWeights(Y) : std::vector<double>());
  if (!Line) {
    Problem =
        ("cannot fit " + Quantity + ": " + llvm::toString(Line.takeError()))
            .str();
    return;
  }
  Fit = *Line;
  if (Rising && Fit->Slope <= 0)
    Problem = (Quantity + " does not grow with the batch size").str();
}

/// Fits under the capacity less the margin, and below any size that ran out
/// of memory.
bool fitsInMemory(const Analysis &A, int64_t BatchSize, int64_t PeakBytes) {
  return PeakBytes <= A.UsableBytes &&
         (!A.FirstOutOfMemory || BatchSize < *A.FirstOutOfMemory);
}

/// Sets MaxBatchSize, or returns why there is none. The memory line rises
/// (checked before), so the sizes that fit are 1 up to some size.
std::string findMaxBatchSize(Analysis &A) {
  if (!A.canPredictMemory())
    return "cannot predict: " + A.MemoryProblem;
  if (A.CapacityBytes <= 0)
    return "the memory capacity is not known";
  if (A.FirstOutOfMemory && *A.FirstOutOfMemory <= 1)
    return "batch size 1 ran out of memory";
  auto Fits = [&](int64_t B) {
    return fitsInMemory(A, B, predictedPeakBytes(A, B));
  };
  if (!Fits(1))
    return llvm::formatv("even batch size 1 is predicted to need {0} bytes, "
                         "more than the usable {1} (the capacity less the "
                         "margin)",
                         predictedPeakBytes(A, 1), A.UsableBytes)
        .str();
  int64_t Limit = LargestSearchedBatchSize;
  if (A.FirstOutOfMemory)
    Limit = std::min(Limit, *A.FirstOutOfMemory - 1);
  A.MaxBatchSize =
      firstWhere(1, Limit + 1, [&](int64_t B) { return !Fits(B); }) - 1;
  return "";
}

} // namespace

namespace detail {

size_t segmentAt(SizePoints P, double BatchSize) {
  size_t I = size_t(llvm::upper_bound(P, BatchSize,
                                      [](double B, const auto &Point) {
                                        return B < double(Point.first);
                                      }) -
                    P.begin());
  return std::clamp<size_t>(I, 1, P.size() - 1);
}

double throughPoints(SizePoints P, double BatchSize, double LineSlope) {
  size_t I = segmentAt(P, BatchSize);
  double X0 = double(P[I - 1].first), Y0 = P[I - 1].second;
  double Slope = (P[I].second - Y0) / (double(P[I].first) - X0);
  bool Outside = BatchSize < X0 || BatchSize > double(P[I].first);
  if (Outside && !(Slope > 0))
    Slope = LineSlope;
  if (BatchSize > double(P[I].first))
    return P[I].second + Slope * (BatchSize - double(P[I].first));
  return Y0 + Slope * (BatchSize - X0);
}

double timeThroughPoints(SizePoints P, double BatchSize, double LineSlope) {
  double Ms = throughPoints(P, BatchSize, LineSlope);
  // No faster a sample than the smallest size measured.
  if (BatchSize < double(P.front().first))
    Ms = std::max(Ms, P.front().second * BatchSize / double(P.front().first));
  return Ms;
}

} // namespace detail

double predictedIterationMs(const Analysis &A, double BatchSize) {
  const auto &P = A.TimePoints;
  if (P.size() < 2 || !A.IterationMs)
    return A.IterationMs ? A.IterationMs->at(BatchSize) : 0;
  // Past the ends a time that fell is held flat, not continued down.
  return detail::timeThroughPoints(P, BatchSize,
                                   std::max(0.0, A.IterationMs->Slope));
}

int64_t predictedPeakBytes(const Analysis &A, int64_t BatchSize) {
  const auto &P = A.MemoryPoints;
  if (P.size() < 2 || !A.PeakBytes)
    return A.PeakBytes ? roundSaturated(A.PeakBytes->at(double(BatchSize))) : 0;
  return roundSaturated(std::max(
      0.0, detail::throughPoints(P, double(BatchSize), A.PeakBytes->Slope)));
}

namespace {

/// The throughput's interval from the time's (a slower run, fewer samples).
Interval throughputRange(int64_t BatchSize, Interval Ms) {
  // A time interval down to 0 (far past the sizes measured) leaves the
  // throughput without an upper bound.
  auto PerSecond = [&](double Time) {
    return Time > 0 ? double(BatchSize) / (Time / 1000)
                    : std::numeric_limits<double>::infinity();
  };
  return {PerSecond(Ms.High), PerSecond(Ms.Low)};
}

/// Samples per second at BatchSize; none where the predicted time is not
/// positive.
std::optional<double> throughputAt(const Analysis &A, int64_t BatchSize) {
  double Ms = predictedIterationMs(A, double(BatchSize));
  if (!(Ms > 0))
    return std::nullopt;
  return double(BatchSize) / (Ms / 1000);
}

/// The sizes from Lowest to Most that divide Samples, in increasing order:
/// those that are multiples of Step, else (none is) all of them.
std::vector<int64_t> wholeBatchSizes(int64_t Samples, int64_t Lowest,
                                     int64_t Most, int64_t Step) {
  std::vector<int64_t> Divisors;
  for (int64_t D = 1; D * D <= Samples; ++D)
    if (Samples % D == 0)
      for (int64_t Size : {D, Samples / D})
        if (Size >= Lowest && Size <= Most)
          Divisors.push_back(Size);
  llvm::sort(Divisors);
  Divisors.erase(std::unique(Divisors.begin(), Divisors.end()), Divisors.end());
  std::vector<int64_t> Rounded;
  for (int64_t Size : Divisors)
    if (Size % Step == 0)
      Rounded.push_back(Size);
  return Rounded.empty() ? Divisors : Rounded;
}

/// The number every batch size must divide: the greatest common divisor of
/// the datasets of the loaders given the batch size (the training one's
/// size where it is the only one), as a run saw them, else
/// where every run that saw its first epoch end agrees on it (epoch
/// iterations x batch size); 0 otherwise. A loop entered once an iteration,
/// or an epoch of one batch, says nothing of it.
int64_t wholeBatchSamples(const Measurement &M) {
  for (const MeasuredRun &Run : M.Runs)
    if (Run.DatasetSamples > 0)
      return Run.wholeBatchDivisor();
  int64_t Samples = 0;
  for (const MeasuredRun &Run : M.Runs) {
    if (Run.OutOfMemory || Run.EveryIterationAnEpoch || Run.EpochIterations < 2)
      continue;
    int64_t Seen = int64_t(Run.EpochIterations) * Run.BatchSize;
    if (Samples && Seen != Samples)
      return 0; // not every batch was whole (a loader that drops the last)
    Samples = Seen;
  }
  return Samples;
}

/// The smallest candidate (a multiple of RoundTo from the smallest size
/// measured up to MaxBatchSize, and MaxBatchSize itself) whose throughput
/// is within the slack of the best under the cap. Below the sizes measured
/// nothing is known of the fixed cost a smaller batch pays more often, so
/// nothing there is suggested. The time is piecewise linear, so the
/// throughput need not be monotonic: every candidate is looked at (2
/// million at most with the default RoundTo, a few milliseconds).
std::optional<int64_t> chooseBatchSize(const Analysis &A, int64_t MaxBatchSize,
                                       const ModelOptions &Options) {
  int64_t Step = std::clamp<int64_t>(Options.RoundTo, 1, MaxBatchSize);
  int64_t Lowest = A.SmallestMeasuredBatchSize > 0
                       ? std::min(A.SmallestMeasuredBatchSize, MaxBatchSize)
                       : 1;
  std::vector<int64_t> Whole;
  if (A.WholeBatchSamples > 0) {
    Whole = wholeBatchSizes(A.WholeBatchSamples, Lowest, MaxBatchSize, Step);
    if (Whole.empty())
      return std::nullopt;
  }
  int64_t Count = MaxBatchSize / Step; // candidates K * Step, K in [1, Count]
  int64_t First = std::max<int64_t>(1, (Lowest + Step - 1) / Step);
  auto ForEachCandidate = [&](llvm::function_ref<bool(int64_t)> Visit) {
    if (!Whole.empty()) {
      for (int64_t Size : Whole)
        if (!Visit(Size))
          return;
      return;
    }
    for (int64_t K = First; K <= Count + 1; ++K)
      if (!Visit(K <= Count ? K * Step : MaxBatchSize))
        return;
  };
  std::optional<double> Best;
  ForEachCandidate([&](int64_t Size) {
    if (std::optional<double> Throughput = throughputAt(A, Size))
      Best = std::max(Best.value_or(0), *Throughput);
    return true;
  });
  if (!Best)
    return std::nullopt;
  double Threshold =
      (1 - std::clamp(Options.ThroughputSlack, 0.0, 1.0)) * *Best;
  std::optional<int64_t> Chosen;
  ForEachCandidate([&](int64_t Size) {
    std::optional<double> Throughput = throughputAt(A, Size);
    if (Throughput && *Throughput >= Threshold)
      Chosen = Size;
    return !Chosen;
  });
  return Chosen;
}

/// Why a suggestion that fits is not offered.
std::string describeSmallGain(int64_t Current, int64_t Suggested, double Gain,
                              const ModelOptions &Options) {
  std::string MinGain = "(min gain " + percent(Options.MinGain) + ")";
  if (Suggested == Current)
    return llvm::formatv("batch size {0} is already the smallest within {1} of "
                         "the best predicted throughput under the memory cap",
                         Current, percent(Options.ThroughputSlack))
        .str();
  if (Suggested > Current && Gain <= 0)
    return llvm::formatv("batch size {0} trains at least as fast as any "
                         "larger size under the memory cap: the predicted "
                         "throughput falls as the batch grows ({1} would "
                         "change it by {2})",
                         Current, Suggested, percent(Gain))
        .str();
  if (Suggested > Current)
    return llvm::formatv(
               "batch size {0} is within {1} of the throughput "
               "predicted at batch size {2}, the suggested size under "
               "the memory cap {3}",
               Current, percent(Gain), Suggested, MinGain)
        .str();
  return llvm::formatv("batch size {0} is past the knee: {1} is within {2} of "
                       "the best predicted throughput, and switching would "
                       "change the throughput by {3} {4}",
                       Current, Suggested, percent(Options.ThroughputSlack),
                       percent(Gain), MinGain)
      .str();
}

/// Why a suggestion whose predicted gain reaches --min-gain is not made.
std::string describeUnsureGain(int64_t Current, int64_t Suggested, double Gain,
                               Interval Range, const ModelOptions &Options) {
  return llvm::formatv(
             "{0} is predicted to train {1} faster than {2}, but the 90% "
             "interval of the gain ({3} to {4}) reaches below the min gain "
             "{5}: the runs vary too much to be sure; measure on a quiet "
             "machine or with more --timing-runs",
             Suggested, percent(Gain), Current, percent(Range.Low),
             percent(Range.High), percent(Options.MinGain))
      .str();
}

/// The measured sizes a suggestion could move to (up to Cap, fitting, whole
/// batches where the loop needs them, not the current one), each with its
/// gain over the current size and the gain's interval. A measured size's
/// interval is the narrowest the model has.
std::vector<Suggestion> measuredAlternatives(const Analysis &A, int64_t Cap) {
  std::vector<Suggestion> Alternatives;
  for (const auto &[Size, Ms] : A.TimePoints) {
    if (Size == A.CurrentBatchSize || Size > Cap ||
        (A.WholeBatchSamples > 0 && A.WholeBatchSamples % Size != 0))
      continue;
    std::optional<Prediction> At = predictAt(A, Size);
    if (!At || !At->Fits)
      continue;
    double Gain = At->Throughput / A.Current->Throughput - 1;
    Interval Range = gainRange(A, A.CurrentBatchSize, Size, Gain);
    Alternatives.push_back(Suggestion{Size, Gain, Range, false, *At});
  }
  return Alternatives;
}

/// Of the measured alternatives, the one whose End of the gain's interval
/// is highest, if it reaches --min-gain; the first of equals.
std::optional<Suggestion> highestMeasured(const Analysis &A, int64_t Cap,
                                          const ModelOptions &Options,
                                          double Interval::*End) {
  std::optional<Suggestion> Highest;
  for (const Suggestion &S : measuredAlternatives(A, Cap))
    if (S.GainRange.*End >= Options.MinGain &&
        (!Highest || S.GainRange.*End > Highest->GainRange.*End))
      Highest = S;
  return Highest;
}

/// Where the chosen size's gain is not sure, the measured size whose gain
/// is surest: the highest low end of its interval, if that reaches
/// --min-gain.
std::optional<Suggestion> surestMeasuredSize(const Analysis &A, int64_t Cap,
                                             const ModelOptions &Options) {
  return highestMeasured(A, Cap, Options, &Interval::Low);
}

/// Where no size gains --min-gain by the point predictions, the measured
/// size whose gain's interval reaches highest, if it reaches --min-gain:
/// the points are the fastest runs, and the declared size has more of them
/// than most (the fastest of three to six against one probe), so a "none"
/// is as unsure as its runs. Measured sizes, and a measured current size,
/// only: an unmeasured one's interval is the curve's, not the runs', and
/// always reaches far.
std::optional<Suggestion> mostHopefulMeasuredSize(const Analysis &A,
                                                  int64_t Cap,
                                                  const ModelOptions &Options) {
  if (!llvm::any_of(A.TimePoints, [&](const auto &P) {
        return P.first == A.CurrentBatchSize;
      }))
    return std::nullopt;
  return highestMeasured(A, Cap, Options, &Interval::High);
}

/// What a "none" adds where the runs leave it unsure (mostHopefulMeasuredSize).
/// Not "more --timing-runs": the sweep repeats the sizes the decision rests
/// on, and the hopeful size is often a probe outside them.
std::string describeUnsureNone(const Suggestion &Hopeful,
                               const ModelOptions &Options) {
  return llvm::formatv("; not sure: {0}, measured, would change it by {1}, "
                       "and the 90% interval of the gain ({2} to {3}) "
                       "reaches the min gain {4}: the runs vary too much to "
                       "be sure; measure on a quiet machine",
                       Hopeful.BatchSize, percent(Hopeful.Gain),
                       percent(Hopeful.GainRange.Low),
                       percent(Hopeful.GainRange.High),
                       percent(Options.MinGain))
      .str();
}

/// The measured figures at a measured size: its kept time, its largest
/// peak. None at a size not measured.
std::optional<Prediction> measuredAt(const Analysis &A, int64_t Size) {
  auto Time = llvm::find_if(A.TimePoints,
                            [&](const auto &P) { return P.first == Size; });
  auto Peak = llvm::find_if(A.MemoryPoints,
                            [&](const auto &P) { return P.first == Size; });
  if (Time == A.TimePoints.end() || Peak == A.MemoryPoints.end() ||
      !(Time->second > 0))
    return std::nullopt;
  Prediction P;
  P.BatchSize = Size;
  P.IterationMs = Time->second;
  P.Throughput = double(Size) / (Time->second / 1000);
  P.PeakBytes = roundSaturated(Peak->second);
  P.Fits = (A.UsableBytes <= 0 || P.PeakBytes <= A.UsableBytes) &&
           (!A.FirstOutOfMemory || Size < *A.FirstOutOfMemory);
  P.IterationMsRange = A.IterationMs ? predictedIterationRange(A, double(Size))
                                     : Interval{P.IterationMs, P.IterationMs};
  P.ThroughputRange = throughputRange(Size, P.IterationMsRange);
  P.PeakBytesRange = {Peak->second, Peak->second};
  return P;
}

/// The one measured size's figures, where the runs measured one: its kept
/// time and the interval of a new run's from the runs' spread.
std::optional<Prediction> oneSizeFigures(const Analysis &A) {
  if (A.TimePoints.size() != 1 || A.MemoryPoints.size() != 1)
    return std::nullopt;
  int64_t Size = A.TimePoints.front().first;
  std::optional<Prediction> P = measuredAt(A, Size);
  std::optional<Interval> Range = measuredIterationRange(A, Size);
  if (!P || !Range)
    return std::nullopt;
  P->IterationMsRange = *Range;
  P->ThroughputRange = throughputRange(Size, *Range);
  return P;
}

/// Where the curve cannot be modelled, the measured sizes alone: of those
/// that fit and keep the bounds, the smallest within the slack of the best
/// measured throughput, offered where its measured gain over the current
/// size is surely past --min-gain.
void suggestFromMeasured(Analysis &A, llvm::StringRef Problem,
                         const ModelOptions &Options) {
  std::string Why = ("cannot predict: " + Problem).str();
  if (A.TimePoints.size() >= 2)
    A.Current = measuredAt(A, A.CurrentBatchSize);
  if (!A.Current) {
    A.NoSuggestionReason = Why;
    return;
  }
  int64_t Cap = suggestionCap(
      A, A.MaxBatchSize.value_or(std::numeric_limits<int64_t>::max()));
  std::vector<Prediction> Candidates;
  double Best = 0;
  for (const auto &[Size, Ms] : A.TimePoints) {
    std::optional<Prediction> At = measuredAt(A, Size);
    if (!At || !At->Fits || Size > Cap ||
        (A.WholeBatchSamples > 0 && A.WholeBatchSamples % Size != 0))
      continue;
    Candidates.push_back(*At);
    Best = std::max(Best, At->Throughput);
  }
  double Threshold = (1 - std::clamp(Options.ThroughputSlack, 0.0, 1.0)) * Best;
  for (const Prediction &At : Candidates) {
    if (At.Throughput < Threshold)
      continue;
    double Gain = At.Throughput / A.Current->Throughput - 1;
    Interval Range = gainRange(A, A.CurrentBatchSize, At.BatchSize, Gain);
    if (At.BatchSize != A.CurrentBatchSize && Range.Low >= Options.MinGain) {
      A.Suggested = Suggestion{At.BatchSize, Gain, Range, true, At};
      return;
    }
  }
  A.NoSuggestionReason =
      llvm::formatv("{0}; of the sizes measured, none surely trains {1} "
                    "faster than {2} (min gain)",
                    Why, percent(Options.MinGain), A.CurrentBatchSize)
          .str();
}

/// Sets Suggested, or NoSuggestionReason.
void suggest(const Measurement &M, Analysis &A,
             llvm::StringRef WhyNoMaxBatchSize, const ModelOptions &Options) {
  if (M.AtOwnBatchSize) {
    A.NoSuggestionReason =
        "the program runs at its own batch size, not a constant "
        "skyline-check can change, so no other size was measured";
    return;
  }
  if (A.CurrentBatchSize <= 0) {
    A.NoSuggestionReason = "the current batch size is not known";
    return;
  }
  if (!A.canPredictTime()) {
    suggestFromMeasured(A, A.TimeProblem, Options);
    return;
  }
  if (!A.MaxBatchSize && !A.canPredictMemory()) {
    suggestFromMeasured(A, A.MemoryProblem, Options);
    return;
  }
  if (!A.MaxBatchSize) {
    A.NoSuggestionReason = WhyNoMaxBatchSize.str();
    return;
  }
  if (!A.Current) {
    A.NoSuggestionReason =
        llvm::formatv("the predicted iteration time at the current batch size "
                      "{0} is not positive",
                      A.CurrentBatchSize)
            .str();
    return;
  }
  int64_t Cap = suggestionCap(A, *A.MaxBatchSize);
  std::optional<int64_t> Chosen = chooseBatchSize(A, Cap, Options);
  A.ChosenBatchSize = Chosen;
  std::optional<Prediction> At;
  if (Chosen)
    At = predictAt(A, *Chosen);
  if (!Chosen && A.WholeBatchSamples > 0) {
    A.NoSuggestionReason =
        llvm::formatv("no batch size up to {0} divides the dataset's {1} "
                      "samples, and the training loop needs whole batches",
                      Cap, A.WholeBatchSamples)
            .str();
    return;
  }
  if (!At) {
    A.NoSuggestionReason =
        llvm::formatv("the predicted iteration time is not positive up to "
                      "batch size {0}",
                      *A.MaxBatchSize)
            .str();
    return;
  }
  double Gain = At->Throughput / A.Current->Throughput - 1;
  // A current size that does not fit needs the change whatever it costs.
  bool CurrentFits = A.CurrentBatchSize <= *A.MaxBatchSize;
  if (CurrentFits &&
      (*Chosen == A.CurrentBatchSize || Gain < Options.MinGain)) {
    A.NoSuggestionReason =
        describeSmallGain(A.CurrentBatchSize, *Chosen, Gain, Options);
    if (std::optional<Suggestion> Hopeful =
            mostHopefulMeasuredSize(A, Cap, Options))
      A.NoSuggestionReason += describeUnsureNone(*Hopeful, Options);
    return;
  }
  Interval Range = gainRange(A, A.CurrentBatchSize, *Chosen, Gain);
  if (CurrentFits && Range.Low < Options.MinGain) {
    if (std::optional<Suggestion> Surest =
            surestMeasuredSize(A, Cap, Options)) {
      A.Suggested = *Surest;
      return;
    }
    A.Unsure = Suggestion{*Chosen, Gain, Range, false, *At};
    A.NoSuggestionReason =
        describeUnsureGain(A.CurrentBatchSize, *Chosen, Gain, Range, Options);
    return;
  }
  A.Suggested = Suggestion{*Chosen, Gain, Range, false, *At};
}

void collectPredictions(Analysis &A, const Measurement &M) {
  std::set<int64_t> Sizes;
  for (const MeasuredRun &Run : M.Runs)
    Sizes.insert(Run.BatchSize);
  Sizes.insert(A.CurrentBatchSize);
  if (A.Suggested)
    Sizes.insert(A.Suggested->BatchSize);
  if (A.MaxBatchSize)
    Sizes.insert(*A.MaxBatchSize);
  for (int64_t B : Sizes)
    if (std::optional<Prediction> P = predictAt(A, B))
      A.Predictions.push_back(*P);
}

} // namespace

// The smallest bound of the suggestion: past the data a batch is the whole
// dataset, whatever it asks for; at and past a size that failed, a size
// may fail like it; an epoch of one batch is no training.
int64_t suggestionCap(const Analysis &A, int64_t Cap) {
  for (int64_t Bound : {A.DataBound, A.FailureBound, A.DatasetSamples / 2})
    if (Bound > 0)
      Cap = std::min(Cap, Bound);
  return Cap;
}

llvm::Expected<LinearFit> fitLine(llvm::ArrayRef<double> X,
                                  llvm::ArrayRef<double> Y,
                                  llvm::ArrayRef<double> Weights) {
  if (X.size() != Y.size())
    return llvm::createStringError(llvm::formatv(
        "x and y differ in length ({0} and {1})", X.size(), Y.size()));
  if (!Weights.empty() && Weights.size() != X.size())
    return llvm::createStringError(
        llvm::formatv("{0} weights for {1} points", Weights.size(), X.size()));
  for (size_t I = 0; I < X.size(); ++I)
    if (!std::isfinite(X[I]) || !std::isfinite(Y[I]))
      return llvm::createStringError(
          llvm::formatv("point {0} is not a finite number", I + 1));
  for (size_t I = 0; I < Weights.size(); ++I)
    if (!std::isfinite(Weights[I]) || !(Weights[I] > 0))
      return llvm::createStringError(
          llvm::formatv("the weight of point {0} is not positive", I + 1));
  if (llvm::all_of(X, [&](double V) { return V == X.front(); }))
    return llvm::createStringError(llvm::formatv(
        "a line needs at least two distinct x values ({0} point(s) given)",
        X.size()));

  // Sums over values shifted by the first point: equal values then give
  // exact zeros, so a flat line has slope 0 and not rounding noise.
  size_t N = X.size();
  auto Weight = [&](size_t I) { return Weights.empty() ? 1.0 : Weights[I]; };
  double SumW = 0, MeanDX = 0, MeanDY = 0;
  for (size_t I = 0; I < N; ++I) {
    SumW += Weight(I);
    MeanDX += Weight(I) * (X[I] - X[0]);
    MeanDY += Weight(I) * (Y[I] - Y[0]);
  }
  MeanDX /= SumW;
  MeanDY /= SumW;
  double Sxx = 0, Sxy = 0, SStot = 0;
  for (size_t I = 0; I < N; ++I) {
    double DX = X[I] - X[0] - MeanDX, DY = Y[I] - Y[0] - MeanDY;
    Sxx += Weight(I) * DX * DX;
    Sxy += Weight(I) * DX * DY;
    SStot += Weight(I) * DY * DY;
  }
  if (!(Sxx > 0))
    return llvm::createStringError("the x values are too close to fit a line");

  LinearFit Fit;
  Fit.Points = N;
  Fit.Slope = Sxy / Sxx;
  Fit.Intercept = (Y[0] + MeanDY) - Fit.Slope * (X[0] + MeanDX);
  double SSres = 0;
  for (size_t I = 0; I < N; ++I) {
    Fit.Residuals.push_back(Y[I] - Fit.at(X[I]));
    SSres += Weight(I) * Fit.Residuals.back() * Fit.Residuals.back();
  }
  // Equal y values lie on the flat line the fit finds.
  if (SStot == 0)
    Fit.RSquared = SSres <= 1e-12 ? 1 : 0;
  else
    Fit.RSquared = 1 - SSres / SStot;
  return Fit;
}

Analysis analyze(const Measurement &M, int64_t CurrentBatchSize,
                 const ModelOptions &Options) {
  Analysis A;
  A.CurrentBatchSize = CurrentBatchSize;
  A.CapacityBytes = M.MemoryCapacityBytes;
  A.UsableBytes = usableBytes(M.MemoryCapacityBytes, Options.MemoryMargin);
  A.FirstOutOfMemory = firstOutOfMemory(M);
  A.DataBound = M.LargerThanTheData > 1 ? M.LargerThanTheData - 1 : 0;
  A.FailureBound = M.FirstFailure > 1 ? M.FirstFailure - 1 : 0;
  for (const MeasuredRun &Run : M.Runs)
    A.DatasetSamples = std::max(A.DatasetSamples, Run.DatasetSamples);
  if (Options.WholeBatchesOnly)
    A.WholeBatchSamples = wholeBatchSamples(M);

  Points P = collectPoints(M);
  // The fastest median at each size; memory is planned for its worst run.
  A.TimePoints = oneBySize(P, P.IterationMs, lower);
  A.MemoryPoints = oneBySize(P, P.PeakBytes, higher);
  if (!P.DistinctSizes.empty()) {
    A.SmallestMeasuredBatchSize = *P.DistinctSizes.begin();
    A.LargestMeasuredBatchSize = *P.DistinctSizes.rbegin();
  }
  // Time is fitted in relative terms: run-to-run noise grows with the time,
  // and unweighted, the largest size (often 100x the smallest) decides the
  // line while the small sizes' predictions carry its intercept's error.
  // Memory is close to exact, and its intercept (the weights) matters.
  fitQuantity(M, P, P.IterationMs, "the iteration time", A.IterationMs,
              A.TimeProblem, /*Relative=*/true, /*Rising=*/false);
  fitQuantity(M, P, P.PeakBytes, "peak memory", A.PeakBytes, A.MemoryProblem,
              /*Relative=*/false, /*Rising=*/true);
  detail::estimateUncertainty(M, A);
  // A time that falls as the batch grows (flat is fine: a GPU below its
  // capacity) is noise or a machine that changed between runs.
  if (A.TimeProblem.empty())
    A.TimeProblem = detail::timeFallsProblem(A);

  A.OneSize = oneSizeFigures(A);
  std::string WhyNoMaxBatchSize = findMaxBatchSize(A);
  A.Current = predictAt(A, CurrentBatchSize);
  suggest(M, A, WhyNoMaxBatchSize, Options);
  collectPredictions(A, M);
  return A;
}

std::optional<Prediction> predictAt(const Analysis &A, int64_t BatchSize) {
  if (BatchSize <= 0 || !A.canPredictTime() || !A.canPredictMemory())
    return std::nullopt;
  std::optional<double> Throughput = throughputAt(A, BatchSize);
  if (!Throughput)
    return std::nullopt;
  Prediction P;
  P.BatchSize = BatchSize;
  P.IterationMs = predictedIterationMs(A, double(BatchSize));
  P.Throughput = *Throughput;
  P.PeakBytes = predictedPeakBytes(A, BatchSize);
  P.Fits = fitsInMemory(A, BatchSize, P.PeakBytes);
  P.Extrapolated = BatchSize > A.LargestMeasuredBatchSize ||
                   BatchSize < A.SmallestMeasuredBatchSize;
  P.IterationMsRange = predictedIterationRange(A, double(BatchSize));
  P.ThroughputRange = throughputRange(BatchSize, P.IterationMsRange);
  P.PeakBytesRange = predictedPeakRange(A, BatchSize);
  return P;
}

double scaleLearningRate(double Rate, int64_t From, int64_t To) {
  if (From <= 0 || To <= 0)
    return Rate;
  return Rate * double(To) / double(From);
}

} // namespace skyline
