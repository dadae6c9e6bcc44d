//===- LspDocumentTest.cpp - skyline-lsp's answers without the protocol ---===//

#include "skyline/LspDocument.h"

#include "skyline/FileHash.h"
#include "skyline/Frontend.h"
#include "skyline/ProgramModelYAML.h"
#include "skyline/TextReport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <fstream>
#include <sstream>

using namespace skyline;

namespace {

TEST(TextIndexTest, PositionsCountUtf16Units) {
  // "é" is two bytes and one unit, "𝑥" four bytes and two units.
  TextIndex Index("ab\n\xC3\xA9z\n\xF0\x9D\x91\xA5q");
  EXPECT_EQ(Index.position(0).Line, 0);
  EXPECT_EQ(Index.position(4).Line, 1);
  EXPECT_EQ(Index.position(5).Character, 1); // after é
  EXPECT_EQ(Index.position(11).Line, 2);
  EXPECT_EQ(Index.position(11).Character, 2); // after 𝑥
  EXPECT_EQ(Index.offset({2, 2}), 11u);
  EXPECT_EQ(Index.offset({1, 1}), 5u);
  EXPECT_EQ(Index.offsetOf(2, 2), 4u); // clang's byte column
  EXPECT_EQ(Index.offset({9, 0}), Index.text().size());
}

TEST(LineMapTest, LinesOutsideTheEditKeepTheirText) {
  LineMap Same("a\nb\nc", "a\nb\nc");
  EXPECT_TRUE(Same.identity());
  EXPECT_EQ(Same.map(2), 2);
  // Two lines inserted after the first; the second changed.
  LineMap Edited("a\nb\nc\nd", "a\nx\ny\nB\nc\nd");
  EXPECT_EQ(Edited.map(0), 0);
  EXPECT_EQ(Edited.map(1), std::nullopt); // b became B
  EXPECT_EQ(Edited.map(2), 4);
  EXPECT_EQ(Edited.map(3), 5);
  EXPECT_EQ(Edited.unmap(4), 2);
  EXPECT_EQ(Edited.unmap(2), std::nullopt);
  EXPECT_EQ(Edited.unmap(0), 0);
}

std::string readInput(const std::string &Name) {
  auto Buffer = llvm::MemoryBuffer::getFile(std::string(SKYLINE_TEST_INPUTS) +
                                            "/" + Name);
  EXPECT_TRUE(bool(Buffer)) << Name;
  return Buffer ? (*Buffer)->getBuffer().str() : "";
}

std::vector<std::string> mockFlags() {
  return {"-std=c++17", "-isystem", std::string(SKYLINE_TEST_INPUTS) + "/mock"};
}

/// The lit tests' saved report (reports/measured.yaml) of Code's program.
SavedReport reportOf(const ProgramModel &Model) {
  std::string Text = readInput("reports/measured.yaml") + "program:\n";
  std::istringstream Lines(programModelToYAML(Model));
  for (std::string Line; std::getline(Lines, Line);)
    Text += "  " + Line + "\n";
  llvm::SmallString<128> Path;
  llvm::sys::fs::createTemporaryFile("lsp-report", "yaml", Path);
  { std::ofstream(std::string(Path)) << Text; }
  auto Report = readReport(Path);
  llvm::sys::fs::remove(Path);
  EXPECT_TRUE(bool(Report)) << llvm::toString(Report.takeError());
  // The layers' files are relative, as in a report made in its directory;
  // the server makes them absolute from the workspace.
  llvm::SmallString<256> Current;
  llvm::sys::fs::current_path(Current);
  makeReportPathsAbsolute(*Report, Current);
  return std::move(*Report);
}

ProgramState stateOf(const std::string &Code) {
  auto Model = analyzeCode(Code, mockFlags(), "train.cpp");
  EXPECT_TRUE(bool(Model));
  ProgramState State;
  State.Model = std::move(*Model);
  // As the front end records a file read from disk.
  State.Model.FileSha256[State.Model.Sources.front()] = sha256Hex(Code);
  State.StaticNotes =
      programModelNotes(State.Model, [](llvm::StringRef P) { return P.str(); });
  return State;
}

TEST(LspDocumentTest, UnmeasuredOffersTheDoubleAndSaysHowToMeasure) {
  ProgramState State = stateOf(readInput("reports/train.cpp"));
  ASSERT_TRUE(State.Model.BatchSize);
  EXPECT_TRUE(inlayHints(State).empty());
  std::vector<BatchSizeAction> Actions = batchSizeActions(State);
  ASSERT_EQ(Actions.size(), 1u);
  EXPECT_EQ(Actions[0].Title, "Set batch size to 32 (doubled)");
  ASSERT_EQ(Actions[0].Fix.Edits.size(), 1u);
  EXPECT_EQ(Actions[0].Fix.Edits[0].Text, "32");
  EXPECT_NE(batchSizeHover(State).find("Not measured yet"), std::string::npos);
}

TEST(LspDocumentTest, MeasuredFindingsAreTheRulesOnTheReport) {
  std::string Code = readInput("reports/train.cpp");
  ProgramState State = stateOf(Code);
  loadMeasurement(State, reportOf(State.Model), "report.yaml");
  EXPECT_FALSE(State.MeasuredBeforeChange);
  ASSERT_FALSE(State.Measured.empty());
  const Finding &Suggestion = State.Measured.front();
  EXPECT_EQ(Suggestion.Rule, "skyline-batch-size");
  EXPECT_EQ(Suggestion.At.Line, 3u);
  EXPECT_EQ(Suggestion.At.Column, 28u);
  ASSERT_EQ(Suggestion.Edits.size(), 1u);
  EXPECT_EQ(Suggestion.Edits[0].Text, "152");
  std::vector<BatchSizeAction> Actions = batchSizeActions(State);
  ASSERT_FALSE(Actions.empty());
  EXPECT_EQ(Actions[0].BatchSize, 152);
  EXPECT_TRUE(Actions[0].Preferred);
  const std::string &File = State.Model.Sources.front();
  std::optional<std::string> Layer = layerHover(State, File, 11);
  ASSERT_TRUE(Layer);
  EXPECT_NE(Layer->find("| share of the median iteration | 56% of 3.60 ms |"),
            std::string::npos);
  EXPECT_FALSE(layerHover(State, File, 2));
}

TEST(LspDocumentTest, AReportOfOlderTextIsMarkedAndMovedOntoTheCode) {
  std::string Code = readInput("reports/train.cpp");
  ProgramState Then = stateOf(Code);
  SavedReport Report = reportOf(Then.Model);
  // Two lines added above the batch size: the report's offsets no longer
  // hold.
  std::string Edited = "// one\n// two\n" + Code;
  ProgramState Now = stateOf(Edited);
  loadMeasurement(Now, std::move(Report), "report.yaml");
  EXPECT_TRUE(Now.MeasuredBeforeChange);
  ASSERT_FALSE(Now.Measured.empty());
  for (const Finding &F : Now.Measured) {
    EXPECT_TRUE(F.Edits.empty()) << F.Message;
    llvm::StringRef Message(F.Message);
    EXPECT_TRUE(Message.ends_with(" (measured before the change: sources)"))
        << F.Message;
  }
  EXPECT_EQ(Now.Changes, std::vector<std::string>{"sources"});
  EXPECT_EQ(Now.Measured.front().At.Line, 5u); // the literal, moved
  const Finding *Hot = nullptr;
  for (const Finding &F : Now.Measured)
    if (F.Rule == "skyline-hot-layer" && F.Level == DiagLevel::Warning)
      Hot = &F;
  ASSERT_TRUE(Hot);
  EXPECT_EQ(Hot->At.Line, 13u); // fc1's call, moved
  // The actions come from the code as it is now.
  std::vector<BatchSizeAction> Actions = batchSizeActions(Now);
  ASSERT_FALSE(Actions.empty());
  EXPECT_EQ(Actions[0].Fix.Edits[0].Range.Line, 5u);
}

TEST(LspDocumentTest, AReportWithOtherFlagsIsMarkedButKeepsItsPlaces) {
  std::string Code = readInput("reports/train.cpp");
  ProgramState State = stateOf(Code);
  SavedReport Report = reportOf(State.Model);
  // The same text measured with other flags and LibTorch: the places and
  // fix-its hold, the figures may not.
  loadMeasurement(State, std::move(Report), "report.yaml",
                  {"sources", "compile flags", "LibTorch"});
  EXPECT_TRUE(State.MeasuredBeforeChange);
  EXPECT_FALSE(State.SourcesChanged);
  EXPECT_EQ(State.Changes,
            (std::vector<std::string>{"compile flags", "LibTorch"}));
  ASSERT_FALSE(State.Measured.empty());
  const Finding &Suggestion = State.Measured.front();
  EXPECT_EQ(Suggestion.At.Line, 3u);
  ASSERT_EQ(Suggestion.Edits.size(), 1u);
  EXPECT_EQ(Suggestion.Edits[0].Text, "152");
  EXPECT_TRUE(llvm::StringRef(Suggestion.Message)
                  .ends_with(" (measured before the change: compile flags, "
                             "LibTorch)"))
      << Suggestion.Message;
  EXPECT_NE(batchSizeHover(State).find(
                "*Measured before the change:* compile flags, LibTorch "
                "(report.yaml)."),
            std::string::npos);
  EXPECT_EQ(measuredBeforeChangeNote({}), "");
  EXPECT_EQ(measuredBeforeChangeNote({"device"}),
            " (measured before the change: device)");
}

std::vector<std::string> titles(const std::vector<BatchSizeAction> &Actions) {
  std::vector<std::string> Titles;
  for (const BatchSizeAction &Action : Actions)
    Titles.push_back(Action.Title);
  return Titles;
}

// The report's model: t = 2 + 0.1 b ms, peak 1e6 + 1e4 b bytes, 3.6e6 usable,
// so 260 fits (docs/model.md's worked example, at 16).
TEST(LspDocumentTest, ActionsStayUnderTheCommandLinesBound) {
  std::string Code = readInput("reports/train.cpp");
  ProgramState State = stateOf(Code);
  SavedReport Report = reportOf(State.Model);
  // The loader held 400 samples: the command line suggests nothing past
  // 200 (two batches an epoch), though 260 fits.
  for (MeasuredRun &Run : Report.Measured.Runs)
    Run.DatasetSamples = 400;
  loadMeasurement(State, Report, "report.yaml");
  ASSERT_TRUE(State.Predicted->MaxBatchSize);
  EXPECT_EQ(*State.Predicted->MaxBatchSize, 260);
  EXPECT_EQ(suggestionCap(*State.Predicted, 260), 200);
  // Under 200: 200 / 22 ms = 9091 samples/s is the best; 128 / 14.8 ms =
  // 8649 the first multiple of 8 within 5% of it. The sizes between are
  // 128 x (200/128)^(k/3) rounded down to 8: 144 and 168.
  EXPECT_EQ(titles(batchSizeActions(State)),
            (std::vector<std::string>{
                "Set batch size to 128 (suggested: +95% throughput, 2.17 MiB "
                "peak)",
                "Set batch size to 128 and scale the learning rate to 0.08 "
                "(linear scaling rule)",
                "Set batch size to 144 (+98% throughput, 2.33 MiB peak)",
                "Set batch size to 168 (+101% throughput, 2.56 MiB peak)",
                "Set batch size to 200 (half the training data: +105% "
                "throughput, 2.86 MiB peak)",
                "Set batch size to 32 (doubled: +38% throughput, 1.26 MiB "
                "peak)"}));
  EXPECT_NE(batchSizeHover(State).find("| 200 | half the training data "
                                       "(extrapolated) | 22.00"),
            std::string::npos);

  // With no suggestion (a min gain of 500%), no size is preferred: the
  // nearest first, and the largest is the bound, not the 260 that fits.
  ProgramState Unsuggested = stateOf(Code);
  Unsuggested.Rules.Model.MinGain = 5;
  loadMeasurement(Unsuggested, Report, "report.yaml");
  ASSERT_FALSE(Unsuggested.Predicted->Suggested);
  EXPECT_EQ(titles(batchSizeActions(Unsuggested)),
            (std::vector<std::string>{
                "Set batch size to 32 (doubled: +38% throughput, 1.26 MiB "
                "peak)",
                "Set batch size to 200 (half the training data: +105% "
                "throughput, 2.86 MiB peak)"}));
  // Without the data's bound the largest is the largest that fits.
  ProgramState Unbounded = stateOf(Code);
  Unbounded.Rules.Model.MinGain = 5;
  loadMeasurement(Unbounded, reportOf(Unbounded.Model), "report.yaml");
  EXPECT_EQ(titles(batchSizeActions(Unbounded)),
            (std::vector<std::string>{
                "Set batch size to 32 (doubled: +38% throughput, 1.26 MiB "
                "peak)",
                "Set batch size to 260 (largest that fits: +109% throughput, "
                "3.43 MiB peak)"}));
  // A run that failed at 97 bounds them below it, as it bounds the
  // suggestion.
  SavedReport Failed = reportOf(Unbounded.Model);
  Failed.Measured.FirstFailure = 97;
  loadMeasurement(Unbounded, Failed, "report.yaml");
  EXPECT_EQ(titles(batchSizeActions(Unbounded)),
            (std::vector<std::string>{
                "Set batch size to 32 (doubled: +38% throughput, 1.26 MiB "
                "peak)",
                "Set batch size to 96 (below the size that failed: +86% "
                "throughput, 1.87 MiB peak)"}));
}

TEST(LspDocumentTest, WholeBatchesOfferOnlyDivisorsOfTheDataset) {
  // A loop that shapes tensors by the batch size fails on a short last
  // batch: of 400 samples the command line suggests 200 (of 16, 40, 80,
  // 200, the multiples of 8 that divide 400), and 32, the double, does not
  // divide them.
  std::string Code = readInput("reports/train.cpp");
  ProgramState State = stateOf(Code);
  SavedReport Report = reportOf(State.Model);
  ASSERT_FALSE(Report.Program.TrainingLoops.empty());
  Report.Program.TrainingLoops.front().BatchShapes.push_back({});
  for (MeasuredRun &Run : Report.Measured.Runs)
    Run.DatasetSamples = 400;
  loadMeasurement(State, Report, "report.yaml");
  EXPECT_EQ(State.Predicted->WholeBatchSamples, 400);
  EXPECT_EQ(titles(batchSizeActions(State)),
            (std::vector<std::string>{
                "Set batch size to 200 (suggested: +105% throughput, 2.86 MiB "
                "peak)",
                "Set batch size to 200 and scale the learning rate to 0.125 "
                "(linear scaling rule)"}));
}

TEST(LspDocumentTest, ActionsAreQuickFixesOnlyWhereAsked) {
  std::string Code = readInput("reports/train.cpp");
  ProgramState State = stateOf(Code);
  loadMeasurement(State, reportOf(State.Model), "report.yaml");
  EXPECT_EQ(batchSizeActions(State).size(), 6u);
  EXPECT_EQ(batchSizeActions(State, {"quickfix"}).size(), 6u);
  EXPECT_EQ(batchSizeActions(State, {"refactor", "quickfix"}).size(), 6u);
  EXPECT_TRUE(batchSizeActions(State, {"refactor"}).empty());
  EXPECT_TRUE(batchSizeActions(State, {"source.fixAll"}).empty());
  EXPECT_TRUE(codeActionKindRequested({}, "quickfix"));
  EXPECT_TRUE(codeActionKindRequested({""}, "quickfix"));
  EXPECT_TRUE(codeActionKindRequested({"quickfix"}, "quickfix.skyline"));
  EXPECT_FALSE(codeActionKindRequested({"quickfix.skyline"}, "quickfix"));
  EXPECT_FALSE(codeActionKindRequested({"quick"}, "quickfix"));
}

TEST(LspDocumentTest, HoversArePlainTextUnlessTheClientTakesMarkdown) {
  auto Capabilities = [](llvm::StringRef Json) {
    llvm::Expected<llvm::json::Value> Value = llvm::json::parse(Json);
    EXPECT_TRUE(bool(Value));
    return *Value->getAsObject();
  };
  EXPECT_TRUE(clientTakesMarkdownHovers(Capabilities(
      R"({"textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}}})")));
  EXPECT_TRUE(clientTakesMarkdownHovers(Capabilities(
      R"({"textDocument": {"hover": {"contentFormat": ["plaintext", "markdown"]}}})")));
  EXPECT_FALSE(clientTakesMarkdownHovers(Capabilities(
      R"({"textDocument": {"hover": {"contentFormat": ["plaintext"]}}})")));
  EXPECT_FALSE(clientTakesMarkdownHovers(Capabilities(R"({})")));

