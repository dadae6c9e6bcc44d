//===- Model.h - Predictions from the measured runs -------------*- C++ -*-===//
//
// The fifth stage: least-squares lines of iteration time and peak memory
// against batch size (Skyline's observation: both are close to linear), and
// what follows from them: throughput b / t(b), the largest batch size that
// fits under the memory capacity with a margin, and the suggested size, the
// smallest whose throughput is within a slack of the best that fits (past
// the knee a bigger batch buys little speed and costs memory).
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_MODEL_H
#define SKYLINE_MODEL_H

#include "skyline/Measurement.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace skyline {

/// y = Intercept + Slope * x, fitted by (weighted) least squares.
struct LinearFit {
  double Intercept = 0;
  double Slope = 0;
  double RSquared = 0;           // 1 when the points lie on the line (weighted
                                 // like the fit)
  std::vector<double> Residuals; // y - fit, in the order of the points
  unsigned Points = 0;
  double at(double X) const { return Intercept + Slope * X; }
};

/// Fails with the reason when fewer than two distinct X values are given.
/// Weights, when given, one a point and positive, weigh the squared
/// residuals (1 / y² fits relative errors).
llvm::Expected<LinearFit> fitLine(llvm::ArrayRef<double> X,
                                  llvm::ArrayRef<double> Y,
                                  llvm::ArrayRef<double> Weights = {});

/// The search for the largest batch size that fits stops here, so that a huge
/// capacity or a nearly flat memory line stays a bounded search.
constexpr int64_t LargestSearchedBatchSize = int64_t(1) << 24;

struct ModelOptions {
  double MemoryMargin = 0.10;    // --memory-margin: capacity kept free
  int64_t RoundTo = 8;           // --round-to: suggestions are multiples
  double ThroughputSlack = 0.05; // --throughput-slack: within this of the best
  double MinGain = 0.05;         // --min-gain: offered from this gain on
  /// The training loop shapes tensors by the batch size
  /// (TrainingLoop::BatchShapes): a short last batch fails, so where the
  /// dataset's size is known only its divisors are suggested.
  bool WholeBatchesOnly = false;
};

/// A 90% interval: where a quantity is expected to land nine times in ten.
struct Interval {
  double Low = 0, High = 0;
  bool contains(double Value) const { return Low <= Value && Value <= High; }
};

/// How far the measured times are from being exact (docs/model.md,
/// "Intervals"). In log terms, so that a spread is a share of the time.
struct TimeUncertainty {
  /// The standard deviation of ln(a timing run's median) about its size's
  /// mean, pooled over the sizes with repeated runs.
  double RunSigma = 0;
  /// Its degrees of freedom; 0 when no size had two timing runs and
  /// RunSigma is assumed (AssumedRunSigma, or the runs' own spread).
  unsigned Dof = 0;
  /// The interpolation's error per unit of h(b) (interpolationSpan), from
  /// leaving each inner size out, combined with a prior.
  double Curvature = 0;
  unsigned CurvaturePoints = 0; // the inner sizes behind Curvature
  /// The two-sided 90% quantile used: Student's t with Dof, else 1.645.
  double Quantile = 1.645;
};

/// The run-to-run spread assumed where no size ran twice: timing runs of
/// one program differ by a few percent on a quiet machine.
constexpr double AssumedRunSigma = 0.05;
/// The prior of TimeUncertainty::Curvature (and the memory's): what a
/// curve between two sizes may bend before any size shows how much it does.
constexpr double PriorTimeCurvature = 0.10;
constexpr double PriorMemoryCurvature = 0.02;

/// The model's view of one batch size.
struct Prediction {
  int64_t BatchSize = 0;
  double IterationMs = 0;
  double Throughput = 0; // samples/s
  int64_t PeakBytes = 0;
  /// 90% intervals: where a new timing run's median, the throughput it
  /// gives, and the peak of a new run are expected to land.
  Interval IterationMsRange, ThroughputRange, PeakBytesRange;
  bool Fits = false;         // PeakBytes within the capacity less the margin
  bool Extrapolated = false; // outside the batch sizes measured
};

struct Suggestion {
  int64_t BatchSize = 0;
  double Gain = 0; // predicted throughput over the current size's, less 1
  /// The gain's 90% interval (of the mean throughputs); the suggestion is
  /// made only where its low end reaches --min-gain.
  Interval GainRange;
  /// Chosen among the measured sizes, their measured figures: the time
  /// could not be modelled (Analysis::TimeProblem).
  bool MeasuredOnly = false;
  Prediction At;
};

