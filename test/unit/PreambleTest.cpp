// A program's precompiled preamble (Preamble.h): which sources share one and
// under what key, a parse through it that gives the whole parse's model and
// says which files it depends on, a stale one replaced by a whole parse, and
// a build beside runProcess's sweep of leftover processes.

#include "skyline/Preamble.h"

#include "skyline/Process.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <chrono>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace skyline;

namespace {

void writeText(const std::string &Path, llvm::StringRef Text) {
  std::ofstream(Path) << Text.str();
}

/// Whether a temporary of a preamble's build is left in Directory.
bool leavesTemporaries(const std::string &Directory) {
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Directory, EC), End;
       It != End && !EC; It.increment(EC))
    if (llvm::StringRef(It->path()).contains(".tmp"))
      return true;
  return false;
}

const char *const Program = R"(#include <torch/torch.h>
#include <vector>
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

class PreambleTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> Path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("preamble-test", Path));
    llvm::sys::fs::make_absolute(Path);
    Dir = std::string(Path);
    Source = Dir + "/train.cpp";
    writeText(Source, Program);
    Preambles = Dir + "/cache/preamble";
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  std::unique_ptr<clang::tooling::CompilationDatabase>
  database(std::vector<std::string> Flags, std::string In = "") const {
    llvm::append_range(Flags,
                       std::vector<std::string>{"-std=c++17", "-isystem",
                                                SKYLINE_TEST_INPUTS "/mock"});
    return std::make_unique<clang::tooling::FixedCompilationDatabase>(
        In.empty() ? Dir : In, Flags);
  }

  /// A .pch (and its list) that clang cannot load, where Plan keeps one.
  void writeUnloadablePreamble(const PreamblePlan &Plan) const {
    ASSERT_FALSE(llvm::sys::fs::create_directories(Preambles));
    writeText(Plan.Pch, "not a precompiled header");
    writeText(preambleFilesPath(Plan.Pch), "");
  }

  std::string Dir, Source, Preambles;
};

TEST(SystemPreambleTest, LeadingAngleIncludesOnly) {
  EXPECT_EQ(systemPreamble("// a program\n/* with\n a comment */\n#pragma "
                           "once\n#include <torch/torch.h>\n\n#  include "
                           "<vector> // why\n#include \"model.h\"\n#include "
                           "<string>\nint x;\n"),
            "#include <torch/torch.h>\n#include <vector>\n");
  // A macro first decides what the includes mean: nothing is precompiled.
  EXPECT_EQ(systemPreamble("#define X 1\n#include <torch/torch.h>\n"), "");
  EXPECT_EQ(systemPreamble("int main() {}\n"), "");
}

TEST(NamesRelativePathTest, IncludeDirectoriesAndSysrootsOnly) {
  auto Names = [](std::vector<std::string> Args) {
    Args.insert(Args.begin(), "/usr/bin/clang++");
    Args.push_back("train.cpp");
    return namesRelativePath({"/w", "train.cpp", Args});
  };
  EXPECT_FALSE(Names({"-std=c++17", "-I/opt/torch/include", "-isystem",
                      "/opt/torch/include/api", "-x", "c++", "-DN=3"}));
  EXPECT_TRUE(Names({"-Iinclude"}));
  EXPECT_TRUE(Names({"-isystem", "third_party/torch"}));
  EXPECT_TRUE(Names({"--sysroot=sys"}));
  EXPECT_TRUE(Names({"-include", "config.h"}));
  EXPECT_FALSE(Names({"-include", "/w/config.h"}));
}

