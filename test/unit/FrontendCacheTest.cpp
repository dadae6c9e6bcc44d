// The front end's model kept in the work directory between runs: read back
// only while the key, the program's own files (by SHA-256) and the system
// headers the parse read (by size and time) are as they were.

#include "skyline/FrontendCache.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <fstream>

using namespace skyline;

namespace {

const char *const Program = R"(#include <torch/torch.h>
const int64_t kBatchSize = 64;
int main() {
  torch::nn::Linear model(4, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  for (int step = 0; step < 10; ++step) {
    optimizer.zero_grad();
    auto loss = model->forward(torch::randn({kBatchSize, 4})).mean();
    loss.backward();
    optimizer.step();
  }
}
)";

void writeText(const std::string &Path, llvm::StringRef Text) {
  std::ofstream(Path) << Text.str();
}

/// A program in a directory of its own, with a copy of the mock LibTorch as
/// its system headers, so that a test may touch them.
class FrontendCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> Path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("frontend-cache", Path));
    Dir = std::string(Path);
    Source = Dir + "/train.cpp";
    writeText(Source, Program);
    ASSERT_FALSE(copyTree(SKYLINE_TEST_INPUTS "/mock", Dir + "/mock"));
    Database = std::make_unique<clang::tooling::FixedCompilationDatabase>(
        Dir, std::vector<std::string>{"-std=c++17", "-isystem", Dir + "/mock"});
    Cache = Dir + "/program-model.yaml";
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  static std::error_code copyTree(const std::string &From,
                                  const std::string &To) {
    std::error_code EC;
    for (llvm::sys::fs::recursive_directory_iterator It(From, EC), End;
         It != End && !EC; It.increment(EC)) {
      std::string Target = To + It->path().substr(From.size());
      if (It->type() == llvm::sys::fs::file_type::directory_file)
        EC = llvm::sys::fs::create_directories(Target);
      else if (!(EC = llvm::sys::fs::create_directories(
                     llvm::sys::path::parent_path(Target))))
        EC = llvm::sys::fs::copy_file(It->path(), Target);
    }
    return EC;
  }

  /// Parses the program and keeps its model; the key it was kept under.
  std::string analyzeAndKeep() {
    FrontendOptions Options;
    std::vector<std::string> SystemFiles;
    Options.SystemFilesRead = &SystemFiles;
    std::string Diagnostics;
    llvm::raw_string_ostream Stream(Diagnostics);
    Options.DiagnosticStream = &Stream;
    auto Model = analyzeProgram(*Database, {Source}, Options);
    if (!Model) {
      ADD_FAILURE() << llvm::toString(Model.takeError()) << Diagnostics;
      return "";
    }
    Parsed = *Model;
    EXPECT_FALSE(SystemFiles.empty()) << "the mock torch.h was read";
    SystemFilesRead = SystemFiles;
    std::string Key = frontendCacheKey(*Database, {Source}, FrontendOptions());
    if (llvm::Error E = writeCachedProgram(Cache, Key, *Model, SystemFiles))
      ADD_FAILURE() << llvm::toString(std::move(E));
    return Key;
  }

  std::string mockTorchHeader() const { return Dir + "/mock/torch/torch.h"; }

  std::string Dir, Source, Cache;
  std::unique_ptr<clang::tooling::CompilationDatabase> Database;
  ProgramModel Parsed;
  std::vector<std::string> SystemFilesRead;
};

TEST_F(FrontendCacheTest, AnUnchangedProgramIsReadBack) {
  std::string Key = analyzeAndKeep();
  std::optional<ProgramModel> Cached = readCachedProgram(Cache, Key);
  ASSERT_TRUE(Cached);
  ASSERT_TRUE(Cached->BatchSize);
  EXPECT_EQ(Cached->BatchSize->Value, 64);
  EXPECT_EQ(Cached->BatchSize->Name, "kBatchSize");
  EXPECT_EQ(Cached->BatchSize->Literal.Offset,
            Parsed.BatchSize->Literal.Offset);
  EXPECT_EQ(Cached->Sources, Parsed.Sources);
  EXPECT_EQ(Cached->Files, Parsed.Files);
  EXPECT_EQ(Cached->Modules.size(), Parsed.Modules.size());
  EXPECT_EQ(Cached->TrainingLoops.size(), 1u);
  EXPECT_EQ(Cached->FileSha256, Parsed.FileSha256);
  // The mock LibTorch (an -isystem directory) is the system's, with the
  // standard library's headers; the program's own file is not.
  EXPECT_TRUE(llvm::is_contained(SystemFilesRead, mockTorchHeader()));
  EXPECT_FALSE(llvm::is_contained(SystemFilesRead, Source));
}

