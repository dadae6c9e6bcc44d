// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// TORCH_MODULE holders, make_shared of an Impl, and a standalone layer.
#include <torch/torch.h>

struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(int64_t channels)
      : conv(register_module("conv", torch::nn::Conv2d(channels, channels, 3))) {}
  // CHECK-DAG: torch-module.cpp:[[@LINE-1]]:38: note: module 'conv' (torch::nn::Conv2d) constructed here, registered at {{.*}}torch-module.cpp:[[@LINE-1]] [skyline-module]
  torch::Tensor forward(torch::Tensor x) { return conv(x); }
  torch::nn::Conv2d conv;
};
TORCH_MODULE(Block);

int main() {
  Block block(16);
  // CHECK-DAG: torch-module.cpp:[[@LINE-1]]:9: note: module 'block' (Block) constructed here [skyline-module]
  auto impl = std::make_shared<BlockImpl>(8);
  // CHECK-DAG: torch-module.cpp:[[@LINE-1]]:15: note: module 'impl' (BlockImpl) constructed here [skyline-module]
  torch::nn::Linear probe(4, 2);
  // CHECK-DAG: torch-module.cpp:[[@LINE-1]]:21: note: module 'probe' (torch::nn::Linear) constructed here [skyline-module]
  torch::optim::SGD opt(block->parameters(), 0.1);
  for (int i = 0; i < 2; ++i) {
    block(torch::randn({1, 16, 8, 8})).mean().backward();
    // CHECK-DAG: torch-module.cpp:[[@LINE-1]]:5: note: call of module 'block' [skyline-module-call]
    opt.step();
  }
  impl->forward(probe(torch::randn({1, 4})));
  // CHECK-DAG: torch-module.cpp:[[@LINE-1]]:3: note: call of module 'impl' [skyline-module-call]
  // CHECK-DAG: torch-module.cpp:[[@LINE-2]]:17: note: call of module 'probe' [skyline-module-call]
}
