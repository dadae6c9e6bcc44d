//===- Uncertainty.cpp - 90% intervals around the predictions -------------===//
//
// Two sources of error, both in log terms (a spread is a share of the time):
// the runs' own spread, pooled from the sizes measured more than once, and
// the curve's, which is zero at a measured size and grows with the distance
// to the sizes around it (docs/model.md, "Intervals"). Every interval is
// centred on its own point (from the kept, fastest runs), so the point lies
// inside it. Where the measured sizes show the curve bending one way, the
// interval also reaches the neighbouring segments' lines (bendBound).
//
//===----------------------------------------------------------------------===//

#include "ModelDetail.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace skyline {
namespace {

/// The smallest share a run's spread is given: equal medians in a report
/// (or a test) do not make a prediction exact.
constexpr double SpreadFloor = 0.005;

/// A size's runs: ln of every timing run's median.
using LogTimes = std::map<int64_t, std::vector<double>>;

LogTimes logTimesBySize(const Measurement &M) {
  LogTimes Times;
  for (const MeasuredRun &Run : M.Runs) {
    if (Run.OutOfMemory || Run.Iterations == 0 || Run.BatchSize <= 0)
      continue;
    std::vector<double> &Logs = Times[Run.BatchSize];
    if (Run.TimingRunMedians.empty()) {
      if (Run.IterationMs.Median > 0)
        Logs.push_back(std::log(Run.IterationMs.Median));
      continue;
    }
    for (double Ms : Run.TimingRunMedians)
      if (Ms > 0)
        Logs.push_back(std::log(Ms));
  }
  return Times;
}

double mean(llvm::ArrayRef<double> Values) {
  double Sum = 0;
  for (double V : Values)
    Sum += V;
  return Sum / double(Values.size());
}

/// The pooled standard deviation about each size's mean, and its degrees of
/// freedom (0: no size has two values).
std::pair<double, unsigned> pooledSpread(const LogTimes &Times) {
  double Squares = 0;
  unsigned Dof = 0;
  for (const auto &[Size, Logs] : Times) {
    if (Logs.size() < 2)
      continue;
    double Mean = mean(Logs);
    for (double L : Logs)
      Squares += (L - Mean) * (L - Mean);
    Dof += unsigned(Logs.size()) - 1;
  }
  return {Dof ? std::sqrt(Squares / Dof) : 0.0, Dof};
}

/// Where no size ran twice: the assumed spread, or a run's own median
/// error where that is larger (iterations that vary a lot).
double assumedSpread(const Measurement &M) {
  double Sigma = AssumedRunSigma;
  for (const MeasuredRun &Run : M.Runs)
    if (!Run.OutOfMemory && Run.Iterations > 0 && Run.IterationMs.Median > 0)
      Sigma = std::max(Sigma, 1.2533 * Run.IterationMs.Stddev /
                                  std::sqrt(double(Run.Iterations)) /
                                  Run.IterationMs.Median);
  return Sigma;
}

/// Where a batch size lies on the curve through the measured sizes: the
/// segment P[Index - 1]..P[Index], the share Lambda of the way along it
/// (below 0 or above 1 past the ends), and h(b) = ln(b/a) ln(b/c): the
/// linear interpolation's error is about the curvature times h, negative
/// between a and c (a chord), positive past them, zero at either.
struct CurvePosition {
  size_t Index = 1;
  double Lambda = 0;
  double Span = 0;
  /// The weight of measured size I's mean in the value here.
  double weight(size_t I) const {
    return I == Index ? Lambda : I + 1 == Index ? 1 - Lambda : 0;
  }
};

CurvePosition positionOn(detail::SizePoints P, double BatchSize) {
  CurvePosition At;
  At.Index = detail::segmentAt(P, BatchSize);
  double A = double(P[At.Index - 1].first), C = double(P[At.Index].first);
  At.Lambda = (BatchSize - A) / (C - A);
  At.Span = std::log(BatchSize / A) * std::log(BatchSize / C);
  return At;
}

/// The variance, in Sigma² units, of the difference of the interpolated
/// means at two positions (one of them none: of the value at the other).
double meanVarianceShare(const CurvePosition &X, const CurvePosition *Y,
                         llvm::ArrayRef<unsigned> Runs) {
  double Share = 0;
  for (size_t I = 0; I < Runs.size(); ++I) {
    double W = X.weight(I) - (Y ? Y->weight(I) : 0.0);
    Share += W * W / std::max(1u, Runs[I]);
  }
  return Share;
}

/// The curvature behind the intervals: each inner size left out and
/// predicted from its neighbours; the error beyond what the runs' spread
/// explains, per unit of h, combined with Prior as one more point.
std::pair<double, unsigned> leaveOneOutCurvature(detail::SizePoints P,
                                                 llvm::ArrayRef<unsigned> Runs,
                                                 double Sigma, double Prior) {
  double Sum = Prior * Prior;
  unsigned Inner = 0;
  for (size_t I = 1; I + 1 < P.size(); ++I) {
    double A = double(P[I - 1].first), B = double(P[I].first),
           C = double(P[I + 1].first);
    double Lambda = (B - A) / (C - A);
    double Between =
        P[I - 1].second + Lambda * (P[I + 1].second - P[I - 1].second);
    if (!(Between > 0) || !(P[I].second > 0))
      continue;
    double Error = std::log(P[I].second / Between);
    double Noise = Sigma * Sigma *
                   (1.0 / std::max(1u, Runs[I]) +
                    Lambda * Lambda / std::max(1u, Runs[I + 1]) +
                    (1 - Lambda) * (1 - Lambda) / std::max(1u, Runs[I - 1]));
    double H = std::log(B / A) * std::log(C / B);
    if (!(H > 0))
      continue;
    Sum += std::max(0.0, Error * Error - Noise) / (H * H);
    ++Inner;
  }
  return {std::sqrt(Sum / (Inner + 1)), Inner};
}

/// The standard deviation of ln(the time) at BatchSize: of a new
/// measurement there, of the mean with OfMean; without the curve's error
/// with NoiseOnly.
double logSigma(detail::SizePoints Centres, llvm::ArrayRef<unsigned> Runs,
                const TimeUncertainty &U, double BatchSize, bool OfMean,
                bool NoiseOnly = false) {
  CurvePosition At = positionOn(Centres, BatchSize);
  double Curve = NoiseOnly ? 0.0 : U.Curvature * At.Span;
  double Variance =
      U.RunSigma * U.RunSigma * meanVarianceShare(At, nullptr, Runs) +
      Curve * Curve;
  if (!OfMean)
    Variance += U.RunSigma * U.RunSigma;
  return std::sqrt(Variance);
}

/// The interval around a point: centred on the point's own estimate, so
/// the point lies strictly inside wherever the spread is not zero.
Interval around(double Point, double Sigma, double Quantile) {
  double Half = Quantile * Sigma;
  return {Point * std::exp(-Half), Point * std::exp(Half)};
}

std::string formatMs(double Ms) {
  return llvm::formatv("{0}", llvm::format("%.3g", Ms)).str();
}

/// The least and the most the curve through P may be at BatchSize given
/// how it bends: the chord's value, and where the bend is known, the
/// bound (bendBound) on the other side.
std::pair<double, double> chordAndBend(detail::SizePoints P, double BatchSize,
                                       double Chord) {
  std::optional<double> Bend = detail::bendBound(P, BatchSize);
  if (!Bend)
    return {Chord, Chord};
  return {std::min(Chord, *Bend), std::max(Chord, *Bend)};
}

} // namespace

