// The rewrite: insertions compose around nested calls, line numbers do not
// move, the batch-size override lands on the literal, and the user's files
// are never written.

#include "skyline/Instrument.h"

#include "FrontendTestUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace skyline;

namespace {

TEST(InstrumentTest, NestedCallsCompose) {
  std::string Text = "y = drop(fc(x));";
  // drop(...) at 4, length 11; fc(x) at 9, length 5.
  std::vector<Insertion> Edits = {{9, 0, "[", -5},
                                  {14, 0, "]", -(1L << 40) + 5},
                                  {4, 0, "<", -11},
                                  {15, 0, ">", -(1L << 40) + 11}};
  auto Out = applyInsertions(Text, Edits);
  ASSERT_TRUE(bool(Out));
  EXPECT_EQ(*Out, "y = <drop([fc(x)])>;");
}

TEST(InstrumentTest, SameOffsetClosesInnerThenOpensOuter) {
  auto Out = applyInsertions("ab", {{1, 0, "P2", -2},
                                    {1, 0, "S1", -(1L << 40) + 1},
                                    {1, 0, "P9", -9},
                                    {1, 0, "S3", -(1L << 40) + 3}});
  ASSERT_TRUE(bool(Out));
  EXPECT_EQ(*Out, "aS1S3P9P2b");
}

TEST(InstrumentTest, ScopeNamesTheCalleeWhenItIsKnown) {
  ProgramModel Model;
  ModuleCall Known;
  Known.Name = "fc";
  Known.File = "train.cpp";
  Known.Offset = 4;
  Known.Length = 8;
  Known.Callee = "fc";
  ModuleCall Unknown = Known;
  Unknown.Name = "make";
  Unknown.Offset = 18;
  Unknown.Length = 9;
  Unknown.Callee = "";
  Model.ModuleCalls = {Known, Unknown};
  std::vector<ScopeEntry> Scopes;
  std::vector<std::string> Notes;
  auto Plan = planInsertions(Model, Scopes, Notes);
  auto Out = applyInsertions("y = fc->f(x); z = make()(y);", Plan["train.cpp"]);
  ASSERT_TRUE(bool(Out));
  // Without a callee that can be evaluated twice, the older wrapper.
  EXPECT_EQ(
      *Out,
      "y = skyline::rt::scoped(0, fc, [&]() -> decltype(auto) { return "
      "fc->f(x); }); z = skyline::rt::scoped(1, [&]() -> decltype(auto) { "
      "return make()(y); });");
  EXPECT_TRUE(Notes.empty());
}

TEST(InstrumentTest, TheLoadersDatasetIsObservedForItsSize) {
  // make_loader(std::move(ds), 64): the dataset argument at 21, the
  // literal at 36.
  std::string Text = "auto l = make_loader(std::move(ds), 64);";
  std::string File = ::testing::TempDir() + "observed-dataset.cpp";
  {
    std::error_code EC;
    llvm::raw_fd_ostream(File, EC) << Text;
  }
  ProgramModel Model;
  BatchSizeSite Site;
  Site.Literal = {File, 1, 37, 36, 2};
  Site.DatasetArgument = SourceSpan{File, 1, 22, 21, 13};
  Model.BatchSize = Site;
  std::vector<ScopeEntry> Scopes;
  std::vector<std::string> Notes;
  auto Plan = planInsertions(Model, Scopes, Notes);
  auto Out = applyInsertions(Text, Plan[File]);
  ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
  EXPECT_EQ(*Out, "auto l = make_loader(skyline::rt::observe_dataset(std::"
                  "move(ds)), skyline::rt::batch_size(64));");
}

TEST(InstrumentTest, TheTrainingLoadersOptionsGoThroughTheRuntime) {
  // The same loader, its 64 both the batch size literal and the options:
  // the wrapper closes around the runs' size, and a loader that is not the
  // training one is left as it is.
  std::string Text = "auto l = make_loader(std::move(ds), 64);"
                     " auto t = make_loader(test, 8);";
  std::string File = ::testing::TempDir() + "loader-options.cpp";
  {
    std::error_code EC;
    llvm::raw_fd_ostream(File, EC) << Text;
  }
  ProgramModel Model;
  BatchSizeSite Site;
  Site.Literal = {File, 1, 37, 36, 2};
  Model.BatchSize = Site;
  DataLoaderSite Train;
  Train.Options = Site.Literal;
  Train.OptionsIsCount = true;
  Train.Training = true;
  DataLoaderSite Test;
  Test.Options = {File, 1, 69, 68, 1};
  Test.OptionsIsCount = true;
  Model.Loaders = {Train, Test};
  std::vector<ScopeEntry> Scopes;
  std::vector<std::string> Notes;
  auto Plan = planInsertions(Model, Scopes, Notes);
  auto Out = applyInsertions(Text, Plan[File]);
  ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
  EXPECT_EQ(*Out, "auto l = make_loader(std::move(ds), "
                  "skyline::rt::loader_options<::torch::data::"
                  "DataLoaderOptions>(skyline::rt::batch_size(64))); auto t = "
                  "make_loader(test, 8);");
}

TEST(InstrumentTest, HostSyncsAreTimedAndCopiesGoThroughTheRuntime) {
  // `model(x.to(d)).item<float>()` would hold a module call; here a module
  // call ends where a copy's tensor ends (`f(x).to(d)`), and a sync holds
  // a copy: the wrappers nest, each sync gets an id in the table, and a
  // site seen twice (a loop in a header) is planned once.
  std::string Text = "auto y = f(x).to(d); s += y.to(d).item<float>();";
  //                  0         1         2         3         4
  //                  0123456789012345678901234567890123456789012345678
  std::string File = ::testing::TempDir() + "host-syncs.cpp";
  ProgramModel Model;
  ModuleCall Call;
  Call.Name = "f";
  Call.File = File;
  Call.Line = 1;
  Call.Offset = 9;
  Call.Length = 4;
  Model.ModuleCalls = {Call};
  TrainingLoop Loop;
  DeviceCopySite First{{File, 1, 10, 9, 10}, {File, 1, 14, 13, 0},
                       {File, 1, 18, 17, 1}, {File, 1, 19, 18, 0},
                       "f(x).to(d)"};
  DeviceCopySite Second{{File, 1, 27, 26, 7}, {File, 1, 28, 27, 0},
                        {File, 1, 32, 31, 1}, {File, 1, 33, 32, 0},
                        "y.to(d)"};
  Loop.DeviceCopies = {First, Second};
  Loop.HostSyncs = {{{File, 1, 27, 26, 21}, "item", "y.to(d).item<float>()"}};
  Model.TrainingLoops = {Loop, Loop};
  std::vector<ScopeEntry> Scopes;
  std::vector<std::string> Notes;
  std::vector<HostSyncEntry> Syncs;
  auto Plan = planInsertions(Model, Scopes, Notes, nullptr, &Syncs);
  auto Out = applyInsertions(Text, Plan[File]);
  ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
  EXPECT_EQ(*Out,
            "auto y = skyline::rt::to_device(skyline::rt::scoped(0, "
            "[&]() -> decltype(auto) { return f(x); }), d); s += "
            "skyline::rt::host_sync(0, [&]() -> decltype(auto) { return "
            "skyline::rt::to_device(y, d).item<float>(); });");
  ASSERT_EQ(Syncs.size(), 1u);
  EXPECT_EQ(Syncs[0].Id, 0);
  EXPECT_EQ(Syncs[0].Line, 1u);
  EXPECT_EQ(Syncs[0].Kind, "item");
  EXPECT_EQ(Syncs[0].Text, "y.to(d).item<float>()");
}

TEST(InstrumentTest, OverlappingReplacementsAreRefused) {
  auto Out = applyInsertions("abcdef", {{1, 3, "X", 0}, {2, 0, "Y", 0}});
  ASSERT_FALSE(bool(Out));
  llvm::consumeError(Out.takeError());
}

class InstrumentProgramTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("skyline-instrument", Dir));
    Source = (Dir + "/project/train.cpp").str();
    llvm::sys::fs::create_directories(Dir + "/project");
    std::error_code EC;
    llvm::raw_fd_ostream Out(Source, EC);
    Out << Code;
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  ProgramModel analyzeFile() {
    auto Model = analyzeCode(
        Code, {"-std=c++17", "-isystem", SKYLINE_TEST_INPUTS "/mock"}, Source);
    EXPECT_TRUE(bool(Model));
    return Model ? std::move(*Model) : ProgramModel();
  }

  static constexpr const char *Code = R"cpp(#include <torch/torch.h>
