// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// Sequential children given names, in a braced list or by push_back, are
// named parent.name as PyTorch names them; unnamed ones keep their index.
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  NetImpl() {
    features = register_module(
        "features", torch::nn::Sequential({{"conv1", torch::nn::Conv2d(1, 8, 3)},
                                           {"bn1", torch::nn::BatchNorm2d(8)},
                                           {"relu1", torch::nn::ReLU()}}));
    // CHECK-DAG: named-sequential.cpp:[[@LINE-3]]:54: note: module 'features.conv1' (torch::nn::Conv2d) constructed here [skyline-module]
    // CHECK-DAG: named-sequential.cpp:[[@LINE-3]]:52: note: module 'features.bn1' (torch::nn::BatchNorm2d) constructed here [skyline-module]
    // CHECK-DAG: named-sequential.cpp:[[@LINE-3]]:54: note: module 'features.relu1' (torch::nn::ReLU) constructed here [skyline-module]
    head = register_module("head", torch::nn::Sequential(torch::nn::Linear(8, 4),
                                                         torch::nn::Linear(4, 2)));
    // CHECK-DAG: named-sequential.cpp:[[@LINE-1]]:58: note: module 'head.1' (torch::nn::Linear) constructed here [skyline-module]
    head->push_back("out", torch::nn::Linear(2, 1));
    // CHECK-DAG: named-sequential.cpp:[[@LINE-1]]:28: note: module 'head.out' (torch::nn::Linear) constructed here [skyline-module]
  }
  torch::Tensor forward(torch::Tensor x) { return head->forward(features->forward(x)); }
  torch::nn::Sequential features{nullptr}, head{nullptr};
};
TORCH_MODULE(Net);

int main() {
  Net net;
  torch::optim::SGD opt(net->parameters(), 0.1);
  for (int i = 0; i < 3; ++i) {
    net->forward(torch::randn({4, 1, 28, 28})).backward();
    opt.step();
  }
}
// CHECK: 9 modules