  std::string Code = readInput("reports/train.cpp");
  ProgramState State = stateOf(Code);
  EXPECT_EQ(batchSizeHover(State, false),
            "training batch size 'kBatchSize' = 16 (namespace-constant)\n\n"
            "Not measured yet: run 'skyline-check " +
                State.Model.Sources.front() +
                " -p <build dir>' to measure; its report is read from the "
                "work directory.");
  loadMeasurement(State, reportOf(State.Model), "report.yaml");
  EXPECT_EQ(
      batchSizeHover(State, false),
      "training batch size 'kBatchSize' = 16 (namespace-constant)\n"
      "\n"
      "batch size  which                                     iteration ms"
      "           samples/s                    peak memory\n"
      "        16  current                              3.60 (3.20..4.04)"
      "   4444 (3956..4993)  1.11 MiB (1.09 MiB..1.12 MiB)\n"
      "       152  suggested (extrapolated)          17.20 (11.28..26.22)"
      "  8837 (5798..13470)  2.40 MiB (2.29 MiB..2.53 MiB)\n"
      "        32  doubled                              5.20 (4.63..5.84)"
      "   6154 (5478..6913)  1.26 MiB (1.24 MiB..1.27 MiB)\n"
      "       260  largest that fits (extrapolated)  28.00 (11.98..65.44)"
      "  9286 (3973..21702)  3.43 MiB (3.10 MiB..3.81 MiB)\n"
      "\n"
      "90% intervals in parentheses. Fits: iteration time R² 1.0000, peak "
      "memory R² 1.0000, over 3 batch sizes measured (up to 64); suggested "
      "152: 99% more throughput (30% to 203%).");
  const std::string &File = State.Model.Sources.front();
  // The layer's table has an empty header, which goes.
  EXPECT_EQ(layerHover(State, File, 11, false).value_or(""),
            "layer 'fc1' (torch::nn::Linear) at batch size 16\n"
            "\n"
            "forward                               1.00 ms\n"
            "backward                              1.00 ms\n"
            "share of the median iteration  56% of 3.60 ms\n"
            "activations at the peak              32.0 KiB\n"
            "weights                              1.53 MiB\n");
  // Markdown as before.
  EXPECT_EQ(layerHover(State, File, 11)->substr(0, 52),
            "**layer** `fc1` (torch::nn::Linear) at batch size 16");
}

