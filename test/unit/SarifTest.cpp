// Findings as SARIF 2.1.0 the way GitHub code scanning takes them: URIs
// relative to the source root, one-line regions, fingerprints that survive
// moved lines, fixes as byte and column replacements, and a log that
// validates against the schema.

#include "skyline/Sarif.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace skyline;
namespace json = llvm::json;
using llvm::StringRef;

namespace {

const char TrainSource[] = "#include <torch/torch.h>\n"
                           "\n"
                           "const int64_t kBatchSize = 64;\n"
                           "auto Options = torch::optim::SGDOptions(0.01);\n";

/// The value at a '/'-separated path of keys and array indices, or null.
const json::Value *at(const json::Value &Root, StringRef Path) {
  const json::Value *V = &Root;
  llvm::SmallVector<StringRef, 8> Parts;
  Path.split(Parts, '/');
  for (StringRef Part : Parts) {
    unsigned Index;
    if (const json::Array *A = V->getAsArray();
        A && !Part.getAsInteger(10, Index))
      V = Index < A->size() ? &(*A)[Index] : nullptr;
    else if (const json::Object *O = V->getAsObject())
      V = O->get(Part);
    else
      V = nullptr;
    if (!V)
      return nullptr;
  }
  return V;
}

std::string str(const json::Value &Root, StringRef Path) {
  const json::Value *V = at(Root, Path);
  if (!V)
    return "<missing " + Path.str() + ">";
  if (std::optional<StringRef> S = V->getAsString())
    return S->str();
  return "<not a string: " + Path.str() + ">";
}

int64_t num(const json::Value &Root, StringRef Path) {
  const json::Value *V = at(Root, Path);
  return V ? V->getAsInteger().value_or(-1) : -1;
}

size_t count(const json::Value &Root, StringRef Path) {
  const json::Value *V = at(Root, Path);
  const json::Array *A = V ? V->getAsArray() : nullptr;
  return A ? A->size() : 0;
}

/// Where Needle first occurs in Text, as clang would report it.
SourceSpan spanOf(StringRef File, StringRef Text, StringRef Needle) {
  size_t Offset = Text.find(Needle);
  EXPECT_NE(Offset, StringRef::npos) << Needle.str();
  StringRef Before = Text.take_front(Offset);
  size_t LineStart = Before.rfind('\n');
  LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
  SourceSpan Span;
  Span.File = File.str();
  Span.Line = Before.count('\n') + 1;
  Span.Column = Offset - LineStart + 1;
  Span.Offset = Offset;
  Span.Length = Needle.size();
  return Span;
}

/// The 64 of kBatchSize in TrainSource, line 3, column 28.
SourceSpan batchLiteral(StringRef File) {
  SourceSpan Span = spanOf(File, TrainSource, "64;");
  Span.Length = 2;
  return Span;
}

Finding finding(StringRef Rule, SourceSpan At,
                DiagLevel Level = DiagLevel::Warning) {
  Finding F;
  F.Rule = Rule.str();
  F.Level = Level;
  F.Message = "message of " + Rule.str();
  F.At = std::move(At);
  return F;
}

int runValidator(StringRef SarifPath) {
  std::string Command =
      std::string("'") + SKYLINE_PYTHON + "' '" + SKYLINE_SOURCE_DIR +
      "/test/lit/Inputs/validate-sarif.py' '" + SKYLINE_SOURCE_DIR +
      "/test/data/sarif-schema-2.1.0.json' '" + SarifPath.str() + "'";
  int Status = std::system(Command.c_str());
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
}

/// A temporary source tree, the --source-root of the logs.
class SarifTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("skyline-sarif", Root));
    Train = write("train.cpp", TrainSource);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Root); }

  std::string write(StringRef Relative, StringRef Text) {
    llvm::SmallString<256> Path(Root);
    llvm::sys::path::append(Path, Relative);
    EXPECT_FALSE(
        llvm::sys::fs::create_directories(llvm::sys::path::parent_path(Path)));
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    EXPECT_FALSE(EC) << std::string(Path);
    OS << Text;
    return std::string(Path);
  }

  json::Value sarif(llvm::ArrayRef<Finding> Findings,
                    SarifOptions Options = {}) {
    if (Options.SourceRoot.empty())
      Options.SourceRoot = std::string(Root);
    llvm::Expected<json::Value> Log =
        json::parse(findingsToSarif(Findings, Options));
    if (!Log) {
      ADD_FAILURE() << llvm::toString(Log.takeError());
      return nullptr;
    }
    return std::move(*Log);
  }

  /// The fingerprint of a lone finding of Rule at Needle in File.
  std::string hashOf(StringRef Rule, StringRef File, StringRef Text,
                     StringRef Needle) {
    json::Value Log = sarif({finding(Rule, spanOf(File, Text, Needle))});
    return str(Log, "runs/0/results/0/partialFingerprints/"
                    "primaryLocationLineHash");
  }

  llvm::SmallString<128> Root;
  std::string Train;
};