struct Config { static constexpr int64_t kBatch = 64; };
struct Net : torch::nn::Module {
  Net() : fc(register_module("fc", torch::nn::Linear(4, 4))),
          drop(register_module("drop", torch::nn::Dropout(0.1))) {}
  torch::Tensor forward(torch::Tensor x) { return drop->forward(fc->forward(x)); }
  torch::nn::Linear fc;
  torch::nn::Dropout drop;
};
int main() {
  Net net;
  torch::optim::SGD opt(net.parameters(), 0.1);
  for (int i = 0; i < 3; ++i)
    net.forward(torch::randn({Config::kBatch, 4})).mean().backward(), opt.step();
  torch::save(net.parameters(), "net.pt");
}
)cpp";
  llvm::SmallString<128> Dir;
  std::string Source;
};

TEST_F(InstrumentProgramTest, RewritesTheMirrorOnly) {
  ProgramModel Model = analyzeFile();
  ASSERT_TRUE(Model.BatchSize);
  auto Program = instrumentProgram(Model, (Dir + "/work").str());
  ASSERT_TRUE(bool(Program)) << llvm::toString(Program.takeError());
  EXPECT_EQ(Program->SourceRoot, (Dir + "/project").str());
  ASSERT_EQ(Program->Sources.size(), 1u);
  EXPECT_EQ(Program->Sources[0], (Dir + "/work/src/train.cpp").str());
  auto Original = llvm::MemoryBuffer::getFile(Source);
  EXPECT_EQ((*Original)->getBuffer(), Code) << "the user's file is untouched";

  auto Mirror = llvm::MemoryBuffer::getFile(Program->Sources[0]);
  ASSERT_TRUE(bool(Mirror));
  std::string Text = (*Mirror)->getBuffer().str();
  EXPECT_EQ(llvm::StringRef(Text).count('\n'),
            llvm::StringRef(Code).count('\n'))
      << "insertions never add a line";
  EXPECT_NE(Text.find("struct Config { static inline const int64_t kBatch = "
                      "skyline::rt::batch_size(64); };"),
            std::string::npos)
      << Text;
  // Each scope names the module it calls, so the run sees its weights.
  EXPECT_NE(
      Text.find("return skyline::rt::scoped(0, drop, [&]() -> decltype(auto) { "
                "return drop->forward(skyline::rt::scoped(1, fc, [&]() -> "
                "decltype(auto) { return fc->forward(x); })); });"),
      std::string::npos)
      << Text;
  EXPECT_NE(
      Text.find("skyline::rt::scoped(2, net, [&]() -> decltype(auto) { return "
                "net.forward(torch::randn({Config::kBatch, 4})); })"),
      std::string::npos)
      << Text;
  // The loop's each start (an epoch's) is marked, inside braces of its own
  // around the whole loop, so an unbraced body stays one statement.
  EXPECT_NE(Text.find("{ skyline::rt::loop_begin(); for (int i = 0; i < 3; "
                      "++i)\n    { skyline::rt::iteration_begin(); "),
            std::string::npos)
      << Text;
  EXPECT_NE(
      Text.find("skyline::rt::optimizer_step([&]() -> decltype(auto) { return "
                "opt.step(); }); } }\n"),
      std::string::npos)
      << Text;
  EXPECT_NE(Text.find("torch::optim::SGD opt(net.parameters(), 0.1); "
                      "skyline::rt::track_optimizer(opt);\n"),
            std::string::npos)
      << Text;
  EXPECT_NE(
      Text.find("skyline::rt::skipped_save(net.parameters(), \"net.pt\");"),
      std::string::npos)
      << Text;
  ASSERT_EQ(Program->Scopes.size(), 3u);
  EXPECT_EQ(Program->Scopes[0].Module, "drop");
  EXPECT_EQ(Program->Scopes[1].Module, "fc");
  EXPECT_EQ(Program->Scopes[2].Module, "net");
  EXPECT_EQ(Program->FilesWritten, 1u);

  // The rewritten copy compiles against the runtime header.
  std::string Check =
      "clang++-19 -fsyntax-only -std=c++17 -isystem " SKYLINE_TEST_INPUTS
      "/mock -I " SKYLINE_INCLUDE_DIR " -include skyline/runtime/Runtime.h " +
      Program->Sources[0];
  EXPECT_EQ(std::system(Check.c_str()), 0) << Check;

  // Unchanged sources: nothing is written again (the build cache stays warm).
  auto Again = instrumentProgram(Model, (Dir + "/work").str());
  ASSERT_TRUE(bool(Again));
  EXPECT_EQ(Again->FilesWritten, 0u);
}

