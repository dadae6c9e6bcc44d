// The batch size is found at its declaration for every pattern of
// REFERENCE.md section 5, and the training one is told from test/eval ones.

#include "FrontendTestUtil.h"

using namespace skyline;
using namespace skyline::test;

namespace {

const char *const MnistStyle = R"cpp(
#include <torch/torch.h>
const int64_t kTrainBatchSize = 64;
const int64_t kTestBatchSize = 1000;
struct Net : torch::nn::Module {
  Net() : fc1(784, 10) { register_module("fc1", fc1); }
  torch::Tensor forward(torch::Tensor x) { return fc1->forward(x); }
  torch::nn::Linear fc1;
};
template <typename Loader>
void train(Net &model, Loader &loader, torch::optim::Optimizer &optimizer) {
  for (auto &batch : loader) {
    optimizer.zero_grad();
    auto loss = torch::nll_loss(model.forward(batch.data), batch.target);
    loss.backward();
    optimizer.step();
  }
}
template <typename Loader> void test(Net &model, Loader &loader) {
  torch::NoGradGuard no_grad;
  for (const auto &batch : loader)
    model.forward(batch.data);
}
int main() {
  Net model;
  auto train_dataset = torch::data::datasets::MNIST("data");
  auto train_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(train_dataset), kTrainBatchSize);
  auto test_loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("data", torch::data::datasets::MNIST::Mode::kTest),
      kTestBatchSize);
  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.01));
  for (int epoch = 0; epoch < 2; ++epoch) {
    train(model, *train_loader, optimizer);
    test(model, *test_loader);
  }
}
)cpp";

TEST(BatchSizeTest, NamespaceConstantsToldApartByTheLoopTheyFeed) {
  ProgramModel Model = analyze(MnistStyle);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Name, "kTrainBatchSize");
  EXPECT_EQ(Model.BatchSize->Value, 64);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::NamespaceConstant);
  EXPECT_EQ(Model.BatchSize->Role, BatchSizeRole::Train);
  EXPECT_EQ(Model.BatchSize->Literal.Line, 3u);
  EXPECT_EQ(Model.BatchSize->Literal.Column, 33u);
  EXPECT_EQ(Model.BatchSize->Literal.Length, 2u);
  EXPECT_EQ(
      llvm::StringRef(MnistStyle).substr(Model.BatchSize->Literal.Offset, 2),
      "64");
  ASSERT_EQ(Model.OtherBatchSizes.size(), 1u);
  EXPECT_EQ(Model.OtherBatchSizes[0].Name, "kTestBatchSize");
  EXPECT_EQ(Model.OtherBatchSizes[0].Value, 1000);
  EXPECT_EQ(Model.OtherBatchSizes[0].Role, BatchSizeRole::Eval);
  // The chain goes from the use to the declaration.
  ASSERT_GE(Model.BatchSize->Chain.size(), 2u);
  EXPECT_EQ(Model.BatchSize->Chain.front().Description,
            "given to make_data_loader() as the batch size here");
  EXPECT_EQ(Model.BatchSize->Chain.back().Line, 3u);
}

TEST(BatchSizeTest, TestConstantDeclaredFirstIsStillEval) {
  std::string Code = MnistStyle;
  // Swap the declaration order: the role must come from the uses.
  Code.replace(Code.find("const int64_t kTrainBatchSize = 64;\nconst int64_t "
                         "kTestBatchSize = 1000;"),
               71,
               "const int64_t kTestBatchSize = 1000;\nconst int64_t "
               "kTrainBatchSize = 64;");
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Name, "kTrainBatchSize");
  EXPECT_EQ(Model.BatchSize->Literal.Line, 4u);
}

TEST(BatchSizeTest, LiteralArgumentOfMakeDataLoader) {
  const char *Code = R"cpp(
#include <torch/torch.h>
int main() {
  torch::nn::Linear model(10, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), 128);
  for (auto &batch : *loader) {
    opt.zero_grad();
    torch::mse_loss(model(batch.data), batch.target).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 128);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::LiteralArgument);
  EXPECT_EQ(Model.BatchSize->Name, "make_data_loader");
  EXPECT_EQ(Model.BatchSize->Literal.Line, 6u);
  EXPECT_EQ(Model.BatchSize->Literal.Length, 3u);
}

