// A measure bundle's plan survives a trip through plan.yaml: every option
// the sweep reads, the declared size, the program model and the key; a bad
// value is refused with the file and the key named.

#include "skyline/MeasurePlan.h"

#include "skyline/ProgramModelYAML.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace skyline;

namespace {

/// Every option away from its default.
MeasurePlan samplePlan() {
  MeasurePlan Plan;
  Plan.SkylineVersion = "9.8.7";
  Plan.DeclaredBatchSize = 48;
  Plan.BuildSeconds = 12.5;
  MeasureOptions &O = Plan.Options;
  O.MemoryBudget = int64_t(3) << 30;
  O.MaxRuns = 9;
  O.MemoryMargin = 0.2;
  O.RoundTo = 16;
  O.ThroughputSlack = 0.03;
  O.MinGain = 0.07;
  O.Warmup = 1;
  O.TimingRuns = 4;
  O.Iterations = 30;
  O.MinIterations = 3;
  O.Tolerance = 0.01;
  O.TimeBudgetSeconds = 90;
  O.QuietWaitSeconds = 5;
  O.Breakdown = BreakdownRuns::Declared;
  O.BreakdownIterations = 2;
  O.RunTimeoutSeconds = 60;
  O.RunDir = "/data/run dir";
  O.RunArgs = {"--epochs", "1", "two words"};
  O.Device = DeviceChoice::CUDA;
  O.Malloc = MallocThresholds::Dynamic;
  O.WholeBatchesOnly = true;
  O.Launcher = LauncherChoice::Slurm;
  O.SlurmArgs = {"--partition=gpu", "--gres=gpu:1"};
  O.QueueTimeoutSeconds = 30;
  O.ParallelRuns = 2;
  Plan.Program.Sources = {"/src/train.cpp"};
  BatchSizeSite Site;
  Site.Name = "kBatchSize";
  Site.Value = 48;
  Site.Literal = {"/src/train.cpp", 3, 33, 52, 2};
  Plan.Program.BatchSize = Site;
  Plan.Program.FileSha256["/src/train.cpp"] = std::string(64, 'a');
  Plan.Key = MeasurementKey{"s", "f", "t", "cuda"};
  return Plan;
}

std::string writeTemporary(const std::string &Text) {
  llvm::SmallString<128> Path;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("plan", "yaml", Path));
  std::error_code EC;
  llvm::raw_fd_ostream Out(Path, EC);
  Out << Text;
  return Path.str().str();
}

TEST(MeasurePlanTest, RoundTrip) {
  MeasurePlan Plan = samplePlan();
  std::string Path = writeTemporary(measurePlanToYAML(Plan));
  auto Read = readMeasurePlan(Path);
  llvm::sys::fs::remove(Path);
  ASSERT_TRUE(bool(Read)) << llvm::toString(Read.takeError());
  EXPECT_EQ(Read->SkylineVersion, "9.8.7");
  EXPECT_EQ(Read->DeclaredBatchSize, 48);
  EXPECT_EQ(Read->BuildSeconds, 12.5);
  const MeasureOptions &A = Plan.Options, &B = Read->Options;
  EXPECT_EQ(B.MemoryBudget, A.MemoryBudget);
  EXPECT_EQ(B.MaxRuns, A.MaxRuns);
  EXPECT_EQ(B.MemoryMargin, A.MemoryMargin);
  EXPECT_EQ(B.RoundTo, A.RoundTo);
  EXPECT_EQ(B.ThroughputSlack, A.ThroughputSlack);
  EXPECT_EQ(B.MinGain, A.MinGain);
  EXPECT_EQ(B.Warmup, A.Warmup);
  EXPECT_EQ(B.TimingRuns, A.TimingRuns);
  EXPECT_EQ(B.Iterations, A.Iterations);
  EXPECT_EQ(B.MinIterations, A.MinIterations);
  EXPECT_EQ(B.Tolerance, A.Tolerance);
  EXPECT_EQ(B.TimeBudgetSeconds, A.TimeBudgetSeconds);
  EXPECT_EQ(B.QuietWaitSeconds, A.QuietWaitSeconds);
  EXPECT_EQ(B.Breakdown, A.Breakdown);
  EXPECT_EQ(B.BreakdownIterations, A.BreakdownIterations);
  EXPECT_EQ(B.RunTimeoutSeconds, A.RunTimeoutSeconds);
  EXPECT_EQ(B.RunDir, A.RunDir);
  EXPECT_EQ(B.RunArgs, A.RunArgs);
  EXPECT_EQ(B.Device, A.Device);
  EXPECT_EQ(B.Malloc, A.Malloc);
  EXPECT_EQ(B.WholeBatchesOnly, A.WholeBatchesOnly);
  EXPECT_EQ(B.Launcher, A.Launcher);
  EXPECT_EQ(B.SlurmArgs, A.SlurmArgs);
  EXPECT_EQ(B.QueueTimeoutSeconds, A.QueueTimeoutSeconds);
  EXPECT_EQ(B.ParallelRuns, A.ParallelRuns);
  EXPECT_TRUE(B.WorkDir.empty());
  ASSERT_TRUE(Read->Key);
  EXPECT_EQ(*Read->Key, *Plan.Key);
  EXPECT_EQ(programModelToYAML(Read->Program),
            programModelToYAML(Plan.Program));
}

TEST(MeasurePlanTest, DefaultsRoundTrip) {
  MeasurePlan Plan;
  std::string Path = writeTemporary(measurePlanToYAML(Plan));
  auto Read = readMeasurePlan(Path);
  llvm::sys::fs::remove(Path);
  ASSERT_TRUE(bool(Read)) << llvm::toString(Read.takeError());
  EXPECT_EQ(measurePlanToYAML(*Read), measurePlanToYAML(Plan));
  EXPECT_FALSE(Read->Key);
}

TEST(MeasurePlanTest, RefusesABadValueNamingIt) {
  std::string Text = measurePlanToYAML(samplePlan());
  size_t At = Text.find("device: cuda");
  ASSERT_NE(At, std::string::npos);
  Text.replace(At, 12, "device: tpu");
  std::string Path = writeTemporary(Text);
  auto Read = readMeasurePlan(Path);
  llvm::sys::fs::remove(Path);
  ASSERT_FALSE(bool(Read));
  EXPECT_EQ(llvm::toString(Read.takeError()),
            "measure plan '" + Path +
                "': options.device is 'tpu'; it must be one of auto, cpu, "
                "cuda");
}

TEST(MeasurePlanTest, RefusesAnotherFile) {
  std::string Path = writeTemporary("schema_version: 2\nruns: []\n");
  auto Read = readMeasurePlan(Path);
  llvm::sys::fs::remove(Path);
  ASSERT_FALSE(bool(Read));
  EXPECT_EQ(llvm::toString(Read.takeError()),
            "'" + Path +
                "' is not a measure plan: no plan_version or program; write "
                "one with skyline-check --bundle=DIR");
}

} // namespace
