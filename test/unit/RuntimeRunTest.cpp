// The runtime inside a real program: it ends the run after its iterations,
// writes the result, applies the batch-size override, and reports an
// out-of-memory run as such, with its own exit code.

#include "skyline/runtime/RunResult.h"

#include <ATen/Parallel.h>
#include <torch/version.h>

#include "RuntimeProgramRun.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

long long field(const std::string &Text, const std::string &Key) {
  std::smatch Match;
  if (!std::regex_search(Text, Match,
                         std::regex("(^|\\n)" + Key + ": ([0-9]+)")))
    return -1;
  return std::stoll(Match[2]);
}

TEST(RuntimeRunTest, InactiveWithoutResultPath) {
  ProgramRun R = runProgram("SKYLINE_BATCH_SIZE=64");
  EXPECT_EQ(R.ExitCode, 3) << R.Output;
  EXPECT_NE(R.Output.find("loop ended with batch size 16"), std::string::npos)
      << "the override applies only inside a measured run";
}

TEST(RuntimeRunTest, MeasuredRunEndsAndWritesItsResult) {
  ProgramRun R =
      runProgram("SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=32 SKYLINE_WARMUP=2 "
                 "SKYLINE_ITERATIONS=5");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  EXPECT_EQ(R.Output.find("loop ended"), std::string::npos);
  EXPECT_EQ(field(R.Result, "batch_size"), 32) << R.Result;
  EXPECT_EQ(field(R.Result, "iterations"), 5) << R.Result;
  EXPECT_NE(R.Result.find("oom: false"), std::string::npos);
  // Weights, Adam's two moments and the gradients are all live at the peak.
  const long long Weights = (256 * 512 + 512 + 512 * 256 + 256) * 4;
  EXPECT_GE(field(R.Result, "peak_bytes"), 4 * Weights) << R.Result;
  EXPECT_GE(field(R.Result, "  construction"), Weights) << R.Result;
  // The model call's forward time, per iteration, within the iteration's
  // (both means: one slow iteration on a loaded machine moves the median
  // less than the mean).
  std::smatch Layer;
  ASSERT_TRUE(std::regex_search(
      R.Result, Layer, std::regex("- \\{scope: 0, forward_ms: ([0-9.]+),")))
      << R.Result;
  std::smatch Mean;
  ASSERT_TRUE(std::regex_search(R.Result, Mean, std::regex("mean: ([0-9.]+)")));
  EXPECT_GT(std::stod(Layer[1]), 0.0);
  EXPECT_LT(std::stod(Layer[1]), std::stod(Mean[1]));
}

/// observed_batch_size: {size: N, scope: S} as (N, S); (-1, -1) if absent.
std::pair<long long, long long> observed(const std::string &Text) {
  std::smatch Match;
  if (!std::regex_search(
          Text, Match,
          std::regex("observed_batch_size: \\{size: ([0-9]+), scope: "
                     "(-?[0-9]+)\\}")))
    return {-1, -1};
  return {std::stoll(Match[1]), std::stoll(Match[2])};
}

TEST(RuntimeRunTest, TheBatchIsObservedFromTheOutermostCall) {
  // With a literal: the size it was set to, seen in the model's output.
  ProgramRun Set = runProgram("SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=32 "
                              "SKYLINE_WARMUP=1 SKYLINE_ITERATIONS=3");
  EXPECT_EQ(observed(Set.Result), std::make_pair(32LL, 0LL)) << Set.Result;
  // Without one: batches of 12 from 100 samples, whose last (4) spans the
  // next epoch's start and is left out; the inner call's result (8 x 12)
  // is not looked at. The run's batch size is the one observed, in a
  // timing run too, and the throughput is of it.
  for (const char *Mode : {"breakdown", "timing"}) {
    ProgramRun Own =
        runProgram(std::string("SKYLINE_RESULT=x SKYLINE_MODE=") + Mode +
                       " SKYLINE_WARMUP=1 SKYLINE_ITERATIONS=12 "
                       "SKYLINE_TOLERANCE=0",
                   "own-size 12");
    ASSERT_EQ(Own.ExitCode, 0) << Own.Output;
    EXPECT_EQ(field(Own.Result, "batch_size"), 12) << Own.Result;
    EXPECT_EQ(observed(Own.Result), std::make_pair(12LL, 0LL)) << Own.Result;
    EXPECT_EQ(field(Own.Result, "epoch_end_iterations"), 1) << Own.Result;
    std::smatch Median, Throughput;
    ASSERT_TRUE(
        std::regex_search(Own.Result, Median, std::regex("median: ([0-9.]+)")));
    ASSERT_TRUE(std::regex_search(Own.Result, Throughput,
                                  std::regex("throughput: ([0-9.]+)")));
    EXPECT_NEAR(std::stod(Throughput[1]), 12 * 1000 / std::stod(Median[1]),
                0.01 * std::stod(Throughput[1]));
  }
}

long long memory(const std::string &Text, const std::string &Kind) {
  std::smatch Match;
  if (!std::regex_search(Text, Match, std::regex("[{ ]" + Kind + ": ([0-9]+)")))
    return -1;
  return std::stoll(Match[1]);
}