struct Analysis {
  int64_t CurrentBatchSize = 0;
  int64_t CapacityBytes = 0;
  int64_t UsableBytes = 0;              // capacity less the margin
  std::optional<LinearFit> IterationMs; // against batch size
  std::optional<LinearFit> PeakBytes;
  /// Why the time (memory) cannot be predicted ("only one ..."); empty when
  /// it can. A poor fit stays in IterationMs (PeakBytes) to show its R².
  std::string TimeProblem;
  std::string MemoryProblem;
  /// The smallest batch size that ran out of memory, when one did.
  std::optional<int64_t> FirstOutOfMemory;
  /// The largest size predicted to fit under UsableBytes (and below any
  /// size that ran out of memory), at most LargestSearchedBatchSize; none
  /// without a memory fit or when even 1 does not fit.
  std::optional<int64_t> MaxBatchSize;
  /// One less than the smallest size whose every iteration was a whole
  /// epoch (Measurement::LargerThanTheData): the suggestion stays at or
  /// below it. 0: no such bound.
  int64_t DataBound = 0;
  /// One less than the smallest size whose run failed
  /// (Measurement::FirstFailure): the suggestion stays at or below it.
  /// 0: no such bound.
  int64_t FailureBound = 0;
  /// The dataset's size in samples, where the program needs whole batches
  /// (ModelOptions::WholeBatchesOnly) and runs saw its first epoch end: the
  /// epoch's iterations times the batch size, the same at every size that
  /// saw it (a size that does not divide the dataset fails at the epoch's
  /// end). The suggestion divides it. 0: not known.
  int64_t WholeBatchSamples = 0;
  /// The training loader's dataset size, as the runs saw it (0: they did
  /// not): the suggestion is at most half of it, two batches an epoch.
  int64_t DatasetSamples = 0;
  std::optional<Prediction> Current;
  /// Where the runs measured one size only (the program's own, where its
  /// batch size is not a literal skyline-check can change, or the only one
  /// that ran): its kept time with the 90% interval of a new timing run's
  /// median from the runs' spread (measuredIterationRange), the throughput
  /// from them, its peak as measured. Nothing is predicted at other sizes.
  /// None where no size or several ran.
  std::optional<Prediction> OneSize;
  /// The size the knee search chose, offered or not (its gain may be too
  /// small or not sure): where the sweep measures next to settle it.
  std::optional<int64_t> ChosenBatchSize;
  std::optional<Suggestion> Suggested;
  /// Where no suggestion is made because the chosen size's gain reaches
  /// --min-gain but its interval reaches below it: that size, its gain and
  /// the interval. More timing runs may settle it (the sweep's settling).
  std::optional<Suggestion> Unsure;
  std::string NoSuggestionReason; // set when Suggested is not
  /// Sizes worth showing: the measured ones, the current, the suggested,
  /// the maximum, in increasing order without repeats.
  std::vector<Prediction> Predictions;
  /// The largest batch size that ran without running out of memory; a
  /// prediction beyond it is extrapolated. 0 when none did.
  int64_t LargestMeasuredBatchSize = 0;
  /// The smallest such size; below it the throughput is never predicted
  /// above its own, and no size is suggested unless the largest that fits
  /// is itself below it. 0 when none ran.
  int64_t SmallestMeasuredBatchSize = 0;
  /// The kept median iteration time at each measured size (the lowest of
  /// the runs at one size, where the gate added some), by size.
  /// Predicted times interpolate between them (predictedIterationMs).
  std::vector<std::pair<int64_t, double>> TimePoints;
  /// The largest peak bytes at each measured size, by size. Predicted
  /// peaks interpolate between them (predictedPeakBytes).
  std::vector<std::pair<int64_t, double>> MemoryPoints;
  /// The geometric mean of every timing run's median at each measured
  /// size, and how many runs it is of, by size: where the runs' spread and
  /// the curvature are measured from (the intervals are centred on the
  /// points).
  std::vector<std::pair<int64_t, double>> TimeCentres;
  std::vector<unsigned> TimeRuns;
  TimeUncertainty Time;
  /// The memory's: RunSigma from sizes with two peaks, else 0 (a peak is
  /// close to exact); Curvature from leaving each inner size out.
  TimeUncertainty Memory;