TEST(LspDocumentTest, LayerFiguresAreOfTheMedianIteration) {
  // A slow iteration pulls the run's mean to 4.00 ms; the median, 3.60 ms,
  // is what the run table and the loop's hint show, and fc1's 2.00 ms is
  // 56% of it (50% of the mean).
  std::string Code = readInput("reports/train.cpp");
  ProgramState State = stateOf(Code);
  SavedReport Report = reportOf(State.Model);
  Report.Measured.Runs.front().IterationMs.Mean = 4.0;
  loadMeasurement(State, std::move(Report), "report.yaml");
  const std::string &File = State.Model.Sources.front();
  EXPECT_NE(layerHover(State, File, 11)
                ->find("| share of the median iteration | 56% of 3.60 ms |"),
            std::string::npos);
  std::vector<std::string> Labels;
  for (const InlayHintAt &Hint : inlayHints(State))
    Labels.push_back(Hint.Label);
  EXPECT_EQ(Labels, (std::vector<std::string>{
                        "fwd 1.00 ms, bwd 1.00 ms, 56% of the median iteration",
                        "fwd 0.30 ms, bwd 0.20 ms, 14% of the median iteration",
                        "fwd 0.20 ms, bwd 0.10 ms, 8.3% of the median "
                        "iteration",
                        "4444 samples/s, 1.11 MiB peak",
                        "median iteration 3.60 ms at batch size 16"}));
  bool Hot = false;
  for (const Finding &F : State.Measured)
    if (F.Rule == "skyline-hot-layer" && F.Level == DiagLevel::Warning) {
      Hot = true;
      EXPECT_EQ(F.Message,
                "layer 'fc1' (torch::nn::Linear) takes 56% of the median "
                "iteration time at batch size 16: forward 1.00 ms, backward "
                "1.00 ms of 3.60 ms");
    }
  EXPECT_TRUE(Hot);
}