/// Every memory kind of a result, added up: what the peak must be.
long long sumOfKinds(const std::string &Text) {
  long long Sum = 0;
  for (const char *Kind :
       {"weights", "gradients", "optimizer_state", "activations", "data",
        "temporaries", "setup", "untracked"})
    Sum += memory(Text, Kind);
  return Sum;
}

TEST(RuntimeRunTest, BreakdownToTheByteAndAddsUp) {
  ProgramRun R =
      runProgram("SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=64 SKYLINE_ITERATIONS=4");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  const long long Weights = (256 * 512 + 512 + 512 * 256 + 256) * 4;
  EXPECT_EQ(memory(R.Result, "weights"), Weights) << R.Result;
  EXPECT_EQ(memory(R.Result, "gradients"), Weights) << R.Result;
  EXPECT_EQ(memory(R.Result, "optimizer_state"), 2 * Weights) << R.Result;
  // The batch (64 x 256 floats) is data; at the peak (inside Adam's step)
  // the model's output y (64 x 256 floats) is still a live activation.
  EXPECT_EQ(memory(R.Result, "data"), 64 * 256 * 4) << R.Result;
  EXPECT_GE(memory(R.Result, "activations"), 64 * 256 * 4) << R.Result;
  EXPECT_EQ(sumOfKinds(R.Result), field(R.Result, "peak_bytes")) << R.Result;

  // The phases' times add up to the mean iteration (other is the rest).
  std::smatch Split;
  ASSERT_TRUE(std::regex_search(
      R.Result, Split,
      std::regex(
          "time_split_ms: \\{data: ([0-9.]+), forward: ([0-9.]+), backward: "
          "([0-9.]+), optimizer: ([0-9.]+), other: ([0-9.]+)\\}")))
      << R.Result;
  std::smatch Mean;
  ASSERT_TRUE(std::regex_search(R.Result, Mean, std::regex("mean: ([0-9.]+)")));
  double Total = 0;
  for (int I = 1; I <= 5; ++I)
    Total += std::stod(Split[I]);
  EXPECT_NEAR(Total, std::stod(Mean[1]), 0.01 * std::stod(Mean[1]) + 0.002);
  EXPECT_GT(std::stod(Split[2]), 0.0) << "forward";
  EXPECT_GT(std::stod(Split[3]), 0.0) << "backward";
  EXPECT_GT(std::stod(Split[4]), 0.0) << "optimizer";
}

TEST(RuntimeRunTest, AnOptimizerHeldByAPointerMadeLaterIsTracked) {
  // std::unique_ptr<Optimizer>, null where it is tracked: read at each
  // step, its Adam state is optimizer state to the byte, as above.
  ProgramRun R =
      runProgram("SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=64 SKYLINE_ITERATIONS=4",
                 "held-optimizer");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  const long long Weights = (256 * 512 + 512 + 512 * 256 + 256) * 4;
  EXPECT_EQ(memory(R.Result, "weights"), Weights) << R.Result;
  EXPECT_EQ(memory(R.Result, "gradients"), Weights) << R.Result;
  EXPECT_EQ(memory(R.Result, "optimizer_state"), 2 * Weights) << R.Result;
  EXPECT_EQ(sumOfKinds(R.Result), field(R.Result, "peak_bytes")) << R.Result;
}

// What the statements before the loop made is theirs, to the byte: the
// dataset's 1000 x 1000 floats are statement 0's; the model's statement
// made only weights, which stay the weights kind (not counted twice), and
// the optimizer's made nothing that lasts.
TEST(RuntimeRunTest, SetupStatementsHoldWhatTheyMadeBeforeTraining) {
  ProgramRun R = runProgram(
      "SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=32 SKYLINE_ITERATIONS=3", "setup");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  EXPECT_NE(R.Result.find("setup_statements:\n  - {statement: 0, bytes: "
                          "4000000}\n"
                          "time_split_ms:"),
            std::string::npos)
      << R.Result;
  EXPECT_EQ(memory(R.Result, "setup"), 4000000) << R.Result;
  EXPECT_EQ(memory(R.Result, "weights"), (256 * 256 + 256) * 4) << R.Result;
  // Untracked keeps what no statement made: construction's rest.
  EXPECT_EQ(memory(R.Result, "untracked"),
            field(R.Result, "  construction") - 4000000 - (256 * 256 + 256) * 4)
      << R.Result;
  EXPECT_EQ(sumOfKinds(R.Result), field(R.Result, "peak_bytes")) << R.Result;
}

TEST(RuntimeRunTest, PeakGrowsWithTheBatchSize) {
  ProgramRun Small =
      runProgram("SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=16 SKYLINE_ITERATIONS=3");
  ProgramRun Large = runProgram(
      "SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=512 SKYLINE_ITERATIONS=3");
  ASSERT_EQ(Small.ExitCode, 0) << Small.Output;
  ASSERT_EQ(Large.ExitCode, 0) << Large.Output;
  // Activations: at least x (256 floats) and the hidden layer (512) per sample.
  EXPECT_GE(field(Large.Result, "peak_bytes") -
                field(Small.Result, "peak_bytes"),
            (512 - 16) * (256 + 512) * 4);
}

