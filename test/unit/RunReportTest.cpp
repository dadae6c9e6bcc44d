// The report reads back what it wrote, and says clearly what is wrong with
// a file that is not one.

#include "skyline/RunReport.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <fstream>
#include <sstream>

namespace skyline {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

SavedReport sample() {
  SavedReport Report;
  Report.SkylineVersion = "0.1.0";
  BatchSizeSite Site;
  Site.Name = "kBatchSize";
  Site.Value = 32;
  Site.Literal = {"/src/train.cpp", 2, 28, 52, 2};
  Report.Program.Sources = {"/src/train.cpp"};
  Report.Program.BatchSize = Site;
  Measurement &M = Report.Measured;
  M.DeviceName = "Some CPU";
  M.TorchVersion = "2.11.0";
  M.Threads = 2;
  M.MallocThresholdsUsed = "pinned";
  M.GlibcTunables = "glibc.malloc.mmap_threshold=33554432";
  M.MemoryCapacityBytes = 1 << 30;
  for (int64_t Size : {32, 64}) {
    MeasuredRun Run;
    Run.BatchSize = Size;
    Run.Iterations = 8;
    Run.IterationMs = {2.0 + Size / 10.0, 2.1, 0.25, 1.9, 2.5};
    Run.Throughput = Size / Run.IterationMs.Median * 1000;
    Run.TimingRunMedians = {Run.IterationMs.Median + 0.5,
                            Run.IterationMs.Median};
    Run.PeakBytes = 1000000 + 5000 * Size;
    Run.GpuMsSource = Size == 32 ? GpuTimeSource::Cupti : GpuTimeSource::None;
    Run.EpochEndIterations = Size == 64 ? 2 : 0;
    Run.EpochIterations = Size == 64 ? 30 : 0;
    Run.DatasetSamples = Size == 64 ? 1920 : 0;
    Run.DatasetsGcd = Size == 64 ? 640 : 0;
    Run.DynamicMallocMs = Size == 32 ? 7.25 : 0;
    Run.OtherWorkCores = Size == 32 ? 0.6349 : -1;
    Run.StealCores = Size == 32 ? 0.1251 : -1;
    Run.Probed = Size == 64;
    Run.Memory = {{MemoryKind::Weights, 4198400},
                  {MemoryKind::Activations, 5000 * Size},
                  {MemoryKind::Setup, 188160000},
                  {MemoryKind::Untracked, 4096}};
    Run.SetupStatements = {{0, "/src/train.cpp",
                            "auto dataset = load_mnist(kDataRoot);", 7,
                            188160000}};
    Run.TimeSplitMs = {{TimePart::Data, 0.5}, {TimePart::Forward, 1.0}};
    Run.PeakBytesByPhase = {{Phase::Construction, 4198400}};
    Run.Layers.push_back({3, "fc", "torch::nn::Linear", "/src/train.cpp", 9,
                          0.75, 1.25, -1, 4096 * Size, 4198400});
    M.Runs.push_back(Run);
  }
  MeasuredRun Oom;
  Oom.BatchSize = 128;
  Oom.OutOfMemory = true;
  M.Runs.push_back(Oom);
  M.LargerThanTheData = 200;
  M.FirstFailure = 100;
  return Report;
}

std::string writeTemp(const std::string &Name, const std::string &Text) {
  std::string Path = ::testing::TempDir() + Name;
  std::ofstream(Path) << Text;
  return Path;
}

TEST(RunReportTest, NoSuggestionKeepsTheUnsurePick) {
  SavedReport Written = sample();
  Analysis Model = analyze(Written.Measured, 32, ModelOptions());
  Model.Suggested.reset();
  Model.NoSuggestionReason = "the runs vary too much to be sure";
  Suggestion Unsure;
  Unsure.BatchSize = 48;
  Unsure.Gain = 0.25;
  Unsure.GainRange = {-0.25, 1.5};
  Model.Unsure = Unsure;
  std::string Text = reportToYAML(Written, &Model);
  EXPECT_THAT(Text, HasSubstr("suggestion:\n  batch_size: ~\n  reason: the "
                              "runs vary too much to be sure\n  unsure: "
                              "{batch_size: 48, gain: 0.25, gain_90: [-0.25, "
                              "1.5]}\n"));
  Model.Unsure.reset();
  EXPECT_THAT(reportToYAML(Written, &Model), Not(HasSubstr("unsure")));
}

TEST(RunReportTest, RoundTrip) {
  SavedReport Written = sample();
  Analysis Model = analyze(Written.Measured, 32, ModelOptions());
  std::string Text = reportToYAML(Written, &Model);
  auto Read = readReport(writeTemp("report-roundtrip.yaml", Text));
  ASSERT_TRUE(bool(Read)) << llvm::toString(Read.takeError());
  EXPECT_EQ(Read->SchemaVersion, ReportSchemaVersion);
  EXPECT_EQ(Read->Program.BatchSize->Value, 32);
  EXPECT_EQ(Read->Program.BatchSize->Literal.Offset, 52u);
  const Measurement &M = Read->Measured;
  EXPECT_EQ(M.DeviceName, "Some CPU");
  EXPECT_EQ(M.TorchVersion, "2.11.0");
  EXPECT_EQ(M.Threads, 2);
  EXPECT_EQ(M.MallocThresholdsUsed, "pinned");
  EXPECT_EQ(M.GlibcTunables, "glibc.malloc.mmap_threshold=33554432");
  EXPECT_EQ(M.LargerThanTheData, 200);
  EXPECT_EQ(M.FirstFailure, 100);
  ASSERT_EQ(M.Runs.size(), 3u);
  EXPECT_EQ(M.Runs[1].PeakBytes, 1320000);
  EXPECT_DOUBLE_EQ(M.Runs[1].IterationMs.Median, 8.4);
  EXPECT_TRUE(M.Runs[2].OutOfMemory);
  EXPECT_EQ(M.Runs[1].TimingRunMedians, (std::vector<double>{8.9, 8.4}));
  EXPECT_TRUE(M.Runs[2].TimingRunMedians.empty());
  EXPECT_EQ(M.Runs[0].GpuMsSource, GpuTimeSource::Cupti);
  EXPECT_EQ(M.Runs[0].EpochEndIterations, 0u);
  EXPECT_EQ(M.Runs[1].EpochEndIterations, 2u);
  EXPECT_EQ(M.Runs[1].EpochIterations, 30u);
  EXPECT_EQ(M.Runs[1].DatasetSamples, 1920);
  EXPECT_EQ(M.Runs[1].DatasetsGcd, 640);
  EXPECT_EQ(M.Runs[0].DatasetSamples, 0);
  EXPECT_EQ(M.Runs[0].EpochIterations, 0u);
  EXPECT_DOUBLE_EQ(M.Runs[0].DynamicMallocMs, 7.25);
  EXPECT_DOUBLE_EQ(M.Runs[1].DynamicMallocMs, 0);
  EXPECT_EQ(M.Runs[1].GpuMsSource, GpuTimeSource::None);
  // Other work's cores, in hundredths; none where it was not measured.
  EXPECT_DOUBLE_EQ(M.Runs[0].OtherWorkCores, 0.63);
  EXPECT_DOUBLE_EQ(M.Runs[1].OtherWorkCores, -1);
  EXPECT_THAT(Text, HasSubstr("other_work_cores: 0.63\n"));
  EXPECT_DOUBLE_EQ(M.Runs[0].StealCores, 0.13);
  EXPECT_DOUBLE_EQ(M.Runs[1].StealCores, -1);
  EXPECT_THAT(Text, HasSubstr("steal_cores: 0.13\n"));
  // A probed size says so; the others leave the key out.
  EXPECT_FALSE(M.Runs[0].Probed);
  EXPECT_TRUE(M.Runs[1].Probed);
  EXPECT_THAT(Text, HasSubstr("probe: true\n"));
  EXPECT_THAT(Text, Not(HasSubstr("probe: false")));
  ASSERT_EQ(M.Runs[0].Layers.size(), 1u);
  const LayerMeasure &Layer = M.Runs[0].Layers[0];
  EXPECT_EQ(Layer.Name, "fc");
  EXPECT_EQ(Layer.Type, "torch::nn::Linear");
  EXPECT_EQ(Layer.Line, 9u);
  EXPECT_DOUBLE_EQ(Layer.BackwardMs, 1.25);
  EXPECT_EQ(Layer.ActivationBytes, 4096 * 32);
  EXPECT_EQ(Layer.WeightBytes, 4198400);
  EXPECT_EQ(M.Runs[0].Memory, Written.Measured.Runs[0].Memory);
  // The setup kind by statement, with the statement's line and text.
  ASSERT_EQ(M.Runs[0].SetupStatements.size(), 1u);
  const SetupMeasure &Setup = M.Runs[0].SetupStatements[0];
  EXPECT_EQ(Setup.Statement, 0);
  EXPECT_EQ(Setup.File, "/src/train.cpp");
  EXPECT_EQ(Setup.Line, 7u);
  EXPECT_EQ(Setup.Text, "auto dataset = load_mnist(kDataRoot);");
  EXPECT_EQ(Setup.Bytes, 188160000);
  EXPECT_THAT(Text, HasSubstr("setup_statements:\n      - {file: "
                              "/src/train.cpp, line: 7, text: auto dataset = "
                              "load_mnist(kDataRoot);, bytes: 188160000, "
                              "statement: 0}\n"));
  EXPECT_TRUE(M.Runs[2].SetupStatements.empty());
  // What the Model stage concluded is in the file for other readers.
  for (const char *Key :
       {"\nfits:", "  iteration_ms:", "r_squared: 1",
        "\npredictions:", "\nsuggestion:", "max_batch_size:", "\nprogram:"})
    EXPECT_THAT(Text, HasSubstr(Key));
  // Predictions from the file are the same as from the measurement.
  Analysis Again = analyze(M, 32, ModelOptions());
  EXPECT_EQ(Again.MaxBatchSize, Model.MaxBatchSize);
}

TEST(RunReportTest, TableSaysHowFarApartTheTimingRunsWere) {
  SavedReport Report = sample();
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printRunTable(Report.Measured, 32, OS);
  // 64: runs of 8.9 and 8.4 ms, the 8.4 kept.
  EXPECT_THAT(Text, HasSubstr("fastest of 2 runs (0.0%..+6.0%)\n"));
  // 32's kept run shared the CPUs with 0.63 cores of other work.
  EXPECT_THAT(Text, HasSubstr("(0.0%..+9.6%)  other work held 0.6 cores\n"));
  EXPECT_THAT(Text, HasSubstr("(Some CPU), 2 threads, "));
  Report.Measured.Threads = 1;
  Text.clear();
  printRunTable(Report.Measured, 32, OS);
  EXPECT_THAT(Text, HasSubstr("(Some CPU), 1 thread, "));
  Report.Measured.Runs[1].TimingRunMedians = {8.4};
  Text.clear();
  printRunTable(Report.Measured, 32, OS);
  EXPECT_THAT(Text, ::testing::Not(HasSubstr("fastest of 1")));
}

// Under the kinds, the setup kind by statement: bytes, file:line, text.
TEST(RunReportTest, TableNamesWhatWasMadeBeforeTraining) {
  SavedReport Report = sample();
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printRunTable(Report.Measured, 32, OS);
  EXPECT_THAT(Text, HasSubstr("peak memory at batch size 32: weights 4.00 MiB "
                              "activations 156 KiB setup 179 MiB untracked "
                              "4.00 KiB\nmade before training and held at the "
                              "peak: 179 MiB by /src/train.cpp:7 'auto dataset "
                              "= load_mnist(kDataRoot);'\n"));
  Report.Measured.Runs[0].SetupStatements.clear();
  Text.clear();
  printRunTable(Report.Measured, 32, OS);
  EXPECT_THAT(Text, ::testing::Not(HasSubstr("made before training")));
}

// The driver names each row from the instrumented copy's table; a row the
// table does not know is dropped.
TEST(RunReportTest, SetupStatementsAreNamedFromTheTable) {
  Measurement M;
  MeasuredRun Run;
  Run.SetupStatements = {{1, "", "", 0, 500}, {7, "", "", 0, 20}};
  M.Runs.push_back(Run);
  nameSetupStatements(M, {{0, "/src/a.cpp", 3, "int a;"},
                          {1, "/src/a.cpp", 4, "auto data = load();"}});
  ASSERT_EQ(M.Runs[0].SetupStatements.size(), 1u);
  EXPECT_EQ(M.Runs[0].SetupStatements[0].Line, 4u);
  EXPECT_EQ(M.Runs[0].SetupStatements[0].Text, "auto data = load();");
  EXPECT_EQ(M.Runs[0].SetupStatements[0].Bytes, 500);
}

TEST(RunReportTest, PredictionsSayWhereTheDataEnds) {
  // The sample's 200 was left out as a whole epoch a batch.
  SavedReport Report = sample();
  Analysis A = analyze(Report.Measured, 32, ModelOptions());
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printPredictions(A, OS);
  EXPECT_THAT(Text, HasSubstr("the dataset holds fewer than 200 samples (a "
                              "batch of 200 was the whole of it): no larger "
                              "size is suggested\n"));
  // and where a run failed.
  EXPECT_THAT(Text, HasSubstr("the run at batch size 100 failed (above): no "
                              "size from it on is suggested\n"));
  Report.Measured.LargerThanTheData = 0;
  Report.Measured.FirstFailure = 0;
  Text.clear();
  printPredictions(analyze(Report.Measured, 32, ModelOptions()), OS);
  EXPECT_THAT(Text, ::testing::Not(HasSubstr("the dataset holds")));
  EXPECT_THAT(Text, ::testing::Not(HasSubstr("failed")));
}

TEST(RunReportTest, ClearErrors) {
  auto Missing = readReport("/no/such/report.yaml");
  ASSERT_FALSE(bool(Missing));
  EXPECT_EQ(llvm::toString(Missing.takeError()),
            "cannot read report '/no/such/report.yaml': no such file");

  auto NotAReport = readReport(writeTemp("not-a-report.yaml", "just: text\n"));
  ASSERT_FALSE(bool(NotAReport));
  EXPECT_THAT(
      llvm::toString(NotAReport.takeError()),
      HasSubstr("is not a skyline-check report: no schema_version or runs"));

  auto Future =
      readReport(writeTemp("future.yaml", "schema_version: 99\nruns: []\n"));
  ASSERT_FALSE(bool(Future));
  EXPECT_THAT(
      llvm::toString(Future.takeError()),
      HasSubstr(
          "schema_version 99 is not one this skyline-check reads (1 to 2)"));

  auto Broken = readReport(writeTemp("broken.yaml", "schema_version: [\n"));
  ASSERT_FALSE(bool(Broken));
  EXPECT_THAT(llvm::toString(Broken.takeError()),
              HasSubstr("/broken.yaml' is not valid YAML: yaml-cpp: error at "
                        "line 2"));
}

/// The error reading Text as a report, or "(read)".
std::string readError(const std::string &Text) {
  auto Read = readReport(writeTemp("report-values.yaml", Text));
  if (Read)
    return "(read)";
  std::string Error = llvm::toString(Read.takeError());
  // The temporary directory differs from machine to machine.
  return Error.substr(Error.find("report-values.yaml'"));
}

TEST(RunReportTest, ImpossibleValuesAreRefusedWithTheirKey) {
  const std::string Head = "schema_version: 2\n"
                           "device: {type: cpu, memory_capacity_bytes: 100}\n";
  auto Run = [](const std::string &Fields) {
    return "runs:\n  - {batch_size: 8, iterations: 4, " + Fields + "}\n";
  };
  const std::string Times =
      "iteration_ms: {median: 2, mean: 2, stddev: 0, min: 1, max: 3}";
  EXPECT_EQ(readError(Head + Run(Times + ", peak_bytes: 10")), "(read)");
  EXPECT_EQ(readError(Head + Run("iteration_ms: {median: .nan}")),
            "report-values.yaml': runs[0].iteration_ms.median is '.nan'; it "
            "must be a finite number of at least 0; write the report again "
            "with --report=FILE");
  EXPECT_EQ(readError(Head + Run("iteration_ms: {median: 0}")),
            "report-values.yaml': runs[0].iteration_ms.median is '0'; it must "
            "be a finite number above 0 in a run that fit and measured 4 "
            "iterations; write the report again with --report=FILE");
  EXPECT_EQ(readError(Head + Run(Times + ", throughput: -.inf")),
            "report-values.yaml': runs[0].throughput is '-.inf'; it must be a "
            "finite number of at least 0; write the report again with "
            "--report=FILE");
  EXPECT_EQ(readError(Head + Run(Times + ", peak_bytes: -1")),
            "report-values.yaml': runs[0].peak_bytes is '-1'; it must be a "
            "whole number of at least 0; write the report again with "
            "--report=FILE");
  EXPECT_EQ(readError(Head + Run(Times + ", layers: [{forward_ms: -2}]")),
            "report-values.yaml': runs[0].layers[0].forward_ms is '-2'; it "
            "must be a finite number of at least 0; write the report again "
            "with --report=FILE");
  EXPECT_EQ(readError(Head + "runs:\n  - {batch_size: 0}\n"),
            "report-values.yaml': runs[0].batch_size is '0'; it must be a "
            "whole number of at least 1; write the report again with "
            "--report=FILE");
  EXPECT_EQ(readError(Head + "runs:\n  - {batch_size: many}\n"),
            "report-values.yaml': runs[0].batch_size is 'many'; it must be a "
            "whole number; write the report again with --report=FILE");
  EXPECT_EQ(readError(Head + "runs: {batch_size: 8}\n"),
            "report-values.yaml': runs is a mapping; it must be a list; "
            "write the report again with --report=FILE");
  EXPECT_EQ(readError("schema_version: 2\ndevice: {memory_capacity_bytes: "
                      "0}\nruns: []\n"),
            "report-values.yaml': device.memory_capacity_bytes is '0'; it "
            "must be a whole number above 0; write the report again with "
            "--report=FILE");
  // A run that ran out of memory, or measured nothing, has no time.
  EXPECT_EQ(readError(Head + "runs:\n  - {batch_size: 8, oom: true, "
                             "iterations: 4, iteration_ms: {median: 0}}\n"),
            "(read)");
  EXPECT_EQ(readError(Head + "runs:\n  - {batch_size: 8, iterations: 0, "
                             "iteration_ms: {median: 0}}\n"),
            "(read)");
}

TEST(RunReportTest, TheLitReportStillReads) {
  auto Read = readReport(SKYLINE_TEST_INPUTS "/reports/measured.yaml");
  ASSERT_TRUE(bool(Read)) << llvm::toString(Read.takeError());
  EXPECT_EQ(Read->Measured.Runs.size(), 3u);
}

/// The program measured at its own size, 24, read from 'model' at line 11.
SavedReport ownSizeSample() {
  SavedReport Report = sample();
  Report.Program.BatchSize.reset();
  Measurement &M = Report.Measured;
  M.Runs.resize(1);
  M.Runs[0].BatchSize = 24;
  M.Runs[0].ObservedBatchSize = 24;
  M.Runs[0].IterationMs.Median = 4;
  M.Runs[0].TimingRunMedians = {4.4, 4.0, 4.2};
  M.Runs[0].PeakBytes = 1000000;
  M.LargerThanTheData = M.FirstFailure = 0;
  M.AtOwnBatchSize = true;
  M.ObservedBy = "'model' (/src/train.cpp:11)";
  return Report;
}

TEST(RunReportTest, OwnBatchSizeSaysWhatOneSizeGivesAndWhyNoMore) {
  SavedReport Report = ownSizeSample();
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printOwnBatchSize(Report.Measured,
                    analyze(Report.Measured, 0, ModelOptions()), OS);
  EXPECT_EQ(
      Text,
      "measured at the program's own batch size, 24 (observed: the first "
      "dimension of what 'model' (/src/train.cpp:11) returned each "
      "iteration):\n"
      // Around the kept 4.0 ms: 4.0 e^-+(2.920 x 0.0477 x sqrt(4/3));
      // 24,000 / each.
      "  iteration 4.00 ms (3.41..4.70), 6000.0 samples/s (5109.3..7046.0), "
      "peak memory 977 KiB (90% intervals of a new run)\n"
      "other batch sizes were not predicted: the program's batch size is not "
      "a constant skyline-check can change, so only its own size ran; name "
      "the variable, field or macro that holds it with --batch-size-var=NAME, "
      "or change the argument, configuration or environment variable the "
      "program reads it from (the runs pass --run-arg and the environment on "
      "as given)\n");
  // What the report keeps reads back.
  auto Back =
      readReport(writeTemp("own-size.yaml", reportToYAML(Report, nullptr)));
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_TRUE(Back->Measured.AtOwnBatchSize);
  EXPECT_EQ(Back->Measured.ObservedBy, "'model' (/src/train.cpp:11)");
  ASSERT_EQ(Back->Measured.Runs.size(), 1u);
  EXPECT_EQ(Back->Measured.Runs[0].ObservedBatchSize, 24);
  EXPECT_FALSE(Back->Program.BatchSize);
}

TEST(RunReportTest, WhatIfSaysWhetherItFits) {
  SavedReport Report = sample();
  Analysis Model = analyze(Report.Measured, 32, ModelOptions());
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printWhatIf(Model, 48, OS);
  // 2 + 0.1 x 48 = 6.8 ms; 48 / 6.8 ms = 7058.8 samples/s; 1e6 + 5000 x 48.
  // The interval: the runs 5.7, 5.2 at 32 and 8.9, 8.4 at 64 spread by
  // sigma² = (ln(5.7/5.2)² + ln(8.9/8.4)²) / 4 = 0.00294 (2 degrees of
  // freedom, t 2.920); centred on the point, 6.8 ms; a new run's variance
  // sigma² (1 + 1/8 + 1/8) plus the prior curvature's
  // (0.1 ln 1.5 ln 0.75)²: 6.8 e^-+(2.920 x 0.0618).
  EXPECT_EQ(OS.str(),
            "what if batch size 48: iteration 6.80 ms (5.68..8.14), 7058.8 "
            "samples/s (5894.0..8453.9), peak memory 1.18 MiB (1.17 MiB..1.20 "
            "MiB) (fits)\n");

  // A tiny iteration keeps three significant digits: times 0.0672 and
  // 0.0736 ms at 32 and 64 (0.064 + 0.0002 b ms), 0.0656 ms at 8.
  for (MeasuredRun &Run : Report.Measured.Runs) {
    Run.IterationMs.Median = 0.064 + 0.0002 * double(Run.BatchSize);
    Run.TimingRunMedians = {Run.IterationMs.Median};
  }
  Model = analyze(Report.Measured, 32, ModelOptions());
  Text.clear();
  printWhatIf(Model, 8, OS);
  EXPECT_THAT(Text, HasSubstr("what if batch size 8: iteration 0.0656 ms ("));
}

} // namespace
} // namespace skyline
