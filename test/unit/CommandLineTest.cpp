// The command line parses as clang-tidy's does; every usage error is one.

#include "CommandLine.h"

#include "gtest/gtest.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace skyline;

namespace {

ParsedCommandLine parse(std::vector<const char *> Args) {
  Args.insert(Args.begin(), "skyline-check");
  return parseCommandLine(Args.size(), Args.data());
}

TEST(CommandLineTest, BuildPathBothSpellings) {
  for (auto Args : {std::vector<const char *>{"a.cpp", "-p", "build"},
                    std::vector<const char *>{"a.cpp", "-p=build"},
                    std::vector<const char *>{"-pbuild", "a.cpp"}}) {
    auto Parsed = parse(Args);
    auto *Options = std::get_if<CommandLineOptions>(&Parsed);
    ASSERT_TRUE(Options);
    EXPECT_EQ(Options->BuildPath, "build");
    EXPECT_EQ(Options->Sources, std::vector<std::string>{"a.cpp"});
    EXPECT_FALSE(Options->ExtraArgs);
  }
}

TEST(CommandLineTest, ArgumentsAfterDoubleDash) {
  auto Parsed = parse({"a.cpp", "b.cpp", "--analyze-only", "--format=yaml",
                       "--", "-std=c++17", "-Iinc"});
  auto *Options = std::get_if<CommandLineOptions>(&Parsed);
  ASSERT_TRUE(Options);
  EXPECT_EQ(Options->Sources, (std::vector<std::string>{"a.cpp", "b.cpp"}));
  EXPECT_TRUE(Options->AnalyzeOnly);
  EXPECT_EQ(Options->Format, OutputFormat::YAML);
  ASSERT_TRUE(Options->ExtraArgs);
  EXPECT_EQ(*Options->ExtraArgs,
            (std::vector<std::string>{"-std=c++17", "-Iinc"}));
}

TEST(CommandLineTest, FixOptions) {
  auto Parsed = parse({"a.cpp", "--set-batch-size", "128",
                       "--export-fixes=f.yaml", "--batch-size-var=kBatch"});
  auto *Options = std::get_if<CommandLineOptions>(&Parsed);
  ASSERT_TRUE(Options);
  EXPECT_EQ(Options->SetBatchSize, 128);
  EXPECT_EQ(Options->ExportFixes, "f.yaml");
  EXPECT_EQ(Options->BatchSizeVar, "kBatch");
}

TEST(CommandLineTest, MeasurementOptions) {
  auto Defaults = parse({"a.cpp"});
  auto *Options = std::get_if<CommandLineOptions>(&Defaults);
  ASSERT_TRUE(Options);
  EXPECT_EQ(Options->Measure.Iterations, 50u);
  EXPECT_EQ(Options->Measure.MinIterations, 5u);
  EXPECT_EQ(Options->Measure.TimingRuns, 3u);
  EXPECT_EQ(Options->Measure.MaxRuns, 6u);
  EXPECT_DOUBLE_EQ(Options->Measure.Tolerance, 0.02);
  EXPECT_DOUBLE_EQ(Options->Measure.TimeBudgetSeconds, 120);
  EXPECT_EQ(Options->Measure.Breakdown, BreakdownRuns::All);
  EXPECT_EQ(Options->Measure.BreakdownIterations, 3u);
  EXPECT_EQ(Options->Measure.Malloc, MallocThresholds::Pinned);
  EXPECT_EQ(std::get<CommandLineOptions>(
                parse({"a.cpp", "--malloc-thresholds=dynamic"}))
                .Measure.Malloc,
            MallocThresholds::Dynamic);

  auto Given = parse({"a.cpp", "--iterations=20", "--min-iterations=4",
                      "--tolerance=1%", "--time-budget=30",
                      "--breakdown-runs=declared", "--breakdown-iterations=2",
                      "--timing-runs=5", "--wait-for-quiet=45"});
  Options = std::get_if<CommandLineOptions>(&Given);
  ASSERT_TRUE(Options);
  EXPECT_EQ(Options->Measure.Iterations, 20u);
  EXPECT_EQ(Options->Measure.MinIterations, 4u);
  EXPECT_DOUBLE_EQ(Options->Measure.Tolerance, 0.01);
  EXPECT_DOUBLE_EQ(Options->Measure.TimeBudgetSeconds, 30);
  EXPECT_EQ(Options->Measure.Breakdown, BreakdownRuns::Declared);
  EXPECT_EQ(Options->Measure.BreakdownIterations, 2u);
  EXPECT_EQ(Options->Measure.TimingRuns, 5u);
  EXPECT_DOUBLE_EQ(Options->Measure.QuietWaitSeconds, 45);
  EXPECT_DOUBLE_EQ(
      std::get<CommandLineOptions>(parse({"a.cpp"})).Measure.QuietWaitSeconds,
      0)
      << "by default the runs start at once";
  EXPECT_DOUBLE_EQ(
      std::get<CommandLineOptions>(parse({"a.cpp", "--memory-margin=25"}))
          .Measure.MemoryMargin,
      0.25)
      << "the sweep aims at the capacity the model keeps";

  for (auto Args : {std::vector<const char *>{"a.cpp", "--breakdown-runs=some"},
                    std::vector<const char *>{"a.cpp", "--tolerance=x"},
                    std::vector<const char *>{"a.cpp", "--time-budget=-1"},
                    std::vector<const char *>{"a.cpp", "--wait-for-quiet=-5"},
                    std::vector<const char *>{"a.cpp", "--min-iterations=0"}})
    EXPECT_TRUE(std::holds_alternative<UsageError>(parse(Args))) << Args[1];
}

TEST(CommandLineTest, UsageErrors) {
  struct Case {
    std::vector<const char *> Args;
    const char *Message;
  } Cases[] = {
      {{}, "no source files given"},
      {{"a.cpp", "--format=json"}, "unknown --format 'json'"},
      {{"a.cpp", "--set-batch-size=0"}, "must be a positive integer"},
      {{"a.cpp", "--set-batch-size=abc"}, "set-batch-size"},
      {{"a.cpp", "--analyze-only", "--export-fixes=f.yaml"},
       "give --set-batch-size=N"},
      {{"a.cpp", "--min-gain=5x"}, "--min-gain '5x' is not a percentage"},
      {{"a.cpp", "--memory-margin=100"}, "--memory-margin must be below 100%"},
      {{"a.cpp", "--gate-repeats=0"}, "--gate-repeats must be at least 1"},
      {{"a.cpp", "--timing-runs=0"}, "--timing-runs must be at least 1"},
      {{"a.cpp", "--malloc-thresholds=off"},
       "unknown --malloc-thresholds 'off' (expected pinned or dynamic)"},
      {{"--from-report=r.yaml", "--analyze-only"},
       "cannot go with --analyze-only"},
      {{"a.cpp", "--no-such-option"}, "no-such-option"},
      {{"a.cpp", "-p"}, "build-path"},
  };
  for (const Case &C : Cases) {
    auto Parsed = parse(C.Args);
    auto *Error = std::get_if<UsageError>(&Parsed);
    ASSERT_TRUE(Error) << C.Message;
    EXPECT_NE(Error->Message.find(C.Message), std::string::npos)
        << Error->Message;
  }
}

TEST(CommandLineTest, PercentagesAndModelOptions) {
  auto Parsed = parse({"a.cpp", "--memory-margin=15%", "--throughput-slack",
                       "2.5", "--round-to=16", "--what-if-batch-size=48",
                       "--what-if-batch-size=96", "--max-memory-growth=1",
                       "--scale-learning-rate"});
  auto *Options = std::get_if<CommandLineOptions>(&Parsed);
  ASSERT_TRUE(Options);
  EXPECT_DOUBLE_EQ(Options->Rules.Model.MemoryMargin, 0.15);
  EXPECT_DOUBLE_EQ(Options->Rules.Model.ThroughputSlack, 0.025);
  EXPECT_DOUBLE_EQ(Options->Rules.Model.MinGain, 0.05) << "the default";
  EXPECT_DOUBLE_EQ(Options->Rules.HotLayerShare, 0.20) << "the default";
  EXPECT_EQ(Options->Rules.Model.RoundTo, 16);
  EXPECT_EQ(Options->WhatIfBatchSizes, (std::vector<int64_t>{48, 96}));
  EXPECT_DOUBLE_EQ(Options->Gate.MaxMemoryGrowth, 0.01);
  EXPECT_DOUBLE_EQ(Options->Gate.MaxThroughputDrop, 0.10) << "the default";
  EXPECT_TRUE(Options->ScaleLearningRate);
}

TEST(CommandLineTest, ConfigFileDefaultsAndTheCommandLineWins) {
  std::string Dir = ::testing::TempDir() + "skyline-config-test";
  std::string Mkdir = "mkdir -p " + Dir;
  ASSERT_EQ(std::system(Mkdir.c_str()), 0);
  std::string Config = Dir + "/.skyline.yaml";
  std::FILE *Out = std::fopen(Config.c_str(), "w");
  ASSERT_TRUE(Out);
  std::fputs("round-to: 32\nhot-layer-share: 40\nrun-arg: [--epochs, \"1\"]\n",
             Out);
  std::fclose(Out);
  std::string Source = Dir + "/train.cpp";
  auto Parsed = parse({Source.c_str(), "--round-to=4"});
  auto *Options = std::get_if<CommandLineOptions>(&Parsed);
  ASSERT_TRUE(Options);
  EXPECT_EQ(Options->ConfigFile, Config);
  EXPECT_EQ(Options->Rules.Model.RoundTo, 4) << "the command line wins";
  EXPECT_DOUBLE_EQ(Options->Rules.HotLayerShare, 0.40);
  EXPECT_EQ(Options->Measure.RunArgs,
            (std::vector<std::string>{"--epochs", "1"}));
}

TEST(CommandLineTest, DefaultsAreTheOptionStructsDefaults) {
  // The option table and the structs each state the defaults; they agree.
  auto Parsed = parse({"a.cpp"});
  auto *Options = std::get_if<CommandLineOptions>(&Parsed);
  ASSERT_TRUE(Options);
  const CommandLineOptions Defaults;
  const MeasureOptions &M = Options->Measure, &DM = Defaults.Measure;
  EXPECT_EQ(M.MemoryBudget, DM.MemoryBudget);
  EXPECT_EQ(M.MaxRuns, DM.MaxRuns);
  EXPECT_EQ(M.MemoryMargin, DM.MemoryMargin);
  EXPECT_EQ(M.Warmup, DM.Warmup);
  EXPECT_EQ(M.TimingRuns, DM.TimingRuns);
  EXPECT_EQ(M.Iterations, DM.Iterations);
  EXPECT_EQ(M.MinIterations, DM.MinIterations);
  EXPECT_EQ(M.Tolerance, DM.Tolerance);
  EXPECT_EQ(M.TimeBudgetSeconds, DM.TimeBudgetSeconds);
  EXPECT_EQ(M.Breakdown, DM.Breakdown);
  EXPECT_EQ(M.BreakdownIterations, DM.BreakdownIterations);
  EXPECT_EQ(M.RunTimeoutSeconds, DM.RunTimeoutSeconds);
  EXPECT_EQ(M.Device, DM.Device);
  EXPECT_EQ(M.Malloc, DM.Malloc);
  const ModelOptions &Model = Options->Rules.Model;
  EXPECT_EQ(Model.MemoryMargin, Defaults.Rules.Model.MemoryMargin);
  EXPECT_EQ(Model.RoundTo, Defaults.Rules.Model.RoundTo);
  EXPECT_EQ(Model.ThroughputSlack, Defaults.Rules.Model.ThroughputSlack);
  EXPECT_EQ(Model.MinGain, Defaults.Rules.Model.MinGain);
  EXPECT_EQ(Options->Rules.HotLayerShare, Defaults.Rules.HotLayerShare);
  EXPECT_EQ(Options->Gate.MaxThroughputDrop, Defaults.Gate.MaxThroughputDrop);
  EXPECT_EQ(Options->Gate.MaxMemoryGrowth, Defaults.Gate.MaxMemoryGrowth);
  EXPECT_EQ(Options->Gate.Repeats, Defaults.Gate.Repeats);
  EXPECT_EQ(Options->Format, Defaults.Format);
}

TEST(CommandLineTest, AnalyzeOnlyRefusesWhatNeedsMeasurements) {
  for (const char *Option : {"--sarif=x", "--html=x", "--baseline=x",
                             "--report=x", "--what-if-batch-size=8"}) {
    auto Parsed = parse({"a.cpp", "--analyze-only", Option});
    auto *Error = std::get_if<UsageError>(&Parsed);
    ASSERT_TRUE(Error) << Option;
    std::string Name(Option, std::strchr(Option, '=') - Option);
    EXPECT_EQ(Error->Message,
              Name + " needs measurements: drop --analyze-only, or use "
                     "--from-report");
  }
}

TEST(CommandLineTest, AFoundConfigFileNamesNoOutput) {
  std::string Dir = ::testing::TempDir() + "skyline-config-output-test";
  std::string Mkdir = "mkdir -p " + Dir;
  ASSERT_EQ(std::system(Mkdir.c_str()), 0);
  std::string Config = Dir + "/.skyline.yaml";
  std::string Source = Dir + "/train.cpp";
  std::string ConfigOption = "--config=" + Config;
  for (const char *Output : {"export-fixes", "report", "sarif", "html"}) {
    std::FILE *Out = std::fopen(Config.c_str(), "w");
    ASSERT_TRUE(Out);
    std::fprintf(Out, "round-to: 16\n%s: out.x\n", Output);
    std::fclose(Out);
    auto Found = parse({Source.c_str()});
    auto *Error = std::get_if<UsageError>(&Found);
    ASSERT_TRUE(Error) << Output;
    EXPECT_NE(Error->Message.find(std::string("names an output (--") + Output +
                                  "=out.x)"),
              std::string::npos)
        << Error->Message;
    // Named on the command line, the file may say where to write.
    auto Named = parse({Source.c_str(), ConfigOption.c_str()});
    EXPECT_TRUE(std::holds_alternative<CommandLineOptions>(Named)) << Output;
  }
}

TEST(CommandLineTest, HelpAndVersion) {
  auto Help = parse({"--help"});
  ASSERT_TRUE(std::get_if<HelpRequest>(&Help));
  EXPECT_NE(std::get<HelpRequest>(Help).Text.find("--analyze-only"),
            std::string::npos);
  auto Version = parse({"--version"});
  ASSERT_TRUE(std::get_if<HelpRequest>(&Version));
  EXPECT_NE(std::get<HelpRequest>(Version).Text.find("skyline-check version"),
            std::string::npos);
}

/// A .skyline.yaml planted above the repository, or one another user owns,
/// is not obeyed: the search stops at the repository's root (.git) and at
/// a directory or file that is not the user's, and says what it ignored.
TEST(CommandLineTest, TheConfigSearchStopsAtTheRepositoryAndAnotherOwner) {
  std::string Top = ::testing::TempDir() + "skyline-config-trust";
  std::string Repo = Top + "/repo";
  std::string Setup = "rm -rf " + Top + " && mkdir -p " + Repo + "/.git " +
                      Repo + "/src && printf 'round-to: 64\\n' > " + Top +
                      "/.skyline.yaml";
  ASSERT_EQ(std::system(Setup.c_str()), 0);
  std::string Source = Repo + "/src/train.cpp";
  auto AboveTheRepository = parse({Source.c_str()});
  auto *Options = std::get_if<CommandLineOptions>(&AboveTheRepository);
  ASSERT_TRUE(Options);
  EXPECT_EQ(Options->ConfigFile, "") << "above the .git: not the repository's";
  EXPECT_EQ(Options->Rules.Model.RoundTo, 8) << "the default";

  // Inside the repository it is read; with --config, from anywhere.
  std::string Inside = "cp " + Top + "/.skyline.yaml " + Repo + "/";
  ASSERT_EQ(std::system(Inside.c_str()), 0);
  auto InTheRepository = parse({Source.c_str()});
  Options = std::get_if<CommandLineOptions>(&InTheRepository);
  ASSERT_TRUE(Options);
  EXPECT_EQ(Options->ConfigFile, Repo + "/.skyline.yaml");
  EXPECT_EQ(Options->Rules.Model.RoundTo, 64);

  if (::geteuid() != 0)
    GTEST_SKIP() << "files another user owns need root to make";
  // Another user's file in the repository: ignored, and said.
  std::string Chown = "chown 65534 " + Repo + "/.skyline.yaml";
  ASSERT_EQ(std::system(Chown.c_str()), 0);
  auto Foreign = parse({Source.c_str()});
  Options = std::get_if<CommandLineOptions>(&Foreign);
  ASSERT_TRUE(Options);
  EXPECT_EQ(Options->ConfigFile, "");
  ASSERT_EQ(Options->ConfigNotes.size(), 1u);
  EXPECT_EQ(Options->ConfigNotes[0],
            "ignored config file '" + Repo +
                "/.skyline.yaml' is owned by uid 65534, not by you (uid 0): "
                "another user could put code in it; give it with "
                "--config=FILE to use it");
  // A directory another user owns ends the search before its config.
  std::string Move = "rm " + Repo + "/.skyline.yaml && rm -r " + Repo +
                     "/.git && chown 65534 " + Repo;
  ASSERT_EQ(std::system(Move.c_str()), 0);
  auto PastAnOwner = parse({Source.c_str()});
  Options = std::get_if<CommandLineOptions>(&PastAnOwner);
  ASSERT_TRUE(Options);
  EXPECT_EQ(Options->ConfigFile, "")
      << "the search stopped at the directory another user owns";
  std::string Cleanup = "rm -rf " + Top;
  std::system(Cleanup.c_str());
}

} // namespace
