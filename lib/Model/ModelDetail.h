//===- ModelDetail.h - What Model.cpp and Uncertainty.cpp share -*- C++ -*-===//
//
// Shared by the predictions (Model.cpp) and their intervals
// (Uncertainty.cpp): the curve through the measured sizes, and how sure the
// measured times are.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_LIB_MODEL_MODELDETAIL_H
#define SKYLINE_LIB_MODEL_MODELDETAIL_H

#include "skyline/Model.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace skyline::detail {

using SizePoints = llvm::ArrayRef<std::pair<int64_t, double>>;

/// The index I (1 to size - 1) of the segment P[I - 1]..P[I] that
/// BatchSize falls on, the end segments for sizes past the ends. P holds at
/// least two points, by size.
size_t segmentAt(SizePoints P, double BatchSize);

/// Piecewise linear through P (by size): the segment around BatchSize, the
/// first or last one continued past the ends, with LineSlope instead where
/// that segment does not rise (noise between close sizes would predict a
/// quantity that falls as the batch grows).
double throughPoints(SizePoints P, double BatchSize, double LineSlope);

/// The iteration time through P, and below the smallest size no faster a
/// sample than there.
double timeThroughPoints(SizePoints P, double BatchSize, double LineSlope);

/// Where BatchSize lies between two measured sizes of P and the segments
/// around bend one way (their slopes rise: convex; fall: concave), the
/// far side of where the curve may be: for a convex curve the higher of
/// the neighbouring segments' lines continued to BatchSize (the curve is
/// below the chord and above them), for a concave one the lower. None past
/// the ends, on a straight run of segments, where a segment falls (noise),
/// or where the bound is not positive.
std::optional<double> bendBound(SizePoints P, double BatchSize);

/// Fills A.TimeCentres, A.TimeRuns, A.Time and A.Memory from the runs
/// (A.TimePoints and A.MemoryPoints already set).
void estimateUncertainty(const Measurement &M, Analysis &A);

/// Why the time cannot be modelled: a larger size ran faster, more than
/// the runs' spread explains. Empty when it can.
std::string timeFallsProblem(const Analysis &A);

} // namespace skyline::detail

#endif // SKYLINE_LIB_MODEL_MODELDETAIL_H
