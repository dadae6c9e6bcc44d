// The rules on hand-built measurements whose predictions are known exactly:
// iteration time 2 + 0.1 b ms and peak memory 1e6 + 1e4 b bytes, a 4e6-byte
// capacity with a 10% margin (3.6e6 usable, so 260 fits and 261 does not).

#include "skyline/Rules.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace skyline {
namespace {

using ::testing::HasSubstr;

const char *const Source =
    "#include <torch/torch.h>\n"                                  // 1
    "const int64_t kBatchSize = 16;\n"                            // 2
    "torch::optim::SGD opt(p, torch::optim::SGDOptions(0.01));\n" // 3
    "x = fc1(x); // NOLINT(skyline-hot-layer)\n"                  // 4
    "y = fc2(y);\n"                                               // 5
    "torch::nn::Linear fc2{8, 8};\n";                             // 6

std::string writeSource() {
  // One file a process: ctest runs each test in its own, two at a time, and
  // a file another is rewriting would read empty (its NOLINTs unseen).
  std::string Path = ::testing::TempDir() + "rules-train-" +
                     std::to_string(::getpid()) + ".cpp";
  std::ofstream(Path) << Source;
  return Path;
}

MeasuredRun runAt(int64_t BatchSize) {
  MeasuredRun Run;
  Run.BatchSize = BatchSize;
  Run.Iterations = 8;
  double Ms = 2 + 0.1 * BatchSize;
  Run.IterationMs = {Ms, Ms, 0.01, Ms, Ms};
  Run.Throughput = BatchSize / Ms * 1000;
  Run.PeakBytes = 1000000 + 10000 * BatchSize;
  Run.Memory = {{MemoryKind::Weights, 200000},
                {MemoryKind::Gradients, 200000},
                {MemoryKind::OptimizerState, 0},
                {MemoryKind::Activations, 10000 * BatchSize},
                {MemoryKind::Data, 0},
                {MemoryKind::Temporaries, 0},
                {MemoryKind::Untracked, 600000}};
  return Run;
}

struct Fixture {
  std::string File = writeSource();
  ProgramModel Program;
  Measurement Measured;
  RuleOptions Options;
  Analysis Model;

  explicit Fixture(int64_t Declared) {
    BatchSizeSite Site;
    Site.Name = "kBatchSize";
    Site.Value = Declared;
    Site.Literal = {File, 2, 28, 52, 2};
    Program.BatchSize = Site;
    TrainingLoop Loop;
    OptimizerSite Optimizer;
    Optimizer.Name = "opt";
    Optimizer.Type = "torch::optim::SGD";
    Optimizer.LearningRate = SourceSpan{File, 3, 51, 105, 4};
    Optimizer.LearningRateText = "0.01";
    Loop.Optimizers.push_back(Optimizer);
    Program.TrainingLoops.push_back(Loop);
    Program.Modules.push_back(
        {"fc2", "torch::nn::Linear", "8, 8", "", File, 6, 19, ""});
    Program.ModuleCalls.push_back({"fc2", File, 5, 5, 0, 7, false, false});
    Measured.MemoryCapacityBytes = 4000000;
    for (int64_t Size : {int64_t(16), int64_t(32), int64_t(64)})
      Measured.Runs.push_back(runAt(Size));
    MeasuredRun &First = Measured.Runs.front();
    // At 16 an iteration is 3.6 ms: fc1 takes 2/3.6 = 56%, fc2 0.8/3.6 = 22%.
    First.Layers.push_back(
        {0, "fc1", "torch::nn::Linear", File, 4, 1.0, 1.0, -1, 0, 0});
    First.Layers.push_back(
        {1, "fc2", "torch::nn::Linear", File, 5, 0.5, 0.3, -1, 0, 0});
    First.Layers.push_back(
        {2, "fc3", "torch::nn::Linear", File, 5, 0.3, 0.3, -1, 0, 0});
  }

