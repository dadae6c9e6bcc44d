// The training loop is the innermost loop around step()/backward(), through
// the functions it calls; GANs have two optimizers with a step each.

#include "FrontendTestUtil.h"

using namespace skyline;
using namespace skyline::test;

namespace {

TEST(TrainingLoopTest, GanWithTwoOptimizers) {
  const char *Code = R"cpp(
#include <torch/torch.h>
int main() {
  torch::nn::Sequential generator(torch::nn::Linear(8, 16), torch::nn::ReLU());
  torch::nn::Sequential discriminator(torch::nn::Linear(16, 1));
  torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(2e-4));
  torch::optim::Adam d_opt(discriminator->parameters(), torch::optim::AdamOptions(5e-4));
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
      torch::data::DataLoaderOptions().batch_size(64));
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (auto &batch : *loader) {
      discriminator->zero_grad();
      auto d_loss = discriminator->forward(batch.data).mean();
      d_loss.backward();
      d_opt.step();
      generator->zero_grad();
      auto fake = generator->forward(torch::randn({64, 8}));
      auto g_loss = discriminator->forward(fake).mean();
      g_loss.backward();
      g_opt.step();
    }
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_EQ(Model.TrainingLoops.size(), 1u);
  const TrainingLoop &Loop = Model.TrainingLoops[0];
  EXPECT_EQ(Loop.Line, 11u); // the batch loop, not the epoch loop
  EXPECT_EQ(Loop.Function, "main");
  ASSERT_EQ(Loop.Optimizers.size(), 2u);
  EXPECT_EQ(Loop.Optimizers[0].Name, "g_opt");
  EXPECT_EQ(Loop.Optimizers[0].Type, "torch::optim::Adam");
  ASSERT_TRUE(Loop.Optimizers[0].LearningRate);
  EXPECT_EQ(Loop.Optimizers[0].LearningRateText, "2e-4");
  EXPECT_EQ(Loop.Optimizers[1].LearningRateText, "5e-4");
  EXPECT_EQ(Loop.BackwardCalls.size(), 2u);
  EXPECT_EQ(Loop.StepCalls.size(), 2u);
  EXPECT_EQ(Loop.ZeroGradCalls.size(), 2u);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Value, 64);
}

TEST(TrainingLoopTest, ShapesByTheBatchSizeAreKept) {
  const char *Code = R"cpp(#include <torch/torch.h>
const int64_t kBatchSize = 32;
int main() {
  torch::nn::Linear model(784, 10);
  torch::optim::SGD opt(model->parameters(), 0.1);
  int64_t hidden = 10;
  auto data = torch::data::datasets::MNIST("d");
  auto loader = torch::data::make_data_loader(std::move(data), kBatchSize);
  for (auto &batch : *loader) {
    auto x = batch.data.view({kBatchSize, -1});
    auto y = torch::zeros({kBatchSize,
                           hidden});
    auto z = batch.data.reshape({-1, 784});
    auto noise = torch::randn({kBatchSize, 8});
    auto loss = model->forward(x).mean();
    loss.backward();
    opt.step();
  }
  auto test = torch::data::datasets::MNIST("d", torch::data::datasets::MNIST::Mode::kTest);
  auto test_loader = torch::data::make_data_loader(std::move(test), kBatchSize);
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_TRUE(Model.BatchSize);
  EXPECT_EQ(Model.BatchSize->Name, "kBatchSize");
  // The test loader is given the same constant: its dataset counts too.
  ASSERT_EQ(Model.BatchSize->SharedDatasetArguments.size(), 1u);
  EXPECT_EQ(llvm::StringRef(Code).substr(
                Model.BatchSize->SharedDatasetArguments[0].Offset,
                Model.BatchSize->SharedDatasetArguments[0].Length),
            "std::move(test)");
  // The loader's dataset argument, which the runs wrap to learn its size.
  ASSERT_TRUE(Model.BatchSize->DatasetArgument);
  EXPECT_EQ(llvm::StringRef(Code).substr(Model.BatchSize->DatasetArgument->Offset,
                                         Model.BatchSize->DatasetArgument->Length),
            "std::move(data)");
  ASSERT_EQ(Model.TrainingLoops.size(), 1u);
  // The view and the zeros take the batch size as a dimension; `hidden`,
  // a reshape by -1 and random noise do not make a short batch fail.
  const std::vector<BatchShape> &Shapes = Model.TrainingLoops[0].BatchShapes;
  ASSERT_EQ(Shapes.size(), 2u);
  EXPECT_EQ(Shapes[0].Text, "batch.data.view({kBatchSize, -1})");
  EXPECT_EQ(Shapes[0].Call.Line, 10u);
  EXPECT_EQ(Shapes[0].Call.Column, 14u);
  EXPECT_EQ(Shapes[0].Variable, "kBatchSize");
  EXPECT_EQ(Shapes[1].Text, "torch::zeros({kBatchSize, hidden})")
      << "one line, spaces collapsed";
  EXPECT_EQ(Shapes[1].Call.Line, 11u);
}

TEST(TrainingLoopTest, ShapesInFunctionsTheLoopCallsAreKept) {
  const char *Code = R"cpp(#include <torch/torch.h>
const int64_t kBatchSize = 32;
struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(784, 10))) {}
  torch::Tensor forward(torch::Tensor x) {
    return fc(x.view({kBatchSize, -1}));
  }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);
