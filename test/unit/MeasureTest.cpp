// The sweep's arithmetic, the sweep driven through a scripted launcher, and
// the reading of the runtime's result file.

#include "skyline/Measure.h"
#include "skyline/MeasuredRunYAML.h"
#include "skyline/Model.h"
#include "skyline/Sweep.h"
#include "skyline/runtime/ExitCodes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>

using namespace skyline;

namespace {

TEST(MeasureTest, ByteSizes) {
  EXPECT_EQ(parseByteSize("512MiB"), 512LL << 20);
  EXPECT_EQ(parseByteSize("8GiB"), 8LL << 30);
  EXPECT_EQ(parseByteSize("1.5GB"), 1500000000LL);
  EXPECT_EQ(parseByteSize("1000000"), 1000000LL);
  EXPECT_EQ(parseByteSize("64 kib"), 65536LL);
  EXPECT_FALSE(parseByteSize("lots"));
  EXPECT_FALSE(parseByteSize("12XB"));
  EXPECT_FALSE(parseByteSize(""));
  EXPECT_FALSE(parseByteSize("99999999999GiB")) << "past int64_t";
  EXPECT_EQ(parseByteSize("8589934591GiB"), 0x7FFFFFFFC0000000LL);
}

TEST(MeasureTest, WarnsOfOtherWorkKeepingTheCpus) {
  EXPECT_FALSE(busyMachineWarning(0.0, 2));
  EXPECT_FALSE(busyMachineWarning(0.8, 2)) << "a blip in half a second";
  EXPECT_EQ(busyMachineWarning(2.4, 2).value_or(""),
            "the machine was busy (2.4 other tasks running on 2 cores): times "
            "include waiting for a CPU; measure on a quiet machine, or fix "
            "OMP_NUM_THREADS");
}

TEST(MeasureTest, CountsTheRunnableTasksOfProcLoadavg) {
  EXPECT_EQ(runnableTasks("2.21 1.85 1.69 3/412 98765\n"), 3u);
  EXPECT_EQ(runnableTasks("0.00 0.01 0.05 1/97 12"), 1u);
  EXPECT_FALSE(runnableTasks("2.21 1.85 1.69"));
  EXPECT_FALSE(runnableTasks("2.21 1.85 1.69 x/412 98765"));
  EXPECT_FALSE(runnableTasks(""));
}

/// A program of 1 MiB plus 10 KiB a sample that takes 1 ms plus 0.125 ms a
/// sample, measured at Sizes.
std::vector<SweepPoint> linearProgram(std::initializer_list<int64_t> Sizes) {
  std::vector<SweepPoint> Points;
  for (int64_t Size : Sizes)
    Points.push_back({Size, 1048576 + 10240 * Size, 1 + 0.125 * double(Size)});
  return Points;
}

TEST(MeasureTest, SweepDoublesThenHeadsForTheCapacity) {
  SweepState State;
  State.TargetBytes = 1048576 + 10240 * 4096; // 4096 samples fit
  State.Fitted = linearProgram({32});
  EXPECT_EQ(nextBatchSize(State), 64) << "one size: no line yet";
  State.Fitted = linearProgram({32, 64});
  State.RunsLeft = 1;
  EXPECT_EQ(nextBatchSize(State), 4096) << "the last run at the capacity";
  State.RunsLeft = 2;
  EXPECT_EQ(nextBatchSize(State), 512) << "64 x 8, then 512 x 8";
  State.RunsLeft = 3;
  EXPECT_EQ(nextBatchSize(State), 256);
  State.RunsLeft = 4;
  State.RunsForBends = 2;
  EXPECT_EQ(nextBatchSize(State), 512) << "two of the four runs reach it";
  State.RunsForBends = 0;
  State.RunsLeft = 3;
  // The order the sizes ran in does not matter.
  State.Fitted = {linearProgram({64})[0], linearProgram({32})[0]};
  EXPECT_EQ(nextBatchSize(State), 256);

  State.TargetBytes = 0;
  EXPECT_EQ(nextBatchSize(State), 128) << "no capacity known: double";
  State.TargetBytes = 1048576 + 10240 * 60;
  EXPECT_EQ(nextBatchSize(State), 0)
      << "at the capacity, and a straight line: nothing to try";
  State.TargetBytes = 1048576 + 10240 * 4096;
  State.Fitted[0].PeakBytes = State.Fitted[1].PeakBytes;
  EXPECT_EQ(nextBatchSize(State), 128) << "memory does not grow: double";
}

TEST(MeasureTest, SweepStepsNoFurtherThanARunsTimeAllows) {
  SweepState State;
  State.TargetBytes = 1048576 + 10240 * 4096;
  State.Fitted = linearProgram({32, 64});
  State.RunsLeft = 1;
  // 10 s for 100 iterations: 100 ms an iteration, 792 samples.
  State.SecondsPerSize = 10;
  State.IterationsPerSize = 100;
  EXPECT_EQ(nextBatchSize(State), 792);
  // Even a run over its time may double, as the sweep always has.
  State.SecondsPerSize = 0.5;
  EXPECT_EQ(nextBatchSize(State), 128);
}

TEST(MeasureTest, PastTheProbesStartTheSweepGoesStraightToTheCapacity) {
  SweepState State;
  State.TargetBytes = 1048576 + 10240 * 4096; // 4096 samples fit
  State.Fitted = linearProgram({32, 64, 256});
  State.RunsLeft = 3;
  State.RunsForBends = 0;
  // In equal ratios: 256 x 2.52 = 645, 1,625, then 4,096.
  EXPECT_EQ(nextBatchSize(State), 645) << "no probe yet";
  State.ProbesPast = 256;
  EXPECT_EQ(nextBatchSize(State), 645) << "256 was no probe";
  // 256 was a probe: so would 645 and 1,625 be, a peak and a first time
  // each, which the line through the sizes and the run at 4,096 give.
  State.ProbesPast = 255;
  EXPECT_EQ(nextBatchSize(State), 4096);
  State.DataLimit = 2000;
  EXPECT_EQ(nextBatchSize(State), 2000) << "no further than the data lasts";
  State.DataLimit = 0;
  // A probe is a warm-up and an iteration: 10 s holds two of 5 s, 39,992
  // samples at 0.125 ms a sample; 1 s, two of 0.5 s: 3,992.
  State.SecondsPerSize = 10;
  EXPECT_EQ(nextBatchSize(State), 4096);
  State.SecondsPerSize = 1;
  EXPECT_EQ(nextBatchSize(State), 3992);
  // Never less than a doubling, as the steps.
  State.SecondsPerSize = 0.01;
  EXPECT_EQ(nextBatchSize(State), 512);
}

TEST(MeasureTest, DataLimitIsWhereTheDataStillLastsTwoMeasuredIterations) {
  // 2 epochs of 2,048 samples: at 16 the run stopped by its rule after
  // reaching 26; at 560 the program returned after 2 x 4 = 8, 4,480
  // samples by that count; shared out over 2 warm-up and 3 more (two
  // measured intervals), 896 a batch; but no size past one whose data ran
  // out (560), whatever order the sweep took them in.
  EXPECT_EQ(dataLimit({{16, 26, false}, {560, 8, true}}, 2), 560);
  // At 896 it reaches 2 x 3 = 6 (5,376 / 5 = 1,075): the smaller limit holds.
  EXPECT_EQ(dataLimit({{16, 26, false}, {560, 8, true}, {896, 6, true}}, 2),
            560);
  EXPECT_EQ(dataLimit({{896, 6, true}, {560, 8, true}, {16, 26, false}}, 2),
            560)
      << "in any order";
  // The transformer's sweep on a busy machine: 662 ran out of data (2 x 4
  // iterations, 5,296 / 5 = 1,059 by the samples), so 711 is never next.
  EXPECT_EQ(dataLimit({{16, 56, false}, {32, 56, false}, {662, 8, true}}, 2),
            662);
  // 8 warm-up and 3 more: 4,480 / 11 = 407, below the size itself.
  EXPECT_EQ(dataLimit({{16, 26, false}, {560, 8, true}}, 8), 407)
      << "more warm-up, less room";
  // One size that ended early says nothing yet about why.
  EXPECT_EQ(dataLimit({{560, 8, true}}, 2), 0);
  EXPECT_EQ(dataLimit({{16, 8, false}, {560, 8, true}}, 2), 0);
  // The same 6 steps at 20 and at 40: a program that counts steps (the
  // lstm_lm example).
  EXPECT_EQ(dataLimit({{20, 6, true}, {40, 6, true}}, 2), 0);
  EXPECT_EQ(dataLimit({{16, 26, false}, {20, 6, true}, {40, 6, true}}, 2), 0);
  EXPECT_EQ(dataLimit({}, 2), 0);
}

TEST(MeasureTest, SweepStaysWithinTheData) {
  SweepState State;
  State.TargetBytes = 1048576 + 10240 * 4096;
  State.Fitted = linearProgram({32, 64});
  State.RunsLeft = 1;
  EXPECT_EQ(nextBatchSize(State), 4096) << "without a limit";
  State.DataLimit = 1000;
  EXPECT_EQ(nextBatchSize(State), 1000) << "as far as the data lasts";
  State.DataLimit = 66;
  EXPECT_EQ(nextBatchSize(State), 0)
      << "at the limit, and a straight line: nothing to try";
  State.DataLimit = 5000;
  EXPECT_EQ(nextBatchSize(State), 4096) << "a limit past the capacity";
}

TEST(MeasureTest, SweepBacksOffAfterAnOutOfMemoryRun) {
  SweepState State;
  State.TargetBytes = 1048576 + 10240 * 4096;
  State.Fitted = linearProgram({32, 64});
  State.FirstOutOfMemory = 128;
  EXPECT_EQ(nextBatchSize(State), 96);
  State.Fitted = linearProgram({32, 64, 96});
  EXPECT_EQ(nextBatchSize(State), 112);
  State.Fitted = linearProgram({127});
  EXPECT_EQ(nextBatchSize(State), 0) << "converged: no size left between";
}

/// mnist's sweep on the 2-core machine, at the capacity with two runs left.
SweepState mnistAtTheCapacity() {
  SweepState State;
  State.Fitted = {{64, 227000000, 4.47},
                  {128, 231000000, 8.2},
                  {1170, 295000000, 110.4},
                  {10695, 878000000, 1297.7}};
  State.TargetBytes = 880000000;
  State.RunsLeft = 2;
  return State;
}

TEST(MeasureTest, AtTheCapacityTheSweepGoesWhereTheTimeBends) {
  // mnist on the 2-core machine: 0.058 ms a sample from 64 to 128, 0.098 to
  // 1170, 0.125 to 10695 (the activations outgrow the caches). The slope
  // changes at 128 (ln(0.098 / 0.058) = 0.52) and 1170 (0.24), both above
  // ln(1.1); of the segments next to them 128..1170 and 1170..10695 span
  // the most (9.14x each), and of the two the smaller sizes' gets its
  // geometric middle, sqrt(128 x 1170).
  SweepState State = mnistAtTheCapacity();
  EXPECT_EQ(nextBatchSize(State), 387);
  State.Fitted.push_back({387, 246000000, 25.5});
  // Slopes 0.058, 0.067, 0.108, 0.125: bends at 128, 387 and 1170; the
  // widest segment next to one is 1170..10695, sqrt(1170 x 10695) = 3537.
  EXPECT_EQ(nextBatchSize(State), 3537);
  // A straight line needs nothing more where its segments are short...
  State.Fitted = linearProgram({64, 128, 512, 2048, 10695});
  State.TargetBytes = 1048576 + 10240 * 10695;
  EXPECT_EQ(nextBatchSize(State), 0);
  // ...but one spanning more than UnmeasuredSpanLimit (8x) is not known to
  // be straight: first runs vary by as much as a knee changes the slope.
  // 128..1170 and 1170..10695 span 9.14x each: the smaller sizes' middle.
  State.Fitted = linearProgram({64, 128, 1170, 10695});
  EXPECT_EQ(nextBatchSize(State), 387);
}

TEST(MeasureTest, AStraightLineThroughAWideGapGetsItsMiddle) {
  // mnist on a shared 2-core machine: the first runs at 64, 128,
  // 2,586 and 15,000 (the data's limit) lay on one line (slopes 0.134,
  // 0.137, 0.148 ms a sample: none changes by 10%), the later runs at 64
  // and 128 were 25% and 30% faster, and the throughput peaked at 416 to
  // 575, between 128 and 2,586, which no run measured. 128..2,586 spans
  // 20x: its middle, sqrt(128 x 2586) = 575.3.
  SweepState State;
  State.Fitted = {{64, 224000000, 7.34},
                  {128, 229000000, 15.91},
                  {2586, 400000000, 353.17},
                  {15000, 1267000000, 2192.17}};
  State.TargetBytes = int64_t(0.9 * 4096 * 1048576);
  State.RunsLeft = 2;
  State.DataLimit = 15000;
  EXPECT_EQ(nextBatchSize(State), 575);
  // Then no segment spans 8x (2,586..15,000: 5.8x) and the line through
  // 575 bends there: where it bends, as before.
  State.Fitted.push_back({575, 260000000, 50.6});
  EXPECT_EQ(nextBatchSize(State), 271) << "sqrt(128 x 575) = 271.3";
  // A wide segment past the data's limit is passed over.
  State.Fitted.pop_back();
  State.DataLimit = 500;
  EXPECT_EQ(nextBatchSize(State), 0);
  // Exactly 8x is short enough (16..128 on one line), just over is not.
  State = SweepState();
  State.Fitted = linearProgram({8, 16, 128});
  State.TargetBytes = 1048576 + 10240 * 130;
  EXPECT_EQ(nextBatchSize(State), 0);
  State.Fitted = linearProgram({8, 16, 129});
  State.TargetBytes = 1048576 + 10240 * 131;
  EXPECT_EQ(nextBatchSize(State), 45) << "sqrt(16 x 129) = 45.4";
}

TEST(MeasureTest, ABendWithNoSizeBetweenGivesWayToTheNextSegment) {
  // Flat from 1 to 2, rising to 4: both segments next to the bend span 2x,
  // and of two alike the smaller sizes' comes first, but 1..2 has no size
  // between (sqrt 2 rounds to 1): the other, 2..4, gets its middle,
  // sqrt 8 = 2.8, not nothing.
  SweepState State;
  State.Fitted = {{1, 1000000, 2.0}, {2, 1010000, 2.0}, {4, 1020000, 3.0}};
  State.TargetBytes = 1020000;
  EXPECT_EQ(nextBatchSize(State), 3);
}

TEST(MeasureTest, AtTheCapacityTheDecisionIsMeasuredFirst) {
  // The same mnist sweep: the model would suggest 2,400, between 1,170 and
  // 10,695 and near neither: it is measured before any bend.
  SweepState State = mnistAtTheCapacity();
  State.DecisionBatchSize = 2400;
  EXPECT_EQ(nextBatchSize(State), 2400);
  // Within 10% of a measured size (1,170 x 1.1 = 1,287) it is measured
  // enough: the time's bends come next, as without a decision.
  State.DecisionBatchSize = 1280;
  EXPECT_EQ(nextBatchSize(State), 387);
  // Never past a size that ran out of memory, nor past the data's limit.
  State.DecisionBatchSize = 2400;
  State.FirstOutOfMemory = 2400;
  EXPECT_NE(nextBatchSize(State), 2400);
  State.FirstOutOfMemory.reset();
  State.DataLimit = 2000;
  EXPECT_NE(nextBatchSize(State), 2400);
}

TEST(MeasureTest, ATimeThatFallsAsTheBatchGrowsIsABend) {
  // The transformer on a busy CI machine: 62.24 ms at 16, 20.12 ms at 32
  // (waits for a CPU, not the work), 1170.29 ms at 711, the capacity under
  // 300 MiB. The falling slope before 32 is noise no straight line tells
  // apart, so 32 counts as a bend and the wider of its segments, 32..711,
  // gets its geometric middle, sqrt(32 x 711) = 150.8: within the data's
  // limit (3 x 711 / 5 = 426), so the run left is not wasted.
  SweepState State;
  State.Fitted = {
      {16, 8577000, 62.24}, {32, 14890000, 20.12}, {711, 283100000, 1170.29}};
  State.TargetBytes = int64_t(300 * 1048576 * 0.9);
  State.RunsLeft = 1;
  State.DataLimit = 426;
  EXPECT_EQ(nextBatchSize(State), 151);
  // Past the data's limit no size goes, a bend's either: with a limit of
  // 100, 32..711's middle is passed over for 16..32's, sqrt(16 x 32) = 22.6.
  State.DataLimit = 100;
  EXPECT_EQ(nextBatchSize(State), 23);
  State.DataLimit = 426;
  // Two rising slopes alike are straight: nothing more to try but the
  // middle of a segment spanning more than 8x (32..711: 22x).
  State.Fitted[1].IterationMs = 62.24 * 2 - 0.5;
  State.Fitted[2].IterationMs = 62.24 * 711 / 16 - 0.5 * 711 / 16;
  EXPECT_EQ(nextBatchSize(State), 151);
  State.Fitted[2] = {128, 50000000, 62.24 * 8 - 0.5 * 8};
  State.TargetBytes = 51000000; // the capacity at 130
  EXPECT_EQ(nextBatchSize(State), 0) << "16..128: 8x at most";
  // A flat time turning to rising is a knee (a fixed cost giving way to
  // the samples'); two flat slopes are straight.
  State.Fitted = {
      {8, 283000000, 2.0}, {16, 283050000, 2.0}, {32, 283115000, 4.0}};
  State.DataLimit = 0;
  EXPECT_EQ(nextBatchSize(State), 11) << "sqrt(8 x 16) = 11.3";
  State.Fitted[2].IterationMs = 2.0;
  EXPECT_EQ(nextBatchSize(State), 0);
}

TEST(MeasureTest, ReadsTheRuntimesResult) {
  llvm::SmallString<128> Path;
  int FD;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("run", "yaml", FD, Path));
  {
    llvm::raw_fd_ostream Out(FD, true);
    Out << "schema_version: 1\nbatch_size: 64\noom: false\niterations: 8\n"
           "iteration_ms: {median: 2.5000, mean: 2.6000, stddev: 0.1000, min: "
           "2.4000, "
           "max: 2.9000}\nthroughput: 25600.000\npeak_bytes: 123456\n"
           "peak_bytes_by_phase:\n  construction: 100000\n  data: 23456\n"
           "memory: {weights: 100000, gradients: 0, optimizer_state: 0, "
           "activations: 0, "
           "data: 23456, temporaries: 0, untracked: 0}\n"
           "time_split_ms: {data: 0.1, forward: 1.0, backward: 1.2, optimizer: "
           "0.2, "
           "other: 0.0}\n"
           "trial_not_applied: \"no weight: \\\"none\\\"\"\n";
  }
  auto Run = readRunResult(Path);
  ASSERT_TRUE(bool(Run)) << llvm::toString(Run.takeError());
  EXPECT_EQ(Run->BatchSize, 64);
  EXPECT_FALSE(Run->OutOfMemory);
  EXPECT_EQ(Run->Iterations, 8u);
  EXPECT_DOUBLE_EQ(Run->IterationMs.Median, 2.5);
  EXPECT_DOUBLE_EQ(Run->Throughput, 25600);
  EXPECT_EQ(Run->PeakBytes, 123456);
  ASSERT_EQ(Run->PeakBytesByPhase.size(), 2u);
  EXPECT_EQ(Run->PeakBytesByPhase[1].first, Phase::Data);
  ASSERT_EQ(Run->TimeSplitMs.size(), 5u);
  EXPECT_EQ(Run->TimeSplitMs[2],
            (std::pair<TimePart, double>(TimePart::Backward, 1.2)));
  ASSERT_EQ(Run->Memory.size(), 7u);
  EXPECT_EQ(Run->Memory[0],
            (std::pair<MemoryKind, int64_t>(MemoryKind::Weights, 100000)));
  EXPECT_EQ(Run->TrialNotApplied, "no weight: \"none\"");
  llvm::sys::fs::remove(Path);