TEST_F(SarifTest, LogNamesSchemaVersionToolAndCategory) {
  SarifOptions Options;
  Options.ToolVersion = "0.3.0";
  Options.AutomationId = "skyline-check/train/";
  json::Value Log = sarif({}, Options);
  EXPECT_EQ(str(Log, "$schema"),
            "https://json.schemastore.org/sarif-2.1.0.json");
  EXPECT_EQ(str(Log, "version"), "2.1.0");
  EXPECT_EQ(count(Log, "runs"), 1u);
  EXPECT_EQ(str(Log, "runs/0/tool/driver/name"), "skyline-check");
  EXPECT_EQ(str(Log, "runs/0/tool/driver/version"), "0.3.0");
  EXPECT_EQ(str(Log, "runs/0/automationDetails/id"), "skyline-check/train/");
  EXPECT_EQ(str(Log, "runs/0/columnKind"), "utf16CodeUnits");
  ASSERT_NE(at(Log, "runs/0/results"), nullptr);
  EXPECT_EQ(count(Log, "runs/0/results"), 0u);

  json::Value Plain = sarif({});
  EXPECT_EQ(at(Plain, "runs/0/automationDetails"), nullptr);
}

TEST_F(SarifTest, RulesAreTheCatalogInOrder) {
  json::Value Log = sarif({});
  llvm::ArrayRef<RuleInfo> Catalog = ruleCatalog();
  ASSERT_EQ(count(Log, "runs/0/tool/driver/rules"), Catalog.size());
  for (size_t I = 0; I < Catalog.size(); ++I) {
    std::string Rule = "runs/0/tool/driver/rules/" + std::to_string(I) + "/";
    EXPECT_EQ(str(Log, Rule + "id"), Catalog[I].Id);
    EXPECT_EQ(str(Log, Rule + "shortDescription/text"),
              Catalog[I].ShortDescription);
    EXPECT_EQ(str(Log, Rule + "fullDescription/text"),
              Catalog[I].FullDescription);
    EXPECT_NE(str(Log, Rule + "help/text").find(Catalog[I].DocsPage),
              std::string::npos);
    EXPECT_NE(str(Log, Rule + "help/markdown").find(Catalog[I].DocsPage),
              std::string::npos);
    EXPECT_EQ(str(Log, Rule + "properties/tags/0"), "performance");
    std::string Precision = str(Log, Rule + "properties/precision");
    EXPECT_TRUE(Precision == "medium" || Precision == "high") << Precision;
  }
  EXPECT_EQ(str(Log, "runs/0/tool/driver/rules/0/name"), "SkylineBatchSize");

  const std::pair<const char *, const char *> Levels[] = {
      {"skyline-batch-size", "warning"},
      {"skyline-memory-capacity", "warning"},
      {"skyline-hot-layer", "warning"},
      {"skyline-memory-breakdown", "note"},
      {"skyline-throughput-regression", "error"},
      {"skyline-memory-regression", "error"},
  };
  for (auto [Id, Level] : Levels) {
    const RuleInfo *Info = findRule(Id);
    ASSERT_NE(Info, nullptr) << Id;
    std::string Rule = "runs/0/tool/driver/rules/" +
                       std::to_string(Info - Catalog.data()) + "/";
    EXPECT_EQ(str(Log, Rule + "defaultConfiguration/level"), Level) << Id;
    EXPECT_EQ(str(Log, Rule + "properties/problem.severity"),
              StringRef(Level) == "note" ? "recommendation" : Level)
        << Id;
  }
}

