// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// A default argument of the function that makes each batch.
#include <torch/torch.h>

torch::Tensor get_batch(int64_t batch_size = 32) {
  // CHECK: default-argument.cpp:[[@LINE-1]]:46: note: training batch size 'batch_size' = 32 (default-argument) [skyline-batch-size]
  return torch::randn({batch_size, 4});
}

int main() {
  torch::nn::Linear model(4, 1);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1));
  for (int step = 0; step < 100; ++step) {
    opt.zero_grad();
    model(get_batch()).backward();
    opt.step();
  }
}
