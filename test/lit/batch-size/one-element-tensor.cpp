// RUN: %skyline-check --analyze-only %s -- %mock-flags 2>&1 | FileCheck %s
// Loss accumulators made in the training loop, torch::zeros({1}), are no
// batch of one: the input's first dimension is the batch size.
#include <torch/torch.h>

int main() {
  torch::nn::Linear model(3, 3);
  torch::optim::Adam optimizer(model->parameters());
  for (int step = 0; step < 100; ++step) {
    auto style_loss = torch::zeros({1});
    auto content_loss = torch::zeros({1});
    auto input = torch::randn({12, 3});
    // CHECK: one-element-tensor.cpp:[[@LINE-1]]:32: note: training batch size 'torch::randn' = 12 (literal-argument) [skyline-batch-size]
    auto total_loss = content_loss + style_loss + model(input).mean();
    optimizer.zero_grad();
    total_loss.backward();
    optimizer.step();
  }
}
// CHECK-NOT: batch size