TEST(BatchSizeTest, OptionsBuilderWithConstexprStaticMember) {
  const char *Code = R"cpp(
#include <torch/torch.h>
struct Config {
  static constexpr int64_t kBatchSize = 32;
};
int main() {
  torch::nn::Linear model(10, 1);
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(2e-4));
  auto loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("d"),
      torch::data::DataLoaderOptions().batch_size(Config::kBatchSize).workers(2));
  for (auto &batch : *loader) {
    opt.zero_grad();
    model(batch.data).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 32);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::StaticMember);
  EXPECT_EQ(Model.BatchSize->Name, "Config::kBatchSize");
  EXPECT_EQ(Model.BatchSize->Literal.Line, 4u);
}

TEST(BatchSizeTest, OptionsBuilderLiteral) {
  const char *Code = R"cpp(
#include <torch/torch.h>
int main() {
  torch::nn::Linear model(10, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto options = torch::data::DataLoaderOptions().batch_size(16);
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), options);
  for (auto &batch : *loader) {
    model(batch.data).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 16);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::OptionsBuilder);
  EXPECT_EQ(Model.BatchSize->Literal.Line, 6u);
}

TEST(BatchSizeTest, StructFieldDefault) {
  const char *Code = R"cpp(
#include <torch/torch.h>
struct TrainOptions {
  size_t train_batch_size = 8;
  size_t test_batch_size = 100;
  double lr = 0.01;
};
int main() {
  TrainOptions opts;
  torch::nn::Linear model(10, 1);
  torch::optim::SGD opt(model->parameters(), opts.lr);
  auto train_loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                                    opts.train_batch_size);
  auto test_loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                                   opts.test_batch_size);
  for (auto &batch : *train_loader) {
    model(batch.data).backward();
    opt.step();
  }
  for (auto &batch : *test_loader)
    model(batch.data);
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 8);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::FieldDefault);
  EXPECT_EQ(Model.BatchSize->Name, "TrainOptions::train_batch_size");
  EXPECT_EQ(Model.BatchSize->Literal.Line, 4u);
  ASSERT_EQ(Model.OtherBatchSizes.size(), 1u);
  EXPECT_EQ(Model.OtherBatchSizes[0].Value, 100);
  EXPECT_EQ(Model.OtherBatchSizes[0].Role, BatchSizeRole::Eval);
}

TEST(BatchSizeTest, DefaultArgumentThroughTensorDimension) {
  const char *Code = R"cpp(
#include <torch/torch.h>
std::pair<torch::Tensor, torch::Tensor> get_batch(int64_t batch_size = 32) {
  auto x = torch::randn({batch_size, 1});
  return {x, x};
}
int main() {
  torch::nn::Linear model(1, 1);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1));
  for (int step = 0; step < 100; ++step) {
    auto [x, y] = get_batch();
    opt.zero_grad();
    torch::mse_loss(model(x), y).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 32);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::DefaultArgument);
  EXPECT_EQ(Model.BatchSize->Name, "batch_size");
  EXPECT_EQ(Model.BatchSize->Literal.Line, 3u);
}

TEST(BatchSizeTest, ExplicitArgumentWinsOverDefault) {
  const char *Code = R"cpp(
#include <torch/torch.h>
torch::Tensor get_batch(int64_t batch_size = 32) { return torch::randn({batch_size, 1}); }
int main() {
  torch::nn::Linear model(1, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  while (true) {
    auto x = get_batch(48);
    model(x).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 48);
  EXPECT_EQ(Model.BatchSize->Literal.Line, 8u);
}

TEST(BatchSizeTest, LocalConstantInTensorFirstDimension) {
  const char *Code = R"cpp(
#include <torch/torch.h>
int main() {
  const int64_t batch_size = 24;
  const int64_t test_batch = 256;
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    auto x = torch::randn({batch_size, 3});
    model(x).backward();
    opt.step();
  }
  auto eval = torch::randn({test_batch, 3});
  model(eval);
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 24);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::LocalConstant);
  EXPECT_EQ(Model.BatchSize->Literal.Line, 4u);
  EXPECT_TRUE(Model.OtherBatchSizes.empty()); // test tensor is outside the loop
}