  // Out of memory with no loop body reached: before the loop.
  // Its first batch being loaded (the loop's start marked) is the loop's.
  for (const char *Reached : {"0", "3", "0\nloop_began: true"}) {
    ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("run", "yaml", FD, Path));
    {
      llvm::raw_fd_ostream Out(FD, true);
      Out << "schema_version: 1\nbatch_size: 0\noom: true\niterations: 0\n"
          << "iteration_ms: {median: 0, mean: 0, stddev: 0, min: 0, max: 0}\n"
          << "throughput: 0\npeak_bytes: 67108864\n"
          << "iterations_reached: " << Reached << "\n";
    }
    auto OutOfMemory = readRunResult(Path);
    ASSERT_TRUE(bool(OutOfMemory)) << llvm::toString(OutOfMemory.takeError());
    EXPECT_EQ(OutOfMemory->OutOfMemoryBeforeLoop,
              llvm::StringRef(Reached) == "0")
        << Reached;
    llvm::sys::fs::remove(Path);
  }

  auto Missing = readRunResult("/nonexistent/result.yaml");
  ASSERT_FALSE(bool(Missing));
  EXPECT_EQ(llvm::toString(Missing.takeError()),
            "cannot read run result '/nonexistent/result.yaml': no such file");
}

TEST(MeasureTest, AMalformedResultIsAnErrorNamingTheFileAndKey) {
  llvm::SmallString<128> Path;
  int FD;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("run", "yaml", FD, Path));
  llvm::raw_fd_ostream(FD, true).close();
  auto ReadAs = [&](const std::string &Text) {
    {
      std::error_code EC;
      llvm::raw_fd_ostream Out(Path, EC);
      Out << Text;
    }
    auto Run = readRunResult(Path);
    std::string Error = Run ? "(read)" : llvm::toString(Run.takeError());
    std::string Prefix = "run result '" + Path.str().str() + "': ";
    return Error.rfind(Prefix, 0) == 0 ? Error.substr(Prefix.size()) : Error;
  };
  const std::string Good =
      "batch_size: 8\noom: false\niterations: 3\nthroughput: 10\n"
      "peak_bytes: 100\n";
  const std::string Times =
      "iteration_ms: {median: 2, mean: 2, stddev: 0, min: 1, max: 3}\n";
  EXPECT_EQ(ReadAs(Good + Times), "(read)");
  const std::string Tail =
      "; the measured program wrote this file (skyline-check's runtime never "
      "writes such a value): check that the program does not write to "
      "$SKYLINE_RESULT itself, and measure again";
  EXPECT_EQ(ReadAs(Good + "iteration_ms: {median: .nan}\n"),
            "iteration_ms.median is '.nan'; it must be a finite number of at "
            "least 0" +
                Tail);
  EXPECT_EQ(ReadAs(Good + "iteration_ms: {median: 0}\n"),
            "iteration_ms.median is '0'; it must be a finite number above 0 in "
            "a run that fit and measured 3 iterations" +
                Tail);
  EXPECT_EQ(ReadAs(Good + Times + "layers:\n  - {scope: 1, forward_ms: -1}\n"),
            "layers[0].forward_ms is '-1'; it must be a finite number of at "
            "least 0" +
                Tail);
  EXPECT_EQ(ReadAs("oom: false\n"),
            "batch_size is missing; the runtime writes it in every result" +
                Tail);
  EXPECT_EQ(ReadAs("- a list\n"),
            "the document is a list; it must be a mapping" + Tail);
  EXPECT_NE(ReadAs("batch_size: [\n")
                .find("' is not valid YAML: yaml-cpp: error at line 2"),
            std::string::npos);
  llvm::sys::fs::remove(Path);
}

TEST(MeasureTest, AtTheCapacityTheWidestSegmentBeatsAFlatStart) {
  // The regression example from 32 to its capacity, 1,677,720: 40 us an
  // iteration at 32 and 64 (its fixed cost), 0.28 ms at 10,362 and 60.86
  // ms at 1,677,720, where the data no longer fits the caches. Both wide
  // segments (161.9x) lie next to a bend; the smaller sizes' goes first,
  // then the other. The flat start bends too, but its 2x segment waits.
  SweepState State;
  State.Fitted = {{32, 1400, 0.040},
                  {64, 2300, 0.041},
                  {10362, 373000, 0.28},
                  {1677720, 60400000, 60.86}};
  State.TargetBytes = 60500000;
  State.RunsLeft = 2;
  EXPECT_EQ(nextBatchSize(State), 814) << "sqrt(64 x 10362)";
  State.Fitted.push_back({814, 29300, 0.07});
  EXPECT_EQ(nextBatchSize(State), 131850) << "sqrt(10362 x 1677720)";
}

TEST(MeasureTest, TimeBudgetIsSharedAmongTheSizesLeft) {
  EXPECT_EQ(timingRunSeconds(0, 10, 4, true), 0) << "no budget, no limit";
  // 120 s for 4 sizes: 30 s each, a quarter of it for the breakdown run.
  EXPECT_DOUBLE_EQ(timingRunSeconds(120, 0, 4, true), 22.5);
  EXPECT_DOUBLE_EQ(timingRunSeconds(120, 0, 4, false), 30);
  // What the first sizes left over goes to the later ones.
  EXPECT_DOUBLE_EQ(timingRunSeconds(120, 20, 2, false), 50);
  // Spent: a limit so small that the run measures its fewest iterations.
  double Spent = timingRunSeconds(120, 130, 2, true);
  EXPECT_GT(Spent, 0);
  EXPECT_LT(Spent, 0.01);
}

TEST(MeasureTest, MergesTheTimingAndTheBreakdownRun) {
  MeasuredRun Timing;
  Timing.BatchSize = 32;
  Timing.Iterations = 20;
  Timing.IterationMs = {10, 10, 0.1, 9.8, 10.4};
  Timing.PeakBytes = 1000;
  Timing.WallSeconds = 2;
  MeasuredRun Breakdown;
  Breakdown.BatchSize = 32;
  Breakdown.Iterations = 3;
  Breakdown.IterationMs = {12, 12.5, 0.5, 12, 13};
  Breakdown.PeakBytes = 1010;
  Breakdown.WallSeconds = 1;
  Breakdown.Memory = {{MemoryKind::Weights, 10},
                      {MemoryKind::Activations, 1000}};
  Breakdown.TimeSplitMs = {{TimePart::Forward, 5}, {TimePart::Backward, 7.5}};
  LayerMeasure Layer;
  Layer.Scope = 0;
  Layer.ForwardMs = 5;
  Layer.BackwardMs = 2.5;
  Breakdown.Layers = {Layer};
  MeasuredRun Run = mergeRuns(Timing, Breakdown);
  EXPECT_EQ(Run.Iterations, 20u) << "the timing run's";
  EXPECT_DOUBLE_EQ(Run.IterationMs.Median, 10);
  EXPECT_EQ(Run.PeakBytes, 1010) << "the kinds add up to the breakdown's peak";
  EXPECT_EQ(Run.Memory, Breakdown.Memory);
  // Scaled by 10 / 12.5: the split still adds up to the timing run's mean.
  ASSERT_EQ(Run.TimeSplitMs.size(), 2u);
  EXPECT_DOUBLE_EQ(Run.TimeSplitMs[0].second + Run.TimeSplitMs[1].second, 10);
  ASSERT_EQ(Run.Layers.size(), 1u);
  EXPECT_DOUBLE_EQ(Run.Layers[0].ForwardMs, 4);
  EXPECT_DOUBLE_EQ(Run.Layers[0].BackwardMs, 2);
  ASSERT_TRUE(Run.Breakdown);
  EXPECT_EQ(Run.Breakdown->Iterations, 3u);
  EXPECT_DOUBLE_EQ(Run.Breakdown->IterationMs, 12.5);
  EXPECT_DOUBLE_EQ(Run.WallSeconds, 3);

  Breakdown.OutOfMemory = true;
  EXPECT_TRUE(mergeRuns(Timing, Breakdown).OutOfMemory)
      << "an out-of-memory breakdown run is out of memory at that size";
}

/// The instrumented program at the launcher's seam: each run's outcome is
/// what Timing or Breakdown (by the run's SKYLINE_MODE) make of the request
/// and the environment the real launcher would give it. Its log goes where
/// the real launcher puts it, and time passes only as the runs say.
/// A fresh directory for one test's program and work directory.
std::string testDirectory(const std::string &Name) {
  llvm::SmallString<128> Path;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("skyline-" + Name, Path));
  return std::string(Path);
}

/// The sweep the tests start from: one size, two warm-ups, at most 50
/// iterations. No run with glibc's own thresholds besides the others: the
/// test that pins them asks for it.
MeasureOptions sweepOptions(const std::string &Dir) {
  MeasureOptions Options;
  Options.WorkDir = Dir + "/work";
  Options.MaxRuns = 1;
  Options.Warmup = 2;
  Options.Malloc = MallocThresholds::Dynamic;
  Options.Iterations = 50;
  return Options;
}

class ScriptedProgram : public RunLauncher {
public:
  using Environment = std::map<std::string, std::string>;
  using Respond =
      std::function<RunOutcome(const RunRequest &, const Environment &)>;

  explicit ScriptedProgram(const std::string &Name)
      : Dir(testDirectory(Name)), Options(sweepOptions(Dir)) {}
  ~ScriptedProgram() { llvm::sys::fs::remove_directories(Dir); }

  void write(Respond TimingRuns, Respond BreakdownRuns) {
    Timing = std::move(TimingRuns);
    Breakdown = std::move(BreakdownRuns);
  }

  llvm::Expected<RunOutcome> run(const RunRequest &Request) override {
    RunFiles Files = runFiles(runsDir(), Request);
    Environment Env = environmentOf(Request, Files.Result);
    // What the shell scripts that stood for the program noted.
    Calls += Env["SKYLINE_MODE"] + " " + Env["SKYLINE_ITERATIONS"] + " " +
             Env["SKYLINE_MIN_ITERATIONS"] + " " + Env["SKYLINE_TOLERANCE"] +
             " " + Env["SKYLINE_TIME_LIMIT"] + "\n";
    writeLog(Request, "trained a few steps\n");
    RunOutcome Outcome = Request.Mode == RunMode::Timing
                             ? Timing(Request, Env)
                             : Breakdown(Request, Env);
    Now += Outcome.Seconds;
    return Outcome;
  }

  /// Measures from batch size 8, its progress kept in Progress.
  llvm::Expected<Measurement> measureFrom() {
    Progress.clear();
    llvm::raw_string_ostream Out(Progress);
    return Sweep(*this, 8, Options, Out, [this] { return Now; }).run();
  }

  /// A program that finished (out of memory or not) and wrote Run.
  RunOutcome finished(const RunRequest &Request, MeasuredRun Run,
                      double Seconds = 0) const {
    ProcessResult Process;
    Process.End = ProcessEnd::Exited;
    Process.ExitCode = Run.OutOfMemory ? rt::ExitOutOfMemory : 0;
    Process.Seconds = Seconds;
    return finishedRunOutcome(Request, std::move(Run), Process,
                              runFiles(runsDir(), Request).Log);
  }

  /// A program killed by Signal after printing Output, with no result.
  RunOutcome crashed(const RunRequest &Request, int Signal,
                     const std::string &Output) const {
    writeLog(Request, Output);
    ProcessResult Process;
    Process.End = ProcessEnd::Signalled;
    Process.Crashed = true;
    Process.Signal = Signal;
    Process.Error = describeSignal(Signal);
    return failedRunOutcome(Request, Process, runFiles(runsDir(), Request),
                            std::nullopt);
  }

  std::string calls() const { return Calls; }

  std::string Dir;
  MeasureOptions Options;
  std::string Progress;

private:
  std::string runsDir() const { return Options.WorkDir + "/runs"; }

  /// runEnvironment's variables over this process's GLIBC_TUNABLES, which a
  /// run inherits unless it is given its own.
  Environment environmentOf(const RunRequest &Request,
                            llvm::StringRef ResultPath) const {
    Environment Env;
    if (const char *Tunables = std::getenv("GLIBC_TUNABLES"))
      Env["GLIBC_TUNABLES"] = Tunables;
    for (const std::string &Entry :
         runEnvironment(Request, Options, ResultPath))
      Env[Entry.substr(0, Entry.find('='))] = Entry.substr(Entry.find('=') + 1);
    return Env;
  }

  void writeLog(const RunRequest &Request, const std::string &Text) const {
    llvm::sys::fs::create_directories(runsDir());
    std::error_code EC;
    llvm::raw_fd_ostream(runFiles(runsDir(), Request).Log, EC) << Text;
  }

  Respond Timing, Breakdown;
  std::string Calls;
  double Now = 0;
};

using Environment = ScriptedProgram::Environment;

/// A run's result as the runtime reports it: Iterations measured, ended
/// early or by their count, after Reached loop body starts, at the size and
/// with the iterations the run was asked for; a breakdown run adds its
/// split, a phase's peak and a layer.
MeasuredRun measured(const RunRequest &Request, const Environment &Env,
                     unsigned Iterations, bool EndedEarly, unsigned Reached,
                     bool OutOfMemory = false, double MedianMs = 2.0) {
  MeasuredRun Run;
  Run.BatchSize = Request.BatchSize;
  Run.OutOfMemory = OutOfMemory;
  Run.Iterations = Iterations;
  Run.Stopped = EndedEarly ? StopReason::EndedEarly : StopReason::Count;
  Run.EndedEarly = EndedEarly;
  Run.Warmup = 2;
  Run.IterationsAsked = std::stoul(Env.at("SKYLINE_ITERATIONS"));
  Run.MinIterations = std::stoul(Env.at("SKYLINE_MIN_ITERATIONS"));
  Run.IterationsReached = Reached;
  Run.IterationMs = {MedianMs, MedianMs, 0.1, MedianMs, MedianMs};
  Run.Throughput = 4000;
  Run.PeakBytes = 5000;
  if (Request.Mode == RunMode::Breakdown) {
    Run.PeakBytesByPhase = {{Phase::Construction, 5000}};
    Run.TimeSplitMs = {{TimePart::Data, 0.5},
                       {TimePart::Forward, 0.5},
                       {TimePart::Backward, 0.5},
                       {TimePart::Optimizer, 0.5},
                       {TimePart::Other, 0.0}};
    LayerMeasure Layer;
    Layer.ForwardMs = 0.5;
    Layer.BackwardMs = 0.5;
    Run.Layers = {Layer};
  }
  return Run;
}