TEST(RuntimeRunTest, BudgetCrossedIsAnOutOfMemoryRun) {
  ProgramRun R = runProgram("SKYLINE_RESULT=x SKYLINE_MEMORY_BUDGET=1000000");
  EXPECT_EQ(R.ExitCode, skyline::rt::ExitOutOfMemory) << R.Output;
  EXPECT_NE(R.Result.find("oom: true"), std::string::npos) << R.Result;
  EXPECT_LE(field(R.Result, "peak_bytes"), 1000000);
}

struct LayerRow {
  double ForwardMs = 0, BackwardMs = 0;
  long long ActivationBytes = 0, WeightBytes = 0;
};

/// The layer rows by scope id (-1: unscoped).
std::map<int, LayerRow> layers(const std::string &Text) {
  std::map<int, LayerRow> Rows;
  std::regex Row(
      "- \\{scope: (-?[0-9]+), forward_ms: ([0-9.]+), backward_ms: "
      "([0-9.]+), activation_bytes: (-?[0-9]+), weight_bytes: ([0-9]+)\\}");
  for (auto It = std::sregex_iterator(Text.begin(), Text.end(), Row);
       It != std::sregex_iterator(); ++It)
    Rows[std::stoi((*It)[1])] = {std::stod((*It)[2]), std::stod((*It)[3]),
                                 std::stoll((*It)[4]), std::stoll((*It)[5])};
  return Rows;
}

double timeSplit(const std::string &Text, const std::string &Phase) {
  std::smatch Match;
  if (!std::regex_search(
          Text, Match,
          std::regex("time_split_ms: \\{.*[{ ]" + Phase + ": ([0-9.]+)")))
    return -1;
  return std::stod(Match[1]);
}

// RuntimeProgram's `layers` model: scope 0 the model, 1 a Linear(1024, 1024),
// 2 a BatchNorm2d(64), 3 a Linear(1024, 16), trained by plain SGD.
constexpr long long BigLinear = (1024 * 1024 + 1024) * 4;
constexpr long long NormParameters = 2 * 64 * 4;
constexpr long long NormBuffers = 2 * 64 * 4 + 8; // running stats, int64 count
constexpr long long HeadLinear = (1024 * 16 + 16) * 4;

TEST(RuntimeRunTest, WeightsPerLayerAreParametersAndBuffers) {
  ProgramRun R = runProgram(
      "SKYLINE_RESULT=x SKYLINE_BATCH_SIZE=32 SKYLINE_ITERATIONS=2", "layers");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  std::map<int, LayerRow> Rows = layers(R.Result);
  ASSERT_EQ(Rows.size(), 5u) << R.Result;
  EXPECT_EQ(BigLinear, 4198400);
  EXPECT_EQ(Rows[1].WeightBytes, BigLinear) << R.Result;
  EXPECT_EQ(Rows[2].WeightBytes, NormParameters + NormBuffers) << R.Result;
  EXPECT_EQ(Rows[3].WeightBytes, HeadLinear) << R.Result;
  // The model's own storages are its layers': a storage counts once, for
  // the innermost module that holds it.
  EXPECT_EQ(Rows[0].WeightBytes, 0) << R.Result;
  EXPECT_EQ(Rows[-1].WeightBytes, 0) << R.Result;
  EXPECT_EQ(memory(R.Result, "weights"),
            BigLinear + NormParameters + NormBuffers + HeadLinear)
      << R.Result;
  EXPECT_EQ(memory(R.Result, "gradients"),
            BigLinear + NormParameters + HeadLinear)
      << R.Result;
}

TEST(RuntimeRunTest, ActivationsPerLayerAddUpAndGrowWithTheBatch) {
  std::map<int, long long> BigActivations;
  for (int Batch : {64, 256}) {
    ProgramRun R =
        runProgram("SKYLINE_RESULT=x SKYLINE_ITERATIONS=2 SKYLINE_BATCH_SIZE=" +
                       std::to_string(Batch),
                   "layers");
    ASSERT_EQ(R.ExitCode, 0) << R.Output;
    std::map<int, LayerRow> Rows = layers(R.Result);
    ASSERT_EQ(Rows.size(), 5u) << R.Result;
    long long Sum = 0;
    for (const auto &[Scope, Row] : Rows) {
      EXPECT_GE(Row.ActivationBytes, 0) << Scope << "\n" << R.Result;
      Sum += Row.ActivationBytes;
    }
    EXPECT_EQ(Sum, memory(R.Result, "activations")) << R.Result;
    // The big Linear's output (batch x 1024 floats) is saved for the
    // BatchNorm's backward: live at the peak.
    EXPECT_GE(Rows[1].ActivationBytes, Batch * 1024 * 4) << R.Result;
    BigActivations[Batch] = Rows[1].ActivationBytes;
  }
  EXPECT_EQ(BigActivations[256], 4 * BigActivations[64]);
}

