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
  EXPECT_NE(Layer->find("| share of the iteration | 56% of 3.60 ms |"),
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