TEST_F(PreambleTest, SourcesWithTheSameIncludesAndFlagsShareOne) {
  std::string Other = Dir + "/model.cpp";
  writeText(Other, "#include <torch/torch.h>\n#include <vector>\nint f();\n");
  auto DB = database({});
  std::optional<PreamblePlan> Plan =
      planPreamble(*DB, {Source, Other}, Preambles);
  ASSERT_TRUE(Plan);
  EXPECT_EQ(Plan->Text, "#include <torch/torch.h>\n#include <vector>\n");
  EXPECT_EQ(llvm::sys::path::parent_path(Plan->Pch), Preambles);
  EXPECT_EQ(llvm::sys::path::extension(Plan->Pch), ".pch");
  EXPECT_EQ(Plan->Command.Filename, Source);

  // Another order of includes is another preamble: none is shared.
  writeText(Other, "#include <vector>\n#include <torch/torch.h>\nint f();\n");
  EXPECT_FALSE(planPreamble(*DB, {Source, Other}, Preambles));
  // A source that starts with its own code has none.
  writeText(Other, "int f();\n#include <vector>\n");
  EXPECT_FALSE(planPreamble(*DB, {Other}, Preambles));
  // No cache: no preamble.
  EXPECT_FALSE(planPreamble(*DB, {Source}, ""));
  EXPECT_FALSE(planPreamble(*DB, {Dir + "/missing.cpp"}, Preambles));
  // A FIFO is not read (it would block): the parse names the problem.
  ASSERT_EQ(::mkfifo((Dir + "/fifo.cpp").c_str(), 0600), 0);
  EXPECT_FALSE(planPreamble(*DB, {Dir + "/fifo.cpp"}, Preambles));
}

TEST_F(PreambleTest, TheKeyFollowsTheFlagsAndOnlyRelativePathsTheDirectory) {
  std::string Pch = planPreamble(*database({}), {Source}, Preambles)->Pch;
  // The same flags run elsewhere: every path is absolute, the same .pch.
  EXPECT_EQ(planPreamble(*database({}, "/"), {Source}, Preambles)->Pch, Pch);
  // A macro changes what the headers mean.
  EXPECT_NE(planPreamble(*database({"-DNDEBUG"}), {Source}, Preambles)->Pch,
            Pch);
  // A relative include directory means another one elsewhere.
  std::string Here =
      planPreamble(*database({"-Imock"}), {Source}, Preambles)->Pch;
  std::string There =
      planPreamble(*database({"-Imock"}, "/"), {Source}, Preambles)->Pch;
  EXPECT_NE(Here, There);
}

TEST_F(PreambleTest, AParseThroughItGivesTheWholeParsesModel) {
  auto DB = database({});
  std::optional<PreamblePlan> Plan = planPreamble(*DB, {Source}, Preambles);
  ASSERT_TRUE(Plan);

  // No preamble yet: the whole parse, which lists the headers it entered.
  FrontendOptions Options;
  std::vector<std::string> Whole;
  Options.SystemFilesRead = &Whole;
  PreambleUse Used = PreambleUse::Used;
  auto First = analyzeWithPreamble(*DB, {Source}, Options, Plan, &Used);
  ASSERT_TRUE(bool(First)) << llvm::toString(First.takeError());
  EXPECT_EQ(Used, PreambleUse::None);
  std::string TorchHeader = SKYLINE_TEST_INPUTS "/mock/torch/torch.h";
  EXPECT_TRUE(llvm::is_contained(Whole, TorchHeader));

  auto Build = PreambleBuild::start(*Plan, Whole);
  ASSERT_TRUE(bool(Build)) << llvm::toString(Build.takeError());
  ASSERT_FALSE(bool((*Build)->finish()));
  ASSERT_TRUE(llvm::sys::fs::exists(Plan->Pch));
  EXPECT_FALSE(leavesTemporaries(Preambles));
  std::optional<std::vector<std::string>> Behind =
      filesBehindPreamble(Plan->Pch);
  ASSERT_TRUE(Behind);
  EXPECT_EQ(Behind->front(), Plan->Pch);
  EXPECT_TRUE(llvm::is_contained(*Behind, TorchHeader));

  // Through it: the same model; the files behind it are what it depends on.
  std::vector<std::string> Through;
  Options.SystemFilesRead = &Through;
  auto Second = analyzeWithPreamble(*DB, {Source}, Options, Plan, &Used);
  ASSERT_TRUE(bool(Second)) << llvm::toString(Second.takeError());
  EXPECT_EQ(Used, PreambleUse::Used);
  ASSERT_TRUE(Second->BatchSize);
  EXPECT_EQ(Second->BatchSize->Value, 64);
  EXPECT_EQ(Second->BatchSize->Literal.Offset,
            First->BatchSize->Literal.Offset);
  EXPECT_EQ(Second->Modules.size(), First->Modules.size());
  EXPECT_EQ(Second->TrainingLoops.size(), First->TrainingLoops.size());
  EXPECT_TRUE(llvm::is_contained(Through, Plan->Pch));
  EXPECT_TRUE(llvm::is_contained(Through, TorchHeader));
}