/// Responds to every run alike: Iterations measured, after Reached.
ScriptedProgram::Respond everyRun(const ScriptedProgram &Program,
                                  unsigned Iterations, bool EndedEarly,
                                  unsigned Reached) {
  return [&Program, Iterations, EndedEarly, Reached](const RunRequest &Request,
                                                     const Environment &Env) {
    return Program.finished(
        Request, measured(Request, Env, Iterations, EndedEarly, Reached));
  };
}

/// The batch sizes of a measurement's runs, in the order they are kept.
std::vector<int64_t> sizesOf(const Measurement &M) {
  std::vector<int64_t> Sizes;
  for (const MeasuredRun &Run : M.Runs)
    Sizes.push_back(Run.BatchSize);
  return Sizes;
}

TEST(MeasureTest, WithoutALiteralTheProgramRunsAtItsOwnSizeOnly) {
  // Declared 0: no literal the runs can set. The program trains at 24
  // whatever it is asked, and the runs observe it: one size, its timing
  // runs repeated and its breakdown run, as any size gets; no other tried.
  ScriptedProgram Program("own-size");
  Program.Options.MaxRuns = 6;
  Program.Options.TimingRuns = 2;
  std::vector<int64_t> Asked;
  auto AtItsOwnSize = [&](const RunRequest &Request, const Environment &Env) {
    Asked.push_back(Request.BatchSize);
    MeasuredRun Run = measured(Request, Env, 10, false, 12);
    Run.BatchSize = Run.ObservedBatchSize = 24;
    Run.ObservedScope = 0;
    return Program.finished(Request, Run, 0.5);
  };
  Program.write(AtItsOwnSize, AtItsOwnSize);
  std::string Progress;
  llvm::raw_string_ostream Out(Progress);
  auto M = Sweep(Program, 0, Program.Options, Out, [] { return 0.0; }).run();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_TRUE(M->AtOwnBatchSize);
  EXPECT_EQ(sizesOf(*M), std::vector<int64_t>({24}));
  EXPECT_EQ(M->Runs[0].ObservedBatchSize, 24);
  EXPECT_EQ(M->Runs[0].TimingRunMedians.size(), 2u);
  EXPECT_TRUE(M->Runs[0].Breakdown);
  // The first run asks for none; the size's others for the size it saw.
  EXPECT_EQ(Asked, std::vector<int64_t>({0, 24, 24}));
  EXPECT_TRUE(M->Problems.empty()) << M->Problems.front();
  EXPECT_NE(Progress.find("run 1/1 at the program's own batch size... 0.5 s, "
                          "10 iterations (count), batch size 24 (observed); "
                          "breakdown 0.5 s"),
            std::string::npos)
      << Progress;
}

TEST(MeasureTest, ARunThatTrainsAtAnotherSizeThanAskedIsMeasuredAtItsOwn) {
  // The literal's default was set to 8, but the program trained at 24 (an
  // argument given to it wins over the default): measured as it ran.
  ScriptedProgram Program("argument-wins");
  Program.Options.MaxRuns = 6;
  Program.Options.TimingRuns = 1;
  auto At24 = [&](const RunRequest &Request, const Environment &Env) {
    MeasuredRun Run = measured(Request, Env, 10, false, 12);
    Run.BatchSize = Run.ObservedBatchSize = 24;
    return Program.finished(Request, Run);
  };
  Program.write(At24, At24);
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_TRUE(M->AtOwnBatchSize);
  EXPECT_EQ(sizesOf(*M), std::vector<int64_t>({24}));
  ASSERT_EQ(M->Problems.size(), 1u);
  EXPECT_EQ(M->Problems[0],
            "the run asked for batch size 8 trained at 24 (observed): the "
            "program does not take its batch size from the literal the runs "
            "set (is it given by an argument, --run-arg, or a "
            "configuration?); it is measured at its own size only");
}

TEST(MeasureTest, OutOfMemoryBeforeTheLoopIsNotTheBatchSizes) {
  // The program's reader fills the memory before the loop starts: the
  // runtime never saw a batch (batch size 0 in its result). The run is at
  // the size asked for, and the answer says the loop never began.
  ScriptedProgram Program("oom-before-loop");
  Program.Options.MaxRuns = 4;
  Program.Options.TimingRuns = 1;
  auto BeforeTheLoop = [&](const RunRequest &Request, const Environment &Env) {
    MeasuredRun Run = measured(Request, Env, 0, false, 0, true);
    Run.BatchSize = 0;
    Run.OutOfMemoryBeforeLoop = true; // as readRunResult finds it (below)
    Run.OtherWorkCores = 0.9;
    return Program.finished(Request, Run);
  };
  Program.write(BeforeTheLoop, BeforeTheLoop);
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  // Even the declared size does not fit: no smaller size is worth a run.
  EXPECT_EQ(sizesOf(*M), std::vector<int64_t>({8}));
  EXPECT_TRUE(M->Runs[0].OutOfMemory);
  ASSERT_EQ(M->Problems.size(), 1u) << M->Problems.back();
  EXPECT_EQ(M->Problems[0],
            "the run at batch size 8 ran out of memory before its training "
            "loop's first iteration: what the program does before the loop "
            "(reading its data, building its model) took the memory, not "
            "batches of that size, so no batch size can be measured; look at "
            "what runs before the loop (a reader that does not stop at a file "
            "that did not open?) or raise --memory-budget");
  EXPECT_NE(Program.Progress.find("during the kept runs at batch size 8 ("),
            std::string::npos)
      << Program.Progress;
  EXPECT_EQ(Program.Progress.find("batch size 0"), std::string::npos)
      << Program.Progress;

  // Out of memory in the loop (its third iteration) is the batch size's.
  ScriptedProgram InTheLoop("oom-in-loop");
  InTheLoop.Options.MaxRuns = 1;
  InTheLoop.Options.TimingRuns = 1;
  auto AtTheThird = [&](const RunRequest &Request, const Environment &Env) {
    return InTheLoop.finished(Request,
                              measured(Request, Env, 0, false, 3, true));
  };
  InTheLoop.write(AtTheThird, AtTheThird);
  auto Late = InTheLoop.measureFrom();
  ASSERT_TRUE(bool(Late)) << llvm::toString(Late.takeError());
  EXPECT_TRUE(Late->Problems.empty()) << Late->Problems.front();
}

TEST(MeasureTest, RunThatEndedEarlyIsKeptWithAWarning) {
  ScriptedProgram Program("ended-early");
  Program.write(everyRun(Program, 3, true, 6), everyRun(Program, 3, false, 6));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_EQ(M->Runs.size(), 1u);
  const MeasuredRun &Run = M->Runs[0];
  EXPECT_TRUE(Run.EndedEarly);
  EXPECT_EQ(Run.Iterations, 3u);
  EXPECT_EQ(Run.IterationsAsked, 50u);
  EXPECT_EQ(Run.Stopped, StopReason::EndedEarly);
  ASSERT_TRUE(Run.Breakdown);
  EXPECT_EQ(Run.TimeSplitMs.size(), 5u);
  EXPECT_TRUE(Run.Memory.empty()) << "no memory kinds in the file";
  ASSERT_EQ(M->Problems.size(), 1u);
  EXPECT_EQ(M->Problems[0],
            "the run at batch size 8 ended after 3 of 50 measured iterations: "
            "its figures come from those; the program ran out of data? lower "
            "--iterations or give it more");
  // The timing run stops by the rule, the breakdown run after a few.
  EXPECT_NE(Program.calls().find("timing 50 5 0.020000 "), std::string::npos)
      << Program.calls();
  EXPECT_NE(Program.calls().find("breakdown 3 3"), std::string::npos)
      << Program.calls();
}

TEST(MeasureTest, KeptRunsThatSharedTheCpusAreNamed) {
  // The launcher measures what other work took of the CPUs around each run;
  // the kept (fastest) timing run's figure stays with the size.
  ScriptedProgram Program("other-work");
  Program.Options.MaxRuns = 2;
  Program.Options.TimingRuns = 1;
  auto Busy = [&](const RunRequest &Request, const Environment &Env) {
    MeasuredRun Run = measured(Request, Env, 5, false, 7);
    Run.OtherWorkCores = Request.BatchSize == 8 ? 0.1 : 0.84;
    Run.StealCores = Request.BatchSize == 8 ? 0.05 : 0.24;
    return Program.finished(Request, Run);
  };
  Program.write(Busy, [&](const RunRequest &Request, const Environment &Env) {
    return Program.finished(Request, measured(Request, Env, 3, false, 5));
  });
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_EQ(M->Runs.size(), 2u);
  EXPECT_DOUBLE_EQ(M->Runs[0].OtherWorkCores, 0.1);
  EXPECT_DOUBLE_EQ(M->Runs[1].OtherWorkCores, 0.84);
  EXPECT_NE(Program.Progress.find(
                "skyline-check: warning: other work held the CPUs during the "
                "kept runs at batch size 16 (0.8 of "),
            std::string::npos)
      << Program.Progress;
  EXPECT_EQ(Program.Progress.find("batch size 8 ("), std::string::npos)
      << "0.1 of a core is not worth a warning";
  // The hypervisor's part, said apart: no process here can free it.
  EXPECT_NE(Program.Progress.find(
                "skyline-check: warning: the hypervisor took CPU time from "
                "this machine (steal) during the kept runs at batch size 16 "
                "(0.24 of "),
            std::string::npos)
      << Program.Progress;
  EXPECT_DOUBLE_EQ(M->Runs[1].StealCores, 0.24);
}

TEST(MeasureTest, MoreLibTorchThreadsThanCpusIsSaid) {
  // The first run says how many intra-op threads LibTorch ran; more than
  // the CPUs the runs could use makes every parallel region wait.
  ScriptedProgram Program("threads");
  auto WithThreads = [&](int Threads) {
    return [&, Threads](const RunRequest &Request, const Environment &Env) {
      MeasuredRun Run = measured(Request, Env, 5, false, 7);
      Run.Threads = Threads;
      return Program.finished(Request, Run);
    };
  };
  Program.write(WithThreads(100000), WithThreads(100000));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(M->Threads, 100000);
  EXPECT_NE(Program.Progress.find("skyline-check: warning: LibTorch ran "
                                  "100000 intra-op threads on the "),
            std::string::npos)
      << Program.Progress;
  Program.write(WithThreads(1), WithThreads(1));
  ASSERT_TRUE(bool(Program.measureFrom()));
  EXPECT_EQ(Program.Progress.find("intra-op threads"), std::string::npos)
      << Program.Progress;
}

TEST(MeasureTest, OnCudaTheCapacityIsTheDevicesMemory) {
  ScriptedProgram Program("cuda");
  // What the runtime adds on a CUDA run: the device and its memory.
  auto OnTheGpu = [](MeasuredRun Run) {
    Run.Device = DeviceType::CUDA;
    Run.DeviceName = "NVIDIA H200";
    Run.DeviceCapacityBytes = 150000000000;
    return Run;
  };
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        return Program.finished(Request,
                                OnTheGpu(measured(Request, Env, 5, false, 7)));
      },
      [&](const RunRequest &Request, const Environment &Env) {
        // Without CUPTI the breakdown run times its layers with CUDA events.
        MeasuredRun Run = OnTheGpu(measured(Request, Env, 3, false, 5));
        Run.GpuMsSource = GpuTimeSource::CudaEvents;
        return Program.finished(Request, Run);
      });
  Program.Options.MemoryBudget = int64_t(4) << 30; // the CPU default
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(M->Device, DeviceType::CUDA);
  EXPECT_EQ(M->DeviceName, "NVIDIA H200");
  EXPECT_EQ(M->MemoryCapacityBytes, 150000000000);
  ASSERT_FALSE(M->Runs.empty());
  EXPECT_EQ(M->Runs[0].GpuMsSource, GpuTimeSource::CudaEvents);
}

TEST(MeasureTest, SizeWhoseDataEndsBeforeMeasuringIsBackedOffFrom) {
  ScriptedProgram Program("data-ends");
  Program.Options.MaxRuns = 5;
  Program.Options.TimingRuns = 1;
  // Past 16 an epoch is too short to reach a measured iteration; the
  // program returns 0 after it.
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        if (Request.BatchSize > 16)
          return Program.finished(Request, measured(Request, Env, 0, true, 1));
        return Program.finished(Request, measured(Request, Env, 5, false, 7));
      },
      everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  // 8 and 16 measured; 32 ended before measuring, so halfway back: 24, 20,
  // each ending the same way.
  ASSERT_EQ(M->Runs.size(), 2u);
  EXPECT_EQ(M->Runs[1].BatchSize, 16);
  EXPECT_FALSE(M->Runs[1].OutOfMemory);
  EXPECT_NE(Program.Progress.find("run 3/5 at batch size 32"),
            std::string::npos);
  EXPECT_NE(Program.Progress.find("run 4/5 at batch size 24"),
            std::string::npos);
  EXPECT_NE(Program.Progress.find("run 5/5 at batch size 20"),
            std::string::npos)
      << Program.Progress;
  ASSERT_EQ(M->Problems.size(), 3u);
  EXPECT_NE(M->Problems[0].find("the run at batch size 32 ended with exit "
                                "code 0 after 1 iteration(s), before its "
                                "first measured one"),
            std::string::npos)
      << M->Problems[0];
}

TEST(MeasureTest, SizeThatCrashesIsBackedOffFromAndBoundsTheSuggestion) {
  ScriptedProgram Program("crash-past-16");
  Program.Options.MaxRuns = 5;
  Program.Options.TimingRuns = 1;
  // Past 16 the program dies of an uncaught c10::Error, the way a
  // `view({batch_size, -1})` does on a batch smaller than the size.
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        if (Request.BatchSize > 16)
          return Program.crashed(
              Request, SIGABRT,
              "terminate called after throwing an instance of 'c10::Error'\n"
              "  what():  shape '[" +
                  std::to_string(Request.BatchSize) +
                  ", -1]' is invalid for input of size 5687136\n"
                  "Exception raised from infer_size_impl at InferSize.h:72\n"
                  "frame #0: c10::Error::Error(c10::SourceLocation)\n");
        return Program.finished(Request, measured(Request, Env, 5, false, 7));
      },
      everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  // 8 and 16 measured; 32 crashed, so halfway back: 24, then 20, each
  // crashing too. The sweep goes on instead of ending at the first crash.
  EXPECT_EQ(sizesOf(*M), (std::vector<int64_t>{8, 16})) << Program.Progress;
  EXPECT_NE(Program.Progress.find("run 4/5 at batch size 24"),
            std::string::npos);
  EXPECT_NE(Program.Progress.find("run 5/5 at batch size 20"),
            std::string::npos)
      << Program.Progress;
  EXPECT_EQ(M->FirstFailure, 20);
  ASSERT_EQ(M->Problems.size(), 3u);
  const std::string &First = M->Problems[0];
  EXPECT_EQ(First.rfind("the run at batch size 32 crashed (SIGABRT", 0), 0u)
      << First;
  // What it means, then the exception's message without its frames.
  EXPECT_NE(First.find("; the sweep stays below 32 and suggests no size from "
                       "it on; the end of its output ("),
            std::string::npos)
      << First;
  EXPECT_NE(First.find("):\nterminate called after throwing an instance of "
                       "'c10::Error'\n  what():  shape '[32, -1]' is invalid "
                       "for input of size 5687136"),
            std::string::npos)
      << First;
  EXPECT_EQ(First.find("frame #"), std::string::npos) << First;
  EXPECT_EQ(First.find("Exception raised from"), std::string::npos) << First;
}

TEST(MeasureTest, NearestWholeBatchSizeDividesTheDataset) {
  // 60000 samples: near 8791 the divisors are 7500 and 10000 (ratios 1.17
  // and 1.14); 10000 is nearer.
  EXPECT_EQ(nearestWholeBatchSize(8791, 60000, {}, std::nullopt), 10000);
  // Below a size that failed, or one already measured, the next nearest.
  EXPECT_EQ(nearestWholeBatchSize(8791, 60000, {}, 9000), 7500);
  EXPECT_EQ(nearestWholeBatchSize(8791, 60000, {10000}, std::nullopt), 7500);
  // None within a factor of 4 (a prime count): nothing near to try.
  EXPECT_EQ(nearestWholeBatchSize(8791, 60013, {}, std::nullopt, 30006), 0);
  // Past what the smallest dataset allows (a test set of 10,000 given the
  // same size): its largest divisor still untried within reach.
  EXPECT_EQ(
      nearestWholeBatchSize(30000, 10000, {100, 200}, std::nullopt, 10000),
      10000);
  EXPECT_EQ(nearestWholeBatchSize(30000, 10000, {100, 200, 10000}, std::nullopt,
                                  10000),
            0);
  // An unknown dataset changes nothing.
  EXPECT_EQ(nearestWholeBatchSize(8791, 0, {}, std::nullopt), 8791);
  EXPECT_EQ(nearestWholeBatchSize(0, 60000, {}, std::nullopt), 0);
}