// Each statement before the training loop, at each level out to the
// function's body, is marked with its id, in source order; nothing inside
// the loop, nor the statement that holds it, is.
TEST(InstrumentSetupTest, StatementsBeforeTheLoopAreMarkedNoneInside) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("skyline-setup", Dir));
  std::string Source = (Dir + "/project/train.cpp").str();
  llvm::sys::fs::create_directories(Dir + "/project");
  const char *Code = R"cpp(#include <torch/torch.h>
#define NOTHING()
int main() {
  auto data = torch::randn({100, 4});
  torch::nn::Linear fc(4, 4);
  NOTHING();
  torch::optim::SGD opt(fc->parameters(), 0.1);
  for (int epoch = 0; epoch < 2; ++epoch) {
    auto noise = torch::ones({10, 4});
    for (int i = 0; i < 10; ++i) {
      auto x = torch::randn({10, 4});
      opt.zero_grad();
      fc->forward(x + noise).mean().backward();
      opt.step();
    }
  }
}
)cpp";
  {
    std::error_code EC;
    llvm::raw_fd_ostream Out(Source, EC);
    Out << Code;
  }
  auto Model = analyzeCode(
      Code, {"-std=c++17", "-isystem", SKYLINE_TEST_INPUTS "/mock"}, Source);
  ASSERT_TRUE(bool(Model)) << llvm::toString(Model.takeError());
  auto Program = instrumentProgram(*Model, (Dir + "/work").str());
  ASSERT_TRUE(bool(Program)) << llvm::toString(Program.takeError());
  auto Mirror = llvm::MemoryBuffer::getFile(Program->Sources[0]);
  ASSERT_TRUE(bool(Mirror));
  llvm::StringRef Text = (*Mirror)->getBuffer();
  EXPECT_NE(Text.find("\n  skyline::rt::setup_statement(0); auto data = "
                      "torch::randn({100, 4});\n  "
                      "skyline::rt::setup_statement(1); torch::nn::Linear "
                      "fc(4, 4);\n  NOTHING();\n  "
                      "skyline::rt::setup_statement(2); torch::optim::SGD "
                      "opt(fc->parameters(), 0.1); "
                      "skyline::rt::track_optimizer(opt);\n  for (int epoch"),
            llvm::StringRef::npos)
      << Text.str();
  EXPECT_NE(Text.find("\n    skyline::rt::setup_statement(3); auto noise = "
                      "torch::ones({10, 4});\n    { "
                      "skyline::rt::loop_begin(); for (int i = 0;"),
            llvm::StringRef::npos)
      << Text.str();
  EXPECT_EQ(Text.count("setup_statement("), 4u) << "none inside the loop";
  ASSERT_EQ(Program->SetupStatements.size(), 4u);
  const SetupEntry &Data = Program->SetupStatements[0];
  EXPECT_EQ(Data.Id, 0);
  EXPECT_EQ(Data.File, Source);
  EXPECT_EQ(Data.Line, 4u);
  EXPECT_EQ(Data.Text, "auto data = torch::randn({100, 4});");
  EXPECT_EQ(Program->SetupStatements[3].Line, 9u);
  EXPECT_EQ(Program->SetupStatements[3].Text,
            "auto noise = torch::ones({10, 4});");
  // The table the report names the statements from.
  auto Table = llvm::MemoryBuffer::getFile(Dir + "/work/scopes.yaml");
  ASSERT_TRUE(bool(Table));
  EXPECT_NE((*Table)->getBuffer().find(
                "  - {id: 0, file: " + Source +
                ", line: 4, text: \"auto data = torch::randn({100, 4});\"}"),
            llvm::StringRef::npos)
      << (*Table)->getBuffer().str();
  std::string Compile =
      "clang++-19 -fsyntax-only -std=c++17 -isystem " SKYLINE_TEST_INPUTS
      "/mock -I " SKYLINE_INCLUDE_DIR " -include skyline/runtime/Runtime.h " +
      Program->Sources[0];
  EXPECT_EQ(std::system(Compile.c_str()), 0) << Compile;
  llvm::sys::fs::remove_directories(Dir);
}