TEST(BatchSizeTest, MacroDefinition) {
  const char *Code = R"cpp(
#include <torch/torch.h>
#define BATCH_SIZE 20
int main() {
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    model(torch::randn({BATCH_SIZE, 3})).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 20);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::Macro);
  EXPECT_EQ(Model.BatchSize->Name, "BATCH_SIZE");
  EXPECT_EQ(Model.BatchSize->Literal.Line, 3u);
  EXPECT_EQ(Model.BatchSize->Literal.Column, 20u);
}

TEST(BatchSizeTest, ArgvTernaryDefault) {
  const char *Code = R"cpp(
#include <torch/torch.h>
int main(int argc, char **argv) {
  const int64_t batch_size = argc > 1 ? std::atoi(argv[1]) : 64;
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    model(torch::randn({batch_size, 3})).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 64);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::CommandLineDefault);
  EXPECT_EQ(Model.BatchSize->Name, "batch_size");
  EXPECT_EQ(Model.BatchSize->Literal.Line, 4u);
  EXPECT_EQ(llvm::StringRef(Code).substr(Model.BatchSize->Literal.Offset, 2),
            "64");
}

TEST(BatchSizeTest, GetenvDefault) {
  const char *Code = R"cpp(
#include <torch/torch.h>
int main() {
  const char *env = std::getenv("BATCH_SIZE");
  int64_t batch_size = env ? std::atoll(env) : 96;
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    model(torch::randn({batch_size, 3})).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 96);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::EnvironmentDefault);
}

TEST(BatchSizeTest, CxxoptsDefaultValueString) {
  const char *Code = R"cpp(
#include <torch/torch.h>
#include <cxxopts.hpp>
int main(int argc, char **argv) {
  cxxopts::Options options("train");
  options.add_options()
    ("e,epochs", "epochs", cxxopts::value<int>()->default_value("3"))
    ("b,batch-size", "batch size", cxxopts::value<int64_t>()->default_value("32"));
  auto result = options.parse(argc, argv);
  const auto batch_size = result["batch-size"].as<int64_t>();
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    model(torch::randn({batch_size, 3})).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 32);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::CommandLineDefault);
  EXPECT_EQ(Model.BatchSize->Name, "batch-size");
  EXPECT_EQ(Model.BatchSize->Literal.Line, 8u);
  EXPECT_EQ(Model.BatchSize->Literal.Length, 2u); // the digits, not the quotes
}

TEST(BatchSizeTest, DerivedValuePointsAtTheExpression) {
  const char *Code = R"cpp(
#include <torch/torch.h>
const int64_t kTotalBatch = 256;
const int64_t kRanks = 4;
const int64_t kBatchPerRank = kTotalBatch / kRanks;
int main() {
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    model(torch::randn({kBatchPerRank, 3})).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 64);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::Derived);
  EXPECT_EQ(Model.BatchSize->Name, "kBatchPerRank");
  EXPECT_EQ(Model.BatchSize->Literal.Line, 5u);
  EXPECT_EQ(Model.BatchSize->Literal.Length,
            std::string("kTotalBatch / kRanks").size());
}

TEST(BatchSizeTest, NamedVariableOverridesSearch) {
  const char *Code = R"cpp(
#include <torch/torch.h>
const int64_t kMicroBatch = 12;
int main() {
  torch::nn::Linear model(3, 1);
}
)cpp";
  FrontendOptions Options;
  Options.BatchSizeVar = "kMicroBatch";
  ProgramModel Model = analyze(Code, Options);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 12);
  EXPECT_EQ(Model.BatchSize->Confidence, 1.0);
}

TEST(BatchSizeTest, NamedMacro) {
  const char *Code = R"cpp(
#include <torch/torch.h>
#define MICRO_BATCH 6
int main() {}
)cpp";
  FrontendOptions Options;
  Options.BatchSizeVar = "MICRO_BATCH";
  ProgramModel Model = analyze(Code, Options);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 6);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::Macro);
  EXPECT_EQ(Model.BatchSize->Literal.Line, 3u);
}