TEST_F(PreambleTest, AnInferredCommandPrecompilesItToo) {
  // A source the build's compile_commands.json does not list (a new file,
  // another spelling of its path) gets a command inferred from a listed
  // one, as -p loads it: an output dropped, -c, then "--" and the source.
  // The preamble's compile keeps none of them.
  std::string Listed = Dir + "/model.cpp";
  writeText(Listed, "int f();\n");
  writeText(Dir + "/compile_commands.json",
            "[{\"directory\": \"" + Dir +
                "\", \"command\": \"/usr/bin/c++ -std=gnu++17 -isystem " +
                SKYLINE_TEST_INPUTS "/mock -O3 -o model.o -c " + Listed +
                "\", \"file\": \"" + Listed + "\"}]");
  std::string Error;
  auto Loaded =
      clang::tooling::CompilationDatabase::loadFromDirectory(Dir, Error);
  ASSERT_TRUE(Loaded) << Error;
  auto DB = clang::tooling::inferMissingCompileCommands(std::move(Loaded));
  std::optional<PreamblePlan> Plan = planPreamble(*DB, {Source}, Preambles);
  ASSERT_TRUE(Plan);
  EXPECT_TRUE(llvm::is_contained(Plan->Command.Arguments, "--"))
      << llvm::join(Plan->Command.Arguments, " ");
  // A listed source named relative to the current directory (as on the
  // command line) gets its own listed command, as the parse does (ClangTool
  // asks for the absolute path), and the editor's preamble for it.
  std::string Other = Dir + "/listed";
  ASSERT_FALSE(llvm::sys::fs::create_directories(Other));
  writeText(Other + "/compile_commands.json",
            "[{\"directory\": \"" + Dir +
                "\", \"command\": \"/usr/bin/c++ -std=gnu++17 -isystem " +
                SKYLINE_TEST_INPUTS "/mock -O3 -o train.o -c " + Source +
                "\", \"file\": \"" + Source + "\"}]");
  auto Exact = clang::tooling::inferMissingCompileCommands(
      clang::tooling::CompilationDatabase::loadFromDirectory(Other, Error));
  ASSERT_TRUE(Exact) << Error;
  llvm::SmallString<256> Here;
  ASSERT_FALSE(llvm::sys::fs::current_path(Here));
  ASSERT_FALSE(llvm::sys::fs::set_current_path(Dir));
  std::optional<PreamblePlan> Relative =
      planPreamble(*Exact, {"train.cpp"}, Preambles);
  ASSERT_FALSE(llvm::sys::fs::set_current_path(Here));
  std::optional<PreamblePlan> Absolute =
      planPreamble(*Exact, {Source}, Preambles);
  ASSERT_TRUE(Relative && Absolute);
  EXPECT_FALSE(llvm::is_contained(Relative->Command.Arguments, "--"))
      << llvm::join(Relative->Command.Arguments, " ");
  EXPECT_EQ(Relative->Pch, Absolute->Pch);
  auto Build = PreambleBuild::start(*Plan, {});
  ASSERT_TRUE(bool(Build)) << llvm::toString(Build.takeError());
  llvm::Error E = (*Build)->finish();
  EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
  PreambleUse Used = PreambleUse::None;
  auto Model =
      analyzeWithPreamble(*DB, {Source}, FrontendOptions(), Plan, &Used);
  ASSERT_TRUE(bool(Model)) << llvm::toString(Model.takeError());
  EXPECT_EQ(Used, PreambleUse::Used);
  ASSERT_TRUE(Model->BatchSize);
  EXPECT_EQ(Model->BatchSize->Value, 64);
}