TEST(MeasureTest, WholeBatchSweepTriesDivisorsOfTheDataset) {
  // 96 samples; the program dies on a short batch (its loop shapes tensors
  // by the batch size), as soon as a run reaches an epoch's end.
  auto Script = [](ScriptedProgram &Program, bool SaysItsDatasetSize) {
    Program.write(
        [&Program, SaysItsDatasetSize](const RunRequest &Request,
                                       const Environment &Env) {
          if (96 % Request.BatchSize != 0)
            return Program.crashed(Request, SIGABRT, "");
          MeasuredRun Run = measured(Request, Env, 5, false, 7);
          // Its 7 loop starts reach a second epoch from 16 on (6 batches).
          if (96 / Request.BatchSize < 7)
            Run.EpochIterations = unsigned(96 / Request.BatchSize);
          if (SaysItsDatasetSize)
            Run.DatasetSamples = 96;
          return Program.finished(Request, Run);
        },
        everyRun(Program, 3, false, 5));
  };
  ScriptedProgram Whole("whole-batches");
  Whole.Options.MaxRuns = 6;
  Whole.Options.TimingRuns = 1;
  Whole.Options.WholeBatchesOnly = true;
  Script(Whole, true);
  auto M = Whole.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  // Memory does not grow, so the sweep doubles, up to half the dataset:
  // 64 would pass it, so 48, which divides 96; then the time is straight.
  EXPECT_EQ(sizesOf(*M), (std::vector<int64_t>{8, 16, 32, 48}))
      << Whole.Progress;
  EXPECT_TRUE(M->Problems.empty()) << M->Problems.front();
  EXPECT_EQ(M->Runs[0].DatasetSamples, 96);
  // 64 snaps to the divisor 48, nearer than 96.
  EXPECT_EQ(nearestWholeBatchSize(64, 96, {8, 16, 32}, std::nullopt), 48);

  // A program that does not say its dataset's size: the sweep tries 64,
  // which fails, and backs off to 48. A run is spent on a crash, and no
  // size from 64 on is suggested.
  ScriptedProgram Unseen("whole-batches-unseen");
  Unseen.Options.MaxRuns = 5;
  Unseen.Options.TimingRuns = 1;
  Unseen.Options.WholeBatchesOnly = true;
  Script(Unseen, false);
  auto Failed = Unseen.measureFrom();
  ASSERT_TRUE(bool(Failed)) << llvm::toString(Failed.takeError());
  EXPECT_EQ(sizesOf(*Failed), (std::vector<int64_t>{8, 16, 32, 48}))
      << Unseen.Progress;
  EXPECT_EQ(Failed->FirstFailure, 64);
}

TEST(MeasureTest, SizeWhoseEveryIterationIsAnEpochIsLeftOut) {
  ScriptedProgram Program("past-the-dataset");
  Program.Options.MaxRuns = 6;
  Program.Options.TimingRuns = 1;
  // A dataset of 50 samples: from 50 on an epoch is one batch, all of the
  // dataset, and every iteration spans the loop's start. Memory does not
  // grow, so the sweep doubles.
  auto Whole = [&Program](const RunRequest &Request, const Environment &Env) {
    MeasuredRun Run = measured(Request, Env, 8, false, 10);
    Run.EveryIterationAnEpoch = true;
    return Program.finished(Request, Run);
  };
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        if (Request.BatchSize >= 50)
          return Whole(Request, Env);
        return Program.finished(Request, measured(Request, Env, 8, false, 10));
      },
      everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  // 8, 16, 32; 64 measured 50 samples a batch: left out, and halfway back
  // from it, 48 measures and 56 is left out too.
  std::vector<int64_t> Sizes = sizesOf(*M);
  EXPECT_EQ(Sizes, (std::vector<int64_t>{8, 16, 32, 48})) << Program.Progress;
  EXPECT_NE(Program.Progress.find("run 4/6 at batch size 64... 0.0 s, 8 "
                                  "iterations, each a whole epoch\n"),
            std::string::npos)
      << Program.Progress;
  EXPECT_NE(Program.Progress.find("run 6/6 at batch size 56"),
            std::string::npos)
      << Program.Progress;
  ASSERT_EQ(M->Problems.size(), 2u);
  EXPECT_EQ(M->Problems[0],
            "the run at batch size 64: each of its 8 iterations was a whole "
            "epoch, where batch size 32 had several an epoch: the dataset "
            "holds fewer samples than 64, so every batch was all of them, "
            "smaller than asked; the size is left out and the sweep stays "
            "below it");
  EXPECT_EQ(M->LargerThanTheData, 56);
  // No breakdown run was spent on a size left out.
  EXPECT_EQ(llvm::StringRef(Program.calls()).count("breakdown"), 4u);

  // A loop entered once an iteration is so at every size: kept.
  ScriptedProgram Always("loop-every-step");
  Always.Options.MaxRuns = 2;
  Always.Options.TimingRuns = 1;
  Always.write(Whole, everyRun(Always, 3, false, 5));
  auto Kept = Always.measureFrom();
  ASSERT_TRUE(bool(Kept)) << llvm::toString(Kept.takeError());
  EXPECT_EQ(Kept->Runs.size(), 2u) << Always.Progress;
  EXPECT_TRUE(Kept->Problems.empty());
}

TEST(MeasureTest, SweepStopsWhereTheDataRunsOut) {
  ScriptedProgram Program("data-limit");
  Program.Options.MaxRuns = 10;
  Program.Options.TimingRuns = 1;
  // 2 epochs of 2,048 samples, an epoch's last batch a short one: at size b
  // the program reaches 2 x ceil(2048 / b) iterations. With 9 or more the
  // run stops by the rule after 5 measured (reaching 8); with fewer the
  // program returns first, with what it reached less the warm-up and the
  // unfinished last one measured. Its memory does not grow, so the sweep
  // doubles.
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        unsigned Reached =
            2 * unsigned((2048 + Request.BatchSize - 1) / Request.BatchSize);
        if (Reached >= 9)
          return Program.finished(Request, measured(Request, Env, 5, false, 8));
        if (Reached <= 3)
          return Program.finished(Request, measured(Request, Env, 0, true, 2));
        return Program.finished(
            Request, measured(Request, Env, Reached - 3, true, Reached));
      },
      everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  // 8 to 1024 double. 512 ended early after 8 iterations, as many as the
  // smaller sizes reached before their rule stopped them: not yet a sign.
  // 1024 reached 4: its data ran out, and lasts 4 x 1024 / 5 = 819 a batch
  // for two measured iterations. The sweep does not try 2048 (it would
  // reach 2, none measured), and with a straight time line there is no
  // bend to add a size at.
  std::vector<int64_t> Sizes = sizesOf(*M);
  EXPECT_EQ(Sizes, (std::vector<int64_t>{8, 16, 32, 64, 128, 256, 512, 1024}))
      << Program.Progress;
  EXPECT_EQ(M->Runs.back().Iterations, 1u);
  for (const std::string &Problem : M->Problems)
    EXPECT_EQ(Problem.find("before its first measured one"), std::string::npos)
        << Problem;
}

/// A real instrumented program's stand-in, for the launcher's own path (a
/// process, its exit code, its log and its result file): a shell script
/// that writes the result the runtime would, per SKYLINE_MODE.
class FakeProgram {
public:
  explicit FakeProgram(const std::string &Name)
      : Dir(testDirectory(Name)), Options(sweepOptions(Dir)) {}
  ~FakeProgram() { llvm::sys::fs::remove_directories(Dir); }

  /// Timing and Breakdown are shell snippets that run in the script with
  /// $SKYLINE_RESULT and the other variables set.
  std::string write(const std::string &Timing, const std::string &Breakdown) {
    std::string Script = Dir + "/program.sh";
    std::error_code EC;
    llvm::raw_fd_ostream Out(Script, EC);
    Out << "#!/bin/sh\n"
        << "if [ \"$SKYLINE_MODE\" = timing ]; then\n"
        << Timing << "\nelse\n"
        << Breakdown << "\nfi\n";
    Out.close();
    llvm::sys::fs::setPermissions(Script, llvm::sys::fs::all_all);
    return Script;
  }

  /// Measures Script from batch size 8, its progress kept in Progress.
  llvm::Expected<Measurement> measureFrom(const std::string &Script) {
    Progress.clear();
    llvm::raw_string_ostream Out(Progress);
    return measure(Script, 8, Options, Out);
  }

  std::string Dir;
  MeasureOptions Options;
  std::string Progress;
};

/// A result file's text, as the runtime writes it.
std::string result(const std::string &Mode, int Iterations, bool EndedEarly,
                   int Reached) {
  return "cat > \"$SKYLINE_RESULT\" <<EOF\nschema_version: 1\n"
         "batch_size: $SKYLINE_BATCH_SIZE\noom: false\niterations: " +
         std::to_string(Iterations) + "\nmode: " + Mode +
         "\nstopped: " + (EndedEarly ? "ended_early" : "count") +
         "\nended_early: " + (EndedEarly ? "true" : "false") +
         "\nwarmup: 2\niterations_asked: $SKYLINE_ITERATIONS\n"
         "min_iterations: $SKYLINE_MIN_ITERATIONS\niterations_reached: " +
         std::to_string(Reached) +
         "\niteration_ms: {median: 2.0, mean: 2.0, stddev: 0.1, min: 1.9, "
         "max: 2.1}\nthroughput: 4000\npeak_bytes: 5000\n"
         "EOF\necho 'trained a few steps'\n";
}

TEST(MeasureTest, RunWithNoMeasuredIterationIsAnError) {
  FakeProgram Program("no-iterations");
  std::string Script = Program.write(result("timing", 0, true, 2), "exit 1");
  auto M = Program.measureFrom(Script);
  ASSERT_FALSE(bool(M));
  std::string Message = llvm::toString(M.takeError());
  EXPECT_NE(Message.find("the run at batch size 8 ended with exit code 0 "
                         "after 2 iteration(s), before its first measured one "
                         "(it asks for 2 warm-up and 5 to 50 measured"),
            std::string::npos)
      << Message;
  EXPECT_NE(Message.find("batch-8.log):\ntrained a few steps"),
            std::string::npos)
      << Message;
}

TEST(MeasureTest, NonZeroExitIsAFailureEvenWithAResult) {
  FakeProgram Program("non-zero");
  std::string Script =
      Program.write(result("timing", 3, true, 6) + "exit 3", "exit 3");
  auto M = Program.measureFrom(Script);
  ASSERT_FALSE(bool(M));
  std::string Message = llvm::toString(M.takeError());
  EXPECT_NE(Message.find("the run at batch size 8 ended with exit code 3 "
                         "after 6 iteration(s): a program that exits non-zero "
                         "is a failure"),
            std::string::npos)
      << Message;
}

TEST(MeasureTest, DeviceCudaNamesWhyTheRunWasOnTheCpu) {
  FakeProgram Program("device-cuda");
  Program.Options.Device = DeviceChoice::CUDA;
  // The result of a program that never put a tensor on the GPU; the budget
  // the run was given goes to a file.
  std::string Run = "echo \"$SKYLINE_MEMORY_BUDGET\" > '" + Program.Dir +
                    "/budget'\n" + result("timing", 5, false, 8) +
                    "echo 'device: {type: cpu, name: \"X\", cuda: unused}' "
                    ">> \"$SKYLINE_RESULT\"\n";
  auto M = Program.measureFrom(Program.write(Run, Run));
  ASSERT_FALSE(bool(M));
  EXPECT_EQ(llvm::toString(M.takeError()),
            "--device=cuda, but the run at batch size 8 ran on the CPU: a GPU "
            "is there, but by the end of warm-up the program had allocated "
            "nothing on it; move the model and each batch to it "
            "(.to(torch::kCUDA)); or measure with --device=cpu or "
            "--device=auto");
  auto Budget = llvm::MemoryBuffer::getFile(Program.Dir + "/budget");
  ASSERT_TRUE(bool(Budget));
  EXPECT_EQ((*Budget)->getBuffer(), "0\n")
      << "no host budget with --device=cuda: the device's memory is the limit";
}

TEST(MeasureTest, DeviceCudaKeepsACudaRunAndItsGpuNote) {
  FakeProgram Program("device-cuda-used");
  Program.Options.Device = DeviceChoice::CUDA;
  Program.Options.MaxRuns = 1;
  std::string Run =
      result("timing", 5, false, 8) +
      "cat >> \"$SKYLINE_RESULT\" <<EOF\n"
      "device: {type: cuda, name: \"Test GPU\", cuda: used}\n"
      "gpu: {memory_capacity_bytes: 1000000000, gpu_ms_source: cupti, "
      "clock: cuda_events, note: \"CUPTI dropped 3 records: gpu_ms is low\"}\n"
      "EOF\n";
  auto M = Program.measureFrom(Program.write(Run, Run));
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_FALSE(M->Runs.empty());
  EXPECT_EQ(M->Device, DeviceType::CUDA);
  EXPECT_EQ(M->Runs[0].Cuda, rt::CudaUse::Used);
  EXPECT_EQ(M->Runs[0].GpuNote, "CUPTI dropped 3 records: gpu_ms is low");
}

TEST(MeasureTest, CublasAllocationFailureIsOutOfMemory) {
  // cuBLAS creating its handle near the GPU's capacity throws outside the
  // caching allocator; the program catches it, prints it and exits 1.
  FakeProgram Program("cublas-oom");
  Program.Options.MaxRuns = 2;
  std::string Run = "if [ \"$SKYLINE_BATCH_SIZE\" -gt 8 ]; then\n"
                    "echo 'CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling "
                    "`cublasCreate(handle)`' >&2\nexit 1\nfi\n" +
                    result("timing", 5, false, 8);
  auto M = Program.measureFrom(Program.write(Run, Run));
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_EQ(M->Runs.size(), 2u) << Program.Progress;
  EXPECT_FALSE(M->Runs[0].OutOfMemory);
  EXPECT_EQ(M->Runs[1].BatchSize, 16);
  EXPECT_TRUE(M->Runs[1].OutOfMemory) << Program.Progress;
  EXPECT_EQ(M->FirstFailure, 0) << "out of memory, not a failed size";
}

TEST(MeasureTest, OutOfMemoryInTheBreakdownRunIsOutOfMemory) {
  ScriptedProgram Program("oom");
  Program.Options.MaxRuns = 3;
  // Fits in the timing run; the breakdown run at 16 crosses the budget.
  Program.write(everyRun(Program, 5, false, 8), [&](const RunRequest &Request,
                                                    const Environment &Env) {
    if (Request.BatchSize == 16)
      return Program.finished(Request,
                              measured(Request, Env, 1, false, 3, true));
    return Program.finished(Request, measured(Request, Env, 3, false, 6));
  });
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_EQ(M->Runs.size(), 3u) << Program.Progress;
  EXPECT_FALSE(M->Runs[0].OutOfMemory);
  EXPECT_EQ(M->Runs[1].BatchSize, 16);
  EXPECT_TRUE(M->Runs[1].OutOfMemory);
  EXPECT_EQ(M->Runs[2].BatchSize, 12) << "backs off halfway";
}

TEST(MeasureTest, SpentTimeBudgetStopsAddingBatchSizes) {
  ScriptedProgram Program("budget");
  Program.Options.MaxRuns = 4;
  Program.Options.TimeBudgetSeconds = 0.3;
  Program.Options.Breakdown = BreakdownRuns::Declared;
  // Each timing run takes 0.4 s.
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        return Program.finished(Request, measured(Request, Env, 5, false, 8),
                                0.4);
      },
      everyRun(Program, 3, false, 6));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(M->Runs.size(), 1u) << "one run past the budget, no more";
  EXPECT_TRUE(M->TimeBudgetSpent);
  ASSERT_EQ(M->Problems.size(), 2u);
  EXPECT_EQ(M->Problems[0], "the time budget (0.3 s, --time-budget) is "
                            "spent: measured 1 of 4 batch sizes; raise it "
                            "to measure more");
  EXPECT_EQ(M->Problems[1], "the time budget (0.3 s, --time-budget) is "
                            "spent: 2 repeated timing run(s) left out "
                            "(--timing-runs)");
  // The first timing run had the first run's share as its limit: 0.3 s /
  // (4 sizes x 3 timing runs), three quarters of it (0.01875 s).
  EXPECT_NE(Program.calls().find("timing 50 5 0.020000 0.018"),
            std::string::npos)
      << Program.calls();
}

/// The medians of the timing runs, in the order the runs are made.
class Medians {
public:
  Medians(std::initializer_list<const char *> Values)
      : Values(Values.begin(), Values.end()) {}

  /// The next run's median, noted in Timings as "<batch size> <median>".
  double next(const RunRequest &Request) {
    const std::string &Median = Values.at(Made++);
    Timings += std::to_string(Request.BatchSize) + " " + Median + "\n";
    return std::stod(Median);
  }