TEST_F(SarifTest, UrisAreRelativeToTheSourceRoot) {
  write("src/model/net.cpp", "int x;\n");
  std::string Spaced = write("data dir/my file.cpp", "int y;\n");
  std::vector<Finding> Findings = {
      finding("skyline-hot-layer", batchLiteral(Train)),
      finding("skyline-hot-layer", spanOf((Root + "/src/./model/../model/"
                                                  "net.cpp")
                                              .str(),
                                          "int x;\n", "x")),
      finding("skyline-hot-layer", spanOf(Spaced, "int y;\n", "y")),
      finding("skyline-hot-layer",
              spanOf("/usr/include/some header.h", "int z;\n", "z")),
  };
  json::Value Log = sarif(Findings);
  EXPECT_EQ(str(Log, "runs/0/originalUriBaseIds/%SRCROOT%/uri"),
            "file://" + std::string(Root) + "/");

  const char *Uris[] = {"train.cpp", "src/model/net.cpp",
                        "data%20dir/my%20file.cpp"};
  for (size_t I = 0; I < 3; ++I) {
    std::string Artifact = "runs/0/results/" + std::to_string(I) +
                           "/locations/0/physicalLocation/artifactLocation/";
    EXPECT_EQ(str(Log, Artifact + "uri"), Uris[I]);
    EXPECT_EQ(str(Log, Artifact + "uriBaseId"), "%SRCROOT%");
  }
  std::string Outside =
      "runs/0/results/3/locations/0/physicalLocation/artifactLocation/";
  EXPECT_EQ(str(Log, Outside + "uri"), "file:///usr/include/some%20header.h");
  EXPECT_EQ(at(Log, Outside + "uriBaseId"), nullptr);
}

TEST_F(SarifTest, RootReachedThroughASymlinkStillGivesRelativeUris) {
  std::string Link = (Root + "-link").str();
  ASSERT_FALSE(llvm::sys::fs::create_link(Root, Link));
  SarifOptions Options;
  Options.SourceRoot = Link;
  json::Value Log =
      sarif({finding("skyline-batch-size", batchLiteral(Train))}, Options);
  llvm::sys::fs::remove(Link);
  EXPECT_EQ(str(Log, "runs/0/originalUriBaseIds/%SRCROOT%/uri"),
            "file://" + Link + "/");
  EXPECT_EQ(str(Log, "runs/0/results/0/locations/0/physicalLocation/"
                     "artifactLocation/uri"),
            "train.cpp");
}

TEST_F(SarifTest, RootUriIsAPercentEncodedDirectory) {
  SarifOptions Options;
  Options.SourceRoot = "/work/my project/a+b/";
  EXPECT_EQ(str(sarif({}, Options), "runs/0/originalUriBaseIds/%SRCROOT%/uri"),
            "file:///work/my%20project/a%2Bb/");
}

TEST_F(SarifTest, RegionIsOneLineWithAnExclusiveEnd) {
  json::Value Log = sarif({finding("skyline-batch-size", batchLiteral(Train))});
  std::string Region = "runs/0/results/0/locations/0/physicalLocation/region/";
  EXPECT_EQ(num(Log, Region + "startLine"), 3);
  EXPECT_EQ(num(Log, Region + "startColumn"), 28);
  EXPECT_EQ(num(Log, Region + "endLine"), 3);
  EXPECT_EQ(num(Log, Region + "endColumn"), 30);

  SourceSpan Point = batchLiteral(Train);
  Point.Length = 0;
  json::Value Empty = sarif({finding("skyline-batch-size", Point)});
  EXPECT_EQ(num(Empty, Region + "startColumn"), 28);
  EXPECT_EQ(num(Empty, Region + "endColumn"), 29);
}