TEST_F(PreambleTest, AStalePreambleGivesWayToAWholeParseAndIsDeleted) {
  auto DB = database({});
  std::optional<PreamblePlan> Plan = planPreamble(*DB, {Source}, Preambles);
  ASSERT_TRUE(Plan);
  writeUnloadablePreamble(*Plan);
  std::string Messages;
  llvm::raw_string_ostream Stream(Messages);
  FrontendOptions Options;
  Options.DiagnosticStream = &Stream;
  PreambleUse Used = PreambleUse::Used;
  auto Model = analyzeWithPreamble(*DB, {Source}, Options, Plan, &Used);
  ASSERT_TRUE(bool(Model)) << llvm::toString(Model.takeError());
  EXPECT_EQ(Used, PreambleUse::Deleted);
  ASSERT_TRUE(Model->BatchSize);
  EXPECT_EQ(Model->BatchSize->Value, 64);
  // The failed load's messages are not the user's.
  EXPECT_EQ(Messages, "");
  EXPECT_FALSE(llvm::sys::fs::exists(Plan->Pch));
  EXPECT_FALSE(llvm::sys::fs::exists(preambleFilesPath(Plan->Pch)));
}

TEST_F(PreambleTest, AChangedSystemHeaderMakesItStale) {
  // LibTorch updated in place: the same path, so the same key; the load
  // itself must notice that a header in the .pch changed.
  std::string Mock = Dir + "/mock/torch";
  ASSERT_FALSE(llvm::sys::fs::create_directories(Mock));
  ASSERT_FALSE(llvm::sys::fs::copy_file(
      SKYLINE_TEST_INPUTS "/mock/torch/torch.h", Mock + "/torch.h"));
  clang::tooling::FixedCompilationDatabase DB(
      Dir, std::vector<std::string>{"-std=c++17", "-isystem", Dir + "/mock"});
  std::optional<PreamblePlan> Plan = planPreamble(DB, {Source}, Preambles);
  ASSERT_TRUE(Plan);
  auto Build = PreambleBuild::start(*Plan, {Mock + "/torch.h"});
  ASSERT_TRUE(bool(Build)) << llvm::toString(Build.takeError());
  ASSERT_FALSE(bool((*Build)->finish()));
  PreambleUse Used = PreambleUse::None;
  ASSERT_TRUE(
      bool(analyzeWithPreamble(DB, {Source}, FrontendOptions(), Plan, &Used)));
  EXPECT_EQ(Used, PreambleUse::Used);

  // A declaration added: the file's size changes, and its time (set past
  // the .pch's, whatever the clock's resolution).
  std::ofstream(Mock + "/torch.h", std::ios::app)
      << "namespace torch { inline int addedInTheUpdate() { return 1; } }\n";
  llvm::sys::fs::file_status Status;
  ASSERT_FALSE(llvm::sys::fs::status(Plan->Pch, Status));
  int FD;
  ASSERT_FALSE(llvm::sys::fs::openFileForWrite(Mock + "/torch.h", FD,
                                               llvm::sys::fs::CD_OpenExisting,
                                               llvm::sys::fs::OF_Append));
  ASSERT_FALSE(llvm::sys::fs::setLastAccessAndModificationTime(
      FD, Status.getLastModificationTime() + std::chrono::seconds(10)));
  ::close(FD);
  std::string Messages;
  llvm::raw_string_ostream Stream(Messages);
  FrontendOptions Options;
  Options.DiagnosticStream = &Stream;
  auto Model = analyzeWithPreamble(DB, {Source}, Options, Plan, &Used);
  ASSERT_TRUE(bool(Model)) << llvm::toString(Model.takeError());
  EXPECT_EQ(Used, PreambleUse::Deleted);
  EXPECT_EQ(Messages, "");
  EXPECT_FALSE(llvm::sys::fs::exists(Plan->Pch));
}

