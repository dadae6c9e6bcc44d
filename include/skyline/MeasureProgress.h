//===- MeasureProgress.h - A measurement's percentage in the editor -*- C++
//-*-===//
//
// skyline-lsp reports a measurement as work-done progress. skyline-check's
// own lines say where it is ("building the instrumented program", "run 2/6
// at batch size 128...", "repeating the timing runs ..."), but not how far
// it is within a step: a build of 30 s showed 0% throughout, and the
// repeats after the planned runs held one figure for a minute. The
// percentage here also moves with the time each step is expected to take
// (the build: the last build's time; a run: the runs so far), and never
// goes back.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_MEASUREPROGRESS_H
#define SKYLINE_MEASUREPROGRESS_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace skyline {

class MeasureProgress {
public:
  /// The shares of the bar: the build up to BuildShare, the planned runs
  /// up to RunsShare, what comes after them (repeats, settling) up to 99.
  static constexpr int BuildShare = 30;
  static constexpr int RunsShare = 90;

  /// ExpectedBuildSeconds: how long the build took last time (a guess
  /// where it never ran).
  explicit MeasureProgress(double ExpectedBuildSeconds);

  /// One of skyline-check's progress lines ("skyline-check: " dropped),
  /// printed Seconds after the measurement began.
  void observe(llvm::StringRef Line, double Seconds);

  /// The percentage Seconds after the measurement began: 0 to 99, never
  /// less than it said before (the end's 100 is the caller's).
  int percentage(double Seconds);

  /// How long the build took, once the first run began.
  std::optional<double> buildSeconds() const { return RunsBegan; }

private:
  double raw(double Seconds) const;

  double ExpectedBuild;
  std::optional<double> RunsBegan; // when the first run's line came
  unsigned Run = 0, Runs = 0;      // "run Run/Runs"
  double RunBegan = 0;             // when the current run's line came
  double RunSecondsSum = 0;        // the runs finished, for the next's
  unsigned RunsFinished = 0;
  std::optional<double> ExtraBegan; // past the planned runs
  int Shown = 0;
};

} // namespace skyline

#endif // SKYLINE_MEASUREPROGRESS_H