TEST(RuntimeRunTest, BackwardTimeLandsOnTheLayerThatMadeIt) {
  // One intra-op thread: on a loaded machine every parallel op, however
  // small, can wait a time slice for its second thread, which blurs ranks.
  ProgramRun R = runProgram("OMP_NUM_THREADS=1 SKYLINE_RESULT=x "
                            "SKYLINE_BATCH_SIZE=256 SKYLINE_ITERATIONS=10",
                            "layers");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  std::map<int, LayerRow> Rows = layers(R.Result);
  ASSERT_EQ(Rows.size(), 5u) << R.Result;
  auto Total = [&](int Scope) {
    return Rows[Scope].ForwardMs + Rows[Scope].BackwardMs;
  };
  for (int Scope : {0, 2, 3, -1})
    EXPECT_GT(Total(1), Total(Scope)) << "the dominant layer ranks first\n"
                                      << R.Result;
  EXPECT_GT(Rows[1].BackwardMs, 0.0) << R.Result;
  EXPECT_GT(Rows[2].BackwardMs, 0.0) << R.Result;
  EXPECT_GT(Rows[3].BackwardMs, 0.0) << R.Result;

  // The rows cover the forward and backward phases: forward exactly (the
  // unscoped row is the rest), backward but for what autograd does after
  // the pass's last op.
  double RowsMs = 0;
  for (const auto &[Scope, Row] : Rows)
    RowsMs += Row.ForwardMs + Row.BackwardMs;
  double Phases =
      timeSplit(R.Result, "forward") + timeSplit(R.Result, "backward");
  EXPECT_NEAR(RowsMs, Phases, 0.1 * Phases) << R.Result;
}

TEST(RuntimeRunTest, EnvironmentIsRecorded) {
  ProgramRun R = runProgram("SKYLINE_RESULT=x SKYLINE_ITERATIONS=1");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  EXPECT_NE(R.Result.find("torch_version: \"" TORCH_VERSION "\"\n"),
            std::string::npos)
      << R.Result;
  EXPECT_EQ(field(R.Result, "threads"), at::get_num_threads()) << R.Result;
  EXPECT_TRUE(std::regex_search(
      R.Result, std::regex("\ndevice: \\{type: cpu, name: \"[^\"]+\", "
                           "cuda: (no_device|unused)\\}\n")))
      << R.Result;
}

TEST(RuntimeRunTest, TheProgramsOwnAutocastIsRecordedNotTheTrials) {
  // The autocast-bf16 trial's setting is CUDA's: on a CPU run it casts
  // nothing, the program trains, and the result keeps the program's own
  // setting (off), which is what the experiment's plan reads.
  ProgramRun Plain = runProgram("SKYLINE_RESULT=x SKYLINE_ITERATIONS=2");
  ProgramRun Trial =
      runProgram("SKYLINE_RESULT=x SKYLINE_ITERATIONS=2 SKYLINE_AUTOCAST=bf16");
  for (const ProgramRun *R : {&Plain, &Trial}) {
    ASSERT_EQ(R->ExitCode, 0) << R->Output;
    EXPECT_NE(R->Result.find("\nautocast: false\n"), std::string::npos)
        << R->Result;
    EXPECT_EQ(field(R->Result, "iterations"), 2) << R->Result;
  }
}

TEST(RuntimeRunTest,
     TheChannelsLastTrialReordersTheOptimizersConvolutionWeights) {
  // The channels-last trial at the first iteration: the convolution's
  // weight, a parameter of the tracked optimizer, is channels-last from
  // then on, and the same tensor as the optimizer's; the program trains on
  // (a CPU has the order too, just no tensor cores to pay for it).
  ProgramRun Trial = runProgram("SKYLINE_RESULT=x SKYLINE_MODE=timing "
                                "SKYLINE_ITERATIONS=2 SKYLINE_CHANNELS_LAST=1",
                                "conv");
  ASSERT_EQ(Trial.ExitCode, 0) << Trial.Output;
  EXPECT_NE(Trial.Output.find("weight channels-last, the optimizer's the "
                              "module's"),
            std::string::npos)
      << Trial.Output;
  EXPECT_EQ(field(Trial.Result, "iterations"), 2) << Trial.Result;
  EXPECT_EQ(Trial.Result.find("trial_not_applied"), std::string::npos)
      << Trial.Result;
  // Without the trial, the program's own order.
  ProgramRun Plain = runProgram(
      "SKYLINE_RESULT=x SKYLINE_MODE=timing SKYLINE_ITERATIONS=2", "conv");
  ASSERT_EQ(Plain.ExitCode, 0) << Plain.Output;
  EXPECT_NE(Plain.Output.find("weight contiguous"), std::string::npos)
      << Plain.Output;
  // A program whose weights are channels-last already: the trial changes
  // nothing, and its result says so.
  ProgramRun Already =
      runProgram("SKYLINE_RESULT=x SKYLINE_MODE=timing "
                 "SKYLINE_ITERATIONS=2 SKYLINE_CHANNELS_LAST=1",
                 "conv channels-last");
  ASSERT_EQ(Already.ExitCode, 0) << Already.Output;
  EXPECT_NE(Already.Result.find(
                "\ntrial_not_applied: \"the optimizers' 4-d parameters were "
                "channels-last already\"\n"),
            std::string::npos)
      << Already.Result;
  // A breakdown run reads the program's own order: channels-last where the
  // program made it so, nothing said where it did not.
  ProgramRun Own =
      runProgram("SKYLINE_RESULT=x SKYLINE_MODE=breakdown SKYLINE_ITERATIONS=2",
                 "conv channels-last");
  ASSERT_EQ(Own.ExitCode, 0) << Own.Output;
  EXPECT_NE(Own.Result.find("\nchannels_last: true\n"), std::string::npos)
      << Own.Result;
  ProgramRun Contiguous = runProgram(
      "SKYLINE_RESULT=x SKYLINE_MODE=breakdown SKYLINE_ITERATIONS=2", "conv");
  ASSERT_EQ(Contiguous.ExitCode, 0) << Contiguous.Output;
  EXPECT_EQ(Contiguous.Result.find("channels_last"), std::string::npos)
      << Contiguous.Result;
  EXPECT_NE(Contiguous.Output.find("weight contiguous"), std::string::npos)
      << Contiguous.Output;
  // No optimizer tracked (a program that trains none): nothing to change.
  ProgramRun Untracked = runProgram("SKYLINE_RESULT=x SKYLINE_MODE=timing "
                                    "SKYLINE_ITERATIONS=2 "
                                    "SKYLINE_CHANNELS_LAST=1");
  ASSERT_EQ(Untracked.ExitCode, 0) << Untracked.Output;
  EXPECT_NE(Untracked.Result.find("\ntrial_not_applied: \"no optimizer with "
                                  "4-d parameters (convolution weights) was "
                                  "made by the second iteration\"\n"),
            std::string::npos)
      << Untracked.Result;
}