TimeUncertainty runSpread(const Measurement &M) {
  auto [Sigma, Dof] = pooledSpread(logTimesBySize(M));
  TimeUncertainty U;
  U.Dof = Dof;
  U.RunSigma = std::max(SpreadFloor, Dof ? Sigma : assumedSpread(M));
  U.Quantile = studentT90(Dof);
  return U;
}

double studentT90(unsigned Dof) {
  // The 0.95 quantiles of Student's t, 1 to 30 degrees of freedom.
  static constexpr double Table[] = {
      6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812,
      1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725,
      1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697};
  if (Dof == 0)
    return 1.645;
  if (Dof <= std::size(Table))
    return Table[Dof - 1];
  return Dof <= 60 ? 1.671 : Dof <= 120 ? 1.658 : 1.645;
}

namespace detail {

std::optional<double> bendBound(SizePoints P, double BatchSize) {
  if (P.size() < 3 || !(BatchSize > double(P.front().first)) ||
      !(BatchSize < double(P.back().first)))
    return std::nullopt;
  size_t I = segmentAt(P, BatchSize);
  auto Slope = [&](size_t J) {
    return (P[J].second - P[J - 1].second) /
           double(P[J].first - P[J - 1].first);
  };
  double Chord = Slope(I);
  std::optional<double> Before, After;
  if (I >= 2)
    Before = Slope(I - 1);
  if (I + 1 < P.size())
    After = Slope(I + 1);
  // A segment that falls is noise (a larger batch is no faster): how the
  // curve bends is then not known.
  if (!(Chord >= 0) || (Before && !(*Before >= 0)) || (After && !(*After >= 0)))
    return std::nullopt;
  bool Up = (!Before || *Before <= Chord) && (!After || *After >= Chord);
  bool Down = (!Before || *Before >= Chord) && (!After || *After <= Chord);
  if (Up == Down) // straight, or bending both ways: nothing to say
    return std::nullopt;
  // A convex curve is above its tangents, and its tangent at P[I - 1] is
  // no shallower than the segment before (at P[I], no steeper than the
  // one after); a concave one, the other way round.
  double A = double(P[I - 1].first), C = double(P[I].first);
  std::optional<double> Bound;
  auto Take = [&](double Line) {
    Bound = !Bound ? Line
            : Up   ? std::max(*Bound, Line)
                   : std::min(*Bound, Line);
  };
  if (Before)
    Take(P[I - 1].second + *Before * (BatchSize - A));
  if (After)
    Take(P[I].second - *After * (C - BatchSize));
  if (!Bound || !(*Bound > 0))
    return std::nullopt;
  return Bound;
}

void estimateUncertainty(const Measurement &M, Analysis &A) {
  LogTimes Times = logTimesBySize(M);
  for (const auto &[Size, Logs] : Times) {
    if (Logs.empty())
      continue;
    A.TimeCentres.emplace_back(Size, std::exp(mean(Logs)));
    A.TimeRuns.push_back(unsigned(Logs.size()));
  }
  A.Time = runSpread(M);
  std::tie(A.Time.Curvature, A.Time.CurvaturePoints) = leaveOneOutCurvature(
      A.TimeCentres, A.TimeRuns, A.Time.RunSigma, PriorTimeCurvature);

  // Memory: a peak is close to exact; sizes measured twice (the gate's
  // repeats) show what it moves.
  LogTimes Peaks;
  for (const MeasuredRun &Run : M.Runs)
    if (!Run.OutOfMemory && Run.Iterations > 0 && Run.PeakBytes > 0)
      Peaks[Run.BatchSize].push_back(std::log(double(Run.PeakBytes)));
  auto [PeakSigma, PeakDof] = pooledSpread(Peaks);
  A.Memory.Dof = PeakDof;
  A.Memory.RunSigma = std::max(SpreadFloor, PeakSigma);
  A.Memory.Quantile = studentT90(PeakDof);
  std::vector<unsigned> Once(A.MemoryPoints.size(), 1);
  std::tie(A.Memory.Curvature, A.Memory.CurvaturePoints) = leaveOneOutCurvature(
      A.MemoryPoints, Once, A.Memory.RunSigma, PriorMemoryCurvature);
}

std::string timeFallsProblem(const Analysis &A) {
  const auto &C = A.TimeCentres;
  for (size_t I = 1; I < C.size(); ++I) {
    double Fall = std::log(C[I].second / C[I - 1].second);
    double Sigma = A.Time.RunSigma *
                   std::sqrt(1.0 / A.TimeRuns[I] + 1.0 / A.TimeRuns[I - 1]);
    double Allowed = A.Time.Quantile * Sigma;
    if (Fall >= -Allowed)
      continue;
    return llvm::formatv(
               "the iteration time falls from {0} ms at batch size {1} to "
               "{2} ms at {3} ({4}%), more than the runs' spread explains "
               "(-{5}%): no curve through the sizes can be trusted",
               formatMs(C[I - 1].second), C[I - 1].first, formatMs(C[I].second),
               C[I].first, llvm::format("%.0f", (std::exp(Fall) - 1) * 100),
               llvm::format("%.0f", (1 - std::exp(-Allowed)) * 100))
        .str();
  }
  return "";
}

} // namespace detail