torch::Tensor labels() { return torch::ones({kBatchSize}); }
torch::Tensor evaluate(Net &model, torch::Tensor x) {
  return model(x.reshape({kBatchSize, 784}));
}
int main() {
  Net model;
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), kBatchSize);
  for (auto &batch : *loader) {
    auto loss = torch::mse_loss(model(batch.data), labels());
    loss.backward();
    opt.step();
  }
  evaluate(model, torch::ones({1, 784}));
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_EQ(Model.TrainingLoops.size(), 1u);
  // forward() through the holder's operator(), and labels() called
  // directly, run once a batch; evaluate() runs after the loop.
  const std::vector<BatchShape> &Shapes = Model.TrainingLoops[0].BatchShapes;
  ASSERT_EQ(Shapes.size(), 2u);
  EXPECT_EQ(Shapes[0].Text, "x.view({kBatchSize, -1})");
  EXPECT_EQ(Shapes[0].Call.Line, 6u);
  EXPECT_EQ(Shapes[1].Text, "torch::ones({kBatchSize})");
  EXPECT_EQ(Shapes[1].Call.Line, 11u);
}

TEST(TrainingLoopTest, StepInsideACalledFunction) {
  const char *Code = R"cpp(
#include <torch/torch.h>
void train_step(torch::nn::Linear &model, torch::optim::Optimizer &opt, torch::Tensor x) {
  opt.zero_grad();
  model(x).backward();
  opt.step();
}
int main() {
  torch::nn::Linear model(3, 1);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  for (int i = 0; i < 5; ++i)
    train_step(model, sgd, torch::randn({8, 3}));
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_EQ(Model.TrainingLoops.size(), 1u);
  const TrainingLoop &Loop = Model.TrainingLoops[0];
  EXPECT_EQ(Loop.Line, 11u);
  ASSERT_EQ(Loop.Optimizers.size(), 1u);
  EXPECT_EQ(Loop.Optimizers[0].Name, "sgd");
  EXPECT_EQ(Loop.Optimizers[0].LearningRateText, "0.05");
  EXPECT_EQ(Loop.StepCalls.size(), 1u);
  EXPECT_EQ(Loop.StepCalls[0].Line, 6u);
}

TEST(TrainingLoopTest, EvaluationLoopIsNotTraining) {
  const char *Code = R"cpp(
#include <torch/torch.h>
int main() {
  torch::nn::Linear model(3, 1);
  for (int i = 0; i < 5; ++i)
    model(torch::randn({8, 3}));
}
)cpp";
  ProgramModel Model = analyze(Code);
  EXPECT_TRUE(Model.TrainingLoops.empty());
}

