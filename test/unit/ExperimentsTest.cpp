// The experiments: which run by default, what the threads experiment tries
// on which machine, the verdict of a trial in the runs' noise, and the
// findings and fix-its made of them.

#include "skyline/Experiments.h"

#include "skyline/Rules.h"

#include "llvm/ADT/STLExtras.h"
#include "gtest/gtest.h"

#include <cmath>

using namespace skyline;

namespace {

TEST(ExperimentsTest, SelectionByNameAllNoneAndTheDefault) {
  const std::vector<std::string> Every{
      "threads",       "loader-workers", "no-grad-eval", "cudnn-benchmark",
      "autocast-bf16", "channels-last",  "pinned-memory"};
  EXPECT_EQ(llvm::cantFail(selectExperiments("")), Every);
  EXPECT_EQ(llvm::cantFail(selectExperiments("default")), Every);
  EXPECT_EQ(llvm::cantFail(selectExperiments("all")), Every);
  EXPECT_EQ(llvm::cantFail(selectExperiments("loader-workers")),
            std::vector<std::string>{"loader-workers"});
  EXPECT_TRUE(llvm::cantFail(selectExperiments("none")).empty());
  EXPECT_EQ(llvm::cantFail(selectExperiments(" threads,threads ")),
            std::vector<std::string>{"threads"});
  auto Unknown = selectExperiments("threads,autocast-typo");
  ASSERT_FALSE(bool(Unknown));
  EXPECT_EQ(llvm::toString(Unknown.takeError()),
            "--experiments: no experiment 'autocast-typo'; the experiments "
            "are threads, loader-workers, no-grad-eval, cudnn-benchmark, "
            "autocast-bf16, channels-last, pinned-memory (or all, none, "
            "default)");
}

TEST(ExperimentsTest, EveryExperimentIsARuleWithAPage) {
  for (const auto &E : createExperiments()) {
    auto Catalog = ruleCatalog();
    const RuleInfo *Info = llvm::find_if(
        Catalog, [&](const RuleInfo &R) { return R.Id == E->info().Id; });
    ASSERT_NE(Info, Catalog.end()) << E->name().str();
    EXPECT_EQ(Info->DocsPage, "docs/experiments/" + E->name().str() + ".md");
    EXPECT_LE(E->extraRuns(), 1u) << "a default experiment costs one run";
  }
}

TEST(ExperimentsTest, ThreadsWorthTryingOnEachKindOfMachine) {
  // More threads than CPUs, or fewer: the CPUs.
  EXPECT_EQ(threadsWorthTrying(16, {4, 4}), 4);
  EXPECT_EQ(threadsWorthTrying(2, {8, 8}), 8);
  // One a CPU on SMT siblings: the cores.
  EXPECT_EQ(threadsWorthTrying(8, {8, 4}), 4);
  // One a core already: half.
  EXPECT_EQ(threadsWorthTrying(4, {4, 4}), 2);
  EXPECT_EQ(threadsWorthTrying(2, {2, 2}), 1);
  // One CPU, one thread: nothing to try.
  EXPECT_EQ(threadsWorthTrying(1, {1, 1}), 0);
}

Measurement cpuMeasurement(int Threads) {
  Measurement M;
  M.Device = DeviceType::CPU;
  M.Threads = Threads;
  MeasuredRun Run;
  Run.BatchSize = 16;
  Run.Iterations = 8;
  Run.IterationMs = {3.6, 3.6, 0.05, 3.5, 3.7};
  Run.TimingRunMedians = {3.6, 3.7, 3.8};
  M.Runs = {Run};
  return M;
}

TEST(ExperimentsTest, ThreadsPlansOneTrialOnTheCpuOnly) {
  ProgramModel Program;
  Measurement M = cpuMeasurement(16);
  std::vector<TrialRequest> Trials = planTrials({"threads"}, Program, M, {4, 4});
  ASSERT_EQ(Trials.size(), 1u);
  EXPECT_EQ(Trials[0].Experiment, "threads");
  EXPECT_EQ(Trials[0].Value, 4);
  EXPECT_EQ(Trials[0].Setting, "4 intra-op threads (the program's 16)");
  EXPECT_EQ(Trials[0].Env,
            std::vector<std::string>{"SKYLINE_INTRA_OP_THREADS=4"});
  EXPECT_TRUE(planTrials({}, Program, M, {4, 4}).empty());
  M.Device = DeviceType::CUDA;
  EXPECT_TRUE(planTrials({"threads"}, Program, M, {4, 4}).empty());
  EXPECT_FALSE(trialPlanner({}, Program));
}

TEST(ExperimentsTest, LoaderWorkersWorthTryingByTheShareOfLoading) {
  // Under a fifth of the iteration: none; one CPU: none (a worker overlaps
  // loading with training only on a CPU of its own).
  EXPECT_EQ(loaderWorkersWorthTrying(0.19, {8, 8}), 0);
  EXPECT_EQ(loaderWorkersWorthTrying(0.5, {1, 1}), 0);
  // Loading L of L + T is hidden by L / T workers: 1 at 50%, 3 at 75%,
  // 9 at 90% (at most 8, and the CPUs less one).
  EXPECT_EQ(loaderWorkersWorthTrying(0.2, {8, 8}), 1);
  EXPECT_EQ(loaderWorkersWorthTrying(0.5, {8, 8}), 1);
  EXPECT_EQ(loaderWorkersWorthTrying(0.75, {8, 8}), 3);
  EXPECT_EQ(loaderWorkersWorthTrying(0.9, {16, 16}), 8);
  EXPECT_EQ(loaderWorkersWorthTrying(0.75, {2, 2}), 1);
  EXPECT_EQ(loaderWorkersWorthTrying(1.0, {8, 8}), 0);
  MeasuredRun Run;
  Run.TimeSplitMs = {{TimePart::Data, 3},
                     {TimePart::Forward, 1},
                     {TimePart::Backward, 1.5},
                     {TimePart::Optimizer, 0.25},
                     {TimePart::Other, 0.25}};
  EXPECT_DOUBLE_EQ(dataShare(Run), 0.5);
  EXPECT_EQ(dataShare(MeasuredRun()), 0);
}

TEST(ExperimentsTest, LoaderWorkersPlansWhereTheTrainingLoaderHasNone) {
  Measurement M = cpuMeasurement(2);
  M.Runs[0].TimeSplitMs = {{TimePart::Data, 1.8}, {TimePart::Forward, 1.8}};
  ProgramModel Program;
  EXPECT_TRUE(planTrials({"loader-workers"}, Program, M, {4, 4}).empty());
  DataLoaderSite Loader;
  Loader.Training = true;
  Program.Loaders = {Loader};
  // Two threads and one worker fit four CPUs: only the worker.
  std::vector<TrialRequest> Trials =
      planTrials({"loader-workers"}, Program, M, {4, 4});
  ASSERT_EQ(Trials.size(), 1u);
  EXPECT_EQ(Trials[0].Value, 1);
  EXPECT_EQ(Trials[0].IntraOpThreads, 0);
  EXPECT_EQ(Trials[0].Setting,
            "1 loader worker (the program's 0; loading took 50% of an "
            "iteration)");
  EXPECT_EQ(Trials[0].Env,
            std::vector<std::string>{"SKYLINE_LOADER_WORKERS=1"});
  // On two CPUs the worker gets one of the program's threads' CPUs.
  Trials = planTrials({"loader-workers"}, Program, M, {2, 2});
  ASSERT_EQ(Trials.size(), 1u);
  EXPECT_EQ(Trials[0].IntraOpThreads, 1);
  EXPECT_EQ(Trials[0].Setting, "1 loader worker and 1 intra-op thread (the "
                               "program's 0 and 2; loading took 50% of an "
                               "iteration)");
  EXPECT_EQ(Trials[0].Env,
            (std::vector<std::string>{"SKYLINE_LOADER_WORKERS=1",
                                      "SKYLINE_INTRA_OP_THREADS=1"}));
  // A loader with workers of its own, or one not training: none.
  Program.Loaders[0].Workers = SourceSpan{"/src/train.cpp", 9, 19, 263, 1};
  Program.Loaders[0].WorkersValue = 2;
  EXPECT_TRUE(planTrials({"loader-workers"}, Program, M, {4, 4}).empty());
  Program.Loaders[0].WorkersValue = 0; // workers(0): tried
  EXPECT_EQ(planTrials({"loader-workers"}, Program, M, {4, 4}).size(), 1u);
  Program.Loaders[0].Training = false;
  EXPECT_TRUE(planTrials({"loader-workers"}, Program, M, {4, 4}).empty());
  // Little loading: none.
  Program.Loaders[0].Training = true;
  M.Runs[0].TimeSplitMs = {{TimePart::Data, 0.1}, {TimePart::Forward, 3.5}};
  EXPECT_TRUE(planTrials({"loader-workers"}, Program, M, {4, 4}).empty());
}

TEST(ExperimentsTest, ALoaderTrialThatTookThreadsFixesThemToo) {
  // Without a place for the thread count (no main here) the fix-it would
  // not be what the trial ran: a warning with no fix-it.
  Measurement M = cpuMeasurement(2);
  TrialRun Trial{"loader-workers", "1 loader worker", 1, 16, {2.4}, 2.4, 0,
                 ""};
  Trial.IntraOpThreads = 1;
  M.Trials = {Trial};
  ProgramModel Program;
  DataLoaderSite Loader;
  Loader.Training = true;
  Loader.WorkersInsertAt = {"/src/train.cpp", 8, 73, 263, 0};
  Program.Loaders = {Loader};
  std::vector<Finding> Findings = experimentFindings(Program, M);
  ASSERT_EQ(Findings.size(), 1u);
  EXPECT_EQ(Findings[0].Level, DiagLevel::Warning);
  EXPECT_TRUE(Findings[0].Edits.empty());
  Program.Threads.MainStart = SourceSpan{"/src/train.cpp", 5, 13, 100, 0};
  Program.Threads.MainIndent = "  ";
  Findings = experimentFindings(Program, M);
  ASSERT_EQ(Findings[0].Edits.size(), 2u);
  EXPECT_EQ(Findings[0].Edits[0].Text, ".workers(1)");
  EXPECT_EQ(Findings[0].Edits[0].Range.Offset, 263u);
  EXPECT_EQ(Findings[0].Edits[1].Text, "\n  torch::set_num_threads(1);");
  EXPECT_EQ(Findings[0].At.Line, 8u);
}

TEST(ExperimentsTest, ATrialsEffectIsCentredOnItsPointInTheRunsNoise) {
  // Baseline: the fastest of 3.6, 3.7, 3.8 ms. Their ln spread is
  // s = 0.02703 (2 degrees of freedom, t = 2.920); one trial at 3.0 ms:
  // gain 3.6 / 3.0 - 1 = 20%, half-width 2.920 x 0.02703 x sqrt(1/3 + 1)
  // = 0.09115 in ln, so exp(ln 1.2 -+ 0.09115) - 1 = 9.5% to 31.5%.
  Measurement M = cpuMeasurement(2);
  TrialRun Trial{"threads", "1 intra-op thread", 1, 16, {3.0}, 3.0, 0, ""};
  TrialEffect Effect = trialEffect(M, trialBaseline(M, Trial), Trial);
  EXPECT_EQ(Effect.Verdict, TrialVerdict::Faster);
  EXPECT_NEAR(Effect.Gain, 0.2, 1e-12);
  double Logs[] = {std::log(3.6), std::log(3.7), std::log(3.8)};
  double Mean = (Logs[0] + Logs[1] + Logs[2]) / 3, Squares = 0;
  for (double L : Logs)
    Squares += (L - Mean) * (L - Mean);
  double Half = 2.920 * std::sqrt(Squares / 2) * std::sqrt(1.0 / 3 + 1);
  EXPECT_NEAR(Half, 0.09115, 5e-5);
  EXPECT_NEAR(Effect.Range.Low, std::exp(std::log(1.2) - Half) - 1, 1e-12);
  EXPECT_NEAR(Effect.Range.High, std::exp(std::log(1.2) + Half) - 1, 1e-12);
  EXPECT_NEAR(Effect.Range.Low, 0.0955, 5e-4);
  EXPECT_NEAR(Effect.Range.High, 0.3145, 5e-4);
  // Every interval holds its point.
  for (double Ms : {2.0, 3.0, 3.5, 3.6, 3.7, 5.0}) {
    Trial.IterationMs = Ms;
    Trial.TimingRunMedians = {Ms};
    TrialEffect E = trialEffect(M, trialBaseline(M, Trial), Trial);
    EXPECT_LT(E.Range.Low, E.Gain) << Ms;
    EXPECT_GT(E.Range.High, E.Gain) << Ms;
  }
  Trial.IterationMs = 3.5;
  EXPECT_EQ(trialEffect(M, trialBaseline(M, Trial), Trial).Verdict,
            TrialVerdict::NoClearEffect);
  Trial.IterationMs = 5.0;
  EXPECT_EQ(trialEffect(M, trialBaseline(M, Trial), Trial).Verdict,
            TrialVerdict::Slower);
  // No baseline at its size, or a trial that failed: failed.
  Trial.BatchSize = 32;
  EXPECT_EQ(trialEffect(M, trialBaseline(M, Trial), Trial).Verdict,
            TrialVerdict::Failed);
  Trial.BatchSize = 16;
  Trial.Problem = "crashed";
  EXPECT_EQ(trialEffect(M, trialBaseline(M, Trial), Trial).Verdict,
            TrialVerdict::Failed);
}

ProgramModel programWithMain() {
  ProgramModel Program;
  Program.Threads.MainStart = SourceSpan{"/src/train.cpp", 17, 13, 389, 0};
  Program.Threads.MainIndent = "    ";
  return Program;
}

TEST(ExperimentsTest, AFasterTrialIsAWarningWithTheFixIt) {
  Measurement M = cpuMeasurement(2);
  M.Trials = {{"threads", "1 intra-op thread", 1, 16, {3.0}, 3.0, 0, ""}};
  std::vector<Finding> Findings = experimentFindings(programWithMain(), M);
  ASSERT_EQ(Findings.size(), 1u);
  const Finding &F = Findings[0];
  EXPECT_EQ(F.Rule, "skyline-experiment-threads");
  EXPECT_EQ(F.Level, DiagLevel::Warning);
  ASSERT_EQ(F.Edits.size(), 1u);
  EXPECT_EQ(F.Edits[0].Range.Offset, 389u);
  EXPECT_EQ(F.Edits[0].Text, "\n    torch::set_num_threads(1);");
  EXPECT_EQ(F.At.Line, 17u);
  // The program's own calls get the count instead, every one of them.
  ProgramModel Calls = programWithMain();
  Calls.Threads.Calls = {{"/src/train.cpp", 18, 26, 410, 1},
                         {"/src/util.h", 4, 26, 80, 9}};
  Findings = experimentFindings(Calls, M);
  ASSERT_EQ(Findings[0].Edits.size(), 2u);
  EXPECT_EQ(Findings[0].Edits[0].Text, "1");
  EXPECT_EQ(Findings[0].Edits[1].Range.File, "/src/util.h");
  EXPECT_EQ(Findings[0].Edits[1].Range.Length, 9u);
}

TEST(ExperimentsTest, NoClearEffectSlowerAndFailedAreNotesWithoutAFix) {
  Measurement M = cpuMeasurement(2);
  M.Trials = {{"threads", "1 intra-op thread", 1, 16, {3.5}, 3.5, 0, ""},
              {"threads", "1 intra-op thread", 1, 16, {5.0}, 5.0, 0, ""},
              {"threads", "1 intra-op thread", 1, 16, {}, 0, 0, "it crashed"},
              {"from-a-later-version", "x", 1, 16, {3.0}, 3.0, 0, ""}};
  std::vector<Finding> Findings = experimentFindings(programWithMain(), M);
  ASSERT_EQ(Findings.size(), 3u); // the unknown experiment is left out
  for (const Finding &F : Findings) {
    EXPECT_EQ(F.Level, DiagLevel::Note);
    EXPECT_TRUE(F.Edits.empty());
  }
  EXPECT_NE(Findings[0].Message.find("no clear effect"), std::string::npos);
  EXPECT_NE(Findings[1].Message.find("the program's own setting is better"),
            std::string::npos);
  EXPECT_NE(Findings[2].Message.find("the trial failed, and nothing else "
                                     "changed: it crashed"),
            std::string::npos);
}

/// An evaluation trial: each arm's passes in the order they ran, and the
/// most memory a pass of each held.
TrialRun evaluationTrial(std::vector<double> Unguarded,
                         std::vector<double> Guarded, int64_t UnguardedPeak,
                         int64_t GuardedPeak) {
  TrialRun Trial{"no-grad-eval", "torch::NoGradGuard in the evaluation loop",
                 1, 16, {}, 0, GuardedPeak, ""};
  Trial.BaselineSamplesMs = std::move(Unguarded);
  Trial.TrialSamplesMs = std::move(Guarded);
  Trial.BaselinePeakBytes = UnguardedPeak;
  return Trial;
}

TEST(ExperimentsTest, APairedTrialComparesItsArmsPassByPass) {
  // d = ln(U/G) of each pair: 0.105361, 0.095310, 0.100083, 0.081678;
  // mean 0.095608, sd 0.010153, t(3) = 2.353, half-width 2.353 x 0.010153 /
  // sqrt(4) = 0.011945: gain exp(0.095608) - 1 = 10.03%, interval
  // exp(0.095608 -+ 0.011945) - 1 = 8.73% to 11.36%. The runs' spread of
  // the sweep plays no part: the baseline is in the trial's own run.
  Measurement M; // no runs at all
  TrialRun Trial = evaluationTrial({10, 11, 10.5, 10.2}, {9, 10, 9.5, 9.4},
                                   30 << 20, 29 << 20);
  TrialEffect Effect = trialEffect(M, nullptr, Trial);
  EXPECT_EQ(Effect.Verdict, TrialVerdict::Faster);
  EXPECT_EQ(Effect.Pairs, 4u);
  EXPECT_NEAR(Effect.Gain, 0.100328, 1e-6);
  EXPECT_NEAR(Effect.Range.Low, 0.087262, 1e-5);
  EXPECT_NEAR(Effect.Range.High, 0.113550, 1e-5);
  EXPECT_DOUBLE_EQ(Effect.BaselineMs, 10.35); // the arms' medians
  EXPECT_DOUBLE_EQ(Effect.TrialMs, 9.45);
  // 1 MiB of 30 is 3.3%: under the 5% that counts.
  EXPECT_NEAR(Effect.MemorySaving, 1.0 / 30, 1e-12);
  EXPECT_FALSE(Effect.SavesMemory);
  // The interval holds its point whichever arm is faster.
  for (double Scale : {0.5, 0.95, 1.0, 1.05, 2.0}) {
    TrialRun Scaled = Trial;
    for (double &Ms : Scaled.TrialSamplesMs)
      Ms *= Scale;
    Scaled.TrialSamplesMs[1] *= 1.01; // some spread at every scale
    TrialEffect E = trialEffect(M, nullptr, Scaled);
    EXPECT_LT(E.Range.Low, E.Gain) << Scale;
    EXPECT_GT(E.Range.High, E.Gain) << Scale;
  }
}

TEST(ExperimentsTest, APairedTrialThatSavesMemoryIsAFindingWithoutAFasterTime) {
  Measurement M;
  // Times that cross: no clear effect; 30 MiB against 12 MiB: 60% less.
  TrialRun Trial = evaluationTrial({10, 9, 10, 9}, {9, 10, 9, 10}, 30 << 20,
                                   12 << 20);
  TrialEffect Effect = trialEffect(M, nullptr, Trial);
  EXPECT_EQ(Effect.Verdict, TrialVerdict::LessMemory);
  EXPECT_NEAR(Effect.Gain, 0, 1e-12);
  EXPECT_NEAR(Effect.MemorySaving, 0.6, 1e-12);
  EXPECT_STREQ(verdictName(Effect.Verdict), "less memory");
  // Less than 1 MiB saved is no saving, whatever the share.
  Trial = evaluationTrial({10, 9, 10, 9}, {9, 10, 9, 10}, 900000, 300000);
  EXPECT_EQ(trialEffect(M, nullptr, Trial).Verdict,
            TrialVerdict::NoClearEffect);
  // One pair is too few to compare.
  Trial = evaluationTrial({10}, {9}, 30 << 20, 12 << 20);
  EXPECT_EQ(trialEffect(M, nullptr, Trial).Verdict, TrialVerdict::Failed);
}

TEST(ExperimentsTest, APairedTrialThatSavesMemoryButIsSlowerStatesTheTrade) {
  Measurement M;
  // d = ln(U/G): -0.095310, -0.084557, -0.113329, -0.084557; mean
  // -0.094438, sd 0.013575, half-width 2.353 x 0.013575 / 2 = 0.015972:
  // gain -9.01%, interval -10.45% to -7.55%, below 0. 30 MiB against
  // 12 MiB is still 60% less: the saving is not hidden behind "slower".
  TrialRun Trial = evaluationTrial({10, 10.2, 10, 10.2}, {11, 11.1, 11.2, 11.1},
                                   30 << 20, 12 << 20);
  TrialEffect Effect = trialEffect(M, nullptr, Trial);
  EXPECT_EQ(Effect.Verdict, TrialVerdict::LessMemorySlower);
  EXPECT_NEAR(Effect.Gain, -0.090116, 1e-6);
  EXPECT_NEAR(Effect.Range.Low, -0.104535, 1e-5);
  EXPECT_NEAR(Effect.Range.High, -0.075465, 1e-5);
  EXPECT_STREQ(verdictName(Effect.Verdict), "less memory, slower");
  // The same times without the saving: slower, the program's loop better.
  Trial.PeakBytes = 30 << 20;
  EXPECT_EQ(trialEffect(M, nullptr, Trial).Verdict, TrialVerdict::Slower);
}

ProgramModel programWithEvaluation() {
  ProgramModel Program;
  Program.TrainingLoops.resize(1);
  EvaluationLoop Loop;
  Loop.File = "/src/train.cpp";
  Loop.Line = 40;
  Loop.Column = 3;
  Loop.Function = "validate";
  Loop.BodyStart = SourceSpan{"/src/train.cpp", 40, 32, 900, 0};
  Loop.Indent = "    ";
  Loop.GuardName = "no_grad";
  Program.EvaluationLoops.push_back(Loop);
  Loop.Line = 60;
  Loop.Guarded = true; // guarded already: no trial, no edit
  Program.EvaluationLoops.push_back(Loop);
  return Program;
}

TEST(ExperimentsTest, NoGradEvaluationPlansAPairedTrialAndFixesTheLoop) {
  ProgramModel Program = programWithEvaluation();
  std::vector<TrialRequest> Trials = planTrials(
      {"no-grad-eval"}, Program, cpuMeasurement(2), MachineInfo{2, 2});
  ASSERT_EQ(Trials.size(), 1u);
  EXPECT_TRUE(Trials[0].Paired);
  EXPECT_EQ(Trials[0].Env, std::vector<std::string>{"SKYLINE_EVALUATION=1"});
  EXPECT_EQ(Trials[0].Setting, "torch::NoGradGuard in the evaluation loop of "
                               "validate(), train.cpp:40");
  Measurement M;
  M.Trials = {evaluationTrial({10, 9, 10, 9}, {9, 10, 9, 10}, 30 << 20,
                              12 << 20)};
  std::vector<Finding> Findings = experimentFindings(Program, M);
  ASSERT_EQ(Findings.size(), 1u);
  EXPECT_EQ(Findings[0].Rule, "skyline-experiment-no-grad-eval");
  EXPECT_EQ(Findings[0].Level, DiagLevel::Warning);
  ASSERT_EQ(Findings[0].Edits.size(), 1u);
  EXPECT_EQ(Findings[0].Edits[0].Range.Offset, 900u);
  EXPECT_EQ(Findings[0].Edits[0].Text, "\n    torch::NoGradGuard no_grad;");
  EXPECT_NE(Findings[0].Message.find("held at most 12.0 MiB against 30.0 MiB "
                                     "(-60.0%)"),
            std::string::npos)
      << Findings[0].Message;
  EXPECT_NE(Findings[0].Message.find(": less memory, and no clear effect on "
                                     "time"),
            std::string::npos);
  // A trial with no clear effect is a note at the loop, without a fix.
  M.Trials = {evaluationTrial({10, 9, 10, 9}, {9, 10, 9, 10}, 30 << 20,
                              30 << 20)};
  Findings = experimentFindings(Program, M);
  EXPECT_EQ(Findings[0].Level, DiagLevel::Note);
  EXPECT_TRUE(Findings[0].Edits.empty());
  EXPECT_EQ(Findings[0].At.Line, 40u);
  // Nothing to try without an unguarded loop, or without a training loop
  // to leave.
  Program.EvaluationLoops[0].Guarded = true;
  EXPECT_TRUE(planTrials({"no-grad-eval"}, Program, cpuMeasurement(2),
                         MachineInfo{2, 2})
                  .empty());
  Program = programWithEvaluation();
  Program.TrainingLoops.clear();
  EXPECT_TRUE(planTrials({"no-grad-eval"}, Program, cpuMeasurement(2),
                         MachineInfo{2, 2})
                  .empty());
}

ProgramModel convolutionalProgram() {
  ProgramModel Program = programWithMain();
  ModuleSite Conv;
  Conv.Name = "conv1";
  Conv.Type = "torch::nn::Conv2d";
  Program.Modules = {Conv};
  return Program;
}

TEST(ExperimentsTest, CudnnBenchmarkIsTriedOnCudaAndListedAsNotTriedOnTheCpu) {
  ProgramModel Program = convolutionalProgram();
  Measurement M = cpuMeasurement(2);
  M.Device = DeviceType::CUDA;
  std::vector<TrialRequest> Trials =
      planTrials({"cudnn-benchmark"}, Program, M, {2, 2});
  ASSERT_EQ(Trials.size(), 1u);
  EXPECT_TRUE(Trials[0].NotTried.empty());
  EXPECT_EQ(Trials[0].Env,
            std::vector<std::string>{"SKYLINE_CUDNN_BENCHMARK=1"});
  // The program has it on already: nothing to try.
  M.Runs[0].CudnnBenchmark = true;
  EXPECT_TRUE(planTrials({"cudnn-benchmark"}, Program, M, {2, 2}).empty());
  // A CPU run: listed, with why, and nothing to run.
  M = cpuMeasurement(2);
  Trials = planTrials({"cudnn-benchmark"}, Program, M, {2, 2});
  ASSERT_EQ(Trials.size(), 1u);
  EXPECT_TRUE(Trials[0].Env.empty());
  EXPECT_NE(Trials[0].NotTried.find("the runs were on the CPU"),
            std::string::npos);
  // No convolution: nothing, on either device.
  EXPECT_TRUE(
      planTrials({"cudnn-benchmark"}, programWithMain(), M, {2, 2}).empty());
}

TEST(ExperimentsTest, ANotTriedTrialIsANoteAndAFasterOneFixesMain) {
  Measurement M = cpuMeasurement(2);
  TrialRun Listed{"cudnn-benchmark", "cuDNN's benchmark mode on", 1, 16, {},
                  0, 0, ""};
  Listed.NotTried = "the runs were on the CPU";
  M.Trials = {Listed};
  std::vector<Finding> Findings =
      experimentFindings(convolutionalProgram(), M);
  ASSERT_EQ(Findings.size(), 1u);
  EXPECT_EQ(Findings[0].Level, DiagLevel::Note);
  EXPECT_EQ(Findings[0].Message,
            "experiment cudnn-benchmark: not tried: the runs were on the CPU");
  EXPECT_EQ(trialEffect(M, trialBaseline(M, Listed), Listed).Verdict,
            TrialVerdict::NotTried);
  EXPECT_STREQ(verdictName(TrialVerdict::NotTried), "not tried");
  M.Device = DeviceType::CUDA;
  M.Trials = {{"cudnn-benchmark", "cuDNN's benchmark mode on", 1, 16, {3.0},
               3.0, 0, ""}};
  Findings = experimentFindings(convolutionalProgram(), M);
  ASSERT_EQ(Findings.size(), 1u);
  EXPECT_EQ(Findings[0].Level, DiagLevel::Warning);
  ASSERT_EQ(Findings[0].Edits.size(), 1u);
  EXPECT_EQ(Findings[0].Edits[0].Range.Offset, 389u);
  EXPECT_EQ(Findings[0].Edits[0].Text,
            "\n    at::globalContext().setBenchmarkCuDNN(true);");
}

TEST(ExperimentsTest, AutocastIsTriedOnCudaForLayersOfMatrixProducts) {
  ProgramModel Program = convolutionalProgram();
  Measurement M = cpuMeasurement(2);
  M.Device = DeviceType::CUDA;
  std::vector<TrialRequest> Trials =
      planTrials({"autocast-bf16"}, Program, M, {2, 2});
  ASSERT_EQ(Trials.size(), 1u);
  EXPECT_TRUE(Trials[0].NotTried.empty());
  EXPECT_EQ(Trials[0].Env, std::vector<std::string>{"SKYLINE_AUTOCAST=bf16"});
  // The program autocasts already: nothing to try.
  M.Runs[0].Autocast = true;
  EXPECT_TRUE(planTrials({"autocast-bf16"}, Program, M, {2, 2}).empty());
  // A CPU run: listed, with why, and nothing to run.
  M = cpuMeasurement(2);
  Trials = planTrials({"autocast-bf16"}, Program, M, {2, 2});
  ASSERT_EQ(Trials.size(), 1u);
  EXPECT_TRUE(Trials[0].Env.empty());
  EXPECT_NE(Trials[0].NotTried.find("the runs were on the CPU"),
            std::string::npos);
  // Layers without a matrix product (an embedding and a norm): nothing.
  ProgramModel Lookup = programWithMain();
  Lookup.Modules.resize(2);
  Lookup.Modules[0].Type = "torch::nn::Embedding";
  Lookup.Modules[1].Type = "torch::nn::LayerNorm";
  M.Device = DeviceType::CUDA;
  EXPECT_TRUE(planTrials({"autocast-bf16"}, Lookup, M, {2, 2}).empty());
  Lookup.Modules[1].Type = "torch::nn::LSTM";
  EXPECT_EQ(planTrials({"autocast-bf16"}, Lookup, M, {2, 2}).size(), 1u);
}

TEST(ExperimentsTest, TheAutocastFixItIncludesItsHeaderWhereMainLacksIt) {
  Measurement M = cpuMeasurement(2);
  M.Device = DeviceType::CUDA;
  M.Trials = {
      {"autocast-bf16", "CUDA autocast to bfloat16", 1, 16, {3.0}, 3.0, 0, ""}};
  ProgramModel Program = convolutionalProgram();
  Program.Threads.IncludeAt = SourceSpan{"/src/train.cpp", 3, 1, 40, 0};
  Program.Threads.MainIncludes = {"torch/torch.h", "iostream"};
  std::vector<Finding> Findings = experimentFindings(Program, M);
  ASSERT_EQ(Findings.size(), 1u);
  EXPECT_EQ(Findings[0].Level, DiagLevel::Warning);
  ASSERT_EQ(Findings[0].Edits.size(), 2u);
  EXPECT_EQ(Findings[0].At.Offset, 389u); // at main, not at the #include
  EXPECT_EQ(Findings[0].Edits[0].Text,
            "\n    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);"
            "\n    at::autocast::set_autocast_cache_enabled(false);"
            "\n    at::autocast::set_autocast_enabled(at::kCUDA, true);");
  EXPECT_EQ(Findings[0].Edits[1].Range.Offset, 40u);
  EXPECT_EQ(Findings[0].Edits[1].Text, "#include <ATen/autocast_mode.h>\n");
  // Included already: the calls alone.
  Program.Threads.MainIncludes.push_back("ATen/autocast_mode.h");
  Findings = experimentFindings(Program, M);
  ASSERT_EQ(Findings[0].Edits.size(), 1u);
  // No #include before main to put it after: no fix-it that would not
  // compile, the finding all the same.
  Program.Threads.MainIncludes.clear();
  Program.Threads.IncludeAt.reset();
  Findings = experimentFindings(Program, M);
  ASSERT_EQ(Findings.size(), 1u);
  EXPECT_EQ(Findings[0].Level, DiagLevel::Warning);
  EXPECT_TRUE(Findings[0].Edits.empty());
}

TEST(ExperimentsTest, ChannelsLastIsTriedOnCudaForTwoDimensionalConvolutions) {
  ProgramModel Program = convolutionalProgram();
  Measurement M = cpuMeasurement(2);
  M.Device = DeviceType::CUDA;
  std::vector<TrialRequest> Trials =
      planTrials({"channels-last"}, Program, M, {2, 2});
  ASSERT_EQ(Trials.size(), 1u);
  EXPECT_TRUE(Trials[0].NotTried.empty());
  EXPECT_EQ(Trials[0].Env, std::vector<std::string>{"SKYLINE_CHANNELS_LAST=1"});
  // The program's weights are channels-last already (its breakdown run
  // read them): nothing to try.
  M.Runs[0].ChannelsLast = true;
  EXPECT_TRUE(planTrials({"channels-last"}, Program, M, {2, 2}).empty());
  // A CPU run: listed, with why, and nothing to run.
  M = cpuMeasurement(2);
  Trials = planTrials({"channels-last"}, Program, M, {2, 2});
  ASSERT_EQ(Trials.size(), 1u);
  EXPECT_TRUE(Trials[0].Env.empty());
  EXPECT_NE(Trials[0].NotTried.find("the runs were on the CPU"),
            std::string::npos);
  // A 1-d convolution has no channels-last order: nothing.
  M.Device = DeviceType::CUDA;
  Program.Modules[0].Type = "torch::nn::Conv1d";
  EXPECT_TRUE(planTrials({"channels-last"}, Program, M, {2, 2}).empty());
  Program.Modules[0].Type = "torch::nn::ConvTranspose2d";
  EXPECT_EQ(planTrials({"channels-last"}, Program, M, {2, 2}).size(), 1u);
}

TEST(ExperimentsTest, TheChannelsLastFixItFollowsTheOptimizersDeclaration) {
  Measurement M = cpuMeasurement(2);
  M.Device = DeviceType::CUDA;
  M.Trials = {{"channels-last",
               "channels-last convolution weights",
               1,
               16,
               {3.0},
               3.0,
               0,
               ""}};
  ProgramModel Program = convolutionalProgram();
  TrainingLoop Loop;
  OptimizerSite Optimizer;
  Optimizer.Name = "optimizer";
  Optimizer.AfterDeclaration = SourceSpan{"/src/train.cpp", 19, 80, 470, 0};
  Optimizer.Indent = "    ";
  Loop.Optimizers = {Optimizer};
  Program.TrainingLoops = {Loop};
  std::vector<Finding> Findings = experimentFindings(Program, M);
  ASSERT_EQ(Findings.size(), 1u);
  EXPECT_EQ(Findings[0].Rule, "skyline-experiment-channels-last");
  EXPECT_EQ(Findings[0].Level, DiagLevel::Warning);
  ASSERT_EQ(Findings[0].Edits.size(), 1u);
  EXPECT_EQ(Findings[0].Edits[0].Range.Offset, 470u);
  EXPECT_EQ(Findings[0].Edits[0].Text,
            "\n    for (auto &group : optimizer.param_groups())"
            "\n      for (auto &parameter : group.params())"
            "\n        if (parameter.dim() == 4)"
            "\n          parameter.set_data(parameter.detach().contiguous("
            "\n              torch::MemoryFormat::ChannelsLast));");
  // Held through a pointer: through `->`.
  Program.TrainingLoops[0].Optimizers[0].ThroughPointer = true;
  Findings = experimentFindings(Program, M);
  ASSERT_EQ(Findings[0].Edits.size(), 1u);
  EXPECT_EQ(
      llvm::StringRef(Findings[0].Edits[0].Text)
          .starts_with("\n    for (auto &group : optimizer->param_groups())"),
      true)
      << Findings[0].Edits[0].Text;
  // Two optimizers (a GAN's): the trial changed both, so does the fix-it.
  OptimizerSite Second = Optimizer;
  Second.Name = "d_opt";
  Second.AfterDeclaration = SourceSpan{"/src/train.cpp", 20, 70, 540, 0};
  Program.TrainingLoops[0].Optimizers.push_back(Second);
  Findings = experimentFindings(Program, M);
  ASSERT_EQ(Findings[0].Edits.size(), 2u);
  EXPECT_EQ(Findings[0].Edits[1].Range.Offset, 540u);
  EXPECT_TRUE(
      llvm::StringRef(Findings[0].Edits[1].Text)
          .starts_with("\n    for (auto &group : d_opt.param_groups())"));
  // One of them a class member's, with no statement to follow: a fix-it
  // for the other alone would not be what was measured; the finding, with
  // none.
  Program.TrainingLoops[0].Optimizers[1].AfterDeclaration.reset();
  Findings = experimentFindings(Program, M);
  ASSERT_EQ(Findings.size(), 1u);
  EXPECT_EQ(Findings[0].Level, DiagLevel::Warning);
  EXPECT_TRUE(Findings[0].Edits.empty());
}

/// A loop that copies its batch to a device: `batch.data.to(device)` at
/// offset 400 of line 17 (the tensor's end at 410, the device 414 to 420).
ProgramModel copyingProgram() {
  ProgramModel Program = convolutionalProgram();
  TrainingLoop Loop;
  DeviceCopySite Copy;
  Copy.Call = {"/src/train.cpp", 17, 17, 400, 21};
  Copy.TensorEnd = {"/src/train.cpp", 17, 27, 410, 0};
  Copy.Argument = {"/src/train.cpp", 17, 31, 414, 6};
  Copy.ArgumentEnd = {"/src/train.cpp", 17, 37, 420, 0};
  Copy.Text = "batch.data.to(device)";
  Loop.DeviceCopies = {Copy};
  Program.TrainingLoops = {Loop, Loop}; // a loop in a header, seen twice
  return Program;
}

TEST(ExperimentsTest, PinnedMemoryIsTriedOnCudaWhereTheLoopCopiesToADevice) {
  ProgramModel Program = copyingProgram();
  Measurement M = cpuMeasurement(2);
  M.Device = DeviceType::CUDA;
  std::vector<TrialRequest> Trials =
      planTrials({"pinned-memory"}, Program, M, {2, 2});
  ASSERT_EQ(Trials.size(), 1u);
  EXPECT_TRUE(Trials[0].NotTried.empty());
  EXPECT_EQ(Trials[0].Env, std::vector<std::string>{"SKYLINE_PINNED_COPIES=1"});
  // A CPU run: listed, with why, and nothing to run.
  M = cpuMeasurement(2);
  Trials = planTrials({"pinned-memory"}, Program, M, {2, 2});
  ASSERT_EQ(Trials.size(), 1u);
  EXPECT_TRUE(Trials[0].Env.empty());
  EXPECT_NE(Trials[0].NotTried.find("no copy crosses to a device"),
            std::string::npos);
  // No copy in the loop: nothing.
  Program.TrainingLoops.clear();
  EXPECT_TRUE(planTrials({"pinned-memory"}, Program, M, {2, 2}).empty());
}

TEST(ExperimentsTest, ThePinnedMemoryFixItChangesEachCopyOnce) {
  Measurement M = cpuMeasurement(2);
  M.Device = DeviceType::CUDA;
  M.Trials = {{"pinned-memory", "copies from pinned memory", 1, 16, {3.0}, 3.0,
               0, ""}};
  std::vector<Finding> Findings = experimentFindings(copyingProgram(), M);
  ASSERT_EQ(Findings.size(), 1u);
  EXPECT_EQ(Findings[0].Rule, "skyline-experiment-pinned-memory");
  EXPECT_EQ(Findings[0].Level, DiagLevel::Warning);
  ASSERT_EQ(Findings[0].Edits.size(), 2u);
  EXPECT_EQ(Findings[0].Edits[0].Range.Offset, 410u);
  EXPECT_EQ(Findings[0].Edits[0].Range.Length, 0u);
  EXPECT_EQ(Findings[0].Edits[0].Text, ".pin_memory()");
  EXPECT_EQ(Findings[0].Edits[1].Range.Offset, 420u);
  EXPECT_EQ(Findings[0].Edits[1].Range.Column, 37u);
  EXPECT_EQ(Findings[0].Edits[1].Text, ", /*non_blocking=*/true");
}

} // namespace