  std::string Timings;

private:
  std::vector<std::string> Values;
  size_t Made = 0;
};

/// Timing runs of 5 measured iterations with the medians of Times.
ScriptedProgram::Respond timingRunsWithMedians(const ScriptedProgram &Program,
                                               Medians &Times) {
  return [&Program, &Times](const RunRequest &Request, const Environment &Env) {
    return Program.finished(Request, measured(Request, Env, 5, false, 7, false,
                                              Times.next(Request)));
  };
}

TEST(MeasureTest, TimingRunsAreRepeatedInterleavedAndTheFastestKept) {
  ScriptedProgram Program("repeats");
  Program.Options.MaxRuns = 2;
  Program.Options.TimingRuns = 3;
  // The breakdown run's iteration is 4 ms; its split (0.5 ms a phase) is
  // scaled to the kept timing run's mean.
  Medians Times = {"3.0", "5.0", "2.0", "6.0", "2.05", "5.2"};
  Program.write(timingRunsWithMedians(Program, Times),
                [&](const RunRequest &Request, const Environment &Env) {
                  return Program.finished(
                      Request, measured(Request, Env, 3, false, 5, false, 4.0));
                });
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_TRUE(M->Problems.empty()) << M->Problems.front();
  // Every size once, then again in the same order: a slow spell of the
  // machine falls on both sizes alike.
  EXPECT_EQ(Times.Timings, "8 3.0\n16 5.0\n8 2.0\n16 6.0\n8 2.05\n16 5.2\n");
  ASSERT_EQ(M->Runs.size(), 2u);
  const MeasuredRun &Small = M->Runs[0], &Large = M->Runs[1];
  EXPECT_EQ(Small.TimingRunMedians, (std::vector<double>{3.0, 2.0, 2.05}));
  EXPECT_DOUBLE_EQ(Small.IterationMs.Median, 2.0) << "the fastest run";
  EXPECT_EQ(Large.TimingRunMedians, (std::vector<double>{5.0, 6.0, 5.2}));
  EXPECT_DOUBLE_EQ(Large.IterationMs.Median, 5.0);
  ASSERT_TRUE(Small.Breakdown);
  ASSERT_EQ(Small.TimeSplitMs.size(), 5u);
  EXPECT_DOUBLE_EQ(Small.TimeSplitMs[1].second, 0.25) << "0.5 x 2.0 / 4.0";
  EXPECT_DOUBLE_EQ(Large.TimeSplitMs[1].second, 0.625) << "0.5 x 5.0 / 4.0";
  // Each repeat has its own log beside the first run's.
  EXPECT_TRUE(llvm::sys::fs::exists(Program.Options.WorkDir +
                                    "/runs/batch-16-run3.log"));
  EXPECT_NE(Program.Progress.find(
                "skyline-check: timing run 3/3 at batch size 16..."),
            std::string::npos)
      << Program.Progress;
}

/// A size whose one timing run measured Median ms an iteration.
SizeRuns timedSize(int64_t BatchSize, double Median, bool Repeatable = true) {
  SizeRuns Size;
  Size.BatchSize = BatchSize;
  MeasuredRun Run;
  Run.BatchSize = BatchSize;
  Run.Iterations = 5;
  Run.IterationMs = {Median, Median, 0.1, Median, Median};
  Size.Timing.push_back(Run);
  Size.Repeatable = Repeatable;
  return Size;
}

TEST(MeasureTest, TheDecisionSizesAreTheDeclaredTheBestAndThoseAroundIt) {
  // mnist's sizes on the 2-core machine, samples a millisecond: 64 16.0,
  // 128 18.3, 387 19.4 (the best), 1170 18.0, 10695 8.2; 20000 ran out of
  // memory.
  std::vector<SizeRuns> Sizes = {
      timedSize(64, 4.0),       timedSize(128, 7.0),
      timedSize(387, 20.0),     timedSize(1170, 65.0),
      timedSize(10695, 1300.0), timedSize(20000, 0, /*Repeatable=*/false)};
  // The model would suggest 300: 128 and 387 bracket it.
  EXPECT_EQ(decisionSizes(Sizes, 64, 300),
            (std::vector<int64_t>{64, 128, 387}));
  // On a measured size: it, and the next larger one, where a slow first run
  // might have hidden a gain.
  EXPECT_EQ(decisionSizes(Sizes, 64, 387),
            (std::vector<int64_t>{64, 387, 1170}));
  // No suggestion from the model: around the best measured size.
  EXPECT_EQ(decisionSizes(Sizes, 64, 0), (std::vector<int64_t>{64, 387, 1170}));
  // Past every measured size: the largest that can repeat.
  EXPECT_EQ(decisionSizes(Sizes, 64, 30000),
            (std::vector<int64_t>{64, 387, 10695}));
  EXPECT_TRUE(decisionSizes({}, 64, 300).empty());
}

TEST(MeasureTest, OnlyTheDecisionSizesGetRepeatedTimingRuns) {
  ScriptedProgram Program("decision-repeats");
  Program.Options.MaxRuns = 4;
  Program.Options.TimingRuns = 3;
  // The memory does not grow, so the sweep doubles: 8, 16, 32, 64. Samples
  // a millisecond: 4, 7.3, 8, 8. The model would suggest 32, the smallest
  // within 5% of the best: the declared 8, 32 and the next larger, 64, are
  // timed three times; 16, away from the decision, once.
  auto Ms = [](int64_t Size) {
    return Size == 8 ? 2.0 : Size == 16 ? 2.2 : Size == 32 ? 4.0 : 8.0;
  };
  std::string Timings;
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        Timings += std::to_string(Request.BatchSize) + " ";
        return Program.finished(
            Request,
            measured(Request, Env, 5, false, 7, false, Ms(Request.BatchSize)));
      },
      everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Timings, "8 16 32 64 8 32 64 8 32 64 ") << Program.Progress;
  EXPECT_NE(Program.Progress.find(
                "skyline-check: repeating the timing runs at batch sizes 8, "
                "32, 64 (the declared size and those around the decision); "
                "one run serves 16\n"),
            std::string::npos)
      << Program.Progress;
  ASSERT_EQ(M->Runs.size(), 4u);
  EXPECT_EQ(M->Runs[1].TimingRunMedians, (std::vector<double>{2.2}));
  EXPECT_EQ(M->Runs[2].TimingRunMedians, (std::vector<double>{4.0, 4.0, 4.0}));
  // One run is no disagreement between runs: no warning for 16.
  EXPECT_TRUE(M->Problems.empty()) << M->Problems.front();
}

/// A program whose peak is 100,000 bytes and 1,000 a sample: with a budget
/// of 146,700 bytes (132,030 usable), 32 samples fit.
constexpr int64_t PeakWith32SamplesBudget = 146700;
int64_t peakOf(int64_t BatchSize) { return 100000 + 1000 * BatchSize; }

/// Seconds a run at a size takes.
using RunSeconds = std::function<double(int64_t)>;

/// Timing runs whose median at a size is Ms(size, k), k the run's number at
/// that size (from 0), each taking SecondsAt(size); the sizes, in the order
/// they ran, go to Order.
ScriptedProgram::Respond
countedTimingRuns(const ScriptedProgram &Program,
                  std::function<double(int64_t, unsigned)> Ms,
                  std::string &Order, RunSeconds SecondsAt) {
  auto Counts = std::make_shared<std::map<int64_t, unsigned>>();
  return [&Program, Ms, &Order, Counts, SecondsAt](const RunRequest &Request,
                                                   const Environment &Env) {
    unsigned K = (*Counts)[Request.BatchSize]++;
    Order += std::to_string(Request.BatchSize) + " ";
    MeasuredRun Run =
        measured(Request, Env, 5, false, 7, false, Ms(Request.BatchSize, K));
    Run.PeakBytes = peakOf(Request.BatchSize);
    return Program.finished(Request, Run, SecondsAt(Request.BatchSize));
  };
}

ScriptedProgram::Respond growingBreakdownRuns(const ScriptedProgram &Program) {
  return [&Program](const RunRequest &Request, const Environment &Env) {
    MeasuredRun Run = measured(Request, Env, 3, false, 5);
    Run.PeakBytes = peakOf(Request.BatchSize);
    return Program.finished(Request, Run);
  };
}

/// The settling tests' program: 3 sizes (8, 16, then the capacity, 32),
/// two timing runs each, its timing runs' medians from Ms, each run taking
/// SecondsAt(its size).
void writeSettlingProgram(ScriptedProgram &Program,
                          std::function<double(int64_t, unsigned)> Ms,
                          std::string &Order, RunSeconds SecondsAt) {
  Program.Options.MaxRuns = 3;
  Program.Options.TimingRuns = 2;
  Program.Options.MemoryBudget = PeakWith32SamplesBudget;
  Program.write(countedTimingRuns(Program, std::move(Ms), Order, SecondsAt),
                growingBreakdownRuns(Program));
}

/// The same, each timing run taking Seconds.
void writeSettlingProgram(ScriptedProgram &Program,
                          std::function<double(int64_t, unsigned)> Ms,
                          std::string &Order, double Seconds = 0) {
  writeSettlingProgram(Program, std::move(Ms), Order,
                       [Seconds](int64_t) { return Seconds; });
}

/// 2.0, 3.6 and 7.2 ms at 8, 16 and 32 (4, 4.44 and 4.44 samples a
/// millisecond), the k-th run at a size 1.04 times as long where k is odd:
/// runs that agree within 5%, each ln(1.04) / 2 from their mean.
double flatPast16(int64_t Size, unsigned K) {
  double Base = Size == 8 ? 2.0 : Size == 16 ? 3.6 : 7.2;
  return Base * (K % 2 ? 1.04 : 1.0);
}

TEST(MeasureTest, AnUnsureDecisionIsSettledByMoreRunsAtBothSizes) {
  ScriptedProgram Program("settle");
  // flatPast16's sizes (the sweep doubles, then goes to the capacity). The
  // pick is 16: 11.1% over 8. With
  // two runs a size (ln-spread 0.0277, 3 degrees of freedom, t = 2.353) the
  // gain's interval is e^(ln(1.1111) -+ 2.353 x 0.0277) - 1 = 4.1% to
  // 18.6%: it reaches below the min gain of 5%.
  std::string Order;
  writeSettlingProgram(Program, flatPast16, Order);
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  // One round is planned (roundsToSettle: 0.10536 - 2.015 x 0.02773 x
  // sqrt(2/3) = 0.0597 >= ln(1.05)) and settles it: a third run at 8 and at
  // 16 (the declared size first), and the interval is e^(ln(1.1111) -+
  // 2.015 x 0.02375 x sqrt(2/3)) - 1: 6.9% to 15.6%.
  EXPECT_EQ(Order, "8 16 32 8 16 32 8 16 ") << Program.Progress;
  EXPECT_NE(Program.Progress.find(
                "skyline-check: settling the decision: 16 is predicted to "
                "train 11.1% faster than 8, 90% interval 4.1% to 18.6%, which "
                "reaches below the min gain 5.0%; more timing runs at both\n"
                "skyline-check: timing run at batch size 8 (settling the "
                "decision, round 1)..."),
            std::string::npos)
      << Program.Progress;
  Analysis A = analyze(*M, 8, ModelOptions{});
  EXPECT_EQ(A.MaxBatchSize, 32);
  ASSERT_TRUE(A.Suggested) << A.NoSuggestionReason;
  EXPECT_EQ(A.Suggested->BatchSize, 16);
  EXPECT_NEAR(
      A.Suggested->GainRange.Low,
      std::exp(std::log(1 / 0.9) - 2.015 * 0.023752 * std::sqrt(2.0 / 3)) - 1,
      1e-4);
  EXPECT_FALSE(A.Unsure);
  EXPECT_EQ(M->Runs[0].TimingRunMedians, (std::vector<double>{2.0, 2.08, 2.0}));
}

TEST(MeasureTest, SettlingSpendsNoMoreThanItsShareOfTheBudget) {
  // The first test's program, its timing runs taking 10 s each: the one
  // round it needs would take 20 s, more than 15% of the 120 s budget
  // (18 s), with 60 s of it left.
  for (double Seconds : {10.0, 8.0}) {
    ScriptedProgram Program("settle-share");
    Program.Options.TimeBudgetSeconds = 120;
    std::string Order;
    writeSettlingProgram(Program, flatPast16, Order, Seconds);
    auto M = Program.measureFrom();
    ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
    if (Seconds == 10.0) {
      EXPECT_EQ(Order, "8 16 32 8 16 32 ") << Program.Progress;
      EXPECT_NE(Program.Progress.find(
                    "skyline-check: the decision stays unsure: 16 is "
                    "predicted to train 11.1% faster than 8, 90% interval "
                    "4.1% to 18.6%, which reaches below the min gain 5.0%; 1 "
                    "round of a timing run at 8 and at 16 would take about "
                    "20.0 s, more than settling's 15% of --time-budget\n"),
                std::string::npos)
          << Program.Progress;
    } else {
      // 16 s fits in 18.
      EXPECT_EQ(Order, "8 16 32 8 16 32 8 16 ") << Program.Progress;
    }
  }
}

TEST(MeasureTest, AnUnsureDecisionKeepsSettlingsShareOfTheBudget) {
  // The first test's program, a run at 32 taking 40 s and the others 5 s,
  // with a budget of 100 s. After 8, 16, 32 and the second runs at 8 and
  // 16, 60 s are spent and the decision is unsure (16 over 8: the interval
  // reaches below 5%). The second run at 32 would end at 100 s: it fits the
  // budget, but not the 85 s the repeats may spend while settling keeps its
  // 15 s. Spent, it would have left settling nothing: its round (10 s) now
  // runs, and settles the decision.
  ScriptedProgram Program("settle-keep");
  Program.Options.TimeBudgetSeconds = 100;
  std::string Order;
  writeSettlingProgram(Program, flatPast16, Order,
                       [](int64_t Size) { return Size == 32 ? 40.0 : 5.0; });
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Order, "8 16 32 8 16 8 16 ") << Program.Progress;
  ASSERT_FALSE(M->Problems.empty()) << Program.Progress;
  EXPECT_EQ(M->Problems.front(),
            "the time budget (100 s, --time-budget, of which the last 15 s "
            "are kept for settling the unsure decision) leaves too little: "
            "the repeated timing runs at batch size 32 were left out "
            "(--timing-runs): each was predicted to take longer than what "
            "was left");
  EXPECT_NE(Program.Progress.find("skyline-check: timing run at batch size 16 "
                                  "(settling the decision, round 1)..."),
            std::string::npos)
      << Program.Progress;
  Analysis A = analyze(*M, 8, ModelOptions{});
  ASSERT_TRUE(A.Suggested) << A.NoSuggestionReason << "\n" << Program.Progress;
  EXPECT_EQ(A.Suggested->BatchSize, 16);
  EXPECT_FALSE(A.Unsure);
}

TEST(MeasureTest, ASureDecisionLeavesTheRepeatsTheWholeBudget) {
  // The same runs, each size's second run 1.0 times its first: the runs
  // agree exactly, 16's gain over 8 is surely 11.1%, and nothing is kept
  // back: the second run at 32 ends at 100 s, within the budget.
  ScriptedProgram Program("settle-sure");
  Program.Options.TimeBudgetSeconds = 100;
  std::string Order;
  writeSettlingProgram(
      Program, [](int64_t Size, unsigned) { return flatPast16(Size, 0); },
      Order, [](int64_t Size) { return Size == 32 ? 40.0 : 5.0; });
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Order, "8 16 32 8 16 32 ") << Program.Progress;
  EXPECT_EQ(Program.Progress.find("settling"), std::string::npos)
      << Program.Progress;
}

TEST(MeasureTest, NoShareIsKeptForSettlingThatCouldNotUseIt) {
  // The first test's program, its runs at 8 and 16 taking 10 s and at 32
  // 30 s, with a budget of 100 s. The decision is unsure, but its round
  // would take 20 s, more than settling's 15 s: nothing is kept, and the
  // second run at 32 ends at 100 s, within the budget.
  ScriptedProgram Program("settle-no-keep");
  Program.Options.TimeBudgetSeconds = 100;
  std::string Order;
  writeSettlingProgram(Program, flatPast16, Order,
                       [](int64_t Size) { return Size == 32 ? 30.0 : 10.0; });
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Order, "8 16 32 8 16 32 ") << Program.Progress;
  EXPECT_NE(Program.Progress.find("1 round of a timing run at 8 and at 16 "
                                  "would take about 20.0 s, more than "
                                  "settling's 15% of --time-budget"),
            std::string::npos)
      << Program.Progress;
  EXPECT_FALSE(M->TimeBudgetSpent) << llvm::join(M->Problems, "\n");
}