TEST(BatchSizeTest, NothingFoundWithoutALoader) {
  const char *Code = R"cpp(
#include <torch/torch.h>
int main() {
  torch::nn::Linear model(3, 1);
  auto y = model(torch::randn({5, 3}));
}
)cpp";
  ProgramModel Model = analyze(Code);
  EXPECT_FALSE(Model.BatchSize);
}

} // namespace

namespace {

TEST(BatchSizeTest, TheSizeUsedMostWinsAmongTensorDimensions) {
  const char *Code = R"cpp(
#include <torch/torch.h>
const int64_t kLayers = 2;
const int64_t kBatch = 10;
int main() {
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    auto hidden = torch::zeros({kLayers, kBatch, 3});
    auto x = torch::randn({kBatch, 3});
    auto y = torch::randn({kBatch, 1});
    torch::mse_loss(model(x).view({-1, 1}), y).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Name, "kBatch");
  EXPECT_EQ(Model.BatchSize->Uses, 2u);
  ASSERT_EQ(Model.OtherBatchSizes.size(), 1u);
  EXPECT_EQ(Model.OtherBatchSizes[0].Name, "kLayers");
}

} // namespace

namespace {

TEST(BatchSizeTest, AssignmentOverridesTheFieldDefault) {
  const char *Code = R"cpp(
#include <torch/torch.h>
struct Options {
  size_t batch_size = 8;
};
int main() {
  Options opts;
  opts.batch_size = 16;
  torch::nn::Linear model(2, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                              opts.batch_size);
  for (auto &batch : *loader) {
    model(batch.data).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 16);
  EXPECT_EQ(Model.BatchSize->Literal.Line, 8u);
  EXPECT_EQ(Model.BatchSize->Name, "Options::batch_size");
}

TEST(BatchSizeTest, MemberSetInConstructorFromDefaultArgument) {
  const char *Code = R"cpp(
#include <torch/torch.h>
class Trainer {
public:
  explicit Trainer(int64_t batch_size = 24) : batch_size_(batch_size) {}
  void run() {
    auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                                batch_size_);
    for (auto &batch : *loader) {
      model_(batch.data).backward();
      opt_.step();
    }
  }
private:
  int64_t batch_size_;
  torch::nn::Linear model_{2, 1};
  torch::optim::SGD opt_{model_->parameters(), 0.1};
};
int main() { Trainer().run(); }
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 24);
  EXPECT_EQ(Model.BatchSize->Kind, BatchSizeKind::DefaultArgument);
  EXPECT_EQ(Model.BatchSize->Literal.Line, 5u);
}

TEST(BatchSizeTest, PerRankBatchFollowsTheTotal) {
  const char *Code = R"cpp(
#include <torch/torch.h>
int world_size();
int main() {
  auto total_batch_size = 64;
  auto batch_size_per_proc = total_batch_size / world_size();
  torch::nn::Linear model(2, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                              batch_size_per_proc);
  for (auto &batch : *loader) {
    model(batch.data).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 64);
  EXPECT_EQ(Model.BatchSize->Name, "total_batch_size");
  EXPECT_EQ(Model.BatchSize->Literal.Line, 5u);
}

TEST(BatchSizeTest, LoaderKeptInAMember) {
  const char *Code = R"cpp(
#include <torch/torch.h>
struct Experiment {
  void setup() {
    train_loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), 32);
    eval_loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), 512);
  }
  void epoch() {
    for (auto &batch : *eval_loader)
      model(batch.data);
    for (auto &batch : *train_loader) {
      model(batch.data).backward();
      opt.step();
    }
  }
  std::unique_ptr<torch::data::DataLoader<torch::data::Example>> train_loader, eval_loader;
  torch::nn::Linear model{2, 1};
  torch::optim::SGD opt{model->parameters(), 0.1};
};
int main() {}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 32);
  EXPECT_EQ(Model.BatchSize->Confidence, 0.95);
  ASSERT_EQ(Model.OtherBatchSizes.size(), 1u);
  EXPECT_EQ(Model.OtherBatchSizes[0].Value, 512);
  EXPECT_EQ(Model.OtherBatchSizes[0].Role, BatchSizeRole::Eval);
}

