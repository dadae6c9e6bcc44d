// A measurement's percentage in the editor moves through the build (by the
// last build's time), through every planned run (by the runs so far), and
// on through the repeats after them; it never goes back.

#include "skyline/MeasureProgress.h"

#include "gtest/gtest.h"

using namespace skyline;

namespace {

TEST(MeasureProgressTest, TheBuildMovesByTheLastBuildsTime) {
  MeasureProgress Bar(20);
  EXPECT_EQ(Bar.percentage(0), 0);
  EXPECT_EQ(Bar.percentage(10), 13) << "30% x 0.9 x half the build";
  Bar.observe("configuring the instrumented build", 11);
  Bar.observe("building the instrumented program", 12);
  EXPECT_EQ(Bar.percentage(20), 27) << "the build as long as last time";
  EXPECT_EQ(Bar.percentage(40), 28) << "longer: still short of the runs";
  EXPECT_FALSE(Bar.buildSeconds());
}

TEST(MeasureProgressTest, EachRunMovesByTheRunsSoFar) {
  MeasureProgress Bar(20);
  Bar.observe("run 1/4 at batch size 64...", 20);
  EXPECT_EQ(Bar.buildSeconds(), 20.0);
  EXPECT_EQ(Bar.percentage(20), 30);
  // The first run is expected to take 5 s: 2.5 s is 0.45 of its 15%.
  EXPECT_EQ(Bar.percentage(22.5), 36);
  Bar.observe("run 2/4 at batch size 128...", 25);
  EXPECT_EQ(Bar.percentage(25), 45);
  // Runs so far took 5 s each: 10 s into the second is past it.
  EXPECT_EQ(Bar.percentage(35), 59);
  Bar.observe("run 4/4 at batch size 1024...", 40);
  EXPECT_EQ(Bar.percentage(40), 75);
}

TEST(MeasureProgressTest, TheRepeatsAfterThePlannedRunsStillMove) {
  MeasureProgress Bar(20);
  Bar.observe("run 1/1 at batch size 64...", 20);
  Bar.observe("repeating the timing runs at batch size 64 and 128", 50);
  EXPECT_EQ(Bar.percentage(50), 90);
  EXPECT_EQ(Bar.percentage(65), 92);
  EXPECT_EQ(Bar.percentage(80), 94);
  EXPECT_EQ(Bar.percentage(200), 98);
  EXPECT_EQ(Bar.percentage(100000), 99) << "100 is the end's";
}

TEST(MeasureProgressTest, ItNeverGoesBack) {
  MeasureProgress Bar(20);
  EXPECT_EQ(Bar.percentage(60), 29);
  // A run's line after a build that took three times as long as expected:
  // the raw figure (30) is above; a later, smaller one is not shown.
  Bar.observe("run 1/10 at batch size 64...", 60);
  EXPECT_EQ(Bar.percentage(60), 30);
  EXPECT_EQ(Bar.percentage(59), 30);
  // A repeat line before any run is not the repeats' phase.
  MeasureProgress Early(20);
  Early.observe("repeating the timing runs", 1);
  EXPECT_EQ(Early.percentage(1), 1);
}

} // namespace