TEST_F(SarifTest, ColumnsCountUtf16CodeUnits) {
  // "é" is two bytes and one UTF-16 unit; "𝑥" four bytes and two units.
  StringRef Text = "auto S = \"é𝑥\"; int N = 8;\n";
  std::string File = write("utf8.cpp", Text);
  SourceSpan Eight = spanOf(File, Text, "8");
  json::Value Log = sarif({finding("skyline-batch-size", Eight)});
  std::string Region = "runs/0/results/0/locations/0/physicalLocation/region/";
  EXPECT_EQ(Eight.Column, 28u);
  EXPECT_EQ(num(Log, Region + "startColumn"), 25);
  EXPECT_EQ(num(Log, Region + "endColumn"), 26);
}

TEST_F(SarifTest, ResultsCarryRuleLevelAndMessage) {
  SourceSpan At = batchLiteral(Train);
  std::vector<Finding> Findings = {
      finding("skyline-batch-size", At, DiagLevel::Note),
      finding("skyline-hot-layer", At, DiagLevel::Remark),
      finding("skyline-memory-capacity", At, DiagLevel::Warning),
      finding("skyline-memory-regression", At, DiagLevel::Error),
      finding("skyline-not-in-the-catalog", At),
  };
  json::Value Log = sarif(Findings);
  const char *Levels[] = {"note", "note", "warning", "error", "warning"};
  for (size_t I = 0; I < Findings.size(); ++I) {
    std::string Result = "runs/0/results/" + std::to_string(I) + "/";
    EXPECT_EQ(str(Log, Result + "ruleId"), Findings[I].Rule);
    EXPECT_EQ(str(Log, Result + "level"), Levels[I]);
    EXPECT_EQ(str(Log, Result + "message/text"), Findings[I].Message);
    EXPECT_EQ(at(Log, Result + "properties"), nullptr);
    if (const RuleInfo *Rule = findRule(Findings[I].Rule))
      EXPECT_EQ(num(Log, Result + "ruleIndex"), Rule - ruleCatalog().data());
    else
      EXPECT_EQ(at(Log, Result + "ruleIndex"), nullptr);
  }
}

TEST_F(SarifTest, FileLessFindingHasNoLocations) {
  Finding Regression =
      finding("skyline-throughput-regression", SourceSpan(), DiagLevel::Error);
  json::Value Log = sarif({Regression});
  EXPECT_EQ(at(Log, "runs/0/results/0/locations"), nullptr);
  EXPECT_EQ(str(Log, "runs/0/results/0/message/text"), Regression.Message);
  EXPECT_NE(at(Log, "runs/0/results/0/partialFingerprints/"
                    "primaryLocationLineHash"),
            nullptr);
}

TEST_F(SarifTest, FingerprintSurvivesMovedLines) {
  std::string Before =
      hashOf("skyline-batch-size", Train, TrainSource, "kBatchSize");
  EXPECT_TRUE(StringRef(Before).ends_with(":1")) << Before;
  EXPECT_EQ(Before.size(), 16u + 2u) << Before;

  // Two lines more above it, and indented: the same line of code.
  std::string Moved = "#include <torch/torch.h>\n\n// Batch size.\n\n"
                      "  const int64_t kBatchSize = 64;  \n";
  write("train.cpp", Moved);
  EXPECT_EQ(hashOf("skyline-batch-size", Train, Moved, "kBatchSize"), Before);
}

TEST_F(SarifTest, FingerprintDependsOnTextRuleAndFile) {
  std::string Base =
      hashOf("skyline-batch-size", Train, TrainSource, "kBatchSize");
  EXPECT_NE(hashOf("skyline-batch-size", Train, TrainSource, "SGDOptions"),
            Base);
  EXPECT_NE(hashOf("skyline-memory-capacity", Train, TrainSource, "kBatchSize"),
            Base);
  std::string Copy = write("copy.cpp", TrainSource);
  EXPECT_NE(hashOf("skyline-batch-size", Copy, TrainSource, "kBatchSize"),
            Base);
}

