// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// A class derived from SequentialImpl that appends its own children: they are
// named 0, 1, 2 as PyTorch names them.
#include <torch/torch.h>

struct NetworkImpl : torch::nn::SequentialImpl {
  NetworkImpl() {
    push_back(torch::nn::Conv2d(3, 8, 3));
    // CHECK-DAG: sequential-subclass.cpp:[[@LINE-1]]:15: note: module '0' (torch::nn::Conv2d) constructed here [skyline-module]
    push_back(torch::nn::ReLU());
    // CHECK-DAG: sequential-subclass.cpp:[[@LINE-1]]:15: note: module '1' (torch::nn::ReLU) constructed here [skyline-module]
    push_back(torch::nn::Linear(8, 2));
    // CHECK-DAG: sequential-subclass.cpp:[[@LINE-1]]:15: note: module '2' (torch::nn::Linear) constructed here [skyline-module]
  }
};
TORCH_MODULE(Network);

int main() {
  Network network;
  // CHECK-DAG: sequential-subclass.cpp:[[@LINE-1]]:11: note: module 'network' (Network) constructed here [skyline-module]
  torch::optim::SGD opt(network->parameters(), 0.1);
  for (int i = 0; i < 2; ++i) {
    network->forward(torch::randn({4, 3, 8, 8})).mean().backward();
    opt.step();
  }
}
