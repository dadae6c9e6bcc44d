// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// A factory that builds its module in a local and returns it: each call is
// the module's site (as for `return Conv2d(...)`), the local is none, and the
// children it adds are named after the local. A local a lambda returns is a
// site of its own: the lambda's calls are not followed.
#include <torch/torch.h>

struct BlockImpl : torch::nn::Module {
  BlockImpl(int64_t in, int64_t out) {}
  torch::Tensor forward(torch::Tensor x) { return x; }
};
TORCH_MODULE(Block);

struct NetImpl : torch::nn::Module {
  NetImpl() : layer1(make_layer(8, 2)), layer2(make_layer(16, 2)) {
    // CHECK-DAG: factory-local.cpp:[[@LINE-1]]:22: note: module 'layer1' (torch::nn::Sequential) constructed here, registered at {{.*}}factory-local.cpp:[[@LINE+2]] [skyline-module]
    // CHECK-DAG: factory-local.cpp:[[@LINE-2]]:48: note: module 'layer2' (torch::nn::Sequential) constructed here, registered at {{.*}}factory-local.cpp:[[@LINE+2]] [skyline-module]
    register_module("layer1", layer1);
    register_module("layer2", layer2);
  }
  torch::nn::Sequential make_layer(int64_t channels, int64_t blocks) {
    torch::nn::Sequential layers(torch::nn::Conv2d(channels, channels, 3));
    // CHECK-DAG: factory-local.cpp:[[@LINE-1]]:34: note: module 'layers.0' (torch::nn::Conv2d) constructed here [skyline-module]
    for (int64_t i = 0; i < blocks; ++i)
      layers->push_back(Block(channels, channels));
    // CHECK-DAG: factory-local.cpp:[[@LINE-1]]:25: note: module 'layers.1' (Block) constructed here [skyline-module]
    layers->push_back("act", torch::nn::ReLU());
    // CHECK-DAG: factory-local.cpp:[[@LINE-1]]:30: note: module 'layers.act' (torch::nn::ReLU) constructed here [skyline-module]
    return layers;
  }
  torch::Tensor forward(torch::Tensor x) { return layer2->forward(layer1->forward(x)); }
  torch::nn::Sequential layer1, layer2;
};
TORCH_MODULE(Net);

Net create_model() {
  Net model = Net();
  model->train();
  return model;
}

int main() {
  Net net = create_model();
  // CHECK-DAG: factory-local.cpp:[[@LINE-1]]:13: note: module 'net' (Net) constructed here [skyline-module]
  auto make_head = [] {
    torch::nn::Linear head(16, 2);
    return head;
  };
  // CHECK-DAG: factory-local.cpp:[[@LINE-3]]:23: note: module 'head' (torch::nn::Linear) constructed here [skyline-module]
  auto head = make_head();
  torch::optim::SGD opt(net->parameters(), 0.1);
  for (int i = 0; i < 2; ++i) {
    head(net(torch::randn({4, 8, 8, 8}))).mean().backward();
    opt.step();
  }
}
// CHECK: 7 modules
