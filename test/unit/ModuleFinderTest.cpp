// Module constructions are named as DESIGN.md says (registered name, else the
// member or variable, `parent.i` in a Sequential) and their calls resolve.

#include "FrontendTestUtil.h"

using namespace skyline;
using namespace skyline::test;

namespace {

TEST(ModuleFinderTest, InitializerListAndRegisterModule) {
  const char *Code = R"cpp(
#include <torch/torch.h>
struct Net : torch::nn::Module {
  Net()
      : conv1(torch::nn::Conv2dOptions(1, 10, 5)),
        fc1(320, 50) {
    register_module("conv1", conv1);
    register_module("dense", fc1);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(conv1->forward(x));
    return fc1(x);
  }
  torch::nn::Conv2d conv1;
  torch::nn::Linear fc1;
  torch::nn::Linear unused{nullptr};
};
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_EQ(Model.Modules.size(), 2u);
  const ModuleSite *Conv = findModule(Model, "conv1");
  ASSERT_TRUE(Conv);
  EXPECT_EQ(Conv->Type, "torch::nn::Conv2d");
  EXPECT_EQ(Conv->Options, "torch::nn::Conv2dOptions(1, 10, 5)");
  EXPECT_EQ(Conv->Line, 5u);
  EXPECT_EQ(Conv->RegisteredAt.substr(Conv->RegisteredAt.rfind(':')), ":7");
  const ModuleSite *Dense = findModule(Model, "dense");
  ASSERT_TRUE(Dense) << "registered name wins over the member name";
  EXPECT_EQ(Dense->Options, "320, 50");
  EXPECT_EQ(Dense->Line, 6u);
  ASSERT_EQ(Model.ModuleCalls.size(), 2u);
  EXPECT_EQ(Model.ModuleCalls[0].Name, "conv1");
  EXPECT_EQ(Model.ModuleCalls[0].Line, 11u);
  EXPECT_EQ(Model.ModuleCalls[1].Name, "dense");
  EXPECT_EQ(Model.ModuleCalls[1].Line, 12u);
}

TEST(ModuleFinderTest, AssignedFromRegisterModule) {
  const char *Code = R"cpp(
#include <torch/torch.h>
struct Net : torch::nn::Module {
  Net() {
    fc1 = register_module("fc1", torch::nn::Linear(784, 64));
    drop = register_module("drop", torch::nn::Dropout(0.5));
  }
  torch::Tensor forward(torch::Tensor x) { return drop->forward(fc1->forward(x)); }
  torch::nn::Linear fc1{nullptr};
  torch::nn::Dropout drop{nullptr};
};
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_EQ(Model.Modules.size(), 2u);
  EXPECT_EQ(Model.Modules[0].Name, "fc1");
  EXPECT_EQ(Model.Modules[0].Options, "784, 64");
  EXPECT_EQ(Model.Modules[0].Line, 5u);
  EXPECT_FALSE(Model.Modules[0].RegisteredAt.empty());
  EXPECT_EQ(Model.Modules[1].Name, "drop");
  ASSERT_EQ(Model.ModuleCalls.size(), 2u);
  // Nested calls: the outer one starts first.
  EXPECT_EQ(Model.ModuleCalls[0].Name, "drop");
  EXPECT_EQ(Model.ModuleCalls[1].Name, "fc1");
}

TEST(ModuleFinderTest, SequentialChildrenGetParentIndexNames) {
  const char *Code = R"cpp(
#include <torch/torch.h>
struct Net : torch::nn::Module {
  Net() {
    layer1 = register_module("layer1", torch::nn::Sequential(
        torch::nn::Conv2d(3, 8, 3),
        torch::nn::BatchNorm2d(8),
        torch::nn::ReLU()));
    head = register_module("head", torch::nn::Sequential{
        torch::nn::Linear(8, 4), torch::nn::ReLU()});
    head->push_back(torch::nn::Linear(4, 2));
  }
  torch::Tensor forward(torch::Tensor x) { return head->forward(layer1->forward(x)); }
  torch::nn::Sequential layer1{nullptr}, head{nullptr};
};
)cpp";
  ProgramModel Model = analyze(Code);
  for (const char *Name : {"layer1", "layer1.0", "layer1.1", "layer1.2", "head",
                           "head.0", "head.1", "head.2"})
    EXPECT_TRUE(findModule(Model, Name)) << Name;
  EXPECT_EQ(Model.Modules.size(), 8u);
  const ModuleSite *BN = findModule(Model, "layer1.1");
  ASSERT_TRUE(BN);
  EXPECT_EQ(BN->Type, "torch::nn::BatchNorm2d");
  EXPECT_EQ(BN->Parent, "layer1");
  EXPECT_EQ(BN->Line, 7u);
  const ModuleSite *Pushed = findModule(Model, "head.2");
  ASSERT_TRUE(Pushed);
  EXPECT_EQ(Pushed->Options, "4, 2");
}

