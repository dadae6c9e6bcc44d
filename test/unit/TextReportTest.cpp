// Diagnostics look like clang's: location, level, message, rule, the source
// line, and a caret under the range.

#include "skyline/TextReport.h"
#include "skyline/TerminalText.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace skyline;

namespace {

TEST(TextReportTest, CaretUnderTheRange) {
  llvm::SmallString<128> Path;
  int FD;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("skyline", "cpp", FD, Path));
  {
    llvm::raw_fd_ostream File(FD, true);
    File << "// header\nconst int64_t kTrainBatchSize = 64;\n";
  }
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  DiagnosticPrinter Printer(OS, [](llvm::StringRef P) { return "shown.cpp"; });
  Printer.print(DiagLevel::Note, Path, 2, 33, 2, "training batch size", "skyline-batch-size",
                std::string("128"));
  EXPECT_EQ(OS.str(), "shown.cpp:2:33: note: training batch size [skyline-batch-size]\n"
                      "const int64_t kTrainBatchSize = 64;\n"
                      "                                ^~\n"
                      "                                128\n");
  llvm::sys::fs::remove(Path);
}

TEST(TextReportTest, MissingFileStillPrintsTheLocation) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  DiagnosticPrinter Printer(OS, [](llvm::StringRef P) { return P.str(); });
  Printer.print(DiagLevel::Warning, "/no/such.cpp", 4, 2, 1, "message", "rule");
  EXPECT_EQ(OS.str(), "/no/such.cpp:4:2: warning: message [rule]\n");
}

TEST(TextReportTest, SummaryCountsEverything) {
  ProgramModel Model;
  Model.Sources = {"a.cpp", "b.cpp"};
  Model.Modules.resize(3);
  Model.ModuleCalls.resize(1);
  Model.TrainingLoops.resize(1);
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  DiagnosticPrinter Printer(OS, [](llvm::StringRef P) { return P.str(); });
  printProgramModel(Model, Printer, OS);
  EXPECT_NE(OS.str().find("3 modules, 1 module call, 1 training loop in 2 sources"),
            std::string::npos)
      << OS.str();
}

TEST(TextReportTest, NamesFromOutsideAreEscaped) {
  EXPECT_EQ(escapeForTerminal("conv\x1b]8;;http://x\x07" "a\n::error file=x::y\r"
                              "\x7f\t\xc2\x9b\xc3\xa9"),
            "conv\\x1b]8;;http://x\\x07a\\n::error file=x::y\\r\\x7f\t"
            "\\u009b\xc3\xa9");
  EXPECT_EQ(escapeForTerminalKeepingLines("a\nb\x1b"), "a\nb\\x1b");
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  DiagnosticPrinter Printer(OS, [](llvm::StringRef P) { return P.str(); });
  Printer.print(DiagLevel::Warning, "missing.cpp", 3, 1, 1,
                "layer 'a\n::error file=x.cpp::pwned' is hot", "skyline-hot-layer");
  EXPECT_EQ(Text, "missing.cpp:3:1: warning: layer 'a\\n::error "
                  "file=x.cpp::pwned' is hot [skyline-hot-layer]\n");
}

} // namespace