TEST(TrainingLoopTest, AStatementCanFollowAnOptimizerMadeWhereDeclared) {
  // The channels-last fix-it writes after a local optimizer's declaration:
  // at its indentation, through -> for a holder; not after a null holder
  // made later, nor after a declaration that shares its line.
  const char *Code = R"cpp(
#include <torch/torch.h>
#include <memory>
int main() {
  torch::nn::Linear model(2, 1);
    torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1));
  std::unique_ptr<torch::optim::Optimizer> held =
      std::make_unique<torch::optim::Adam>(model->parameters());
  std::unique_ptr<torch::optim::Optimizer> later;
  later = std::make_unique<torch::optim::Adam>(model->parameters());
  int n = 0; torch::optim::SGD shared(model->parameters(), torch::optim::SGDOptions(0.1));
  for (int i = 0; i < 3; ++i) {
    model(torch::randn({4, 2})).backward();
    sgd.step();
    held->step();
    later->step();
    shared.step();
  }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_EQ(Model.TrainingLoops.size(), 1u);
  const std::vector<OptimizerSite> &Optimizers =
      Model.TrainingLoops[0].Optimizers;
  ASSERT_EQ(Optimizers.size(), 4u);
  EXPECT_EQ(Optimizers[0].Name, "sgd");
  ASSERT_TRUE(Optimizers[0].AfterDeclaration);
  EXPECT_EQ(Optimizers[0].AfterDeclaration->Line, 6u);
  EXPECT_EQ(Optimizers[0].AfterDeclaration->Column, 79u);
  EXPECT_EQ(Optimizers[0].AfterDeclaration->Offset,
            Optimizers[0].DeclarationEnd);
  EXPECT_EQ(Optimizers[0].Indent, "    ");
  EXPECT_FALSE(Optimizers[0].ThroughPointer);
  EXPECT_EQ(Optimizers[1].Name, "held");
  ASSERT_TRUE(Optimizers[1].AfterDeclaration);
  EXPECT_EQ(Optimizers[1].AfterDeclaration->Line, 8u);
  EXPECT_EQ(Optimizers[1].Indent, "  ");
  EXPECT_TRUE(Optimizers[1].ThroughPointer);
  EXPECT_EQ(Optimizers[2].Name, "later");
  EXPECT_FALSE(Optimizers[2].AfterDeclaration) << "null where declared";
  EXPECT_NE(Optimizers[2].DeclarationEnd, 0u) << "the runs track it there";
  EXPECT_TRUE(Optimizers[2].ThroughPointer);
  EXPECT_EQ(Optimizers[3].Name, "shared");
  EXPECT_FALSE(Optimizers[3].AfterDeclaration) << "its line starts with n";
}

TEST(TrainingLoopTest, OptimizerInAClassMember) {
  const char *Code = R"cpp(
#include <torch/torch.h>
struct Trainer {
  Trainer() : model(2, 1), opt(model->parameters(), torch::optim::SGDOptions(0.2)) {}
  void fit() {
    for (int i = 0; i < 3; ++i) {
      model(torch::randn({4, 2})).backward();
      opt.step();
    }
  }
  torch::nn::Linear model;
  torch::optim::SGD opt;
};
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_EQ(Model.TrainingLoops.size(), 1u);
  const TrainingLoop &Loop = Model.TrainingLoops[0];
  ASSERT_EQ(Loop.Optimizers.size(), 1u);
  EXPECT_EQ(Loop.Optimizers[0].Name, "opt");
  EXPECT_EQ(Loop.Optimizers[0].Type, "torch::optim::SGD");
  EXPECT_EQ(Loop.Optimizers[0].Line, 12u);
  EXPECT_EQ(Loop.Optimizers[0].DeclarationEnd, 0u);
  EXPECT_EQ(Loop.Optimizers[0].LearningRateText, "0.2");
  // No statement follows a member's declaration: the runs track it where
  // it steps.
  ASSERT_EQ(Loop.StepCalls.size(), 1u);
  EXPECT_EQ(Loop.StepCalls[0].Optimizer, "opt");
}