TEST(BatchSizeTest, LoaderReturnedByAFunctionTakesTheRoleOfItsCaller) {
  const char *Code = R"cpp(
#include <torch/torch.h>
struct Config { size_t batch_size = 24; };
auto make_loader(const Config &config) {
  auto options = torch::data::DataLoaderOptions();
  options.batch_size(config.batch_size);
  return torch::data::make_data_loader(torch::data::datasets::MNIST("d"), options);
}
int main() {
  Config config;
  torch::nn::Linear model(2, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto loader = make_loader(config);
  for (auto &batch : *loader) {
    model(batch.data).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Name, "Config::batch_size");
  EXPECT_EQ(Model.BatchSize->Value, 24);
  EXPECT_EQ(Model.BatchSize->Role, BatchSizeRole::Train);
  EXPECT_DOUBLE_EQ(Model.BatchSize->Confidence, 0.95);
  EXPECT_TRUE(Model.Warnings.empty());
}

TEST(BatchSizeTest, ArgumentOfAParameterNamedLikeABatchSize) {
  const char *Code = R"cpp(
#include <torch/torch.h>
struct Loader {
  Loader(int64_t batch_size_) {}
  bool operator()(torch::Tensor &batch) { return false; }
};
int main() {
  const int64_t eval_rows = 100;
  const int64_t rows = 16;
  torch::nn::Linear model(2, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  Loader loader(rows), eval_loader(eval_rows);
  torch::Tensor batch;
  while (loader(batch)) {
    model(batch).backward();
    opt.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Name, "rows");
  EXPECT_EQ(Model.BatchSize->Value, 16);
  EXPECT_EQ(Model.BatchSize->Literal.Line, 9u);
  ASSERT_EQ(Model.OtherBatchSizes.size(), 1u);
  EXPECT_EQ(Model.OtherBatchSizes[0].Value, 100);
  EXPECT_EQ(Model.OtherBatchSizes[0].Role, BatchSizeRole::Eval);
}

/// The training batch size of a loop over `torch::randn({USE, 8})`, with
/// Decls before main and Setup inside it.
ProgramModel tensorLoop(llvm::StringRef Decls, llvm::StringRef Setup,
                        llvm::StringRef Use) {
  std::string Code = "#include <torch/torch.h>\n" + Decls.str() +
                     "\nint main() {\n  torch::nn::Linear model(8, 1);\n"
                     "  torch::optim::SGD opt(model->parameters(), 0.1);\n  " +
                     Setup.str() +
                     "\n  for (int i = 0; i < 10; ++i) {\n"
                     "    model(torch::randn({" +
                     Use.str() +
                     ", 8})).backward();\n    opt.step();\n  }\n}\n";
  return analyze(Code);
}

TEST(BatchSizeTest, EachObjectsOwnAggregateInitializer) {
  const char *Config = "struct Config { int64_t batch_size; int epochs; };";
  // The object the loop reads decides, not the first list in the file.
  ProgramModel Eval = tensorLoop(
      Config, "Config train{64, 2}; Config eval{1000, 1};", "eval.batch_size");
  ASSERT_TRUE(Eval.BatchSize);
  EXPECT_EQ(Eval.BatchSize->Value, 1000);
  ProgramModel Train = tensorLoop(
      Config, "Config train{64, 2}; Config eval{1000, 1};", "train.batch_size");
  ASSERT_TRUE(Train.BatchSize);
  EXPECT_EQ(Train.BatchSize->Value, 64);
  EXPECT_EQ(Train.BatchSize->Kind, BatchSizeKind::LocalConstant);
  EXPECT_EQ(Train.BatchSize->Name, "Config::batch_size");
  // An object built without a list has the member's default, whatever
  // another object's list says.
  ProgramModel Defaulted =
      tensorLoop("struct Config { int64_t batch_size = 32; int epochs = 1; };",
                 "Config other{1000, 1}; Config used;", "used.batch_size");
  ASSERT_TRUE(Defaulted.BatchSize);
  EXPECT_EQ(Defaulted.BatchSize->Value, 32);
  EXPECT_EQ(Defaulted.BatchSize->Kind, BatchSizeKind::FieldDefault);
}

TEST(BatchSizeTest, AggregateInitializersPastBitFieldsUnionsAndBases) {
  // An unnamed bit-field takes no initializer; a union's list holds only
  // its designated member; a base's initializer comes first.
  ProgramModel BitField =
      tensorLoop("struct Config { int epochs; int : 4; int64_t batch_size; };",
                 "Config c{2, 48};", "c.batch_size");
  ASSERT_TRUE(BitField.BatchSize);
  EXPECT_EQ(BitField.BatchSize->Value, 48);
  ProgramModel Union =
      tensorLoop("union Size { int64_t per_device; int64_t batch_size; };",
                 "Size c{.batch_size = 56};", "c.batch_size");
  ASSERT_TRUE(Union.BatchSize);
  EXPECT_EQ(Union.BatchSize->Value, 56);
  ProgramModel Base =
      tensorLoop("struct Common { int seed; };\n"
                 "struct Config : Common { int64_t batch_size; };",
                 "Config c{{7}, 24};", "c.batch_size");
  ASSERT_TRUE(Base.BatchSize);
  EXPECT_EQ(Base.BatchSize->Value, 24);
}

TEST(BatchSizeTest, BracesGetTheTypeTheRunsValueMustBeCastTo) {
  // int64_t needs no cast; narrower or unsigned members, a list-initialized
  // constructor argument (DataLoaderOptions takes size_t) and a computed
  // size inside braces do.
  auto TypeOf = [](llvm::StringRef Decls, llvm::StringRef Setup,
                   llvm::StringRef Use) {
    ProgramModel Model = tensorLoop(Decls, Setup, Use);
    return Model.BatchSize ? Model.BatchSize->ListInitType : "(none)";
  };
  EXPECT_EQ(TypeOf("struct C { int64_t b{64}; };", "C c;", "c.b"), "");
  EXPECT_EQ(TypeOf("struct C { int b{64}; };", "C c;", "c.b"), "int");
  EXPECT_EQ(TypeOf("struct C { size_t b{64}; };", "C c;",
                   "static_cast<int64_t>(c.b)"),
            "unsigned long");
  EXPECT_EQ(TypeOf("constexpr int kTotal = 256;", "int b{kTotal / 4};", "b"),
            "int");
  // Braces elided for an inner aggregate: the literal is in a nested list.
  EXPECT_EQ(TypeOf("struct In { unsigned b; }; struct Out { In in; int e; };",
                   "Out o{48, 2};", "int64_t(o.in.b)"),
            "unsigned int");
  // Not braces: a plain initializer converts implicitly.
  EXPECT_EQ(TypeOf("", "int b = 64;", "b"), "");
  ProgramModel Options = analyze(R"cpp(
#include <torch/torch.h>
int main() {
  torch::nn::Linear model(2, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("d"), torch::data::DataLoaderOptions{24});
  for (auto &batch : *loader) {
    model(batch.data).backward();
    opt.step();
  }
}
)cpp");
  ASSERT_TRUE(Options.BatchSize);
  EXPECT_EQ(Options.BatchSize->Value, 24);
  EXPECT_EQ(Options.BatchSize->ListInitType, "unsigned long");
}

TEST(BatchSizeTest, OnlyAConfigurationsFallbackIsAConfigDefault) {
  // A user's own as(2) is a call like any other: not traced into.
  ProgramModel Own = tensorLoop(
      "struct Scale { int64_t as(int64_t n) const { return n * 2; } };",
      "Scale s;", "s.as(32)");
  EXPECT_FALSE(Own.BatchSize) << Own.BatchSize->Value;
  // std::optional's value_or is a fallback.
  ProgramModel Optional = tensorLoop(
      "#include <optional>", "std::optional<int64_t> env;", "env.value_or(40)");
  ASSERT_TRUE(Optional.BatchSize);
  EXPECT_EQ(Optional.BatchSize->Value, 40);
  EXPECT_EQ(Optional.BatchSize->Kind, BatchSizeKind::ConfigDefault);
}

} // namespace