TEST_F(FrontendCacheTest, AnEditedSourceIsParsedAgain) {
  std::string Key = analyzeAndKeep();
  std::string Edited = Program;
  Edited.replace(Edited.find("= 64"), 4, "= 32");
  writeText(Source, Edited);
  EXPECT_FALSE(readCachedProgram(Cache, Key));
  // Back to the text it was read from: its SHA-256 matches again, whatever
  // the file's time.
  writeText(Source, Program);
  EXPECT_TRUE(readCachedProgram(Cache, Key));
}

TEST_F(FrontendCacheTest, ATouchedSystemHeaderIsParsedAgain) {
  std::string Key = analyzeAndKeep();
  // The copy's, never a header of the machine's.
  ASSERT_TRUE(llvm::is_contained(SystemFilesRead, mockTorchHeader()));
  int FD;
  ASSERT_FALSE(llvm::sys::fs::openFileForWrite(mockTorchHeader(), FD,
                                               llvm::sys::fs::CD_OpenExisting,
                                               llvm::sys::fs::OF_Append));
  ASSERT_FALSE(llvm::sys::fs::setLastAccessAndModificationTime(
      FD, llvm::sys::TimePoint<>(std::chrono::seconds(1000000000))));
  llvm::sys::Process::SafelyCloseFileDescriptor(FD);
  EXPECT_FALSE(readCachedProgram(Cache, Key));
}

TEST_F(FrontendCacheTest, AnotherKeyOrADamagedCacheIsAMiss) {
  std::string Key = analyzeAndKeep();
  FrontendOptions Named;
  Named.BatchSizeVar = "kBatchSize";
  std::string NamedKey = frontendCacheKey(*Database, {Source}, Named);
  EXPECT_NE(NamedKey, Key) << "the options that decide the analysis count";
  EXPECT_FALSE(readCachedProgram(Cache, NamedKey));
  clang::tooling::FixedCompilationDatabase Other(
      Dir, {"-std=c++17", "-DFAST=1", "-isystem", Dir + "/mock"});
  EXPECT_NE(frontendCacheKey(Other, {Source}, FrontendOptions()), Key)
      << "so does the compile command";
  writeText(Cache, "key: [unterminated\n");
  EXPECT_FALSE(readCachedProgram(Cache, Key));
  writeText(Cache, "key: " + Key + "\nsystem_files: 3\nprogram: {}\n");
  EXPECT_FALSE(readCachedProgram(Cache, Key));
  EXPECT_FALSE(readCachedProgram(Dir + "/none.yaml", Key));
}

TEST_F(FrontendCacheTest, TheKeyNamesSourcesAndTheParserAlike) {
  FrontendOptions Options;
  std::string Key = frontendCacheKey(*Database, {Source}, Options);
  // However the source is named: skyline-check from the shell, skyline-lsp
  // from the editor's absolute path.
  llvm::SmallString<128> Current;
  ASSERT_FALSE(llvm::sys::fs::current_path(Current));
  ASSERT_FALSE(llvm::sys::fs::set_current_path(Dir));
  std::string Relative = frontendCacheKey(*Database, {"train.cpp"}, Options);
  std::string Dotted =
      frontendCacheKey(*Database, {"./sub/../train.cpp"}, Options);
  ASSERT_FALSE(llvm::sys::fs::set_current_path(Current));
  EXPECT_EQ(Relative, Key);
  EXPECT_EQ(Dotted, Key);
  // The parser named (skyline-lsp names the skyline-check beside it): this
  // executable by its path is this executable.
  static int Anchor;
  std::string Self = llvm::sys::fs::getMainExecutable("test", &Anchor);
  EXPECT_EQ(frontendCacheKey(*Database, {Source}, Options, Self), Key);
  EXPECT_NE(frontendCacheKey(*Database, {Source}, Options, Source), Key);
  Options.BatchSizeVar = "kBatchSize";
  EXPECT_NE(frontendCacheKey(*Database, {Source}, Options), Key);
}

} // namespace