TEST(TrainingLoopTest, AMemberOptimizerIsTrackedAsItsOwnType) {
  // soumik12345/libtorch-examples' ConvNetClassifier: `new Adam(...)` kept
  // in a raw pointer, stepped as `(*optimizer).step()`; a smart pointer's
  // `->`; a local optimizer, tracked after its declaration instead.
  const char *Code = R"cpp(
#include <torch/torch.h>
#include <memory>
struct Trainer {
  Trainer() : model(2, 1) {
    optimizer = new torch::optim::Adam(model->parameters(), torch::optim::AdamOptions(1e-3));
    second = std::make_unique<torch::optim::SGD>(model->parameters(), 0.1);
  }
  void fit() {
    torch::optim::SGD local(model->parameters(), 0.1);
    for (int i = 0; i < 3; ++i) {
      model(torch::randn({4, 2})).backward();
      (*optimizer).step();
      second->step();
      this->optimizer->step();
      local.step();
    }
  }
  torch::nn::Linear model;
  torch::optim::Adam *optimizer{};
  std::unique_ptr<torch::optim::SGD> second;
};
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_EQ(Model.TrainingLoops.size(), 1u);
  const std::vector<CallSite> &Steps = Model.TrainingLoops[0].StepCalls;
  ASSERT_EQ(Steps.size(), 4u);
  EXPECT_EQ(Steps[0].Optimizer, "(*optimizer)");
  EXPECT_EQ(Steps[1].Optimizer, "*second");
  EXPECT_EQ(Steps[2].Optimizer, "*this->optimizer");
  EXPECT_EQ(Steps[3].Optimizer, "") << "tracked after its declaration";
}

/// The text of the loop statement the instrumenter marks.
std::string loopText(llvm::StringRef Code, const TrainingLoop &Loop) {
  return Code.substr(Loop.LoopOffset, Loop.LoopLength).str();
}

TEST(TrainingLoopTest, TheWholeLoopStatementIsKnown) {
  const char *Code = R"cpp(
#include <torch/torch.h>
#define TRAIN_LOOP for (int s = 0; s < 3; ++s)
void step(torch::optim::SGD &opt) { opt.step(); }
int main() {
  torch::nn::Linear net(4, 4);
  torch::optim::SGD opt(net->parameters(), 0.1);
  for (int e = 0; e < 2; ++e)
    for (int s = 0; s < 3; ++s) net->forward(torch::randn({8, 4})).mean().backward(), opt.step();
  int left = 3;
  do {
    net->forward(torch::randn({8, 4})).mean().backward();
    opt.step();
  } while (--left > 0);
  TRAIN_LOOP { net->forward(torch::randn({8, 4})).mean().backward(); step(opt); }
}
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_EQ(Model.TrainingLoops.size(), 3u);
  auto At = [&](unsigned Line) -> const TrainingLoop & {
    for (const TrainingLoop &Loop : Model.TrainingLoops)
      if (Loop.Line == Line)
        return Loop;
    ADD_FAILURE() << "no training loop at line " << Line;
    return Model.TrainingLoops[0];
  };
  // An unbraced body through its `;`.
  EXPECT_EQ(loopText(Code, At(9)),
            "for (int s = 0; s < 3; ++s) net->forward(torch::randn({8, "
            "4})).mean().backward(), opt.step();");
  // A do-while through the `;` after its condition.
  EXPECT_EQ(loopText(Code, At(11)),
            "do {\n    net->forward(torch::randn({8, 4})).mean().backward();\n"
            "    opt.step();\n  } while (--left > 0);");
  // A loop from a macro is not marked: braces there could land inside it.
  EXPECT_EQ(At(15).LoopLength, 0u);
  EXPECT_GT(At(15).BodyLength, 0u);
}

} // namespace
