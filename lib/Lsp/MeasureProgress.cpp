//===- MeasureProgress.cpp - A measurement's percentage in the editor -----===//

#include "skyline/MeasureProgress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace skyline {
namespace {

/// A run expected to take this long where none has finished yet.
constexpr double FirstRunSeconds = 5;

/// 0 at Elapsed 0, Linear at Expected, then on toward 1 without reaching
/// it: a step that takes longer than expected still moves.
double stepFraction(double Elapsed, double Expected, double Linear = 0.9) {
  if (Expected <= 0)
    return Linear;
  if (Elapsed <= Expected)
    return Linear * Elapsed / Expected;
  return Linear +
         (1 - Linear) * (1 - std::exp(-(Elapsed - Expected) / Expected));
}

} // namespace

MeasureProgress::MeasureProgress(double ExpectedBuildSeconds)
    : ExpectedBuild(std::max(ExpectedBuildSeconds, 1.0)) {}

void MeasureProgress::observe(llvm::StringRef Line, double Seconds) {
  unsigned At = 0, Of = 0;
  std::string Text = Line.str();
  if (std::sscanf(Text.c_str(), "run %u/%u", &At, &Of) == 2 && Of > 0 &&
      At >= 1) {
    if (!RunsBegan)
      RunsBegan = Seconds;
    if (Run != 0 && At != Run) {
      RunSecondsSum += Seconds - RunBegan;
      ++RunsFinished;
    }
    if (At != Run)
      RunBegan = Seconds;
    Run = std::min(At, Of);
    Runs = Of;
    return;
  }
  // After the planned runs: the repeats, settling, the malloc check.
  if (RunsBegan && !ExtraBegan &&
      (Line.starts_with("repeating") || Line.starts_with("settling") ||
       Line.starts_with("timing run") || Line.starts_with("the decision")))
    ExtraBegan = Seconds;
}

double MeasureProgress::raw(double Seconds) const {
  if (!RunsBegan)
    return BuildShare * stepFraction(Seconds, ExpectedBuild);
  if (ExtraBegan)
    return RunsShare +
           (99 - RunsShare) * stepFraction(Seconds - *ExtraBegan, 30, 0.5);
  double PerRun = double(RunsShare - BuildShare) / Runs;
  double Expected =
      RunsFinished ? RunSecondsSum / RunsFinished : FirstRunSeconds;
  return BuildShare + PerRun * (Run - 1) +
         PerRun * stepFraction(Seconds - RunBegan, Expected);
}

int MeasureProgress::percentage(double Seconds) {
  int Now = std::clamp(int(raw(Seconds)), 0, 99);
  Shown = std::max(Shown, Now);
  return Shown;
}

} // namespace skyline