TEST(RuntimeRunTest, HostSyncsAreTimedPerIteration) {
  // 2 warm-up and 8 measured iterations: item() in each (1 call an
  // iteration), the print in every other (0.5), each ms per iteration; the
  // print of 40,000 floats takes longer than an item() on the CPU, where
  // nothing is queued.
  ProgramRun R = runProgram("SKYLINE_RESULT=x SKYLINE_MODE=timing "
                            "SKYLINE_ITERATIONS=8 SKYLINE_BATCH_SIZE=16",
                            "syncs");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  std::smatch Item, Print;
  ASSERT_TRUE(std::regex_search(
      R.Result, Item,
      std::regex("\n  - \\{sync: 0, calls: 1.0000, ms: ([0-9.]+)\\}\n")))
      << R.Result;
  ASSERT_TRUE(std::regex_search(
      R.Result, Print,
      std::regex("\n  - \\{sync: 1, calls: 0.5000, ms: ([0-9.]+)\\}\n")))
      << R.Result;
  double ItemMs = std::stod(Item[1]), PrintMs = std::stod(Print[1]);
  EXPECT_GT(PrintMs, ItemMs) << R.Result;
  // Both are means over the iterations: every other one prints.
  std::smatch Mean;
  ASSERT_TRUE(std::regex_search(
      R.Result, Mean, std::regex("iteration_ms: \\{median: [0-9.]+, mean: ([0-9.]+)")))
      << R.Result;
  EXPECT_LT(ItemMs + PrintMs, std::stod(Mean[1])) << R.Result;
  // A breakdown run times them too.
  ProgramRun Breakdown = runProgram(
      "SKYLINE_RESULT=x SKYLINE_MODE=breakdown SKYLINE_ITERATIONS=4", "syncs");
  ASSERT_EQ(Breakdown.ExitCode, 0) << Breakdown.Output;
  EXPECT_NE(Breakdown.Result.find("host_syncs:\n  - {sync: 0, calls: 1.0000"),
            std::string::npos)
      << Breakdown.Result;
  // Outside skyline-check the wrappers only run what they wrap.
  ProgramRun Plain = runProgram("", "syncs");
  ASSERT_EQ(Plain.ExitCode, 0) << Plain.Output;
  EXPECT_NE(Plain.Output.find("printed "), std::string::npos) << Plain.Output;
}

TEST(RuntimeRunTest, PinnedCopiesChangeOnlyCopiesFromTheCpuToCuda) {
  // The pinned memory trial on copies to the CPU: nothing to change, and
  // the result says so; the program trains on.
  ProgramRun Trial = runProgram("SKYLINE_RESULT=x SKYLINE_MODE=timing "
                                "SKYLINE_ITERATIONS=2 SKYLINE_PINNED_COPIES=1",
                                "syncs");
  ASSERT_EQ(Trial.ExitCode, 0) << Trial.Output;
  EXPECT_EQ(field(Trial.Result, "iterations"), 2) << Trial.Result;
  EXPECT_NE(Trial.Result.find("\ntrial_not_applied: \"no copy in the "
                              "training loop took a CPU tensor to a CUDA "
                              "device\"\n"),
            std::string::npos)
      << Trial.Result;
  ProgramRun Plain = runProgram(
      "SKYLINE_RESULT=x SKYLINE_MODE=timing SKYLINE_ITERATIONS=2", "syncs");
  ASSERT_EQ(Plain.ExitCode, 0) << Plain.Output;
  EXPECT_EQ(Plain.Result.find("trial_not_applied"), std::string::npos)
      << Plain.Result;
}

TEST(RuntimeRunTest, Summary) {
  skyline::rt::Summary S = skyline::rt::summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(S.Median, 2.5);
  EXPECT_DOUBLE_EQ(S.Mean, 2.5);
  EXPECT_DOUBLE_EQ(S.Min, 1);
  EXPECT_DOUBLE_EQ(S.Max, 4);
  EXPECT_NEAR(S.Stddev, 1.2910, 1e-4);
}