TEST_F(PreambleTest, AHeaderNewerThanThePreambleMakesItStaleInTheEditorToo) {
  // The editor's one pass (OnePass) keeps a preamble whose load fails
  // without naming it, taking the errors for the program's: a file behind
  // it that is newer than the .pch (or gone) makes it stale before it is
  // loaded, whatever clang would make of it.
  std::string Mock = Dir + "/mock/torch";
  ASSERT_FALSE(llvm::sys::fs::create_directories(Mock));
  ASSERT_FALSE(llvm::sys::fs::copy_file(
      SKYLINE_TEST_INPUTS "/mock/torch/torch.h", Mock + "/torch.h"));
  clang::tooling::FixedCompilationDatabase DB(
      Dir, std::vector<std::string>{"-std=c++17", "-isystem", Dir + "/mock"});
  std::optional<PreamblePlan> Plan = planPreamble(DB, {Source}, Preambles);
  ASSERT_TRUE(Plan);
  auto Build = PreambleBuild::start(*Plan, {Mock + "/torch.h"});
  ASSERT_TRUE(bool(Build)) << llvm::toString(Build.takeError());
  ASSERT_FALSE(bool((*Build)->finish()));
  // A header the list names, which clang's own check of the .pch does not
  // look at, replaced after it was made (a system header clang took as
  // unchanged loads, and answers with redefinitions).
  std::string Extra = Mock + "/extra.h";
  std::ofstream(Extra) << "// replaced\n";
  std::ofstream(preambleFilesPath(Plan->Pch), std::ios::app) << Extra << "\n";
  llvm::sys::fs::file_status Status;
  ASSERT_FALSE(llvm::sys::fs::status(Plan->Pch, Status));
  int FD;
  ASSERT_FALSE(llvm::sys::fs::openFileForWrite(Extra, FD,
                                               llvm::sys::fs::CD_OpenExisting,
                                               llvm::sys::fs::OF_Append));
  ASSERT_FALSE(llvm::sys::fs::setLastAccessAndModificationTime(
      FD, Status.getLastModificationTime() + std::chrono::seconds(10)));
  ::close(FD);
  std::string Messages;
  llvm::raw_string_ostream Stream(Messages);
  FrontendOptions Options;
  Options.DiagnosticStream = &Stream;
  PreambleUse Used = PreambleUse::None;
  auto Model = analyzeWithPreamble(DB, {Source}, Options, Plan, &Used,
                                   /*OnePass=*/true);
  ASSERT_TRUE(bool(Model)) << llvm::toString(Model.takeError());
  EXPECT_EQ(Used, PreambleUse::Deleted);
  ASSERT_TRUE(Model->BatchSize);
  EXPECT_EQ(Model->BatchSize->Value, 64);
  EXPECT_EQ(Messages, "");
  EXPECT_FALSE(llvm::sys::fs::exists(Plan->Pch));
  EXPECT_FALSE(llvm::sys::fs::exists(preambleFilesPath(Plan->Pch)));
}

TEST_F(PreambleTest, AProgramWithErrorsKeepsItsPreamble) {
  auto DB = database({});
  std::optional<PreamblePlan> Plan = planPreamble(*DB, {Source}, Preambles);
  ASSERT_TRUE(Plan);
  writeUnloadablePreamble(*Plan);
  writeText(Source, std::string(Program) + "int broken = ;\n");
  std::string Messages;
  llvm::raw_string_ostream Stream(Messages);
  FrontendOptions Options;
  Options.DiagnosticStream = &Stream;
  PreambleUse Used = PreambleUse::None;
  auto Model = analyzeWithPreamble(*DB, {Source}, Options, Plan, &Used);
  EXPECT_FALSE(bool(Model));
  EXPECT_EQ(Used, PreambleUse::Kept);
  llvm::consumeError(Model.takeError());
  // The whole parse's errors, the user's own.
  EXPECT_NE(Messages.find("expected expression"), std::string::npos)
      << Messages;
  EXPECT_TRUE(llvm::sys::fs::exists(Plan->Pch));
}