TEST(ModuleFinderTest, TorchModuleAndStandaloneModules) {
  const char *Code = R"cpp(
#include <torch/torch.h>
struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(int64_t channels)
      : conv(register_module("conv", torch::nn::Conv2d(channels, channels, 3))) {}
  torch::Tensor forward(torch::Tensor x) { return conv(x); }
  torch::nn::Conv2d conv;
};
TORCH_MODULE(Block);
struct NetImpl : torch::nn::Module {
  NetImpl() : block(Block(16)) { register_module("block", block); }
  torch::Tensor forward(torch::Tensor x) { return block->forward(x); }
  Block block;
};
TORCH_MODULE(Net);
int main() {
  torch::nn::Linear probe(4, 2);
  auto model = std::make_shared<NetImpl>();
  Net net;
  auto y = model->forward(torch::randn({1, 16}));
  auto z = net(probe(y));
}
)cpp";
  ProgramModel Model = analyze(Code);
  const ModuleSite *Conv = findModule(Model, "conv");
  ASSERT_TRUE(Conv);
  EXPECT_EQ(Conv->Line, 5u);
  EXPECT_EQ(Conv->Options, "channels, channels, 3");
  const ModuleSite *Block = findModule(Model, "block");
  ASSERT_TRUE(Block);
  EXPECT_EQ(Block->Type, "Block");
  const ModuleSite *Probe = findModule(Model, "probe");
  ASSERT_TRUE(Probe);
  EXPECT_EQ(Probe->Type, "torch::nn::Linear");
  EXPECT_TRUE(Probe->RegisteredAt.empty());
  const ModuleSite *ModelSite = findModule(Model, "model");
  ASSERT_TRUE(ModelSite);
  EXPECT_EQ(ModelSite->Type, "NetImpl");
  EXPECT_TRUE(findModule(Model, "net"));
  std::vector<std::string> Called;
  for (const ModuleCall &Call : Model.ModuleCalls)
    Called.push_back(Call.Name);
  EXPECT_EQ(Called, (std::vector<std::string>{"conv", "block", "model", "net",
                                              "probe"}));
}

TEST(ModuleFinderTest, CallsInMacrosAreMarked) {
  const char *Code = R"cpp(
#include <torch/torch.h>
#define APPLY(m, x) m->forward(x)
struct Net : torch::nn::Module {
  Net() : fc(register_module("fc", torch::nn::Linear(2, 2))) {}
  torch::Tensor forward(torch::Tensor x) { return APPLY(fc, x); }
  torch::nn::Linear fc;
};
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_EQ(Model.ModuleCalls.size(), 1u);
  EXPECT_EQ(Model.ModuleCalls[0].Name, "fc");
  EXPECT_TRUE(Model.ModuleCalls[0].InMacro);
}

} // namespace

namespace {

TEST(ModuleFinderTest, SequentialSubclassAppendsToItself) {
  const char *Code = R"cpp(
#include <torch/torch.h>
struct NetworkImpl : torch::nn::SequentialImpl {
  NetworkImpl() {
    push_back(torch::nn::Conv2d(3, 8, 3));
    push_back(torch::nn::ReLU());
    this->push_back(torch::nn::Linear(8, 2));
  }
};
TORCH_MODULE(Network);
int main() { Network network; }
)cpp";
  ProgramModel Model = analyze(Code);
  for (const char *Name : {"0", "1", "2", "network"})
    EXPECT_TRUE(findModule(Model, Name)) << Name;
  const ModuleSite *Linear = findModule(Model, "2");
  ASSERT_TRUE(Linear);
  EXPECT_EQ(Linear->Type, "torch::nn::Linear");
  EXPECT_EQ(Linear->Parent, "NetworkImpl");
}

} // namespace

namespace {

TEST(ModuleFinderTest, CalleesThatCanBeEvaluatedTwice) {
  const char *Code = R"cpp(
#include <torch/torch.h>
#define APPLY(m, x) m->forward(x)
struct Net : torch::nn::Module {
  Net() : fc(register_module("fc", torch::nn::Linear(2, 2))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = fc->forward(x);
    x = this->fc(x);
    x = layers[1]->forward(x);
    x = APPLY(fc, x);
    return torch::nn::Linear(2, 2)(x);
  }
  torch::nn::Linear fc;
  std::vector<torch::nn::Linear> layers;
};
std::shared_ptr<Net> make();
int main() {
  auto model = std::make_shared<Net>();
  Net net;
  auto y = model->forward(torch::randn({1, 2}));
  y = net.forward(y);
  y = (*model).forward(y);
  y = make()->forward(y);
}
)cpp";
  ProgramModel Model = analyze(Code);
  std::vector<std::string> Callees;
  for (const ModuleCall &Call : Model.ModuleCalls)
    Callees.push_back(Call.Callee);
  // A macro's call, a temporary and a function's result cannot be repeated.
  EXPECT_EQ(Callees,
            (std::vector<std::string>{"fc", "this->fc", "layers[1]", "", "",
                                      "model", "net", "model", ""}));
}

TEST(ModuleFinderTest, FactoryCallsAreConstructionsAndRegistrationsAreModules) {
  const char *Code = R"cpp(
#include <torch/torch.h>
torch::nn::Conv2d conv3x3(int64_t in, int64_t out) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3));
}
struct BlockImpl : torch::nn::Module {
  BlockImpl(torch::nn::Sequential shortcut) : conv(conv3x3(3, 8)), down(shortcut) {
    register_module("conv", conv);
    register_module("down", down);
  }
  torch::nn::Conv2d conv;
  torch::nn::Sequential down;
  std::shared_ptr<torch::nn::LinearImpl> unused;
};
)cpp";
  ProgramModel Model = analyze(Code);
  ASSERT_EQ(Model.Modules.size(), 2u);
  const ModuleSite *Conv = findModule(Model, "conv");
  ASSERT_TRUE(Conv);
  EXPECT_EQ(Conv->Type, "torch::nn::Conv2d");
  EXPECT_EQ(Conv->Options, "conv3x3(3, 8)");
  EXPECT_EQ(Conv->Line, 7u);
  const ModuleSite *Down = findModule(Model, "down");
  ASSERT_TRUE(Down);
  EXPECT_EQ(Down->Type, "torch::nn::Sequential");
  EXPECT_EQ(Down->Line, 7u);
  EXPECT_EQ(Down->RegisteredAt.substr(Down->RegisteredAt.size() - 2), ":9");
}

} // namespace