TEST_F(SarifTest, IdenticalLinesAreCounted) {
  StringRef Text = "x = f(64);\nx = f(64);\n";
  std::string File = write("twice.cpp", Text);
  SourceSpan First = spanOf(File, Text, "64");
  SourceSpan Second = First;
  Second.Line = 2;
  Second.Offset += 11;
  json::Value Log = sarif({finding("skyline-batch-size", First),
                           finding("skyline-batch-size", Second)});
  std::string A =
      str(Log, "runs/0/results/0/partialFingerprints/primaryLocationLineHash");
  std::string B =
      str(Log, "runs/0/results/1/partialFingerprints/primaryLocationLineHash");
  ASSERT_TRUE(StringRef(A).ends_with(":1")) << A;
  EXPECT_EQ(B, A.substr(0, A.size() - 2) + ":2");
}

TEST_F(SarifTest, UnreadableFileHashesTheLineNumber) {
  std::string Missing = (Root + "/missing.cpp").str();
  SourceSpan Line3 = batchLiteral(Missing);
  SourceSpan Line4 = spanOf(Missing, TrainSource, "SGDOptions");
  std::vector<Finding> Findings = {finding("skyline-batch-size", Line3),
                                   finding("skyline-batch-size", Line4)};
  json::Value Log = sarif(Findings);
  std::string A =
      str(Log, "runs/0/results/0/partialFingerprints/primaryLocationLineHash");
  std::string B =
      str(Log, "runs/0/results/1/partialFingerprints/primaryLocationLineHash");
  EXPECT_TRUE(StringRef(A).ends_with(":1")) << A;
  EXPECT_TRUE(StringRef(B).ends_with(":1")) << B;
  EXPECT_NE(A, B);
  EXPECT_EQ(str(sarif(Findings), "runs/0/results/0/partialFingerprints/"
                                 "primaryLocationLineHash"),
            A);
  EXPECT_EQ(num(Log, "runs/0/results/0/locations/0/physicalLocation/region/"
                     "startColumn"),
            28);
}

TEST_F(SarifTest, FixReplacesBytesGroupedByFile) {
  std::string Net = write("src/net.cpp", "Linear(784, 10)\n");
  Finding F = finding("skyline-batch-size", batchLiteral(Train));
  F.Edits.push_back({batchLiteral(Train), "128"});
  F.Edits.push_back({spanOf(Net, "Linear(784, 10)\n", "784"), "1024"});
  SourceSpan Insert = spanOf(Train, TrainSource, "0.01");
  Insert.Length = 0;
  F.Edits.push_back({Insert, "2 * "});
  json::Value Log = sarif({F});

  std::string Fix = "runs/0/results/0/fixes/0/";
  ASSERT_EQ(count(Log, "runs/0/results/0/fixes"), 1u);
  EXPECT_EQ(str(Log, Fix + "description/text"), F.Message);
  ASSERT_EQ(count(Log, Fix + "artifactChanges"), 2u);
  EXPECT_EQ(str(Log, Fix + "artifactChanges/0/artifactLocation/uri"),
            "train.cpp");
  EXPECT_EQ(str(Log, Fix + "artifactChanges/0/artifactLocation/uriBaseId"),
            "%SRCROOT%");
  EXPECT_EQ(str(Log, Fix + "artifactChanges/1/artifactLocation/uri"),
            "src/net.cpp");
  ASSERT_EQ(count(Log, Fix + "artifactChanges/0/replacements"), 2u);
  ASSERT_EQ(count(Log, Fix + "artifactChanges/1/replacements"), 1u);

  std::string Batch = Fix + "artifactChanges/0/replacements/0/";
  EXPECT_EQ(num(Log, Batch + "deletedRegion/startLine"), 3);
  EXPECT_EQ(num(Log, Batch + "deletedRegion/startColumn"), 28);
  EXPECT_EQ(num(Log, Batch + "deletedRegion/endColumn"), 30);
  EXPECT_EQ(num(Log, Batch + "deletedRegion/byteOffset"),
            static_cast<int64_t>(StringRef(TrainSource).find("64;")));
  EXPECT_EQ(num(Log, Batch + "deletedRegion/byteLength"), 2);
  EXPECT_EQ(str(Log, Batch + "insertedContent/text"), "128");

  std::string Added = Fix + "artifactChanges/0/replacements/1/";
  EXPECT_EQ(num(Log, Added + "deletedRegion/startLine"), 4);
  EXPECT_EQ(num(Log, Added + "deletedRegion/startColumn"), Insert.Column);
  EXPECT_EQ(num(Log, Added + "deletedRegion/endColumn"), Insert.Column);
  EXPECT_EQ(num(Log, Added + "deletedRegion/byteOffset"), Insert.Offset);
  EXPECT_EQ(num(Log, Added + "deletedRegion/byteLength"), 0);
  EXPECT_EQ(str(Log, Added + "insertedContent/text"), "2 * ");

  std::string Layer = Fix + "artifactChanges/1/replacements/0/";
  EXPECT_EQ(num(Log, Layer + "deletedRegion/byteOffset"), 7);
  EXPECT_EQ(num(Log, Layer + "deletedRegion/byteLength"), 3);
  EXPECT_EQ(str(Log, Layer + "insertedContent/text"), "1024");
}