// A loop in a function template (MNIST's train()): the statements before
// each call of it, in its caller, are marked too, the dataset's among them.
TEST(InstrumentSetupTest, StatementsBeforeTheCallOfTheLoopsFunction) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("skyline-setup", Dir));
  std::string Source = (Dir + "/project/train.cpp").str();
  llvm::sys::fs::create_directories(Dir + "/project");
  const char *Code = R"cpp(#include <torch/torch.h>
template <typename Model>
void train(Model &fc, torch::optim::SGD &opt, const torch::Tensor &data) {
  int seen = 0;
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    fc->forward(data).mean().backward();
    opt.step();
  }
}
int main() {
  auto data = torch::randn({100, 4});
  torch::nn::Linear fc(4, 4);
  torch::optim::SGD opt(fc->parameters(), 0.1);
  for (int epoch = 0; epoch < 2; ++epoch)
    train(fc, opt, data);
}
)cpp";
  {
    std::error_code EC;
    llvm::raw_fd_ostream Out(Source, EC);
    Out << Code;
  }
  auto Model = analyzeCode(
      Code, {"-std=c++17", "-isystem", SKYLINE_TEST_INPUTS "/mock"}, Source);
  ASSERT_TRUE(bool(Model)) << llvm::toString(Model.takeError());
  auto Program = instrumentProgram(*Model, (Dir + "/work").str());
  ASSERT_TRUE(bool(Program)) << llvm::toString(Program.takeError());
  auto Mirror = llvm::MemoryBuffer::getFile(Program->Sources[0]);
  ASSERT_TRUE(bool(Mirror));
  llvm::StringRef Text = (*Mirror)->getBuffer();
  EXPECT_NE(Text.find("\n  skyline::rt::setup_statement(0); auto data = "
                      "torch::randn({100, 4});\n  "
                      "skyline::rt::setup_statement(1); torch::nn::Linear "
                      "fc(4, 4);\n  skyline::rt::setup_statement(2); "
                      "torch::optim::SGD opt("),
            llvm::StringRef::npos)
      << Text.str();
  EXPECT_NE(Text.find("\n  skyline::rt::setup_statement(3); int seen = 0;\n  "
                      "{ skyline::rt::loop_begin(); for (int i = 0;"),
            llvm::StringRef::npos)
      << Text.str();
  EXPECT_EQ(Text.count("setup_statement("), 4u)
      << "none in the loop, none at the call" << Text.str();
  ASSERT_EQ(Program->SetupStatements.size(), 4u);
  EXPECT_EQ(Program->SetupStatements[0].Line, 12u);
  EXPECT_EQ(Program->SetupStatements[0].Text,
            "auto data = torch::randn({100, 4});");
  std::string Compile =
      "clang++-19 -fsyntax-only -std=c++17 -isystem " SKYLINE_TEST_INPUTS
      "/mock -I " SKYLINE_INCLUDE_DIR " -include skyline/runtime/Runtime.h " +
      Program->Sources[0];
  EXPECT_EQ(std::system(Compile.c_str()), 0) << Compile;
  llvm::sys::fs::remove_directories(Dir);
}

