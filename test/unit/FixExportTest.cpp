// Fix-its are clang-tidy's YAML, and files are written whole or not at all.

#include "skyline/FixExport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "gtest/gtest.h"

using namespace skyline;

namespace {

BatchSizeSite site() {
  BatchSizeSite Site;
  Site.Name = "kTrainBatchSize";
  Site.Value = 64;
  Site.Literal = {"/src/train.cpp", 3, 33, 52, 2};
  return Site;
}

TEST(FixExportTest, BatchSizeFixReplacesTheLiteral) {
  Finding F = makeBatchSizeFix(site(), 128);
  EXPECT_EQ(F.Rule, "skyline-batch-size");
  EXPECT_EQ(F.Message,
            "set the training batch size 'kTrainBatchSize' from 64 to 128");
  ASSERT_EQ(F.Edits.size(), 1u);
  EXPECT_EQ(F.Edits[0].Text, "128");
  EXPECT_EQ(F.Edits[0].Range.Offset, 52u);
  EXPECT_EQ(F.Edits[0].Range.Length, 2u);
}

TEST(FixExportTest, YAMLHasClangTidyShape) {
  std::string Text =
      fixesToYAML("/src/train.cpp", {makeBatchSizeFix(site(), 128)});
  for (const char *Line :
       {"MainSourceFile:  '/src/train.cpp'",
        "DiagnosticName:  skyline-batch-size",
        "FilePath:        '/src/train.cpp'", "FileOffset:      52",
        "Offset:          52", "Length:          2", "ReplacementText: '128'",
        "Level:           Warning"})
    EXPECT_NE(Text.find(Line), std::string::npos) << Line << "\n" << Text;
}

TEST(FixExportTest, OptionalFixesOnlyOnRequestAndFindingsWithoutEditsNever) {
  Finding Rate;
  Rate.Rule = "skyline-batch-size";
  Rate.Level = DiagLevel::Note;
  Rate.Message = "scale the learning rate";
  Rate.At = {"/src/train.cpp", 9, 40, 200, 4};
  Rate.Edits.push_back({Rate.At, "0.04"});
  Rate.OptionalFix = true;
  Finding NoEdit;
  NoEdit.Rule = "skyline-hot-layer";
  NoEdit.At = {"/src/train.cpp", 12, 5, 300, 3};
  std::vector<Finding> All = {makeBatchSizeFix(site(), 128), Rate, NoEdit};

  std::string Plain = fixesToYAML("/src/train.cpp", All);
  EXPECT_EQ(Plain.find("0.04"), std::string::npos) << Plain;
  EXPECT_EQ(Plain.find("skyline-hot-layer"), std::string::npos) << Plain;
  EXPECT_NE(Plain.find("ReplacementText: '128'"), std::string::npos) << Plain;

  std::string WithRate =
      fixesToYAML("/src/train.cpp", All, /*IncludeOptional=*/true);
  EXPECT_NE(WithRate.find("ReplacementText: '0.04'"), std::string::npos)
      << WithRate;
  EXPECT_NE(WithRate.find("Offset:          200"), std::string::npos)
      << WithRate;
}

TEST(FixExportTest, WriteFailsCleanlyInAMissingDirectory) {
  llvm::Error E = writeFileAtomically("/nonexistent-dir/fixes.yaml", "x");
  ASSERT_TRUE(bool(E));
  std::string Message = llvm::toString(std::move(E));
  EXPECT_NE(Message.find("/nonexistent-dir/fixes.yaml"), std::string::npos);
  EXPECT_FALSE(llvm::sys::fs::exists("/nonexistent-dir/fixes.yaml"));
}

TEST(FixExportTest, WriteReplacesTheFileWhole) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("skyline-fix", Dir));
  std::string Path = (Dir + "/fixes.yaml").str();
  ASSERT_FALSE(bool(writeFileAtomically(Path, "first")));
  ASSERT_FALSE(bool(writeFileAtomically(Path, "second")));
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  ASSERT_TRUE(bool(Buffer));
  EXPECT_EQ((*Buffer)->getBuffer(), "second");
  std::error_code EC;
  int Files = 0;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    ++Files;
  EXPECT_EQ(Files, 1) << "no temporary file is left behind";
  llvm::sys::fs::remove_directories(Dir);
}

} // namespace