  /// A fit may be kept to show its R² and still be unusable: the problem says
  /// why.
  bool canPredictTime() const { return IterationMs && TimeProblem.empty(); }
  bool canPredictMemory() const { return PeakBytes && MemoryProblem.empty(); }
};

/// Fits the runs that did not run out of memory (median iteration time,
/// peak bytes) and searches the batch sizes.
Analysis analyze(const Measurement &M, int64_t CurrentBatchSize,
                 const ModelOptions &Options);

/// The largest size a suggestion may be: Cap (the largest that fits) lowered
/// to below the smallest size whose batch was the whole dataset
/// (DataBound), below the smallest that failed (FailureBound) and to half
/// the training data (DatasetSamples / 2: two batches an epoch). The
/// editor offers no size past it either.
int64_t suggestionCap(const Analysis &A, int64_t Cap);

/// The predicted iteration time: piecewise linear through TimePoints (the
/// measured sizes' medians), so that a time line that bends (a
/// cache the activations outgrow) is followed; past the ends, the end
/// segment continues (the fitted line's slope if that segment falls), and
/// below the smallest size no faster a sample than there: a first segment
/// that heads for zero time (throughput that fell from the smallest size
/// on) says nothing of a fixed cost smaller batches pay more often. With
/// fewer than two sizes, the fitted line. Meaningful when canPredictTime().
double predictedIterationMs(const Analysis &A, double BatchSize);

/// The predicted peak bytes: piecewise linear through MemoryPoints, like
/// the time, past the ends the end segment continued (the fitted line's
/// slope where it does not rise). Measured on a GAN: the line through 100
/// to 30,000 predicted 133 MiB at 100, where 191 MiB was measured (the
/// bytes a sample grow at large sizes). With fewer than two sizes, the
/// fitted line. Meaningful when canPredictMemory().
int64_t predictedPeakBytes(const Analysis &A, int64_t BatchSize);

/// The prediction at BatchSize; none when time or memory cannot be predicted,
/// or the predicted time there is not positive.
std::optional<Prediction> predictAt(const Analysis &A, int64_t BatchSize);

/// The 90% interval of a new timing run's median at BatchSize; of its mean
/// (the curve's own uncertainty, without a single run's spread) with
/// OfMean. Centred on predictedIterationMs, which it holds strictly inside.
/// Meaningful when canPredictTime().
Interval predictedIterationRange(const Analysis &A, double BatchSize,
                                 bool OfMean = false);

/// The 90% interval of a new timing run's median at a measured size, from
/// the runs' spread alone (no curve between sizes): ln(the kept time)
/// +- t x RunSigma x sqrt(1 + 1/n), n the size's timing runs. None at a
/// size not measured.
std::optional<Interval> measuredIterationRange(const Analysis &A,
                                               int64_t BatchSize);

/// The 90% interval of a new run's peak at BatchSize.
Interval predictedPeakRange(const Analysis &A, int64_t BatchSize);

/// The 90% interval of To's throughput over From's, less 1 (the gain),
/// centred on Gain (the kept times'), which it holds strictly inside.
Interval gainRange(const Analysis &A, int64_t From, int64_t To, double Gain);

/// The gain of To over From where both sizes were measured: what the
/// interval of the gain rests on there (no curve error at a measured size),
/// for planning more runs (the sweep's settling). LogRatio: ln of the
/// throughput ratio from the sizes' kept times (the point gain's); RunSigma
/// and Dof: the runs' pooled spread (Analysis::Time).
struct MeasuredGain {
  double LogRatio = 0;
  double RunSigma = 0;
  unsigned Dof = 0;
  unsigned FromRuns = 0, ToRuns = 0; // timing runs behind each mean
};
std::optional<MeasuredGain> measuredGain(const Analysis &A, int64_t From,
                                         int64_t To);

/// The spread of a timing run's median about its size's mean (RunSigma,
/// Dof, Quantile; no curvature), pooled over M's sizes: what the model's
/// intervals and the gate's noise both rest on.
TimeUncertainty runSpread(const Measurement &M);

/// The two-sided 90% quantile of Student's t with Dof degrees of freedom
/// (1.645, the normal's, for 0: no degrees known).
double studentT90(unsigned Dof);

/// The linear scaling rule: the rate grows with the batch size
/// (Rate * To / From); Rate unchanged when either size is not positive.
double scaleLearningRate(double Rate, int64_t From, int64_t To);

} // namespace skyline

#endif // SKYLINE_MODEL_H