  std::vector<Finding> run() {
    Model = analyze(Measured, Program.BatchSize->Value, Options.Model);
    return runRules({Program, Measured, Model, Options});
  }
};

std::vector<const Finding *> byRule(const std::vector<Finding> &All,
                                    llvm::StringRef Rule) {
  std::vector<const Finding *> Found;
  for (const Finding &F : All)
    if (F.Rule == Rule)
      Found.push_back(&F);
  return Found;
}

TEST(RulesTest, BatchSizeSuggestionWithItsFixAndTheScaledRate) {
  Fixture F(16);
  std::vector<Finding> All = F.run();
  auto Found = byRule(All, "skyline-batch-size");
  ASSERT_EQ(Found.size(), 2u);
  // 152/17.2 ms = 8837 samples/s is the first multiple of 8 within 5% of
  // 260/28 ms = 9286; 16/3.6 ms = 4444 now, so 99% more.
  const Finding &Size = *Found[0];
  EXPECT_EQ(Size.Level, DiagLevel::Warning);
  EXPECT_EQ(Size.At.Line, 2u);
  EXPECT_THAT(
      Size.Message,
      HasSubstr("batch size 16 is below the throughput knee: 152 is "
                "predicted to train 99% faster (30% to 203%, 90% interval; "
                "4444 -> 8837 samples/s)"));
  EXPECT_THAT(Size.Message,
              HasSubstr("2.40 MiB peak memory of 3.43 MiB usable"));
  // The figures behind it, for SARIF's properties.
  auto Figure = [&](llvm::StringRef Name) {
    for (const auto &[Key, Value] : Size.Figures)
      if (Key == Name)
        return Value;
    ADD_FAILURE() << "no figure " << Name.str();
    return 0.0;
  };
  EXPECT_EQ(Figure("suggestedBatchSize"), 152);
  EXPECT_NEAR(Figure("predictedGain"), (152 / 17.2) / (16 / 3.6) - 1, 1e-9);
  EXPECT_LT(Figure("predictedGainLow90"), Figure("predictedGain"));
  EXPECT_GT(Figure("predictedGainHigh90"), Figure("predictedGain"));
  EXPECT_EQ(Figure("measuredOnly"), 0);
  ASSERT_EQ(Size.Edits.size(), 1u);
  EXPECT_EQ(Size.Edits[0].Text, "152");
  EXPECT_EQ(Size.Edits[0].Range.Offset, 52u);
  EXPECT_FALSE(Size.OptionalFix);

  const Finding &Rate = *Found[1];
  EXPECT_EQ(Rate.Level, DiagLevel::Note);
  EXPECT_EQ(Rate.At.Line, 3u);
  EXPECT_TRUE(Rate.OptionalFix);
  ASSERT_EQ(Rate.Edits.size(), 1u);
  EXPECT_EQ(Rate.Edits[0].Text, "0.095"); // 0.01 x 152/16
  EXPECT_THAT(Rate.Message, HasSubstr("0.01 x 152/16 = 0.095"));
}

TEST(RulesTest, NoSuggestionWithoutEnoughGain) {
  Fixture F(152);
  F.Measured.Runs.push_back(runAt(152));
  EXPECT_TRUE(byRule(F.run(), "skyline-batch-size").empty());
  EXPECT_FALSE(F.Model.Suggested);
}

TEST(RulesTest, MemoryCapacityWithinTheMarginGetsTheSuggestedSize) {
  Fixture F(300); // 1e6 + 3e6 = 4e6 bytes: at the capacity, past the usable
  std::vector<Finding> All = F.run();
  auto Found = byRule(All, "skyline-memory-capacity");
  ASSERT_EQ(Found.size(), 1u);
  EXPECT_THAT(
      Found[0]->Message,
      HasSubstr(
          "batch size 300 only just fits: its predicted peak memory of 3.81 "
          "MiB "
          "is within the 10% margin of the 3.81 MiB capacity; 152 fits (the "
          "largest predicted to fit is 260)"));
  ASSERT_EQ(Found[0]->Edits.size(), 1u);
  EXPECT_EQ(Found[0]->Edits[0].Text, "152");
  EXPECT_TRUE(byRule(All, "skyline-batch-size").empty())
      << "one fix for one literal";
}

TEST(RulesTest, MemoryCapacityWhenTheDeclaredSizeRanOutOfMemory) {
  Fixture F(512);
  MeasuredRun Oom;
  Oom.BatchSize = 512;
  Oom.OutOfMemory = true;
  F.Measured.Runs.push_back(Oom);
  std::vector<Finding> All = F.run();
  auto Found = byRule(All, "skyline-memory-capacity");
  ASSERT_EQ(Found.size(), 1u);
  EXPECT_THAT(Found[0]->Message, HasSubstr("batch size 512 ran out of memory"));
  EXPECT_EQ(Found[0]->Edits.at(0).Text, "152");
}

TEST(RulesTest, HotLayersAtTheCallAndTheConstructionButNotWhereSilenced) {
  Fixture F(16);
  std::vector<Finding> All = F.run();
  auto Found = byRule(All, "skyline-hot-layer");
  // fc1 (56%) has NOLINT(skyline-hot-layer) on its line; fc3 is 17% < 20%.
  ASSERT_EQ(Found.size(), 2u);
  EXPECT_EQ(Found[0]->Level, DiagLevel::Warning);
  EXPECT_EQ(Found[0]->At.Line, 5u);
  EXPECT_EQ(Found[0]->At.Column, 5u);
  EXPECT_THAT(
      Found[0]->Message,
      HasSubstr(
          "layer 'fc2' (torch::nn::Linear) takes 22% of the median iteration "
          "time at batch size 16: forward 0.50 ms, backward 0.30 ms of "
          "3.60 ms"));
  EXPECT_EQ(Found[1]->Level, DiagLevel::Note);
  EXPECT_EQ(Found[1]->At.Line, 6u);
  EXPECT_EQ(Found[1]->Message, "'fc2' is constructed here with 8, 8");

  F.Options.HotLayerShare = 0.60;
  EXPECT_TRUE(byRule(F.run(), "skyline-hot-layer").empty());
}

TEST(RulesTest, HotLayerShareIsOfTheMedianIteration) {
  // A slow iteration pulls the mean to 4.00 ms; the run table, the loop's
  // hint and the model use the median, 3.60 ms. fc2's 0.80 ms is 22% of
  // the median (20% of the mean), so it is hot at a share of 21%.
  Fixture F(16);
  F.Measured.Runs.front().IterationMs.Mean = 4.0;
  F.Options.HotLayerShare = 0.21;
  std::vector<Finding> All = F.run();
  auto Found = byRule(All, "skyline-hot-layer");
  ASSERT_EQ(Found.size(), 2u);
  EXPECT_EQ(Found[0]->Message,
            "layer 'fc2' (torch::nn::Linear) takes 22% of the median "
            "iteration time at batch size 16: forward 0.50 ms, backward "
            "0.30 ms of 3.60 ms");
  const MeasuredRun &Run = F.Measured.Runs.front();
  EXPECT_DOUBLE_EQ(hotLayerMs(Run.Layers[1]), 0.8);
  EXPECT_DOUBLE_EQ(hotLayerShare(Run, Run.Layers[1]), 0.8 / 3.6);
  // Where the GPU time is measured it is the layer's time.
  LayerMeasure OnGpu = Run.Layers[1];
  OnGpu.GpuMs = 1.8;
  EXPECT_DOUBLE_EQ(hotLayerShare(Run, OnGpu), 0.5);
  MeasuredRun Unmeasured;
  EXPECT_EQ(hotLayerShare(Unmeasured, OnGpu), 0);
}

TEST(RulesTest, ConstructorArgumentsAreShownOnOneLine) {
  // A Sequential's arguments span lines as written; a diagnostic is one
  // line, cut to 72 characters.
  Fixture F(16);
  for (ModuleSite &Module : F.Program.Modules)
    if (Module.Name == "fc2")
      Module.Options = "torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 16, 3)"
                       ".padding(1)),\n          torch::nn::ReLU()";
  std::vector<Finding> All = F.run();
  auto Found = byRule(All, "skyline-hot-layer");
  ASSERT_EQ(Found.size(), 2u);
  // 83 characters on one line: the first 69, then "...".
  EXPECT_EQ(Found[1]->Message,
            "'fc2' is constructed here with torch::nn::Conv2d(torch::nn::"
            "Conv2dOptions(3, 16, 3).padding(1)), tor...");
}

TEST(RulesTest, MemoryBreakdownNoteAddsThePerSampleCost) {
  Fixture F(16);
  std::vector<Finding> All = F.run();
  auto Found = byRule(All, "skyline-memory-breakdown");
  ASSERT_EQ(Found.size(), 1u);
  EXPECT_EQ(Found[0]->Level, DiagLevel::Note);
  EXPECT_EQ(Found[0]->At.Line, 2u);
  EXPECT_EQ(
      Found[0]->Message,
      "peak memory at batch size 16 is 1.11 MiB: weights 195 KiB, gradients "
      "195 KiB, "
      "activations 156 KiB, untracked 586 KiB (made before training and no "
      "model's or optimizer's: a dataset held in memory, LibTorch's own); "
      "each sample adds 9.77 KiB");
}

// Where the statements before the loop were told apart, the note names the
// one that made the most and says what the untracked rest can be.
TEST(RulesTest, MemoryBreakdownNoteNamesWhatWasMadeBeforeTraining) {
  Fixture F(16);
  for (MeasuredRun &Run : F.Measured.Runs) {
    Run.Memory = {{MemoryKind::Weights, 200000},
                  {MemoryKind::Gradients, 200000},
                  {MemoryKind::Activations, 10000 * Run.BatchSize},
                  {MemoryKind::Setup, 500000},
                  {MemoryKind::Untracked, 100000}};
    Run.SetupStatements = {
        {0, "/src/train.cpp", "auto dataset = load(kRoot);", 7, 480000},
        {2, "/src/train.cpp", "std::vector<float> cache(5000);", 9, 20000}};
  }
  std::vector<Finding> All = F.run();
  auto Found = byRule(All, "skyline-memory-breakdown");
  ASSERT_EQ(Found.size(), 1u);
  EXPECT_EQ(Found[0]->Message,
            "peak memory at batch size 16 is 1.11 MiB: weights 195 KiB, "
            "gradients 195 KiB, activations 156 KiB, setup 488 KiB, untracked "
            "97.7 KiB; made before training and held at the peak: 469 KiB by "
            "/src/train.cpp:7 'auto dataset = load(kRoot);', 19.5 KiB by "
            "/src/train.cpp:9 'std::vector<float> cache(5000);'; each sample "
            "adds 9.77 KiB");
}

TEST(RulesTest, MallocThresholdsWarnWhenGlibcsOwnAreMarkedlySlower) {
  Fixture F(16);
  F.Measured.GlibcTunables = "glibc.malloc.mmap_threshold=33554432";
  // 3.6 ms pinned; 4.5 ms with glibc's own thresholds is 25% longer.
  F.Measured.Runs.front().DynamicMallocMs = 4.5;
  std::vector<Finding> All = F.run();
  auto Found = byRule(All, "skyline-malloc-thresholds");
  ASSERT_EQ(Found.size(), 1u);
  EXPECT_EQ(Found[0]->Level, DiagLevel::Warning);
  EXPECT_EQ(Found[0]->At.Line, 2u) << "at the batch-size literal";
  EXPECT_EQ(Found[0]->Message,
            "at batch size 16 an iteration takes 4.50 ms with glibc's dynamic "
            "malloc thresholds, 25% longer than the 3.60 ms measured with them "
            "pinned: glibc gives memory back to the system and faults it in "
            "again each iteration; train with "
            "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432 (or a caching "
            "allocator such as jemalloc)");
  // 3.96 ms is 10% longer: within what two runs differ by.
  F.Measured.Runs.front().DynamicMallocMs = 3.96;
  EXPECT_TRUE(byRule(F.run(), "skyline-malloc-thresholds").empty());
  // The pinned timing runs took 3.6, 3.5 and 4.2 ms: 4.5 ms is 7% above the
  // slowest of them, within what runs differ by.
  F.Measured.Runs.front().TimingRunMedians = {3.6, 3.5, 4.2};
  F.Measured.Runs.front().DynamicMallocMs = 4.5;
  EXPECT_TRUE(byRule(F.run(), "skyline-malloc-thresholds").empty());
  F.Measured.Runs.front().DynamicMallocMs = 4.7;
  EXPECT_EQ(byRule(F.run(), "skyline-malloc-thresholds").size(), 1u)
      << "12% above the slowest";
  // Not measured (dynamic or the user's thresholds): nothing to say.
  F.Measured.Runs.front().DynamicMallocMs = 0;
  EXPECT_TRUE(byRule(F.run(), "skyline-malloc-thresholds").empty());
}

TEST(RulesTest, NolintSpellings) {
  EXPECT_TRUE(isSilenced("x(); // NOLINT", "", "skyline-hot-layer"));
  EXPECT_TRUE(
      isSilenced("x(); // NOLINT(skyline-hot-layer)", "", "skyline-hot-layer"));
  EXPECT_TRUE(isSilenced("x(); // NOLINT(bugprone-x, skyline-*)", "",
                         "skyline-hot-layer"));
  EXPECT_FALSE(isSilenced("x(); // NOLINT(skyline-batch-size)", "",
                          "skyline-hot-layer"));
  EXPECT_TRUE(isSilenced("x();", "// NOLINTNEXTLINE(skyline-hot-layer)",
                         "skyline-hot-layer"));
  EXPECT_FALSE(
      isSilenced("x();", "// NOLINT(skyline-hot-layer)", "skyline-hot-layer"))
      << "NOLINT is for its own line only";
  EXPECT_FALSE(isSilenced("x(); // NOLINTNEXTLINE", "", "skyline-hot-layer"))
      << "NOLINTNEXTLINE is for the next line only";
}

TEST(RulesTest, EveryRuleIsInTheCatalogWithADocsPage) {
  for (const auto &R : createRules()) {
    const RuleInfo *Info = findRule(R->id());
    ASSERT_NE(Info, nullptr) << R->id().str();
    EXPECT_EQ(Info->DocsPage, ("docs/rules/" + R->id() + ".md").str());
    EXPECT_TRUE(
        std::ifstream(SKYLINE_SOURCE_DIR "/" + Info->DocsPage.str()).good())
        << Info->DocsPage.str();
  }
  for (const RuleInfo &Info : ruleCatalog())
    EXPECT_TRUE(
        std::ifstream(SKYLINE_SOURCE_DIR "/" + Info.DocsPage.str()).good())
        << Info.DocsPage.str();
}

TEST(RulesTest, TheFrontEndsNotesAreDeclaredWithDocsPages) {
  std::vector<std::string> Ids;
  for (const RuleInfo &Note : noteCatalog()) {
    EXPECT_EQ(Note.Origin, RuleOrigin::ProgramModel) << Note.Id.str();
    EXPECT_EQ(Note.DefaultLevel, DiagLevel::Note) << Note.Id.str();
    EXPECT_EQ(Note.DocsPage, ("docs/rules/" + Note.Id + ".md").str());
    EXPECT_TRUE(
        std::ifstream(SKYLINE_SOURCE_DIR "/" + Note.DocsPage.str()).good())
        << Note.DocsPage.str();
    EXPECT_EQ(findRule(Note.Id), nullptr)
        << "a note is not one of SARIF's rules: " << Note.Id.str();
    Ids.push_back(Note.Id.str());
  }
  EXPECT_EQ(Ids,
            (std::vector<std::string>{"skyline-module", "skyline-module-call",
                                      "skyline-training-loop"}));
}

TEST(RulesTest, TheCatalogIsTheRulesThenTheGatesThenTheExperimentsEachOnce) {
  std::vector<std::string> Ids;
  for (const RuleInfo &Rule : ruleCatalog())
    Ids.push_back(Rule.Id.str());
  EXPECT_EQ(
      Ids,
      (std::vector<std::string>{
          "skyline-batch-size", "skyline-memory-capacity", "skyline-hot-layer",
          "skyline-memory-breakdown", "skyline-malloc-thresholds",
          "skyline-gpu-measurement", "skyline-host-sync",
          "skyline-throughput-regression",
          "skyline-memory-regression", "skyline-baseline-environment",
          "skyline-experiment-threads", "skyline-experiment-loader-workers",
          "skyline-experiment-no-grad-eval",
          "skyline-experiment-cudnn-benchmark",
          "skyline-experiment-autocast-bf16",
          "skyline-experiment-channels-last",
          "skyline-experiment-pinned-memory"}));
  std::vector<std::unique_ptr<Rule>> Rules = createRules();
  size_t Gates = 3;
  for (size_t I = 0; I < ruleCatalog().size(); ++I)
    EXPECT_EQ(ruleCatalog()[I].Origin,
              I >= Rules.size() && I < Rules.size() + Gates ? RuleOrigin::Gate
                                                            : RuleOrigin::Measurement)
        << Ids[I];
  EXPECT_EQ(ruleCatalog().back().DocsPage, "docs/experiments/pinned-memory.md");
  EXPECT_EQ(&rules::batchSize(), &Rules[0]->info())
      << "the front end's batch-size notes and the rule share one declaration";
}

TEST(RulesTest, HotLayerShareIsDeclaredWithItsRule) {
  const RuleInfo *HotLayer = findRule("skyline-hot-layer");
  ASSERT_NE(HotLayer, nullptr);
  ASSERT_EQ(HotLayer->Options.size(), 1u);
  EXPECT_EQ(&HotLayer->Options[0], &hotLayerShareOption());
  EXPECT_STREQ(hotLayerShareOption().Name, "hot-layer-share");
  // The declared default is the one RuleOptions starts with: 20% = 0.20.
  EXPECT_DOUBLE_EQ(std::atof(hotLayerShareOption().Default) / 100,
                   RuleOptions().HotLayerShare);
}

} // namespace
} // namespace skyline