TEST(MeasureTest, SettlingRoundsThatOutgrowTheirShareStop) {
  // The first test's program, its sweep's runs taking 0.5 s and its
  // settling runs 20 s, with a budget of 100 s: the round, predicted at 1 s,
  // fits settling's 15 s, but its first run alone outgrows them, and the
  // second is not started.
  ScriptedProgram Program("settle-outgrown");
  Program.Options.TimeBudgetSeconds = 100;
  std::string Order;
  auto Counts = std::make_shared<std::map<int64_t, unsigned>>();
  writeSettlingProgram(Program, flatPast16, Order, [Counts](int64_t Size) {
    return (*Counts)[Size]++ >= 2 ? 20.0 : 0.5;
  });
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Order, "8 16 32 8 16 32 8 ") << Program.Progress;
  EXPECT_NE(Program.Progress.find(
                "skyline-check: settling the decision stopped in round 1 of "
                "1: its runs took longer than their sizes' first, and "
                "settling's 15% of --time-budget is spent\n"),
            std::string::npos)
      << Program.Progress;
}

TEST(MeasureTest, AnUnsurePickPastTheMeasuredSizesIsNotMeasured) {
  ScriptedProgram Program("settle-past");
  // Two sizes (--max-runs=2): 2.0 ms at 8, 3.4 at 16 (17.6% more samples a
  // millisecond), the odd runs 1.3 times as long; 32 fits. The model's
  // pick lies past 16, on the line through 8 and 16 continued: the sweep
  // did not reach it, and settling does not measure it.
  std::string Order;
  writeSettlingProgram(
      Program,
      [](int64_t Size, unsigned K) {
        return (Size == 8 ? 2.0 : Size == 16 ? 3.4 : 5.0) *
               (K % 2 ? 1.3 : 1.0);
      },
      Order);
  Program.Options.MaxRuns = 2;
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(sizesOf(*M), (std::vector<int64_t>{8, 16})) << Program.Progress;
  EXPECT_EQ(Program.Progress.find("settling the decision:"), std::string::npos)
      << Program.Progress;
  Analysis A = analyze(*M, 8, ModelOptions{});
  ASSERT_TRUE(A.Unsure) << A.NoSuggestionReason << "\n" << Program.Progress;
  EXPECT_GT(A.Unsure->BatchSize, 16);
  EXPECT_NE(Program.Progress.find(
                "skyline-check: the decision stays unsure: " +
                std::to_string(A.Unsure->BatchSize) +
                " is predicted to train "),
            std::string::npos)
      << Program.Progress;
  EXPECT_NE(Program.Progress.find(
                std::to_string(A.Unsure->BatchSize) +
                " lies past the measured sizes, on their line continued, and "
                "is not measured to settle it\n"),
            std::string::npos)
      << Program.Progress;
}

TEST(MeasureTest, ADecisionMoreRunsCannotSettleCostsNoRuns) {
  ScriptedProgram Program("settle-futile");
  // flatPast16, but every run at 16 after its first takes 4.5 ms: no run
  // confirms its fastest (four runs, 2 x --timing-runs), and the runs
  // spread so widely that more of them would not narrow the interval about
  // the fastest runs' 11.1% past 5%.
  std::string Order;
  writeSettlingProgram(
      Program,
      [](int64_t Size, unsigned K) {
        return Size == 16 && K > 0 ? 4.5 : flatPast16(Size, K);
      },
      Order);
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Order, "8 16 32 8 16 32 16 16 ") << Program.Progress;
  // Centred on the fastest runs' 16 / 3.6 over 8 / 2 = 1.1111:
  // sqrt(0.953 x 1.296).
  EXPECT_NE(Program.Progress.find(
                "skyline-check: the decision stays unsure: 16 is predicted to "
                "train 11.1% faster than 8, 90% interval -4.7% to 29.6%, "
                "which reaches below the min gain 5.0%; 4 more timing runs at "
                "each size would not narrow the interval past the min gain\n"),
            std::string::npos)
      << Program.Progress;
  EXPECT_EQ(Program.Progress.find("settling the decision"), std::string::npos);
  Analysis A = analyze(*M, 8, ModelOptions{});
  EXPECT_FALSE(A.Suggested);
  ASSERT_TRUE(A.Unsure);
  EXPECT_EQ(A.Unsure->BatchSize, 16);
}

TEST(MeasureTest, AnUnsurePickBetweenTheSizesIsMeasuredFirst) {
  ScriptedProgram Program("settle-pick");
  Program.Options.RoundTo = 4;
  // 4, 4.44 and 4.48 samples a millisecond at 8, 16 and 32, the k-th run at
  // a size 1.045 times as long where k is odd. The smallest size within 5%
  // of the best, in multiples of 4, is 12 (2.8 ms on the line from 8 to 16:
  // 7.1% over 8), between measured sizes, and no measured size is surely
  // 5% faster (16: 3.3% to 19%): 12's interval is 2.8% to 14.6%. 12 is
  // measured (2.7 ms, 11.1% over 8, the fastest runs' 12 / 2.7 over
  // 8 / 2), its interval 1.6% to 21.5%. One round would leave ln(1.1111) -
  // 2.015 x 0.0311 x sqrt(1/3 + 1/2) = 0.0481 below ln(1.05); two are
  // planned: ln(1.1111) - 1.895 x 0.0311 x sqrt(1/4 + 1/3) = 0.0603. Then
  // 8 has four runs and 12 three; the spread, pooled over 7 degrees of
  // freedom, is ln(1.045) x sqrt(8/21) = 0.027168, and 12 is surely 5%
  // faster than 8: e^(ln(1.1111) - 1.895 x 0.027168 x sqrt(1/4 + 1/3)) - 1
  // = 6.83%.
  std::string Order;
  auto Base = [](int64_t Size) {
    return Size == 8 ? 2.0 : Size == 12 ? 2.7 : Size == 16 ? 3.6 : 7.14;
  };
  writeSettlingProgram(
      Program,
      [&](int64_t Size, unsigned K) {
        return Base(Size) * (K % 2 ? 1.045 : 1.0);
      },
      Order);
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Order, "8 16 32 8 16 32 12 8 12 12 8 ") << Program.Progress;
  EXPECT_NE(Program.Progress.find(
                "skyline-check: settling the decision: 12 is predicted to "
                "train 7.1% faster than 8, 90% interval 2.8% to 14.6%"),
            std::string::npos)
      << Program.Progress;
  EXPECT_NE(Program.Progress.find("skyline-check: timing run 1 at batch size "
                                  "12 (settling the decision)... 0.0 s, 5 "
                                  "iterations (count); breakdown 0.0 s\n"),
            std::string::npos)
      << Program.Progress;
  EXPECT_EQ(sizesOf(*M), (std::vector<int64_t>{8, 16, 32, 12}));
  ModelOptions Model;
  Model.RoundTo = 4;
  Analysis A = analyze(*M, 8, Model);
  ASSERT_TRUE(A.Suggested) << A.NoSuggestionReason << "\n" << Program.Progress;
  EXPECT_EQ(A.Suggested->BatchSize, 12);
  EXPECT_NEAR(A.Suggested->GainRange.Low,
              std::exp(std::log(1.11111) -
                       1.895 * 0.027168 * std::sqrt(1.0 / 4 + 1.0 / 3)) -
                  1,
              1e-4);
}

TEST(MeasureTest, AnUnsurePickThatFailsIsNeitherSettledNorSuggested) {
  ScriptedProgram Program("settle-pick-fails");
  Program.Options.RoundTo = 4;
  // AnUnsurePickBetweenTheSizesIsMeasuredFirst's program, its run at the
  // pick, 12, killed by SIGSEGV: as any size that fails, the sweep stays
  // below it and suggests no size from it on. No round is run on what was
  // not measured.
  std::string Order;
  auto Base = [](int64_t Size) {
    return Size == 8 ? 2.0 : Size == 16 ? 3.6 : 7.14;
  };
  auto Timing = countedTimingRuns(
      Program,
      [&](int64_t Size, unsigned K) {
        return Base(Size) * (K % 2 ? 1.045 : 1.0);
      },
      Order, [](int64_t) { return 0.0; });
  writeSettlingProgram(Program, flatPast16, Order);
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        if (Request.BatchSize == 12) {
          Order += "12! ";
          return Program.crashed(Request, SIGSEGV, "");
        }
        return Timing(Request, Env);
      },
      growingBreakdownRuns(Program));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Order, "8 16 32 8 16 32 12! ") << Program.Progress;
  EXPECT_EQ(Program.Progress.find("round"), std::string::npos)
      << Program.Progress;
  EXPECT_EQ(M->FirstFailure, 12);
  EXPECT_TRUE(llvm::any_of(M->Problems, [](const std::string &Problem) {
    return llvm::StringRef(Problem).contains(
        "the sweep stays below 12 and suggests no size from it on");
  })) << llvm::join(M->Problems, "\n");
  ModelOptions Model;
  Model.RoundTo = 4;
  // The pick is now the largest size below the failure (11: 5.8% over 8
  // on the line from 8 to 16, 2.2% to 13.3%), and it stays unsure: settling
  // measures one pick, not each pick a failure leaves.
  Analysis A = analyze(*M, 8, Model);
  EXPECT_FALSE(A.Suggested);
  ASSERT_TRUE(A.Unsure) << Program.Progress;
  EXPECT_EQ(A.Unsure->BatchSize, 11);
  EXPECT_EQ(sizesOf(*M), (std::vector<int64_t>{8, 16, 32}));
}

TEST(MeasureTest, ASettlingRoundThatFailsEndsSettlingWithWhatWasMeasured) {
  // The first test's program, the third run at 16 (settling's) killed by
  // SIGSEGV: a program that fails now and then. Its problem is kept, the
  // round ends, and what was measured decides: 16's two runs, and 8's
  // third (2.0 ms). The fastest runs put the gain at 16 / 3.6 over 8 / 2
  // = 1.1111; the runs' spread, pooled over 4 degrees of freedom (8:
  // 0.001025, 16 and 32: 0.000769 each), is 0.02531; the gain's low end
  // e^(ln(1.1111) - 2.132 x 0.02531 x sqrt(1/3 + 1/2)) - 1 = 5.77% clears
  // 5%.
  ScriptedProgram Program("settle-round-fails");
  std::string Order;
  writeSettlingProgram(Program, flatPast16, Order);
  auto Timing = countedTimingRuns(Program, flatPast16, Order,
                                  [](int64_t) { return 0.0; });
  unsigned RunsAt16 = 0;
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        if (Request.BatchSize == 16 && ++RunsAt16 == 3) {
          Order += "16! ";
          return Program.crashed(Request, SIGSEGV, "");
        }
        return Timing(Request, Env);
      },
      growingBreakdownRuns(Program));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Order, "8 16 32 8 16 32 8 16! ") << Program.Progress;
  EXPECT_EQ(M->Runs[1].TimingRunMedians, (std::vector<double>{3.6, 3.744}));
  EXPECT_EQ(M->Runs[0].TimingRunMedians, (std::vector<double>{2.0, 2.08, 2.0}));
  EXPECT_EQ(M->FirstFailure, 0) << "a repeat's failure bounds no size";
  EXPECT_TRUE(llvm::any_of(M->Problems, [](const std::string &Problem) {
    return llvm::StringRef(Problem).contains("SIGSEGV");
  })) << llvm::join(M->Problems, "\n");
  Analysis A = analyze(*M, 8, ModelOptions{});
  ASSERT_TRUE(A.Suggested) << A.NoSuggestionReason;
  EXPECT_EQ(A.Suggested->BatchSize, 16);
  EXPECT_NEAR(A.Suggested->GainRange.Low,
              std::exp(std::log(1.11111) -
                       2.132 * 0.025314 * std::sqrt(1.0 / 3 + 1.0 / 2)) -
                  1,
              1e-4);
}

TEST(MeasureTest, ABudgetSpentInASettlingRoundEndsIt) {
  // The first test's program, its sweep's runs taking 0.5 s each and its
  // settling runs 10 s, with a budget of 12 s: predicted from the sizes'
  // first runs, the round (1 s) fits settling's 1.8 s, but its run at 8
  // ends at 13 s, and the run at 16 is left out. What was measured
  // decides, as when a round's run fails (above).
  ScriptedProgram Program("settle-budget");
  Program.Options.TimeBudgetSeconds = 12;
  std::string Order;
  auto Counts = std::make_shared<std::map<int64_t, unsigned>>();
  writeSettlingProgram(Program, flatPast16, Order, [Counts](int64_t Size) {
    return (*Counts)[Size]++ >= 2 ? 10.0 : 0.5;
  });
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Order, "8 16 32 8 16 32 8 ") << Program.Progress;
  EXPECT_TRUE(llvm::is_contained(
      M->Problems, "the time budget (12 s, --time-budget) is spent: settling "
                   "the decision stopped in round 1 of 1: 1 timing run left "
                   "out"))
      << llvm::join(M->Problems, "\n");
  EXPECT_EQ(M->Runs[0].TimingRunMedians.size(), 3u);
  EXPECT_EQ(M->Runs[1].TimingRunMedians.size(), 2u);
  Analysis A = analyze(*M, 8, ModelOptions{});
  ASSERT_TRUE(A.Suggested) << A.NoSuggestionReason;
  EXPECT_NEAR(A.Suggested->GainRange.Low, 0.0577, 1e-4);
}

TEST(MeasureTest, SettlingPlansTheFewestRoundsThatWouldClearTheMinGain) {
  // ln(1 + gain) 0.105 from the means, the runs' spread 0.03 with 3
  // degrees of freedom, two runs at each size. One round: 0.105 - 2.015 x
  // 0.03 x sqrt(2/3) = 0.0556 >= ln(1.05) = 0.0488.
  MeasuredGain Gain{0.105, 0.03, 3, 2, 2};
  EXPECT_EQ(roundsToSettle(Gain, 0.05, 4), 1u);
  // A spread of 0.05: one round 0.105 - 2.015 x 0.05 x 0.8165 = 0.0227,
  // two 0.105 - 1.895 x 0.05 x 0.7071 = 0.0380, three 0.105 - 1.833 x 0.05
  // x 0.6325 = 0.0470, four 0.105 - 1.796 x 0.05 x 0.5774 = 0.0532.
  Gain.RunSigma = 0.05;
  EXPECT_EQ(roundsToSettle(Gain, 0.05, 4), 4u);
  EXPECT_EQ(roundsToSettle(Gain, 0.05, 3), std::nullopt);
  // A gain whose means put it below the min gain never clears it.
  Gain.LogRatio = std::log(0.95);
  EXPECT_EQ(roundsToSettle(Gain, 0.05, 100), std::nullopt);
  // Many runs at one size already: the other's few decide.
  MeasuredGain OneSided{0.105, 0.05, 1000, 1000, 1};
  EXPECT_EQ(roundsToSettle(OneSided, 0.05, 1), std::nullopt);
  EXPECT_EQ(roundsToSettle(OneSided, 0.05, 4), 2u);
}

TEST(MeasureTest, ARunsCostIsPredictedFromTheNearestSize) {
  // 8: 1.0 s for 7 iterations of 2 ms (0.986 s outside them); 64: 2.0 s for
  // 7 of 100 ms (1.3 s outside).
  std::vector<SizeRuns> Sizes = {timedSize(8, 2.0), timedSize(64, 100.0)};
  for (auto &[Size, Wall] : {std::pair{&Sizes[0], 1.0}, {&Sizes[1], 2.0}}) {
    Size->Timing[0].WallSeconds = Wall;
    Size->Timing[0].IterationsReached = 7;
  }
  // At 128: the least start, 0.986 s, and 7 iterations at 64's 100 / 64 ms a
  // sample: 7 x 1.5625 x 128 ms = 1.4 s.
  EXPECT_DOUBLE_EQ(predictedTimingRunSeconds(Sizes, 128, 7), 0.986 + 1.4);
  // At 10, nearest 8's 0.25 ms a sample: 7 x 2.5 ms.
  EXPECT_DOUBLE_EQ(predictedTimingRunSeconds(Sizes, 10, 7), 0.986 + 0.0175);
  EXPECT_EQ(predictedTimingRunSeconds({}, 128, 7), 0.0) << "nothing known";
}

TEST(MeasureTest, ASizePredictedToOverrunTheBudgetIsNotStarted) {
  ScriptedProgram Program("predicted-cost");
  Program.Options.MaxRuns = 4;
  Program.Options.TimingRuns = 1;
  Program.Options.TimeBudgetSeconds = 10;
  // The memory does not grow, so the sweep doubles. 8: 2 ms an iteration,
  // 16: 400 ms; each timing run takes 1 s more than its 7 iterations, each
  // breakdown run 0.5 s. After 16, 1 + 0.014 + 0.5 + 1 + 2.8 + 0.5 = 5.81 s
  // are spent, and 32's fewest iterations are predicted at 2 + 5 x 800 ms
  // (warm-up and --min-iterations) = 5.6 s past the start's 0.986 s: 6.59 s,
  // more than the 4.19 s left.
  auto Ms = [](int64_t Size) { return Size == 8 ? 2.0 : 400.0 * Size / 16; };
  std::string Timings;
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        Timings += std::to_string(Request.BatchSize) + " ";
        double Median = Ms(Request.BatchSize);
        MeasuredRun Run = measured(Request, Env, 5, false, 7, false, Median);
        return Program.finished(Request, Run, 1 + 7 * Median / 1000);
      },
      [&](const RunRequest &Request, const Environment &Env) {
        return Program.finished(Request, measured(Request, Env, 3, false, 5),
                                0.5);
      });
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Timings, "8 16 ") << Program.Progress;
  EXPECT_EQ(sizesOf(*M), (std::vector<int64_t>{8, 16}));
  EXPECT_TRUE(M->TimeBudgetSpent);
  ASSERT_FALSE(M->Problems.empty());
  EXPECT_EQ(
      M->Problems.front(),
      "the time budget (10 s, --time-budget) leaves too little: measured 2 "
      "of 4 "
      "batch sizes; the run at 32 was predicted to take 6.6 s, more "
      "than the 4.2 s left");
}