Interval predictedIterationRange(const Analysis &A, double BatchSize,
                                 bool OfMean) {
  double Point = predictedIterationMs(A, BatchSize);
  if (A.TimeCentres.size() < 2 || A.TimePoints.size() < 2 || !A.IterationMs ||
      !(Point > 0))
    return {Point, Point};
  // Centred on the point (the curve through the kept times): the runs'
  // means would put a point from the fastest runs on the interval's edge.
  double Sigma = logSigma(A.TimeCentres, A.TimeRuns, A.Time, BatchSize, OfMean);
  Interval Range = around(Point, Sigma, A.Time.Quantile);
  // Where the curve bends, it may be anywhere between the chord and the
  // bound: the interval reaches the bound, widened by the runs' noise.
  auto [Least, Most] = chordAndBend(A.TimePoints, BatchSize, Point);
  double Noise =
      A.Time.Quantile * logSigma(A.TimeCentres, A.TimeRuns, A.Time, BatchSize,
                                 OfMean, /*NoiseOnly=*/true);
  Range.Low = std::min(Range.Low, Least * std::exp(-Noise));
  Range.High = std::max(Range.High, Most * std::exp(Noise));
  return Range;
}

std::optional<Interval> measuredIterationRange(const Analysis &A,
                                               int64_t BatchSize) {
  auto Time = llvm::find_if(
      A.TimePoints, [&](const auto &P) { return P.first == BatchSize; });
  for (size_t I = 0; I < A.TimeCentres.size(); ++I) {
    if (A.TimeCentres[I].first != BatchSize || Time == A.TimePoints.end())
      continue;
    // A new run's spread about the mean, and the mean's own (logSigma at a
    // measured size, where the curve adds nothing).
    double Sigma =
        A.Time.RunSigma * std::sqrt(1 + 1.0 / std::max(1u, A.TimeRuns[I]));
    return around(Time->second, Sigma, A.Time.Quantile);
  }
  return std::nullopt;
}

