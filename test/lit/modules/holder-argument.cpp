// RUN: %skyline-check --analyze-only %s -- %mock-flags \
// RUN:   | FileCheck %s --implicit-check-not='(double)' \
// RUN:       --implicit-check-not='(Config)' --implicit-check-not='(int64_t)'
// A holder built from a variable inside register_module (Dropout(dropout),
// FeedForward(cfg), BatchNorm2d(cfg.channels)) is one module: the variable
// it is built from, a parameter or a field of a configuration, is none.
#include <torch/torch.h>

struct Config {
  int64_t channels = 8;
  double dropout = 0.1;
};

struct FeedForwardImpl : torch::nn::Module {
  explicit FeedForwardImpl(const Config &cfg) {}
  torch::Tensor forward(torch::Tensor x) { return x; }
};
TORCH_MODULE(FeedForward);

struct BlockImpl : torch::nn::Module {
  BlockImpl(const Config &cfg, double dropout) {
    drop = register_module("drop", torch::nn::Dropout(dropout));
    // CHECK-DAG: holder-argument.cpp:[[@LINE-1]]:36: note: module 'drop' (torch::nn::Dropout) constructed here, registered at {{.*}}holder-argument.cpp:[[@LINE-1]] [skyline-module]
    ff = register_module("ff", FeedForward(cfg));
    // CHECK-DAG: holder-argument.cpp:[[@LINE-1]]:32: note: module 'ff' (FeedForward) constructed here, registered at {{.*}}holder-argument.cpp:[[@LINE-1]] [skyline-module]
    norm = register_module("norm", torch::nn::BatchNorm2d(cfg.channels));
    // CHECK-DAG: holder-argument.cpp:[[@LINE-1]]:36: note: module 'norm' (torch::nn::BatchNorm2d) constructed here, registered at {{.*}}holder-argument.cpp:[[@LINE-1]] [skyline-module]
  }
  torch::Tensor forward(torch::Tensor x) { return norm(ff(drop(x))); }
  torch::nn::Dropout drop{nullptr};
  FeedForward ff{nullptr};
  torch::nn::BatchNorm2d norm{nullptr};
};
TORCH_MODULE(Block);

int main() {
  Config cfg;
  Block block(cfg, cfg.dropout);
  // CHECK-DAG: holder-argument.cpp:[[@LINE-1]]:9: note: module 'block' (Block) constructed here [skyline-module]
  torch::optim::SGD opt(block->parameters(), 0.1);
  for (int i = 0; i < 2; ++i) {
    block(torch::randn({4, 8})).mean().backward();
    opt.step();
  }
}
// CHECK: 4 modules, 4 module calls, 1 training loop in 1 source