TEST(InstrumentListInitTest, BracesGetTheRunsValueCastToTheirType) {
  // `int batch_size{40}` and `Config{.epochs = 2, .batch_size = 48}` for an
  // int member: the run-time value is an int64_t, which braces refuse to
  // narrow, so it is cast to the member's type; an int64_t member needs
  // nothing.
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("skyline-listinit", Dir));
  auto Check = [&](llvm::StringRef Name, llvm::StringRef Code,
                   llvm::StringRef Expected) {
    std::string Source = (Dir + "/" + Name + "/train.cpp").str();
    llvm::sys::fs::create_directories(Dir + "/" + Name);
    {
      std::error_code EC;
      llvm::raw_fd_ostream Out(Source, EC);
      Out << Code;
    }
    auto Model = analyzeCode(
        Code, {"-std=c++20", "-isystem", SKYLINE_TEST_INPUTS "/mock"}, Source);
    ASSERT_TRUE(bool(Model)) << llvm::toString(Model.takeError());
    ASSERT_TRUE(Model->BatchSize) << Name.str();
    auto Program =
        instrumentProgram(*Model, (Dir + "/" + Name + "/work").str());
    ASSERT_TRUE(bool(Program)) << llvm::toString(Program.takeError());
    auto Mirror = llvm::MemoryBuffer::getFile(Program->Sources[0]);
    ASSERT_TRUE(bool(Mirror));
    EXPECT_NE((*Mirror)->getBuffer().find(Expected), llvm::StringRef::npos)
        << (*Mirror)->getBuffer().str();
    std::string Compile =
        "clang++-19 -fsyntax-only -std=c++20 -isystem " SKYLINE_TEST_INPUTS
        "/mock -I " SKYLINE_INCLUDE_DIR " -include skyline/runtime/Runtime.h " +
        Program->Sources[0];
    EXPECT_EQ(std::system(Compile.c_str()), 0) << Compile;
  };
  const char *Loop = R"cpp(
int main() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  CONFIG
  for (int step = 0; step < 10; ++step) {
    opt.zero_grad();
    model(torch::randn({cfg.batch_size, 8})).mean().backward();
    opt.step();
  }
}
)cpp";
  auto Program = [&](llvm::StringRef Struct, llvm::StringRef Config) {
    std::string Text = "#include <torch/torch.h>\n" + Struct.str() + Loop;
    size_t At = Text.find("CONFIG");
    return Text.replace(At, 6, Config.str());
  };
  Check("field",
        Program("struct Options { int batch_size{40}; };", "Options cfg;"),
        "int batch_size{static_cast<int>(skyline::rt::batch_size(40))};");
  Check("designated",
        Program("struct Options { int epochs = 1; unsigned batch_size = 0; };",
                "Options cfg{.epochs = 2, .batch_size = 48};"),
        "Options cfg{.epochs = 2, .batch_size = static_cast<unsigned "
        "int>(skyline::rt::batch_size(48))};");
  Check("wide",
        Program("struct Options { int64_t batch_size; int epochs; };",
                "Options cfg{32, 2};"),
        "Options cfg{skyline::rt::batch_size(32), 2};");
  llvm::sys::fs::remove_directories(Dir);
}

} // namespace