Interval predictedPeakRange(const Analysis &A, int64_t BatchSize) {
  double Point = double(predictedPeakBytes(A, BatchSize));
  if (A.MemoryPoints.size() < 2 || !(Point > 0))
    return {Point, Point};
  std::vector<unsigned> Once(A.MemoryPoints.size(), 1);
  double Sigma = logSigma(A.MemoryPoints, Once, A.Memory, double(BatchSize),
                          /*OfMean=*/false);
  Interval Range = around(Point, Sigma, A.Memory.Quantile);
  return {std::floor(Range.Low), std::ceil(Range.High)};
}

std::optional<MeasuredGain> measuredGain(const Analysis &A, int64_t From,
                                         int64_t To) {
  auto Find = [&](int64_t Size) -> std::optional<size_t> {
    for (size_t I = 0; I < A.TimeCentres.size(); ++I)
      if (A.TimeCentres[I].first == Size && A.TimeCentres[I].second > 0)
        return I;
    return std::nullopt;
  };
  std::optional<size_t> F = Find(From), T = Find(To);
  if (!F || !T || From <= 0 || To <= 0)
    return std::nullopt;
  // The kept times, as the point gain (gainRange) is from.
  auto Kept = [&](int64_t Size) {
    auto It = llvm::find_if(A.TimePoints,
                            [&](const auto &P) { return P.first == Size; });
    return It == A.TimePoints.end() ? 0.0 : It->second;
  };
  double FromMs = Kept(From), ToMs = Kept(To);
  if (!(FromMs > 0) || !(ToMs > 0))
    return std::nullopt;
  MeasuredGain Gain;
  Gain.LogRatio =
      std::log(double(To) / double(From)) - std::log(ToMs / FromMs);
  Gain.RunSigma = A.Time.RunSigma;
  Gain.Dof = A.Time.Dof;
  Gain.FromRuns = A.TimeRuns[*F];
  Gain.ToRuns = A.TimeRuns[*T];
  return Gain;
}

Interval gainRange(const Analysis &A, int64_t From, int64_t To, double Gain) {
  if (From == To || From <= 0 || To <= 0 || A.TimeCentres.size() < 2 ||
      A.TimePoints.size() < 2 || !A.IterationMs || !(1 + Gain > 0))
    return {Gain, Gain};
  // The times the point Gain is from (the curve through the kept times):
  // the interval is centred on the point, and the bends are theirs.
  double Slope = std::max(0.0, A.IterationMs->Slope);
  double FromMs = detail::timeThroughPoints(A.TimePoints, double(From), Slope);
  double ToMs = detail::timeThroughPoints(A.TimePoints, double(To), Slope);
  if (!(FromMs > 0) || !(ToMs > 0))
    return {Gain, Gain};
  // The two sizes share the measured means they are interpolated from and
  // the curve's one curvature: their errors partly cancel in the ratio.
  CurvePosition F = positionOn(A.TimeCentres, double(From));
  CurvePosition T = positionOn(A.TimeCentres, double(To));
  double Curve = A.Time.Curvature * (T.Span - F.Span);
  double Sigma = std::sqrt(A.Time.RunSigma * A.Time.RunSigma *
                               meanVarianceShare(T, &F, A.TimeRuns) +
                           Curve * Curve);
  Interval Range = around(1 + Gain, Sigma, A.Time.Quantile);
  // Where the curve bends at either size, its time may reach the bound
  // (predictedIterationRange): the gain's least with To's most and From's
  // least, its most the other way round.
  auto [FromLeast, FromMost] = chordAndBend(A.TimePoints, double(From), FromMs);
  auto [ToLeast, ToMost] = chordAndBend(A.TimePoints, double(To), ToMs);
  double Noise = A.Time.Quantile * A.Time.RunSigma *
                 std::sqrt(meanVarianceShare(T, &F, A.TimeRuns));
  double Sizes = std::log(double(To) / double(From));
  Range.Low = std::min(Range.Low,
                       std::exp(Sizes - std::log(ToMost / FromLeast) - Noise));
  Range.High = std::max(Range.High,
                        std::exp(Sizes - std::log(ToLeast / FromMost) + Noise));
  return {Range.Low - 1, Range.High - 1};
}

} // namespace skyline