TEST(RuntimeRunTest, TimingRunKeepsTheBoundariesAndThePeak) {
  ProgramRun R = runProgram("SKYLINE_RESULT=x SKYLINE_MODE=timing "
                            "SKYLINE_BATCH_SIZE=32 SKYLINE_ITERATIONS=5");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  EXPECT_EQ(field(R.Result, "iterations"), 5) << R.Result;
  EXPECT_NE(R.Result.find("mode: timing\n"), std::string::npos) << R.Result;
  EXPECT_NE(R.Result.find("stopped: count\n"), std::string::npos) << R.Result;
  const long long Weights = (256 * 512 + 512 + 512 * 256 + 256) * 4;
  EXPECT_GE(field(R.Result, "peak_bytes"), 4 * Weights) << R.Result;
  // No hooks, so nothing that splits the time or the memory.
  EXPECT_EQ(R.Result.find("memory:"), std::string::npos) << R.Result;
  EXPECT_EQ(R.Result.find("time_split_ms:"), std::string::npos) << R.Result;
  EXPECT_EQ(R.Result.find("layers:"), std::string::npos) << R.Result;
}

TEST(RuntimeRunTest, TimingRunOutOfMemoryStillEnds) {
  ProgramRun R = runProgram(
      "SKYLINE_RESULT=x SKYLINE_MODE=timing SKYLINE_MEMORY_BUDGET=1000000");
  EXPECT_EQ(R.ExitCode, skyline::rt::ExitOutOfMemory) << R.Output;
  EXPECT_NE(R.Result.find("oom: true"), std::string::npos) << R.Result;
  EXPECT_NE(R.Result.find("stopped: out_of_memory"), std::string::npos);
}

TEST(RuntimeRunTest, StopsOnceTheMedianIsStable) {
  // A tolerance no finite error exceeds, so the run stops at the fewest
  // whatever the machine's load (100% was exceeded on a loaded CI machine:
  // iterations of 0.9 to 144 ms); StoppingRule tests the thresholds.
  ProgramRun R =
      runProgram("SKYLINE_RESULT=x SKYLINE_MODE=timing SKYLINE_ITERATIONS=30 "
                 "SKYLINE_MIN_ITERATIONS=5 SKYLINE_TOLERANCE=1e9");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  EXPECT_EQ(field(R.Result, "iterations"), 5) << R.Result;
  EXPECT_NE(R.Result.find("stopped: stable"), std::string::npos) << R.Result;
  EXPECT_EQ(field(R.Result, "iterations_asked"), 30) << R.Result;
}

TEST(RuntimeRunTest, StopsWhenItsTimeIsSpent) {
  ProgramRun R =
      runProgram("SKYLINE_RESULT=x SKYLINE_MODE=timing SKYLINE_ITERATIONS=30 "
                 "SKYLINE_MIN_ITERATIONS=3 SKYLINE_TOLERANCE=0.0001 "
                 "SKYLINE_TIME_LIMIT=0.001");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  EXPECT_EQ(field(R.Result, "iterations"), 3) << R.Result;
  EXPECT_NE(R.Result.find("stopped: time_limit"), std::string::npos)
      << R.Result;
}

TEST(RuntimeRunTest, ProgramThatEndsEarlyWritesAPartialResult) {
  for (const char *Mode : {"breakdown", "timing"}) {
    // 6 steps, 2 of them warm-up: 3 start-to-start intervals are measured.
    ProgramRun R =
        runProgram(std::string("SKYLINE_RESULT=x SKYLINE_WARMUP=2 "
                               "SKYLINE_ITERATIONS=8 SKYLINE_MODE=") +
                       Mode,
                   "short");
    ASSERT_EQ(R.ExitCode, 0) << "the program's own exit code\n" << R.Output;
    EXPECT_NE(R.Output.find("trained 6 steps"), std::string::npos);
    EXPECT_NE(R.Result.find("ended_early: true\n"), std::string::npos)
        << R.Result;
    EXPECT_NE(R.Result.find("stopped: ended_early\n"), std::string::npos);
    EXPECT_EQ(field(R.Result, "iterations"), 3) << R.Result;
    EXPECT_EQ(field(R.Result, "iterations_asked"), 8) << R.Result;
    EXPECT_EQ(field(R.Result, "iterations_reached"), 6) << R.Result;
    EXPECT_GT(field(R.Result, "peak_bytes"), 0) << R.Result;
    // The model and its optimizer are gone at exit: no memory kinds and no
    // weight bytes rather than wrong ones; the layers' times stay.
    EXPECT_EQ(R.Result.find("memory:"), std::string::npos) << R.Result;
    EXPECT_EQ(R.Result.find("weight_bytes"), std::string::npos) << R.Result;
    if (std::string(Mode) == "breakdown")
      EXPECT_TRUE(std::regex_search(
          R.Result, std::regex("- \\{scope: 0, forward_ms: [0-9.]+, "
                               "backward_ms: [0-9.]+, activation_bytes: "
                               "[0-9]+\\}")))
          << R.Result;
  }
}