TEST_F(SarifTest, MultiLineDeletionHasOnlyBytes) {
  SourceSpan Lines = spanOf(Train, TrainSource, "64;\nauto");
  Finding F = finding("skyline-batch-size", Lines);
  F.Edits.push_back({Lines, "1;"});
  json::Value Log = sarif({F});
  std::string Deleted =
      "runs/0/results/0/fixes/0/artifactChanges/0/replacements/0/"
      "deletedRegion/";
  EXPECT_EQ(num(Log, Deleted + "byteLength"), 8);
  EXPECT_EQ(at(Log, Deleted + "startLine"), nullptr);
  EXPECT_EQ(at(Log, Deleted + "endColumn"), nullptr);
}

TEST_F(SarifTest, OptionalFixIsStillAFix) {
  SourceSpan Rate = spanOf(Train, TrainSource, "0.01");
  Finding F = finding("skyline-batch-size", Rate, DiagLevel::Note);
  F.Edits.push_back({Rate, "0.02"});
  F.OptionalFix = true;
  Finding Plain = finding("skyline-hot-layer", Rate);
  json::Value Log = sarif({F, Plain});
  EXPECT_EQ(str(Log, "runs/0/results/0/fixes/0/artifactChanges/0/"
                     "replacements/0/insertedContent/text"),
            "0.02");
  const json::Value *Optional =
      at(Log, "runs/0/results/0/properties/optionalFix");
  ASSERT_NE(Optional, nullptr);
  EXPECT_EQ(Optional->getAsBoolean(), true);
  EXPECT_EQ(at(Log, "runs/0/results/1/fixes"), nullptr);
  EXPECT_EQ(at(Log, "runs/0/results/1/properties"), nullptr);
}

TEST_F(SarifTest, FiguresAreResultProperties) {
  Finding F = finding("skyline-batch-size", batchLiteral(Train));
  F.Figures = {{"predictedGain", 0.99}, {"predictedGainLow90", 0.305}};
  json::Value Log = sarif({F});
  EXPECT_EQ(at(Log, "runs/0/results/0/properties/predictedGain")->getAsNumber(),
            0.99);
  EXPECT_EQ(
      at(Log, "runs/0/results/0/properties/predictedGainLow90")->getAsNumber(),
      0.305);
  EXPECT_EQ(at(Log, "runs/0/results/0/properties/optionalFix"), nullptr);
}