TEST_F(PreambleTest, AFailedBuildLeavesNothingAndNamesItsLog) {
  PreamblePlan Plan = *planPreamble(*database({}), {Source}, Preambles);
  Plan.Text = "#include <no/such/header.h>\n";
  auto Build = PreambleBuild::start(Plan, {});
  ASSERT_TRUE(bool(Build)) << llvm::toString(Build.takeError());
  llvm::Error E = (*Build)->finish();
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find(Plan.Pch + ".log"),
            std::string::npos);
  EXPECT_FALSE(llvm::sys::fs::exists(Plan.Pch));
  EXPECT_FALSE(leavesTemporaries(Preambles));
}

TEST_F(PreambleTest, ABuildDroppedUnfinishedIsStoppedAndLeavesNothing) {
  PreamblePlan Plan = *planPreamble(*database({}), {Source}, Preambles);
  {
    auto Build = PreambleBuild::start(Plan, {});
    ASSERT_TRUE(bool(Build)) << llvm::toString(Build.takeError());
  }
  EXPECT_FALSE(llvm::sys::fs::exists(Plan.Pch));
  EXPECT_FALSE(leavesTemporaries(Preambles));
}

/// What a build killed outright (SIGKILL, a reboot) left: clang's
/// "<stem>-XXXXXXXX.pch.tmp" and the build's ".tmp<pid>.pch", 27 MB each
/// for LibTorch. The next build removes those of processes that are gone,
/// and keeps a live one's.
TEST_F(PreambleTest, TheTemporariesOfBuildsGoneAreRemoved) {
  PreamblePlan Plan = *planPreamble(*database({}), {Source}, Preambles);
  ASSERT_FALSE(llvm::sys::fs::create_directories(Preambles));
  pid_t Gone = ::fork();
  if (Gone == 0)
    ::_exit(0);
  ASSERT_GT(Gone, 0);
  ::waitpid(Gone, nullptr, 0);
  std::string Stem = Plan.Pch.substr(0, Plan.Pch.size() - 4);
  std::string Dead = Stem + ".tmp" + std::to_string(Gone);
  std::string Live = Stem + ".tmp" + std::to_string(::getppid());
  for (const std::string &Path :
       {Dead + "-a1b2c3d4.pch.tmp", Dead + ".pch", Live + "-a1b2c3d4.pch.tmp"})
    writeText(Path, "partial");
  {
    auto Build = PreambleBuild::start(Plan, {});
    ASSERT_TRUE(bool(Build)) << llvm::toString(Build.takeError());
  }
  EXPECT_FALSE(llvm::sys::fs::exists(Dead + "-a1b2c3d4.pch.tmp"));
  EXPECT_FALSE(llvm::sys::fs::exists(Dead + ".pch"));
  EXPECT_TRUE(llvm::sys::fs::exists(Live + "-a1b2c3d4.pch.tmp"))
      << "a running process's build is its own";
  llvm::sys::fs::remove(Live + "-a1b2c3d4.pch.tmp");
}

TEST(BackgroundProcessTest, OutlivesTheSweepAfterARun) {
  // runProcess ends every process below this one when its child ends; a
  // background child is not among them.
  auto Background = BackgroundProcess::start(
      {"/bin/sh", "-c", "sleep 1; exit 7"}, "/", "/dev/null");
  ASSERT_TRUE(bool(Background)) << llvm::toString(Background.takeError());
  ProcessResult Run = runProcess({"/bin/true"}, "", {}, "/dev/null", 0);
  EXPECT_EQ(Run.ExitCode, 0);
  EXPECT_EQ((*Background)->wait(), 7);
}

TEST(BackgroundProcessTest, ACommandThatCannotStartSaysSo) {
  auto Background =
      BackgroundProcess::start({"/no/such/program"}, "/", "/dev/null");
  ASSERT_TRUE(bool(Background)) << llvm::toString(Background.takeError());
  EXPECT_EQ((*Background)->wait(), 127);
  auto NoLog =
      BackgroundProcess::start({"/bin/true"}, "/", "/no/such/directory/log");
  ASSERT_FALSE(bool(NoLog));
  EXPECT_NE(llvm::toString(NoLog.takeError()).find("/no/such/directory/log"),
            std::string::npos);
}

} // namespace
