// Fix-its are clang-tidy's YAML, and only for the text they were found in.

#include "skyline/FixExport.h"

#include "skyline/FileHash.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
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

TEST(FixExportTest, FixesOfChangedOrForeignFilesAreStale) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("skyline-stale", Dir));
  std::string Source = (Dir + "/train.cpp").str();
  {
    std::error_code EC;
    llvm::raw_fd_ostream(Source, EC) << "const int64_t kBatchSize = 64;\n";
  }
  BatchSizeSite Site = site();
  Site.Literal.File = Source;
  std::vector<Finding> Fix = {makeBatchSizeFix(Site, 128)};
  ProgramModel Program;
  // A report from an older skyline-check records no digests.
  EXPECT_NE(whyFixesAreStale(Fix, Program)->find("records no SHA-256"),
            std::string::npos);
  Program.FileSha256[Source] = *sha256OfFile(Source);
  EXPECT_FALSE(whyFixesAreStale(Fix, Program));
  // The text changed since: the offsets would land elsewhere.
  {
    std::error_code EC;
    llvm::raw_fd_ostream(Source, EC) << "#include <x>\nconst int64_t k = 64;\n";
  }
  EXPECT_EQ(*whyFixesAreStale(Fix, Program),
            "'" + Source +
                "' changed since the report was made (its SHA-256 is not the "
                "one recorded)");
  // A fix-it for a file the report does not describe.
  Fix[0].Edits[0].Range.File = "/etc/hostname";
  EXPECT_EQ(*whyFixesAreStale(Fix, Program),
            "a fix-it names '/etc/hostname', which is not a file the report "
            "describes");
  // No edits, nothing to check.
  EXPECT_FALSE(whyFixesAreStale({}, ProgramModel()));
  llvm::sys::fs::remove_directories(Dir);
}

TEST(FixExportTest, Sha256IsTheStandardOne) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934c"
                           "a495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9c"
                              "b410ff61f20015ad");
}

TEST(FixExportTest, OneReplacementPerSite) {
  BatchSizeSite Site;
  Site.Name = "kBatch";
  Site.Value = 64;
  Site.Literal = {"train.cpp", 3, 33, 58, 2};
  Finding Suggested = makeBatchSizeFix(Site, 288);
  Suggested.Level = DiagLevel::Warning;
  Suggested.Message = "batch size 64 is below the throughput knee";
  std::vector<Finding> Findings{Suggested};
  addRequestedBatchSize(Findings, Site, 100);
  ASSERT_EQ(Findings.size(), 2u);
  EXPECT_TRUE(Findings[0].Edits.empty()) << "--set-batch-size wins";
  EXPECT_EQ(Findings[0].Message,
            "batch size 64 is below the throughput knee; its fix-it is left "
            "out: --set-batch-size=100 sets this line");
  std::string YAML = fixesToYAML("train.cpp", Findings);
  EXPECT_EQ(llvm::StringRef(YAML).count("ReplacementText"), 1u) << YAML;
  EXPECT_NE(YAML.find("ReplacementText: '100'"), std::string::npos) << YAML;

  // Two rules' fix-its on one literal: the first is exported, not both.
  std::vector<Finding> Both{makeBatchSizeFix(Site, 288),
                            makeBatchSizeFix(Site, 1000)};
  std::string Exported = fixesToYAML("train.cpp", Both);
  EXPECT_EQ(llvm::StringRef(Exported).count("ReplacementText"), 1u);
  EXPECT_NE(Exported.find("ReplacementText: '288'"), std::string::npos);
}

} // namespace