TEST_F(SarifTest, LogValidatesAgainstTheSchema) {
  std::string Net = write("sub dir/net.cpp", "Linear(784, 10)\n");
  Finding Batch = finding("skyline-batch-size", batchLiteral(Train));
  Batch.Edits.push_back({Batch.At, "128"});
  Finding Rate = finding("skyline-batch-size",
                         spanOf(Train, TrainSource, "0.01"), DiagLevel::Note);
  Rate.Edits.push_back({Rate.At, "0.02"});
  Rate.OptionalFix = true;
  std::vector<Finding> Findings = {
      Batch,
      Rate,
      finding("skyline-hot-layer", spanOf(Net, "Linear(784, 10)\n", "Linear"),
              DiagLevel::Remark),
      finding("skyline-memory-regression", SourceSpan(), DiagLevel::Error),
      finding("skyline-hot-layer", spanOf("/usr/include/x.h", "x", "x")),
  };
  SarifOptions Options;
  Options.SourceRoot = std::string(Root);
  Options.ToolVersion = "0.3.0";
  Options.AutomationId = "skyline-check/train/";
  std::string Text = findingsToSarif(Findings, Options);

  std::string Prefix =
      ::testing::TempDir() + "skyline-sarif-" + std::to_string(::getpid());
  std::string Valid = Prefix + "-valid.sarif";
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Valid, EC);
    ASSERT_FALSE(EC) << Valid;
    OS << Text;
  }
  EXPECT_EQ(runValidator(Valid), 0) << Text;

  // A result needs a message.
  llvm::Expected<json::Value> Log = json::parse(Text);
  ASSERT_TRUE(bool(Log));
  json::Array *Runs = Log->getAsObject()->getArray("runs");
  json::Array *Results = (*Runs)[0].getAsObject()->getArray("results");
  (*Results)[0].getAsObject()->erase("message");
  std::string Broken = Prefix + "-broken.sarif";
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Broken, EC);
    ASSERT_FALSE(EC) << Broken;
    OS << *Log;
  }
  EXPECT_EQ(runValidator(Broken), 1);

  std::string NotJson = Prefix + "-not-json.sarif";
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(NotJson, EC);
    OS << "{\"version\": ";
  }
  EXPECT_EQ(runValidator(NotJson), 1);
  EXPECT_EQ(runValidator(Prefix + "-does-not-exist.sarif"), 1);

  for (const std::string &Path : {Valid, Broken, NotJson})
    llvm::sys::fs::remove(Path);
}

class DefaultSourceRootTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("skyline-root", Top));
    Nested = (Top + "/src/model").str();
    ASSERT_FALSE(llvm::sys::fs::create_directories(Nested));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Top); }

  llvm::SmallString<128> Top;
  std::string Nested;
};

TEST_F(DefaultSourceRootTest, IsTheGitTopLevel) {
  ASSERT_FALSE(llvm::sys::fs::create_directory(Top + "/.git"));
  EXPECT_EQ(defaultSourceRoot(Nested), std::string(Top));
  EXPECT_EQ(defaultSourceRoot(Nested + "/../model/"), std::string(Top));
  EXPECT_EQ(defaultSourceRoot(Top), std::string(Top));
}

TEST_F(DefaultSourceRootTest, GitFileOfAWorktreeCounts) {
  std::error_code EC;
  llvm::raw_fd_ostream OS((Top + "/src/.git").str(), EC);
  ASSERT_FALSE(EC);
  OS << "gitdir: /elsewhere/.git/worktrees/src\n";
  OS.close();
  EXPECT_EQ(defaultSourceRoot(Nested), (Top + "/src").str());
}

TEST_F(DefaultSourceRootTest, WithoutGitIsTheDirectory) {
  if (defaultSourceRoot(Top) != std::string(Top))
    GTEST_SKIP() << "the temporary directory is inside a git checkout";
  EXPECT_EQ(defaultSourceRoot(Nested), Nested);
  EXPECT_EQ(defaultSourceRoot(Nested + "/"), Nested);
  EXPECT_EQ(defaultSourceRoot(Nested + "/./"), Nested);
}

} // namespace