TEST(RuntimeRunTest, AnEvaluationTrialSkipsTrainingAndAlternatesTheGuard) {
  // 2 warm-up passes, then U G G U U G G U: each arm's 4 passes end the run
  // at the 10th. The inner loop's passes open none of their own: grad mode
  // is the outer pass's, and the counts are the outer passes'.
  ProgramRun R = runProgram("SKYLINE_RESULT=x SKYLINE_MODE=timing "
                            "SKYLINE_EVALUATION=1 SKYLINE_WARMUP=2 "
                            "SKYLINE_ITERATIONS=4 SKYLINE_MIN_ITERATIONS=4",
                            "evaluate");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  EXPECT_NE(R.Output.find("trained 0 steps\n"), std::string::npos)
      << R.Output;
  EXPECT_NE(R.Output.find("E[EE]E[EE]E[EE]N[NN]N[NN]E[EE]E[EE]N[NN]N[NN]E[EE]"),
            std::string::npos)
      << R.Output;
  EXPECT_EQ(R.Output.find("evaluated"), std::string::npos) << R.Output;
  std::smatch Lists;
  ASSERT_TRUE(std::regex_search(
      R.Result, Lists,
      std::regex("evaluation:\n  unguarded_ms: \\[([0-9.]+(, )?){4}\\]\n"
                 "  guarded_ms: \\[([0-9.]+(, )?){4}\\]\n")))
      << R.Result;
  // The weights: 4 x (1024 x 1024 + 1024) floats = 16,793,600 bytes; no
  // gradients (nothing trained). Each activation is 256 x 1024 floats,
  // 1 MiB. Guarded, two live at once (a layer's input and its output): the
  // weights and 2 MiB. Unguarded, autograd keeps the input (saved by the
  // first Linear), the first three ReLUs' outputs (saved by them and by the
  // next Linear) and the last, and the last Linear's output is alive while
  // the last ReLU runs: the weights and 6 MiB.
  long long Weights = 4LL * (1024 * 1024 + 1024) * 4;
  EXPECT_EQ(field(R.Result, "  guarded_peak_bytes"), Weights + (2 << 20))
      << R.Result;
  EXPECT_EQ(field(R.Result, "  unguarded_peak_bytes"), Weights + (6 << 20))
      << R.Result;
  EXPECT_NE(R.Result.find("iterations: 0\n"), std::string::npos);
}

TEST(RuntimeRunTest, OutsideAnEvaluationTrialTheMarkersDoNothing) {
  // Not measured: training runs, and every pass records (no guard).
  ProgramRun R = runProgram("", "evaluate");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  EXPECT_NE(R.Output.find("trained 10 steps\n"), std::string::npos)
      << R.Output;
  std::string Passes;
  for (int I = 0; I < 12; ++I)
    Passes += "E[EE]";
  EXPECT_NE(R.Output.find(Passes + "\nevaluated"), std::string::npos)
      << R.Output;
}

TEST(RuntimeRunTest, IterationsAcrossAnEpochsEndAreLeftOut) {
  for (const char *Mode : {"breakdown", "timing"}) {
    // 3 epochs of 4 steps: steps 0-11, the last one unfinished at exit. Of
    // the measured 2..10, steps 3 and 7 span an epoch's end (a quarter
    // batch, then 400 ms of evaluation): 7 are kept.
    ProgramRun R = runProgram(std::string("SKYLINE_RESULT=x SKYLINE_WARMUP=2 "
                                          "SKYLINE_ITERATIONS=20 "
                                          "SKYLINE_MODE=") +
                                  Mode,
                              "epochs");
    ASSERT_EQ(R.ExitCode, 0) << R.Output;
    EXPECT_NE(R.Output.find("trained 3 epochs"), std::string::npos);
    EXPECT_EQ(field(R.Result, "iterations_reached"), 12) << R.Result;
    EXPECT_EQ(field(R.Result, "iterations"), 7) << R.Result;
    EXPECT_EQ(field(R.Result, "epoch_end_iterations"), 2) << R.Result;
    // Steps 0-3 were the first epoch.
    EXPECT_EQ(field(R.Result, "epoch_iterations"), 4) << R.Result;
    EXPECT_NE(R.Result.find("every_iteration_an_epoch: false"),
              std::string::npos)
        << R.Result;
    std::smatch Max;
    ASSERT_TRUE(std::regex_search(R.Result, Max,
                                  std::regex("iteration_ms: \\{.* max: "
                                             "([0-9.]+)\\}")))
        << R.Result;
    EXPECT_LT(std::stod(Max[1]), 400.0)
        << "an epoch's evaluation is not an iteration\n"
        << R.Result;
  }
  // Without the marks (a program the instrumenter did not mark) every step
  // counts, as before.
  ProgramRun Unmarked = runProgram(
      "SKYLINE_RESULT=x SKYLINE_WARMUP=2 SKYLINE_ITERATIONS=3", "short");
  ASSERT_EQ(Unmarked.ExitCode, 0) << Unmarked.Output;
  EXPECT_EQ(field(Unmarked.Result, "epoch_end_iterations"), 0)
      << Unmarked.Result;
  EXPECT_EQ(field(Unmarked.Result, "epoch_iterations"), 0) << Unmarked.Result;
}

TEST(RuntimeRunTest, WhereEveryStepSpansALoopStartAllAreKept) {
  // None is kept apart from the others, so all count, and the run still
  // stops by its rule: here its time, after the fewest (3).
  ProgramRun R =
      runProgram("SKYLINE_RESULT=x SKYLINE_MODE=timing SKYLINE_ITERATIONS=30 "
                 "SKYLINE_MIN_ITERATIONS=3 SKYLINE_TOLERANCE=0.0001 "
                 "SKYLINE_TIME_LIMIT=0.001",
                 "every-step-a-loop");
  ASSERT_EQ(R.ExitCode, 0) << R.Output;
  EXPECT_EQ(field(R.Result, "iterations"), 3) << R.Result;
  EXPECT_EQ(field(R.Result, "epoch_end_iterations"), 0) << R.Result;
  EXPECT_NE(R.Result.find("every_iteration_an_epoch: true"), std::string::npos)
      << R.Result;
  EXPECT_NE(R.Result.find("stopped: time_limit"), std::string::npos)
      << R.Result;
}

