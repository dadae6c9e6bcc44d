// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// The batch size comes from argv, with a literal default.
#include <torch/torch.h>

int main(int argc, char **argv) {
  const int64_t batch_size = argc > 1 ? std::atoi(argv[1]) : 64;
  // CHECK: command-line-argv.cpp:[[@LINE-1]]:62: note: training batch size 'batch_size' = 64 (command-line-default) [skyline-batch-size]
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    model(torch::randn({batch_size, 3})).backward();
    opt.step();
  }
}
