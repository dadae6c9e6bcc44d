// The gate on hand-built reports: a baseline run at batch size 64 of
// 10 ms (two timing runs, 10 and 10.2 ms) and 1,000,000 bytes at the peak.
// Every size's two runs are 2% apart: ln(1.02) / 2 either side of their
// mean, a sum of squares of ln(1.02)² / 2 and a degree of freedom a size, so
// the spread (Model.h, runSpread) is ln(1.02) / sqrt(2) = 0.0140. One
// current run against the baseline: a change's 90% half-width is
// t(2 + 1) x sqrt(0.0140² / 2 + 0.0140² / 2) = 2.353 x 0.0140, 3.2%.

#include "skyline/Gate.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cmath>

namespace skyline {
namespace {

using ::testing::HasSubstr;

MeasuredRun run(int64_t BatchSize, double MedianMs, int64_t Peak) {
  MeasuredRun Run;
  Run.BatchSize = BatchSize;
  Run.Iterations = 8;
  Run.IterationMs = {MedianMs, MedianMs, 0.2, MedianMs - 0.3, MedianMs + 0.3};
  Run.Throughput = BatchSize / MedianMs * 1000;
  Run.TimingRunMedians = {MedianMs, MedianMs * 1.02};
  Run.PeakBytes = Peak;
  return Run;
}

/// The noise of a change: t(Dof) x 0.0140 x sqrt(1/2 + 1/CurrentRuns).
double noise(unsigned Dof, unsigned CurrentRuns) {
  double Sigma = std::log(1.02) / std::sqrt(2.0);
  return 1 - std::exp(-studentT90(Dof) * Sigma *
                      std::sqrt(0.5 + 1.0 / CurrentRuns));
}

SavedReport baseline() {
  SavedReport Report;
  BatchSizeSite Site;
  Site.Name = "kBatchSize";
  Site.Value = 64;
  Report.Program.BatchSize = Site;
  Report.Measured.TorchVersion = "2.11.0";
  Report.Measured.Threads = 2;
  Report.Measured.MemoryCapacityBytes = 1 << 30;
  Report.Measured.Runs = {run(64, 10.0, 1000000), run(128, 19.0, 2000000)};
  return Report;
}

Measurement current(std::vector<MeasuredRun> Runs) {
  Measurement M = baseline().Measured;
  M.Runs = std::move(Runs);
  return M;
}

const SourceSpan At{"/src/train.cpp", 2, 28, 52, 2};

TEST(GateTest, UnchangedProgramPasses) {
  GateVerdict V = compareWithBaseline(
      baseline(), current({run(64, 10.1, 1000000)}), At, {});
  EXPECT_FALSE(V.Regressed);
  EXPECT_TRUE(V.Findings.empty());
  EXPECT_EQ(V.BatchSize, 64);
  EXPECT_NEAR(*V.ThroughputChange, 10.0 / 10.1 - 1, 1e-12);
  EXPECT_NEAR(V.ThroughputNoise, noise(3, 2), 1e-12);
  EXPECT_NEAR(V.ThroughputNoise, 0.0324, 1e-4);
  EXPECT_DOUBLE_EQ(*V.MemoryChange, 0.0);
}

TEST(GateTest, ThroughputDropConfirmedByEveryRepeat) {
  // 15% slower: 10 / 11.765 - 1 = -15%. The noise: the three current runs'
  // six timing runs (11.765, 11.8, 11.9 and 2% more each) spread by 0.0121
  // with 5 degrees of freedom; t(2 + 5) = 1.895 x sqrt(0.0140² / 2 +
  // 0.0121² / 6) = 2.1%.
  Measurement Now = current({run(64, 11.765, 1000000)});
  EXPECT_TRUE(needsMoreRuns(baseline(), Now, {}));
  Now.Runs.push_back(run(64, 11.8, 1000000));
  Now.Runs.push_back(run(64, 11.9, 1000000));
  EXPECT_FALSE(needsMoreRuns(baseline(), Now, {})) << "three runs are enough";
  GateVerdict V = compareWithBaseline(baseline(), Now, At, {});
  EXPECT_TRUE(V.Regressed);
  ASSERT_EQ(V.Findings.size(), 1u);
  EXPECT_EQ(V.Findings[0].Rule, "skyline-throughput-regression");
  EXPECT_EQ(V.Findings[0].Level, DiagLevel::Error);
  EXPECT_EQ(V.Findings[0].At.Line, 2u);
  EXPECT_THAT(
      V.Findings[0].Message,
      HasSubstr(
          "throughput at batch size 64 dropped 15% against the baseline "
          "(6400.0 "
          "-> 5439.9 samples/s, best of 3 runs; allowed 10%, noise 2.1%)"));
}

TEST(GateTest, OneSlowRunAmongFastOnesIsNoise) {
  GateVerdict V = compareWithBaseline(
      baseline(), current({run(64, 12.5, 1000000), run(64, 10.05, 1000000)}),
      At, {});
  EXPECT_FALSE(V.Regressed);
  EXPECT_EQ(V.RunsCompared, 2u);
}

TEST(GateTest, DropBelowTheNoiseDoesNotCount) {
  GateOptions Loose;
  Loose.MaxThroughputDrop =
      0.01; // 1.9% slower passes 1% but not the 3.2% noise
  GateVerdict V = compareWithBaseline(
      baseline(), current({run(64, 10.19, 1000000)}), At, Loose);
  EXPECT_FALSE(V.Regressed);
  V = compareWithBaseline(baseline(), current({run(64, 10.6, 1000000)}), At,
                          Loose);
  EXPECT_TRUE(V.Regressed) << "5.7% is over both";
}

TEST(GateTest, MemoryGrowthIsGatedTightly) {
  GateVerdict V = compareWithBaseline(
      baseline(), current({run(64, 10.0, 1015000)}), At, {});
  EXPECT_FALSE(V.Regressed) << "1.5% is within the default 2%";
  V = compareWithBaseline(baseline(), current({run(64, 10.0, 1050000)}), At,
                          {});
  EXPECT_TRUE(V.Regressed);
  ASSERT_EQ(V.Findings.size(), 1u);
  EXPECT_EQ(V.Findings[0].Rule, "skyline-memory-regression");
  EXPECT_EQ(V.Findings[0].Message, "peak memory at batch size 64 grew 5.0% "
                                   "against the baseline (977 KiB -> 1.00 "
                                   "MiB; allowed 2.0%)");
}

TEST(GateTest, OutOfMemoryWhereTheBaselineFitIsARegression) {
  MeasuredRun Oom;
  Oom.BatchSize = 64;
  Oom.OutOfMemory = true;
  GateVerdict V = compareWithBaseline(baseline(), current({Oom}), At, {});
  EXPECT_TRUE(V.Regressed);
  ASSERT_EQ(V.Findings.size(), 1u);
  EXPECT_THAT(V.Findings[0].Message,
              HasSubstr("batch size 64 now runs out of memory"));
}

TEST(GateTest, EnvironmentMismatchIsAWarningOnly) {
  Measurement Now = current({run(64, 10.0, 1000000)});
  Now.TorchVersion = "1.13.1";
  Now.Threads = 16;
  GateVerdict V = compareWithBaseline(baseline(), Now, At, {});
  EXPECT_FALSE(V.Regressed);
  ASSERT_EQ(V.Findings.size(), 2u);
  for (const Finding &F : V.Findings) {
    EXPECT_EQ(F.Rule, "skyline-baseline-environment");
    EXPECT_EQ(F.Level, DiagLevel::Warning);
  }
  EXPECT_THAT(V.Findings[0].Message,
              HasSubstr("LibTorch 2.11.0, this run with 1.13.1"));
  EXPECT_THAT(V.Findings[1].Message, HasSubstr("threads 2, this run with 16"));
}

TEST(GateTest, MallocThresholdsOfAnotherKindAreAnEnvironmentMismatch) {
  SavedReport Base = baseline();
  Measurement Now = current({run(64, 10.0, 1000000)});
  Now.MallocThresholdsUsed = "pinned";
  EXPECT_TRUE(compareWithBaseline(Base, Now, At, {}).Findings.empty())
      << "a baseline from before the setting was recorded says nothing";
  Base.Measured.MallocThresholdsUsed = "dynamic";
  GateVerdict V = compareWithBaseline(Base, Now, At, {});
  EXPECT_FALSE(V.Regressed);
  ASSERT_EQ(V.Findings.size(), 1u);
  EXPECT_EQ(V.Findings[0].Rule, "skyline-baseline-environment");
  EXPECT_EQ(V.Findings[0].Message,
            "the baseline ran with malloc thresholds dynamic, this run with "
            "pinned: the comparison may not be fair");
}

TEST(GateTest, TheBaselinesBatchSizeIsCompared) {
  SavedReport Base = baseline();
  EXPECT_EQ(*gateBatchSize(Base), 64);
  Base.Program.BatchSize
      .reset(); // a schema-1 report without one: its first run that fit
  Base.Measured.Runs.front().OutOfMemory = true;
  EXPECT_EQ(*gateBatchSize(Base), 128);
  // No run at the baseline's size: nothing compared, so the gate cannot
  // pass (the driver turns this into exit 1 with the reason).
  GateVerdict V =
      compareWithBaseline(baseline(), current({run(32, 5.0, 500000)}), At, {});
  EXPECT_FALSE(V.Regressed);
  EXPECT_FALSE(V.ThroughputChange);
  EXPECT_EQ(V.CannotCompare,
            "this run has no run at the baseline's batch size 64 with a valid "
            "time (a finite median above 0 ms)");
}

TEST(GateTest, NothingComparableNeverPasses) {
  // The current report has no runs at all.
  EXPECT_THAT(
      compareWithBaseline(baseline(), current({}), At, {}).CannotCompare,
      HasSubstr("this run has no run at the baseline's batch size 64"));
  // Impossible times on the current side: NaN, infinite, zero, negative.
  for (double Bad : {std::nan(""), HUGE_VAL, 0.0, -10.0}) {
    GateVerdict V = compareWithBaseline(
        baseline(), current({run(64, Bad, 1000000)}), At, {});
    EXPECT_FALSE(V.CannotCompare.empty()) << Bad;
    EXPECT_FALSE(V.ThroughputChange) << Bad;
  }
  // A NaN spread would make the noise NaN, and every drop "within noise".
  MeasuredRun NanSpread = run(64, 20.0, 1000000);
  NanSpread.IterationMs.Stddev = std::nan("");
  EXPECT_FALSE(compareWithBaseline(baseline(), current({NanSpread}), At, {})
                   .CannotCompare.empty());
  // A baseline with no runs, or none valid at its size.
  SavedReport Empty = baseline();
  Empty.Measured.Runs.clear();
  EXPECT_EQ(
      compareWithBaseline(Empty, current({run(64, 10.0, 1000000)}), At, {})
          .CannotCompare,
      "the baseline has no run at its batch size 64 with a valid time (a "
      "finite median above 0 ms)");
  // A non-positive peak on either side compares nothing.
  SavedReport NoPeak = baseline();
  NoPeak.Measured.Runs.front().PeakBytes = 0;
  EXPECT_EQ(
      compareWithBaseline(NoPeak, current({run(64, 10.0, 1000000)}), At, {})
          .CannotCompare,
      "the baseline's peak memory at batch size 64 is 0 bytes, not a "
      "measurement");
  EXPECT_EQ(
      compareWithBaseline(baseline(), current({run(64, 10.0, -5)}), At, {})
          .CannotCompare,
      "this run's peak memory at batch size 64 is -5 bytes, not a "
      "measurement");
  // What can be compared says nothing of the kind.
  EXPECT_TRUE(
      compareWithBaseline(baseline(), current({run(64, 10.0, 1000000)}), At, {})
          .CannotCompare.empty());
}

TEST(GateTest, ABaselineOfAnotherProgramIsNamed) {
  ProgramModel Then, Now;
  Then.Sources = {"/ci/checkout/src/train.cpp", "/ci/checkout/src/model.cpp"};
  Now.Sources = {"/home/me/project/src/train.cpp"};
  EXPECT_FALSE(whyAnotherProgram(Then, Now)); // paths differ, names do not
  Now.Sources = {"/home/me/other/gan.cpp"};
  EXPECT_EQ(*whyAnotherProgram(Then, Now),
            "the baseline describes another program (its sources: train.cpp, "
            "model.cpp; this run's: gan.cpp)");
  Then.Sources.clear(); // a schema-1 report: nothing to tell by
  EXPECT_FALSE(whyAnotherProgram(Then, Now));
}

TEST(GateTest, ExperimentsAreComparedOnlyWhereBothTriedTheSameSetting) {
  Measurement Then, Now;
  MeasuredRun Run;
  Run.BatchSize = 16;
  Run.Iterations = 8;
  Run.IterationMs.Median = 3.6;
  Then.Runs = Now.Runs = {Run};
  TrialRun Workers{"loader-workers", "1 loader worker", 1, 16, {3.5}, 3.5, 0,
                   ""};
  TrialRun TwoWorkers = Workers;
  TwoWorkers.Value = 2;
  Then.Trials = {Workers, TwoWorkers};
  Workers.IterationMs = 2.4;
  Workers.TimingRunMedians = {2.4};
  TrialRun Threads{"threads", "1 intra-op thread", 1, 16, {3.0}, 3.0, 0, ""};
  Now.Trials = {Workers, Threads};
  GateVerdict Verdict;
  compareExperiments(Then, Now, Verdict);
  ASSERT_EQ(Verdict.Experiments.size(), 1u);
  EXPECT_EQ(Verdict.Experiments[0].Experiment, "loader-workers");
  EXPECT_EQ(Verdict.Experiments[0].Then.Verdict, TrialVerdict::NoClearEffect);
  EXPECT_EQ(Verdict.Experiments[0].Now.Verdict, TrialVerdict::Faster);
  EXPECT_NEAR(Verdict.Experiments[0].Now.Gain, 0.5, 1e-12);
  EXPECT_EQ(Verdict.ExperimentsNotCompared,
            (std::vector<std::string>{
                "threads (1 intra-op thread): the baseline did not try it",
                "loader-workers (1 loader worker): only the baseline tried "
                "it"}));
  EXPECT_FALSE(Verdict.Regressed);
}

} // namespace
} // namespace skyline
