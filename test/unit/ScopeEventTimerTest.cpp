// The CUDA-event fallback for gpu_ms, behind the EventApi seam: a fake
// stream clock checks the pairing of entry and exit events, nesting (self
// time), threads, warm-up and the spent pool to exact numbers on the CPU;
// and the result says where gpu_ms came from.

#include "skyline/runtime/GpuActivity.h"
#include "skyline/runtime/RunResult.h"

#include "CountingNew.h"
#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using counting_new::AllocationsOnThread;

using namespace skyline::rt;

namespace {

/// Plays the stream: an event recorded now gets the stream's time Now (ms),
/// which the test moves.
class FakeEvents final : public EventApi {
public:
  bool create(size_t Count) override {
    if (RefuseCreate)
      return false;
    At.assign(Count, -1);
    return true;
  }
  void record(size_t Index) noexcept override {
    At[Index] = Now;
    ++Recorded;
  }
  double elapsedMs(size_t Begin, size_t End) noexcept override {
    if (At[Begin] < 0 || At[End] < 0)
      return -1; // not recorded: what CUDA calls an error
    return At[End] - At[Begin];
  }
  void destroy() noexcept override { Destroyed = true; }
  std::string failure() const override { return "refused"; }

  double Now = 0;
  bool RefuseCreate = false;
  bool Destroyed = false;
  size_t Recorded = 0;
  std::vector<double> At;
};

/// One scope entered at From and left at To (ms on the fake's clock).
void timeScope(FakeEvents &Api, ScopeEventTimer &Timer, int Scope, double From,
               double To) {
  Api.Now = From;
  Timer.enterScope(Scope);
  Api.Now = To;
  Timer.exitScope();
}

TEST(ScopeEventTimerTest, NestedScopesGetTheirSelfTime) {
  FakeEvents Api;
  ScopeEventTimer Timer(Api);
  ASSERT_TRUE(Timer.start());
  Timer.boundary(false); // the end of warm-up
  Api.Now = 1.0;
  Timer.enterScope(1); // the model
  Api.Now = 1.5;
  Timer.enterScope(2); // a layer in it
  Api.Now = 4.0;
  Timer.exitScope();
  Api.Now = 4.25;
  Timer.enterScope(3); // another
  Api.Now = 5.0;
  Timer.exitScope();
  Api.Now = 6.0;
  Timer.exitScope();
  Timer.boundary(true);
  GpuTimes T = Timer.times(1);
  ASSERT_EQ(T.ScopeMs.size(), 3u);
  EXPECT_DOUBLE_EQ(T.ScopeMs[2], 2.5);
  EXPECT_DOUBLE_EQ(T.ScopeMs[3], 0.75);
  EXPECT_DOUBLE_EQ(T.ScopeMs[1], 5.0 - 2.5 - 0.75) << "its children excluded";
  EXPECT_DOUBLE_EQ(T.UnscopedMs, 0);
  EXPECT_EQ(T.Kernels, 3u) << "intervals timed";
  EXPECT_EQ(T.DroppedRecords, 0u);
}

TEST(ScopeEventTimerTest, WarmupIsLeftOutAndIterationsAveraged) {
  FakeEvents Api;
  ScopeEventTimer Timer(Api, 8);
  ASSERT_TRUE(Timer.start());
  timeScope(Api, Timer, 4, 0, 100); // warm-up
  Timer.boundary(false);
  timeScope(Api, Timer, 4, 200, 201);
  Timer.boundary(true);
  timeScope(Api, Timer, 4, 300, 303); // the pool is reused: 8 events, 2 per
                                      // iteration
  Timer.boundary(true);
  GpuTimes T = Timer.times(2);
  EXPECT_DOUBLE_EQ(T.ScopeMs[4], 2.0);
  EXPECT_EQ(T.Kernels, 2u);
}

TEST(ScopeEventTimerTest, BackwardOpsOfNoKnownScopeAreUnscoped) {
  FakeEvents Api;
  ScopeEventTimer Timer(Api);
  ASSERT_TRUE(Timer.start());
  timeScope(Api, Timer, -1, 0, 0.5);
  Timer.boundary(true);
  GpuTimes T = Timer.times(1);
  EXPECT_TRUE(T.ScopeMs.empty());
  EXPECT_DOUBLE_EQ(T.UnscopedMs, 0.5);
}

TEST(ScopeEventTimerTest, EachThreadNestsOnItsOwn) {
  // Backward ops run on autograd's thread, under their forward's scope;
  // they are not the children of what the forward thread has open.
  FakeEvents Api;
  ScopeEventTimer Timer(Api);
  ASSERT_TRUE(Timer.start());
  Api.Now = 0;
  Timer.enterScope(1);
  std::thread([&] {
    Api.Now = 1;
    Timer.enterScope(2);
    Api.Now = 3;
    Timer.exitScope();
  }).join();
  Api.Now = 4;
  Timer.exitScope();
  Timer.boundary(true);
  GpuTimes T = Timer.times(1);
  EXPECT_DOUBLE_EQ(T.ScopeMs[2], 2);
  EXPECT_DOUBLE_EQ(T.ScopeMs[1], 4) << "the other thread's time is not a child";
}

TEST(ScopeEventTimerTest, ASpentPoolDropsMarksUntilTheBoundary) {
  FakeEvents Api;
  ScopeEventTimer Timer(Api, 3);
  ASSERT_TRUE(Timer.start());
  Api.Now = 0;
  Timer.enterScope(1);
  Timer.enterScope(2);
  Api.Now = 1;
  Timer.exitScope(); // the third event: scope 2 is timed
  Api.Now = 2;
  Timer.exitScope();   // dropped: scope 1 is left open
  Timer.enterScope(3); // dropped
  Timer.exitScope();   // dropped
  Timer.boundary(true);
  GpuTimes T = Timer.times(1);
  EXPECT_DOUBLE_EQ(T.ScopeMs[2], 1);
  EXPECT_EQ(T.ScopeMs.count(1), 0u);
  EXPECT_EQ(T.ScopeMs.count(3), 0u);
  EXPECT_EQ(T.DroppedRecords, 4u) << "three marks, and scope 1's entry";
  EXPECT_EQ(Api.Recorded, 3u);
  // The next iteration starts with the whole pool.
  timeScope(Api, Timer, 3, 10, 10.5);
  Timer.boundary(true);
  EXPECT_DOUBLE_EQ(Timer.times(1).ScopeMs[3], 0.5);
}

TEST(ScopeEventTimerTest, WarmupDropsAreNotCounted) {
  FakeEvents Api;
  ScopeEventTimer Timer(Api, 2);
  ASSERT_TRUE(Timer.start());
  for (int I = 0; I < 3; ++I) {
    Timer.enterScope(1);
    Timer.exitScope();
  }
  Timer.boundary(false);
  EXPECT_EQ(Timer.times(1).DroppedRecords, 0u);
}

TEST(ScopeEventTimerTest, AnExitWithoutItsEntryIsIgnored) {
  // Tracing began inside a scope, or the scope spans the boundary.
  FakeEvents Api;
  ScopeEventTimer Timer(Api);
  ASSERT_TRUE(Timer.start());
  Timer.exitScope();
  timeScope(Api, Timer, 5, 1, 2);
  Timer.boundary(true);
  GpuTimes T = Timer.times(1);
  EXPECT_DOUBLE_EQ(T.ScopeMs[5], 1);
  EXPECT_EQ(T.Kernels, 1u);
}

TEST(ScopeEventTimerTest, UnreadableEventsAreDroppedNotCounted) {
  FakeEvents Api;
  ScopeEventTimer Timer(Api);
  ASSERT_TRUE(Timer.start());
  Timer.enterScope(1);
  Timer.exitScope();
  Api.At[0] = -1; // the record failed
  Timer.boundary(true);
  GpuTimes T = Timer.times(1);
  EXPECT_TRUE(T.ScopeMs.empty());
  EXPECT_EQ(T.DroppedRecords, 2u);
}

TEST(ScopeEventTimerTest, NoPoolNoTimer) {
  FakeEvents Api;
  Api.RefuseCreate = true;
  ScopeEventTimer Timer(Api);
  EXPECT_FALSE(Timer.start());
}

TEST(ScopeEventTimerTest, MarksAllocateNothing) {
  FakeEvents Api;
  ScopeEventTimer Timer(Api, 4096);
  ASSERT_TRUE(Timer.start());
  Timer.enterScope(0); // the thread's first mark takes its slot
  Timer.exitScope();
  uint64_t Before = AllocationsOnThread;
  for (int I = 0; I < 2000; ++I) {
    Timer.enterScope(I % 50);
    Timer.exitScope();
  }
  EXPECT_EQ(AllocationsOnThread, Before);
  Timer.stop();
  EXPECT_TRUE(Api.Destroyed);
}

TEST(ScopeEventTimerTest, TheResultSaysWhereGpuMsCameFrom) {
  RunResult R;
  R.Gpu.Used = true;
  R.Gpu.GpuMsSource = "cuda_events";
  R.Gpu.TaggedPeakBytes = 4194304;
  R.Layers.push_back({3, 1, 2, 0, 0, 0.5});
  char Path[] = "/tmp/skyline-result-XXXXXX";
  int Fd = mkstemp(Path);
  ASSERT_GE(Fd, 0);
  close(Fd);
  ASSERT_TRUE(writeRunResult(R, Path));
  std::stringstream Text;
  Text << std::ifstream(Path).rdbuf();
  std::remove(Path);
  EXPECT_NE(Text.str().find(
                "gpu_ms_source: cuda_events, tagged_peak_bytes: 4194304, "),
            std::string::npos)
      << Text.str();
  EXPECT_NE(Text.str().find("gpu_ms: 0.5000}"), std::string::npos);
  RunResult None;
  None.Gpu.Used = true;
  ASSERT_TRUE(writeRunResult(None, Path));
  std::stringstream NoneText;
  NoneText << std::ifstream(Path).rdbuf();
  std::remove(Path);
  EXPECT_NE(NoneText.str().find("gpu_ms_source: none, tagged_peak_bytes: -1"),
            std::string::npos)
      << NoneText.str();
}

} // namespace