TEST(RuntimeRunTest, StoppingRule) {
  using skyline::rt::StopReason;
  skyline::rt::StoppingRule Rule;
  Rule.MinIterations = 5;
  Rule.MaxIterations = 50;
  Rule.Tolerance = 0.02;
  std::vector<double> Flat(50, 10.0);
  EXPECT_EQ(whenToStop(Rule, Flat.data(), 4, 0), StopReason::Continue)
      << "fewer than the fewest";
  EXPECT_EQ(whenToStop(Rule, Flat.data(), 5, 0), StopReason::Stable);
  // 10 and 14 alternating: at an even count every one 2 from the median of
  // 12, a spread of 1.4826 * 2; the median's relative error 1.2533 * 2.97 /
  // sqrt(n) / 12 reaches 2% only past 200. At an odd count the majority's
  // value is the median and most deviations 0; the quartiles still span
  // both values (4 / 1.349 = 2.97): no stop at the fewest.
  std::vector<double> Noisy;
  for (int I = 0; I < 50; ++I)
    Noisy.push_back(I % 2 ? 14.0 : 10.0);
  EXPECT_EQ(whenToStop(Rule, Noisy.data(), 20, 0), StopReason::Continue);
  EXPECT_EQ(whenToStop(Rule, Noisy.data(), 5, 0), StopReason::Continue);
  EXPECT_EQ(whenToStop(Rule, Noisy.data(), 21, 0), StopReason::Continue);
  EXPECT_EQ(whenToStop(Rule, Noisy.data(), 50, 0), StopReason::Count);
  Rule.TimeLimitSeconds = 30;
  EXPECT_EQ(whenToStop(Rule, Noisy.data(), 20, 29), StopReason::Continue);
  EXPECT_EQ(whenToStop(Rule, Noisy.data(), 20, 30), StopReason::TimeLimit);
  EXPECT_EQ(whenToStop(Rule, Noisy.data(), 3, 300), StopReason::Continue)
      << "the fewest iterations even when the time is spent";
  // Tolerance 0: a fixed count.
  Rule.Tolerance = 0;
  Rule.TimeLimitSeconds = 0;
  EXPECT_EQ(whenToStop(Rule, Flat.data(), 49, 0), StopReason::Continue);
  EXPECT_EQ(whenToStop(Rule, Flat.data(), 50, 0), StopReason::Count);
  // Iterations left out at an epoch's end still use up the most: 47 kept
  // of 50 spent is the end.
  EXPECT_EQ(whenToStop(Rule, Flat.data(), 47, 0, 49), StopReason::Continue);
  EXPECT_EQ(whenToStop(Rule, Flat.data(), 47, 0, 50), StopReason::Count);
  // The fewest is at most the most.
  Rule.MaxIterations = 3;
  EXPECT_EQ(whenToStop(Rule, Flat.data(), 3, 0), StopReason::Count);

  // Deviations from the median 10: 1, 0, 0, 1; their median 0.5. The
  // quartiles of 9, 10, 10, 11 (at 0.75 and 2.25): 9.75 and 10.25, a
  // spread of 0.5 / 1.349 = 0.371, less than 1.4826 * 0.5.
  std::vector<double> Four = {9, 10, 11, 10};
  EXPECT_NEAR(skyline::rt::relativeMedianError(Four.data(), 4),
              1.2533 * 1.4826 * 0.5 / 2 / 10, 1e-9);
  // 10 and 14, three to two: the median 10, the MAD 0; the quartiles 10
  // and 14.
  std::vector<double> ThreeTwo = {10, 14, 10, 14, 10};
  EXPECT_NEAR(skyline::rt::relativeMedianError(ThreeTwo.data(), 5),
              1.2533 * (4 / 1.349) / std::sqrt(5.0) / 10, 1e-9);
  // One iteration another process held up (40 ms among 10 ms ones) moves
  // the median by a quarter of a percent: the run is stable at the fewest
  // (the sd, 12.2, would have put the error at 62% and run on to the most).
  Rule.MinIterations = 5;
  Rule.MaxIterations = 50;
  Rule.Tolerance = 0.02;
  std::vector<double> HeldUp = {10, 10.1, 9.9, 10.05, 9.95, 40};
  // Median 10.025; deviations .025 .025 .075 .075 .125 29.975: MAD .075
  // (1.4826 x: 0.111); the quartiles 9.9625 and 10.0875 (0.125 / 1.349:
  // 0.093).
  EXPECT_NEAR(skyline::rt::relativeMedianError(HeldUp.data(), 6),
              1.2533 * 1.4826 * 0.075 / std::sqrt(6.0) / 10.025, 1e-9);
  EXPECT_EQ(whenToStop(Rule, HeldUp.data(), 6, 0), StopReason::Stable);
}

} // namespace