TEST(LspDocumentTest, MeasurementWarningsAreTheCommandLines) {
  Measurement M;
  M.Problems = {"the run at batch size 512 failed (exit 1); no size from it "
                "on is suggested"};
  for (int64_t Size : {16, 32, 64}) {
    M.Runs.emplace_back();
    M.Runs.back().BatchSize = Size;
  }
  M.Runs[1].OtherWorkCores = 1.2;
  M.Runs[2].OtherWorkCores = 0.1; // under BusyCoresLimit
  M.Runs[2].StealCores = 0.25;
  EXPECT_EQ(measurementWarnings(M, 2),
            (std::vector<std::string>{
                M.Problems[0],
                "other work held the CPUs during the kept runs at batch size "
                "32 (1.2 of 2 cores, on average): their times include "
                "waiting for a CPU; measure on a quiet machine",
                "the hypervisor took CPU time from this machine (steal) "
                "during the kept runs at batch size 64 (0.25 of 2 cores): no "
                "process here can free it, and their times include it; "
                "measure on a machine with dedicated CPUs, or compare runs "
                "made at the same hour"}));
  EXPECT_TRUE(measurementWarnings(Measurement(), 2).empty());

  // In the editor: warnings at the batch-size literal, after the rules'
  // findings, without a rule id; moved and marked where the code changed.
  std::string Code = readInput("reports/train.cpp");
  ProgramState Then = stateOf(Code);
  SavedReport Report = reportOf(Then.Model);
  Report.Measured.Problems = M.Problems;
  ProgramState State = stateOf(Code);
  loadMeasurement(State, Report, "report.yaml");
  const Finding &Last = State.Measured.back();
  EXPECT_EQ(Last.Rule, "");
  EXPECT_EQ(Last.Level, DiagLevel::Warning);
  EXPECT_EQ(Last.Message, M.Problems[0]);
  EXPECT_EQ(Last.At.Line, 3u);
  EXPECT_EQ(Last.At.Column, 28u);
  EXPECT_EQ(Last.At.Length, 2u);
  ProgramState Edited = stateOf("// one\n// two\n" + Code);
  loadMeasurement(Edited, Report, "report.yaml");
  EXPECT_EQ(Edited.Measured.back().Message,
            M.Problems[0] + " (measured before the change: sources)");
  EXPECT_EQ(Edited.Measured.back().At.Line, 5u);
  // The lit tests' report has none.
  ProgramState Quiet = stateOf(Code);
  loadMeasurement(Quiet, reportOf(Quiet.Model), "report.yaml");
  for (const Finding &F : Quiet.Measured)
    EXPECT_FALSE(F.Rule.empty()) << F.Message;
}

TEST(LspDocumentTest, ReportPathsAreTakenFromTheWorkspace) {
  SavedReport Report;
  Report.Program.Sources = {"train.cpp"};
  Report.Program.BatchSize = BatchSizeSite();
  Report.Program.BatchSize->Literal.File = "train.cpp";
  Report.Program.FileSha256["train.cpp"] = "0";
  Report.Measured.Runs.emplace_back();
  Report.Measured.Runs.back().Layers.push_back({});
  Report.Measured.Runs.back().Layers.back().File = "sub/../train.cpp";
  EXPECT_TRUE(reportDescribes(Report, "/ws/train.cpp", "/ws"));
  EXPECT_FALSE(reportDescribes(Report, "/ws/other.cpp", "/ws"));
  makeReportPathsAbsolute(Report, "/ws");
  EXPECT_EQ(Report.Program.BatchSize->Literal.File, "/ws/train.cpp");
  EXPECT_EQ(Report.Program.FileSha256.begin()->first, "/ws/train.cpp");
  EXPECT_EQ(Report.Measured.Runs.front().Layers.front().File, "/ws/train.cpp");
}

} // namespace