namespace {

/// Phase values, as RunFormat.h's Phase.
constexpr uint8_t Data = 1, Forward = 2, Backward = 3, Optimizer = 4;

/// One iteration on the stream's timeline: its marks reached at Start +
/// the offsets (the stream reaches an event when the work before it is
/// done, whatever the CPU's clock said when it was recorded).
void iterationOnStream(FakeEvents &Api, PhaseTimeline &Timeline, int Index,
                       double Start) {
  Api.Now = Start;
  Timeline.boundary(Index);
  Api.Now = Start + 2;
  Timeline.phase(Forward);
  Api.Now = Start + 5;
  Timeline.phase(Backward);
  Api.Now = Start + 9;
  Timeline.phase(Optimizer);
}

TEST(PhaseTimelineTest, IterationsAndPhasesFromTheStreamsTimeline) {
  FakeEvents Api;
  PhaseTimeline Timeline(Api, 64);
  ASSERT_TRUE(Timeline.start());
  // Two warm-up iterations (the first a slow one), then three measured: 10
  // ms each on the stream, whatever the CPU did meanwhile.
  iterationOnStream(Api, Timeline, 0, 0);
  iterationOnStream(Api, Timeline, 1, 50);
  iterationOnStream(Api, Timeline, 2, 60);
  iterationOnStream(Api, Timeline, 3, 70);
  iterationOnStream(Api, Timeline, 4, 80);
  Api.Now = 90;
  Timeline.boundary(5); // the boundary that ends the run
  PhaseTimeline::Times T = Timeline.resolve(/*Warmup=*/2);
  ASSERT_EQ(T.IterationMs.size(), 5u);
  EXPECT_DOUBLE_EQ(T.IterationMs[0], 50);
  EXPECT_DOUBLE_EQ(T.IterationMs[1], 10);
  EXPECT_DOUBLE_EQ(T.IterationMs[4], 10);
  EXPECT_EQ(T.PhaseIterations, 3);
  // Per iteration: data 2, forward 3, backward 4, optimizer 1 ms; summed
  // over the three measured ones.
  ASSERT_GE(T.PhaseMs.size(), size_t(Optimizer) + 1);
  EXPECT_DOUBLE_EQ(T.PhaseMs[Data], 6);
  EXPECT_DOUBLE_EQ(T.PhaseMs[Forward], 9);
  EXPECT_DOUBLE_EQ(T.PhaseMs[Backward], 12);
  EXPECT_DOUBLE_EQ(T.PhaseMs[Optimizer], 3);
  EXPECT_EQ(T.Dropped, 0u);
}

TEST(PhaseTimelineTest, AWaitForTheGpuStaysInThePhaseThatMadeTheWork) {
  // The CPU synchronizes after the optimizer step (where the data phase
  // begins on its clock) and waits 7 ms for the backward kernels: on the
  // stream the optimizer's event is reached only when they are done, so
  // the wait is backward's, and the data phase is the 1 ms it really took.
  FakeEvents Api;
  PhaseTimeline Timeline(Api, 16);
  ASSERT_TRUE(Timeline.start());
  Api.Now = 0;
  Timeline.boundary(0);
  Api.Now = 1; // the batch is on the GPU
  Timeline.phase(Forward);
  Api.Now = 3;
  Timeline.phase(Backward);
  Api.Now = 13; // backward's kernels end here, long after the CPU queued them
  Timeline.phase(Optimizer);
  Api.Now = 14;
  Timeline.phase(Data);
  Api.Now = 14; // after the synchronize: the stream is idle
  Timeline.boundary(1);
  PhaseTimeline::Times T = Timeline.resolve(/*Warmup=*/0);
  EXPECT_DOUBLE_EQ(T.IterationMs[0], 14);
  EXPECT_DOUBLE_EQ(T.PhaseMs[Data], 1);
  EXPECT_DOUBLE_EQ(T.PhaseMs[Backward], 10);
  EXPECT_DOUBLE_EQ(T.PhaseMs[Optimizer], 1);
}

TEST(PhaseTimelineTest, ASpentPoolIsCounted) {
  FakeEvents Api;
  PhaseTimeline Timeline(Api, 3);
  ASSERT_TRUE(Timeline.start());
  Timeline.boundary(0);
  Timeline.phase(Forward);
  Timeline.boundary(1);
  Timeline.phase(Forward); // no event left
  Timeline.boundary(2);
  PhaseTimeline::Times T = Timeline.resolve(0);
  EXPECT_EQ(T.Dropped, 2u);
  EXPECT_EQ(Api.Recorded, 3u);
}

TEST(PhaseTimelineTest, MarksAllocateNothing) {
  FakeEvents Api;
  PhaseTimeline Timeline(Api, 1024);
  ASSERT_TRUE(Timeline.start());
  AllocationsOnThread = 0;
  for (int I = 0; I < 100; ++I) {
    Timeline.boundary(I);
    Timeline.phase(Forward);
    Timeline.phase(Backward);
  }
  EXPECT_EQ(AllocationsOnThread, 0u);
}

} // namespace