TEST(MeasureTest, ARepeatPredictedToOverrunTheBudgetIsLeftOut) {
  ScriptedProgram Program("predicted-repeat");
  Program.Options.MaxRuns = 2;
  Program.Options.TimingRuns = 2;
  Program.Options.TimeBudgetSeconds = 7;
  // 8's timing run takes 1.014 s, 16's 3.8 s, a breakdown run 0.5 s: 5.814 s
  // after the sizes. 8's repeat fits the 1.186 s left, 16's does not (in
  // any pass), nor does the run with glibc's own thresholds after 8's
  // repeat (1.014 s of the 0.172 s left).
  auto Ms = [](int64_t Size) { return Size == 8 ? 2.0 : 400.0; };
  std::string Timings;
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        Timings += std::to_string(Request.BatchSize) + " ";
        double Median = Ms(Request.BatchSize);
        return Program.finished(
            Request, measured(Request, Env, 5, false, 7, false, Median),
            1 + 7 * Median / 1000);
      },
      [&](const RunRequest &Request, const Environment &Env) {
        return Program.finished(Request, measured(Request, Env, 3, false, 5),
                                0.5);
      });
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Timings, "8 16 8 ") << Program.Progress;
  ASSERT_FALSE(M->Problems.empty());
  EXPECT_EQ(M->Problems.front(),
            "the time budget (7 s, --time-budget) leaves too little: the "
            "repeated timing runs at batch size 16 were left out "
            "(--timing-runs): each was predicted to take longer than what "
            "was left");
  EXPECT_EQ(Program.Progress.find("dynamic malloc"), std::string::npos);
}

TEST(MeasureTest, AProbeMeasuresWhatHalfASecondHolds) {
  // 8's fastest run: 2 ms, 0.25 ms a sample.
  std::vector<SizeRuns> Sizes = {timedSize(8, 2.0)};
  EXPECT_EQ(probeIterations(Sizes, 64, 5), 5u) << "16 ms: 31, at most 5";
  EXPECT_EQ(probeIterations(Sizes, 1000, 5), 2u) << "250 ms an iteration";
  EXPECT_EQ(probeIterations(Sizes, 4000, 5), 1u) << "1 s: still one";
  EXPECT_EQ(probeIterations({}, 4000, 5), 1u) << "nothing known";
}

/// The peak of the programs below: 1 MiB and 1 KiB a sample.
int64_t growingPeakBytes(int64_t BatchSize) {
  return (int64_t(1) << 20) + 1024 * BatchSize;
}

/// A program of three sizes under 1 GiB and no time budget: timing runs at
/// Ms(size) an iteration and a peak of growingPeakBytes, each taking 1 s
/// plus its iterations; breakdown runs 0.5 s. Timings notes each timing run
/// as "<size>:<iterations asked>", and "w<warm-up>" where it is not 2.
void writeGrowingProgram(ScriptedProgram &Program,
                         std::function<double(int64_t)> Ms,
                         std::string &Timings, std::string &Breakdowns) {
  Program.Options.MaxRuns = 3;
  Program.Options.TimeBudgetSeconds = 0;
  Program.Options.MemoryBudget = int64_t(1) << 30;
  Program.write(
      [&Program, Ms, &Timings](const RunRequest &Request,
                               const Environment &Env) {
        Timings +=
            std::to_string(Request.BatchSize) + ":" +
            Env.at("SKYLINE_ITERATIONS") +
            (Env.at("SKYLINE_WARMUP") == "2" ? ""
                                             : "w" + Env.at("SKYLINE_WARMUP")) +
            " ";
        unsigned Asked = std::stoul(Env.at("SKYLINE_MIN_ITERATIONS"));
        double Median = Ms(Request.BatchSize);
        MeasuredRun Run =
            measured(Request, Env, Asked, false, Asked + 2, false, Median);
        Run.PeakBytes = growingPeakBytes(Request.BatchSize);
        return Program.finished(Request, Run, 1 + (Asked + 2) * Median / 1000);
      },
      [&Program, &Breakdowns](const RunRequest &Request,
                              const Environment &Env) {
        Breakdowns += std::to_string(Request.BatchSize) + " ";
        MeasuredRun Run = measured(Request, Env, 3, false, 5);
        Run.PeakBytes = growingPeakBytes(Request.BatchSize);
        return Program.finished(Request, Run, 0.5);
      });
}

TEST(MeasureTest, TheSweepStaysWhereTheFirstEpochGivesAMeasuredIteration) {
  // mnist: 60,000 samples. Past 60,000 / (2 + 2) = 15,000 a run measures no
  // iteration in the first epoch (24,368 reached 3, its last one the data's
  // end), and mnist stops after one.
  std::vector<SizeRuns> Sizes = {timedSize(64, 4.0), timedSize(128, 7.0)};
  for (SizeRuns &Size : Sizes)
    Size.Timing[0].DatasetSamples = 60000;
  EXPECT_EQ(firstEpochDataLimit(Sizes, {}, 2), 15000);
  EXPECT_EQ(firstEpochDataLimit(Sizes, {}, 4), 10000) << "more warm-up";
  // A run that returned before measuring saw it too.
  MeasuredRun Unmeasured;
  Unmeasured.BatchSize = 23828;
  Unmeasured.EndedEarly = true;
  Unmeasured.IterationsReached = 3;
  Unmeasured.DatasetSamples = 60000;
  EXPECT_EQ(firstEpochDataLimit({}, {Unmeasured}, 2), 15000);
  Unmeasured.EpochIterations = 2;
  EXPECT_EQ(firstEpochDataLimit(Sizes, {Unmeasured}, 2), 0)
      << "it reached a second epoch: iterations past the first count";
  Sizes[1].Timing[0].EpochIterations = 469;
  EXPECT_EQ(firstEpochDataLimit(Sizes, {}, 2), 0);
  Sizes[1].Timing[0].EpochIterations = 0;
  for (SizeRuns &Size : Sizes)
    Size.Timing[0].DatasetSamples = 0;
  EXPECT_EQ(firstEpochDataLimit(Sizes, {}, 2), 0) << "the dataset is not known";
}

TEST(MeasureTest, TheSweepGoesNoFurtherThanTheFirstEpochsData) {
  ScriptedProgram Program("first-epoch");
  Program.Options.MaxRuns = 4;
  Program.Options.TimingRuns = 1;
  Program.Options.MemoryBudget = int64_t(1) << 30;
  // One epoch of 2,000 samples in whole batches, then the program returns:
  // at size S it reaches 2,000 / S loop starts, and measures all but the
  // warm-up and the last (whose end it never sees).
  std::string Timings;
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        Timings += std::to_string(Request.BatchSize) + " ";
        unsigned Reached = unsigned(2000 / Request.BatchSize);
        unsigned Asked = std::stoul(Env.at("SKYLINE_MIN_ITERATIONS"));
        unsigned Measured = Reached >= 3 ? std::min(Reached - 3, Asked) : 0;
        bool Ended = Measured < Asked;
        MeasuredRun Run =
            measured(Request, Env, Measured, Ended, Ended ? Reached : Asked + 2,
                     false, 0.25 * Request.BatchSize);
        Run.DatasetSamples = 2000;
        Run.PeakBytes = growingPeakBytes(Request.BatchSize);
        return Program.finished(Request, Run);
      },
      everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  // The memory line heads for 942,694 (90% of the 1 GiB), but no size past
  // 2,000 / 4 = 500 measures an iteration in the first epoch, and no run
  // has seen a second: 500, not 1,000 (half the dataset) nor then halfway
  // back to 508, which measure nothing. The run left goes to the middle of
  // 16..500 (31x, on one line), sqrt(16 x 500) = 89.4.
  EXPECT_EQ(Timings, "8 16 500 89 ") << Program.Progress;
  EXPECT_EQ(Timings.find("1000"), std::string::npos) << Timings;
  EXPECT_EQ(Timings.find("508"), std::string::npos) << Timings;
  ASSERT_GE(M->Runs.size(), 3u);
  EXPECT_EQ(M->Runs[2].BatchSize, 500);
  EXPECT_EQ(M->Runs[2].Iterations, 1u);
}

TEST(MeasureTest, ASizeFarPastTheDecisionGetsAProbe) {
  ScriptedProgram Program("probe");
  Program.Options.TimingRuns = 1;
  // 0.25 ms a sample: the throughput is flat, and the decision stays at the
  // declared 8. The third size heads for 90% of the 1 GiB: 16 +
  // (966,367,641 - 1,064,960) / 1,024 = 942,694, far past 4 x 16, and at
  // 235 s an iteration a probe of one iteration serves it: its peak, and a
  // first time.
  std::string Timings, Breakdowns;
  writeGrowingProgram(
      Program, [](int64_t Size) { return 0.25 * double(Size); }, Timings,
      Breakdowns);
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  // One warm-up iteration: the next has the peak.
  EXPECT_EQ(Timings, "8:50 16:50 942694:1w1 ") << Program.Progress;
  EXPECT_EQ(Breakdowns, "8 16 ") << "no breakdown run for a probe";
  EXPECT_NE(Program.Progress.find(
                "skyline-check: run 3/3 at batch size 942694 (far past the "
                "decision: a probe of 1 iteration)..."),
            std::string::npos)
      << Program.Progress;
  ASSERT_EQ(M->Runs.size(), 3u);
  EXPECT_EQ(M->Runs[2].PeakBytes, growingPeakBytes(942694));
  EXPECT_EQ(M->Runs[2].Iterations, 1u);
  EXPECT_FALSE(M->Runs[2].Breakdown);
  // Every process counts: 8 and 16 took 1 s and 7 iterations, and 0.5 s a
  // breakdown run; the probe 1 s and 3 of 235.6735 s.
  EXPECT_NEAR(M->RunSeconds, 1.514 + 1.528 + 1 + 3 * 235.6735, 1e-9);
  EXPECT_DOUBLE_EQ(totalRunSeconds(*M), M->RunSeconds);
}

TEST(MeasureTest, ADecisionPastEverySizeMeasuredIsProbedFirst) {
  ScriptedProgram Program("extrapolated-decision");
  Program.Options.TimingRuns = 1;
  // 20 ms an iteration and 0.1 us a sample: the line through 8 and 16
  // (20.0008 and 20.0016 ms, runs that differ by far less than their noise
  // on a real machine) puts the decision near the capacity, past 942,694 /
  // 4. Continued from two sizes it is no reason to time 942,694 in full:
  // a probe says whether the throughput goes on rising there.
  std::string Timings, Breakdowns;
  writeGrowingProgram(
      Program, [](int64_t Size) { return 20 + 0.0001 * double(Size); }, Timings,
      Breakdowns);
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Timings.substr(0, 22), "8:50 16:50 942694:1w1 ") << Timings;
  EXPECT_EQ(Breakdowns, "8 16 ") << "no breakdown run for a probe";
  ASSERT_EQ(M->Runs.size(), 3u);
  EXPECT_TRUE(M->Runs[2].Probed);
}

TEST(MeasureTest, AProbeThatRunsFastestIsRepeatedAsAWholeTimingRun) {
  ScriptedProgram Program("probe-fastest");
  Program.Options.TimingRuns = 2;
  // 942,694 runs 100 times the throughput of 16: the best measured size,
  // so the decision's, and its repeat is a whole timing run (50 at most,
  // not the probe's one).
  std::string Timings, Breakdowns;
  writeGrowingProgram(
      Program,
      [](int64_t Size) {
        return Size > 16 ? 0.0025 * double(Size) : 0.25 * double(Size);
      },
      Timings, Breakdowns);
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Timings.substr(0, Timings.find("942694:50")),
            "8:50 16:50 942694:1w1 8:50 16:50 ")
      << Program.Progress;
  EXPECT_NE(Timings.find("942694:50"), std::string::npos) << Timings;
  // Its kept run is the whole one, however its probe's median compares.
  ASSERT_EQ(M->Runs.size(), 3u);
  EXPECT_TRUE(M->Runs[2].Probed);
  EXPECT_EQ(M->Runs[2].IterationsAsked, 50u);
  EXPECT_EQ(M->Runs[2].TimingRunMedians.size(), 3u) << "the probe's too";
  EXPECT_FALSE(M->Runs[1].Probed);
}

TEST(MeasureTest, PastASizeOnlyProbedTheSizesAreProbesToo) {
  ScriptedProgram Program("probed-past");
  Program.Options.TimingRuns = 1;
  // The probe at 3,884 runs 2.5 times the throughput of 16 (0.1 ms a
  // sample against 0.25): the best measured size. One iteration is no
  // reason to time the sizes past it in full: the next is a probe too, and
  // goes straight for the capacity (942,694) as far as a probe's two
  // iterations fit a size's share of the 60 s (54.8 s left over 3 sizes:
  // 9,132 ms an iteration): 3,884 + (9,132 - 388.4) / 0.0994 = about
  // 91,867 (not 15,290 timed in full, with a breakdown run, then a probe at
  // 30,580). The probe's size is repeated as a whole timing run.
  std::string Timings, Breakdowns;
  writeGrowingProgram(
      Program,
      [](int64_t Size) {
        return Size > 16 ? 0.1 * double(Size) : 0.25 * double(Size);
      },
      Timings, Breakdowns);
  Program.Options.MaxRuns = 6;
  Program.Options.TimeBudgetSeconds = 60;
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Timings, "8:50 16:50 3884:1w1 91867:1w1 3884:50 ")
      << Program.Progress;
  EXPECT_EQ(Breakdowns, "8 16 ");
}

TEST(MeasureTest, TheRunAtABoundedPickIsWholePastAProbe) {
  ScriptedProgram Program("pick-past-probe");
  Program.Options.TimingRuns = 1;
  // 1 s an iteration and 0.01 ms a sample past 16: the probe at 3,884
  // runs the best throughput yet, so the next size, straight at the
  // capacity (942,694, 90.4 samples a ms), is a probe too. There the pick
  // is the smallest size within 5% of the best: 85.9 x (1,000 + 0.01 s) =
  // s, 608,672, between two probed sizes. Its run measures the decision:
  // a whole timing run and a breakdown run, not a probe (with the sizes
  // past a probed one all probes, it was "608672:1w1").
  std::string Timings, Breakdowns;
  writeGrowingProgram(
      Program,
      [](int64_t Size) {
        return Size > 16 ? 1000 + 0.01 * double(Size) : 0.5 * double(Size);
      },
      Timings, Breakdowns);
  Program.Options.MaxRuns = 6;
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Timings.substr(0, Timings.find(" 249:")),
            "8:50 16:50 3884:1w1 942694:1w1 608672:50")
      << Program.Progress;
  EXPECT_EQ(Breakdowns.substr(0, 16), "8 16 608672 249 ") << Breakdowns;
}

TEST(MeasureTest, ARunThatMeasuredNothingStillCountsInTheRunSeconds) {
  ScriptedProgram Program("counted-failure");
  Program.Options.MaxRuns = 2;
  Program.Options.TimingRuns = 1;
  // 16's data ends before its first measured iteration after 4 s: that size
  // is left out, but its process's time was spent.
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        bool Ends = Request.BatchSize == 16;
        return Program.finished(Request,
                                measured(Request, Env, Ends ? 0 : 5, Ends, 7),
                                Ends ? 4.0 : 1.0);
      },
      [&](const RunRequest &Request, const Environment &Env) {
        return Program.finished(Request, measured(Request, Env, 3, false, 5),
                                0.5);
      });
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_EQ(M->Runs.size(), 1u) << Program.Progress;
  EXPECT_DOUBLE_EQ(M->Runs[0].WallSeconds, 1.5);
  EXPECT_DOUBLE_EQ(M->RunSeconds, 5.5);
}

TEST(MeasureTest, SizeWithFewIterationsARunGetsMoreTimingRuns) {
  ScriptedProgram Program("few-iterations");
  Program.Options.MaxRuns = 2;
  Program.Options.TimingRuns = 3;
  // At 16 the program's data gives each run one measured iteration; at 8,
  // five. The medians in the order the runs are made.
  Medians Times = {"2.0", "9.0", "2.05", "5.0", "2.2",
                   "7.0", "6.0", "5.1",  "4.0", "1.0"};
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        double Median = Times.next(Request);
        if (Request.BatchSize == 16)
          return Program.finished(
              Request, measured(Request, Env, 1, true, 4, false, Median));
        return Program.finished(
            Request, measured(Request, Env, 5, false, 8, false, Median));
      },
      everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  // Three passes over both sizes, then 16 alone until its runs' iterations
  // add up to --min-iterations (5): two runs more.
  EXPECT_EQ(Times.Timings,
            "8 2.0\n16 9.0\n8 2.05\n16 5.0\n8 2.2\n16 7.0\n16 6.0\n16 5.1\n");
  ASSERT_EQ(M->Runs.size(), 2u);
  EXPECT_EQ(M->Runs[0].TimingRunMedians, (std::vector<double>{2.0, 2.05, 2.2}));
  EXPECT_EQ(M->Runs[1].TimingRunMedians,
            (std::vector<double>{9.0, 5.0, 7.0, 6.0, 5.1}));
  EXPECT_DOUBLE_EQ(M->Runs[1].IterationMs.Median, 5.0) << "the fastest of 5";
  EXPECT_NE(Program.Progress.find("skyline-check: timing run 5 at batch size "
                                  "16 (few iterations a run)..."),
            std::string::npos)
      << Program.Progress;
  EXPECT_EQ(Program.Progress.find("timing run 6 "), std::string::npos);
}

TEST(MeasureTest, FastestRunIsKeptOnceAnotherConfirmsIt) {
  ScriptedProgram Program("two-runs");
  Program.Options.TimingRuns = 2;
  // 3.0 and 2.0 are 50% apart: a third run, and a fourth, until one is
  // within 5% of the fastest; 1.9 is the fastest then, and 1.98 confirms
  // it. No run past that.
  Medians Times = {"3.0", "2.0", "1.9", "1.98", "1.0"};
  Program.write(timingRunsWithMedians(Program, Times),
                everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_EQ(M->Runs.size(), 1u);
  EXPECT_EQ(M->Runs[0].TimingRunMedians,
            (std::vector<double>{3.0, 2.0, 1.9, 1.98}));
  EXPECT_DOUBLE_EQ(M->Runs[0].IterationMs.Median, 1.9);
  EXPECT_NE(Program.Progress.find(
                "skyline-check: timing run 3 at batch size 8 (no other run "
                "within 5% of the fastest)..."),
            std::string::npos)
      << Program.Progress;
  EXPECT_EQ(Program.Progress.find("timing run 5 "), std::string::npos);
}

TEST(MeasureTest, AFastestRunThatSharedTheCpusGetsAnotherRun) {
  ScriptedProgram Program("busy-fastest");
  Program.Options.TimingRuns = 2;
  // The first two runs agree (2.0 and 2.05) but other work held 0.9 of a
  // core during both: a third run, quiet, at 1.8; a fourth confirms it
  // (1.85), quiet too, and the size stops there.
  Medians Times = {"2.0", "2.05", "1.8", "1.85", "1.0"};
  unsigned Timing = 0;
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        MeasuredRun Run =
            measured(Request, Env, 5, false, 7, false, Times.next(Request));
        Run.OtherWorkCores = ++Timing <= 2 ? 0.9 : 0.0;
        return Program.finished(Request, Run);
      },
      everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_EQ(M->Runs.size(), 1u);
  EXPECT_EQ(M->Runs[0].TimingRunMedians,
            (std::vector<double>{2.0, 2.05, 1.8, 1.85}));
  EXPECT_DOUBLE_EQ(M->Runs[0].IterationMs.Median, 1.8);
  EXPECT_DOUBLE_EQ(M->Runs[0].OtherWorkCores, 0.0);
  EXPECT_NE(Program.Progress.find(
                "skyline-check: timing run 3 at batch size 8 (other work "
                "held 0.9 cores during the fastest)..."),
            std::string::npos)
      << Program.Progress;
  EXPECT_EQ(Program.Progress.find("timing run 5 "), std::string::npos);
  EXPECT_EQ(Program.Progress.find("other work held the CPUs during the kept"),
            std::string::npos)
      << "the kept run was quiet";
}

TEST(MeasureTest, AMachineBusyThroughoutCostsOneMoreRunASize) {
  ScriptedProgram Program("busy-throughout");
  Program.Options.TimingRuns = 2;
  // Every run agrees (2.0 ms) and every run shared the CPUs: one more run
  // in case the machine turns quiet, then the size is kept, and the end
  // of the sweep says its time includes waiting for a CPU.
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        MeasuredRun Run = measured(Request, Env, 5, false, 7);
        Run.OtherWorkCores = 1.0;
        return Program.finished(Request, Run);
      },
      everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_FALSE(M->Runs.empty());
  EXPECT_EQ(M->Runs[0].TimingRunMedians.size(), 3u);
  EXPECT_NE(Program.Progress.find("other work held the CPUs during the kept "
                                  "runs at batch size 8 (1.0 of "),
            std::string::npos)
      << Program.Progress;
}

TEST(MeasureTest, UnconfirmedFastestRunStopsAtTwiceTheTimingRuns) {
  ScriptedProgram Program("never-confirmed");
  Program.Options.TimingRuns = 2;
  // Every run 10% faster than the one before: none confirms the fastest,
  // and the size stops at 4 runs, the last one kept.
  Medians Times = {"10.0", "9.0", "8.1", "7.29", "6.561", "1.0"};
  Program.write(timingRunsWithMedians(Program, Times),
                everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_EQ(M->Runs.size(), 1u);
  EXPECT_EQ(M->Runs[0].TimingRunMedians.size(), 4u);
  EXPECT_DOUBLE_EQ(M->Runs[0].IterationMs.Median, 7.29);
  ASSERT_EQ(M->Problems.size(), 1u);
  EXPECT_EQ(M->Problems[0],
            "no two of the 4 timing runs at batch size 8 were within 5% of "
            "each other (7.29 to 10.00 ms): the machine's speed changed under "
            "them, and the time kept (the fastest) carries that; measure on a "
            "quieter machine");
}

TEST(MeasureTest, RepeatThatMeasuredNothingIsNotTheFastest) {
  ScriptedProgram Program("repeat-measures-nothing");
  Program.Options.MaxRuns = 1;
  Program.Options.TimingRuns = 3;
  // The second run stops before its first measured iteration: its median
  // of nothing (0) is left out, not kept as the fastest.
  Medians Times = {"3.0", "0", "3.1"};
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        double Median = Times.next(Request);
        if (Median == 0)
          return Program.finished(
              Request, measured(Request, Env, 0, false, 2, false, 0));
        return Program.finished(
            Request, measured(Request, Env, 5, false, 7, false, Median));
      },
      everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_EQ(M->Runs.size(), 1u);
  EXPECT_EQ(M->Runs[0].TimingRunMedians, (std::vector<double>{3.0, 3.1}));
  EXPECT_DOUBLE_EQ(M->Runs[0].IterationMs.Median, 3.0);
  ASSERT_EQ(M->Problems.size(), 1u);
  EXPECT_EQ(M->Problems[0], "timing run 2/3 at batch size 8 measured no "
                            "iteration, the first did: it is left out");
}

TEST(MeasureTest, FailedRepeatKeepsWhatWasMeasured) {
  ScriptedProgram Program("repeat-fails");
  Program.Options.MaxRuns = 1;
  Program.Options.TimingRuns = 3;
  // The second timing run crashes; no third is made.
  int TimingRunsMade = 0;
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        if (++TimingRunsMade == 2)
          return Program.crashed(Request, SIGSEGV, "");
        return Program.finished(Request, measured(Request, Env, 5, false, 7));
      },
      everyRun(Program, 3, false, 5));
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_EQ(M->Runs.size(), 1u);
  EXPECT_EQ(M->Runs[0].TimingRunMedians, (std::vector<double>{2.0}));
  EXPECT_DOUBLE_EQ(M->Runs[0].IterationMs.Median, 2.0);
  ASSERT_EQ(M->Problems.size(), 1u);
  EXPECT_NE(M->Problems[0].find("the run at batch size 8 crashed"),
            std::string::npos)
      << M->Problems[0];
  EXPECT_EQ(TimingRunsMade, 2);
}

TEST(MeasureTest, MallocThresholdsArePinnedUnlessTheUserSetThem) {
  const std::string Pinned = "glibc.malloc.mmap_threshold=33554432:"
                             "glibc.malloc.trim_threshold=4611686018427387904";
  MallocSetting Alone =
      mallocSetting(MallocThresholds::Pinned, std::nullopt, false);
  EXPECT_EQ(Alone.Thresholds, "pinned");
  EXPECT_EQ(Alone.GlibcTunables, Pinned);
  // The user's other tunables are kept, ahead of ours.
  MallocSetting Added =
      mallocSetting(MallocThresholds::Pinned,
                    llvm::StringRef("glibc.malloc.arena_max=2"), false);
  EXPECT_EQ(Added.GlibcTunables, "glibc.malloc.arena_max=2:" + Pinned);
  EXPECT_EQ(mallocSetting(MallocThresholds::Pinned, llvm::StringRef(""), false)
                .GlibcTunables,
            Pinned);
  // A threshold the user set, as a tunable or a variable, wins.
  for (auto Setting :
       {mallocSetting(MallocThresholds::Pinned,
                      llvm::StringRef("glibc.malloc.trim_threshold=0"), false),
        mallocSetting(MallocThresholds::Pinned,
                      llvm::StringRef("glibc.malloc.mmap_threshold=65536"),
                      false),
        mallocSetting(MallocThresholds::Pinned, std::nullopt, true),
        mallocSetting(MallocThresholds::Dynamic, std::nullopt, true)}) {
    EXPECT_EQ(Setting.Thresholds, "user");
    EXPECT_FALSE(Setting.GlibcTunables) << *Setting.GlibcTunables;
  }
  MallocSetting Dynamic =
      mallocSetting(MallocThresholds::Dynamic,
                    llvm::StringRef("glibc.malloc.arena_max=2"), false);
  EXPECT_EQ(Dynamic.Thresholds, "dynamic");
  EXPECT_FALSE(Dynamic.GlibcTunables) << "the environment is left as it is";
}

/// Sets an environment variable for a test's lifetime (unset: nullptr).
class ScopedVariable {
public:
  ScopedVariable(const char *Name, const char *Value) : Name(Name) {
    if (const char *Old = std::getenv(Name))
      Saved = Old;
    if (Value)
      ::setenv(Name, Value, 1);
    else
      ::unsetenv(Name);
  }
  ~ScopedVariable() {
    if (Saved)
      ::setenv(Name, Saved->c_str(), 1);
    else
      ::unsetenv(Name);
  }

private:
  const char *Name;
  std::optional<std::string> Saved;
};

TEST(MeasureTest, EveryRunGetsThePinnedMallocThresholds) {
  ScopedVariable UserTunables("GLIBC_TUNABLES", "glibc.malloc.arena_max=2");
  ScopedVariable Mmap("MALLOC_MMAP_THRESHOLD_", nullptr);
  ScopedVariable Trim("MALLOC_TRIM_THRESHOLD_", nullptr);
  ScriptedProgram Program("malloc");
  Program.Options.Malloc = MallocThresholds::Pinned;
  Program.Options.TimingRuns = 2;
  std::string Seen; // each run's "<mode> <GLIBC_TUNABLES>"
  auto Note = [&](const Environment &Env) {
    Seen += Env.at("SKYLINE_MODE") + " " + Env.at("GLIBC_TUNABLES") + "\n";
  };
  // 2.0 ms an iteration with the thresholds pinned, 2.5 ms without.
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        Note(Env);
        bool Pinned = llvm::StringRef(Env.at("GLIBC_TUNABLES"))
                          .contains("mmap_threshold");
        return Program.finished(Request, measured(Request, Env, 5, false, 7,
                                                  false, Pinned ? 2.0 : 2.5));
      },
      [&](const RunRequest &Request, const Environment &Env) {
        Note(Env);
        return Program.finished(Request, measured(Request, Env, 3, false, 5));
      });
  auto M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(M->MallocThresholdsUsed, "pinned");
  const std::string Tunables =
      "glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=33554432:"
      "glibc.malloc.trim_threshold=4611686018427387904";
  EXPECT_EQ(M->GlibcTunables, Tunables) << "the report says what runs had";
  const std::string Expected = Tunables + "\n";
  // Then one more timing run at the declared size, as the user runs it.
  EXPECT_EQ(Seen, "timing " + Expected + "breakdown " + Expected + "timing " +
                      Expected + "timing glibc.malloc.arena_max=2\n");
  ASSERT_EQ(M->Runs.size(), 1u);
  EXPECT_DOUBLE_EQ(M->Runs[0].IterationMs.Median, 2.0);
  EXPECT_DOUBLE_EQ(M->Runs[0].DynamicMallocMs, 2.5);
  EXPECT_TRUE(llvm::sys::fs::exists(Program.Options.WorkDir +
                                    "/runs/batch-8-dynamic-malloc.log"));
  EXPECT_NE(Program.Progress.find("skyline-check: timing run with glibc's "
                                  "dynamic malloc thresholds at batch size 8"),
            std::string::npos)
      << Program.Progress;

  Program.Options.Malloc = MallocThresholds::Dynamic;
  Seen.clear();
  M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(M->MallocThresholdsUsed, "dynamic");
  EXPECT_EQ(M->GlibcTunables, "");
  EXPECT_DOUBLE_EQ(M->Runs[0].DynamicMallocMs, 0) << "no second opinion";
  EXPECT_EQ(Seen, "timing glibc.malloc.arena_max=2\n"
                  "breakdown glibc.malloc.arena_max=2\n"
                  "timing glibc.malloc.arena_max=2\n");
}

} // namespace

namespace {

TEST(MeasureTest, TrialsRunAtTheDeclaredSizeWithTheirSettingAfterTheSweep) {
  // An experiment's trial is one more timing run at the declared size with
  // its variables added; one that fails is kept with why, and the sizes'
  // runs are as without it.
  ScriptedProgram Program("trials");
  Program.Options.MaxRuns = 2;
  Program.Options.TimingRuns = 1;
  std::vector<std::string> TrialThreads;
  Program.write(
      [&](const RunRequest &Request, const Environment &Env) {
        auto Threads = Env.find("SKYLINE_INTRA_OP_THREADS");
        if (Threads != Env.end())
          TrialThreads.push_back(Request.Tag + " " + Threads->second);
        if (Request.Tag == "experiment-broken")
          return Program.crashed(Request, 11, "Segmentation fault\n");
        double Ms = Threads != Env.end() ? 1.5 : 2.0;
        MeasuredRun Run = measured(Request, Env, 8, false, 10, false, Ms);
        if (Request.Tag == "experiment-unapplied")
          Run.TrialNotApplied = "no weight to change";
        return Program.finished(Request, Run, 1);
      },
      everyRun(Program, 3, false, 5));
  unsigned Planned = 0;
  Program.Options.PlanTrials = [&](const Measurement &SoFar) {
    ++Planned;
    EXPECT_EQ(sizesOf(SoFar), (std::vector<int64_t>{8, 16}));
    TrialRequest Faster{"threads", "1 intra-op thread", 1,
                        {"SKYLINE_INTRA_OP_THREADS=1"}};
    TrialRequest Broken{"broken", "a setting that crashes", 3,
                        {"SKYLINE_INTRA_OP_THREADS=3"}};
    // Its run trains as the baseline did: its time is no effect of it.
    TrialRequest Unapplied{"unapplied",
                           "a setting with nothing to change",
                           1,
                           {"SKYLINE_INTRA_OP_THREADS=2"}};
    return std::vector<TrialRequest>{Faster, Broken, Unapplied};
  };
  llvm::Expected<Measurement> M = Program.measureFrom();
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(Planned, 1u);
  EXPECT_EQ(sizesOf(*M), (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(TrialThreads, (std::vector<std::string>{"experiment-threads 1",
                                                    "experiment-broken 3",
                                                    "experiment-unapplied 2"}));
  ASSERT_EQ(M->Trials.size(), 3u);
  const TrialRun &Ran = M->Trials[0];
  EXPECT_EQ(Ran.Experiment, "threads");
  EXPECT_EQ(Ran.BatchSize, 8);
  EXPECT_EQ(Ran.Value, 1);
  EXPECT_DOUBLE_EQ(Ran.IterationMs, 1.5);
  EXPECT_EQ(Ran.TimingRunMedians, std::vector<double>{1.5});
  EXPECT_EQ(Ran.Problem, "");
  const TrialRun &Failed = M->Trials[1];
  EXPECT_EQ(Failed.IterationMs, 0);
  EXPECT_NE(Failed.Problem.find("Segmentation fault"), std::string::npos)
      << Failed.Problem;
  const TrialRun &Unapplied = M->Trials[2];
  EXPECT_EQ(Unapplied.IterationMs, 0);
  EXPECT_TRUE(llvm::StringRef(Unapplied.Problem)
                  .starts_with("its setting applied to nothing (no weight to "
                               "change); see its log "))
      << Unapplied.Problem;
  EXPECT_NE(Program.Progress.find("skyline-check: trial of experiment threads "
                                  "(1 intra-op thread) at batch size 8..."),
            std::string::npos)
      << Program.Progress;
}

} // namespace
