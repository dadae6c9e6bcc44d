// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// A local constant in main reaching the first dimension of the input tensor.
#include <torch/torch.h>

int main() {
  const int64_t batch_size = 16;
  // CHECK: local-constant.cpp:[[@LINE-1]]:30: note: training batch size 'batch_size' = 16 (local-constant) [skyline-batch-size]
  // CHECK-NEXT: {{^}}  const int64_t batch_size = 16;{{$}}
  // CHECK-NEXT: {{^}}                             ^~{{$}}
  torch::nn::Linear model(8, 2);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    auto x = torch::randn({batch_size, 8});
    auto y = torch::randint(0, {batch_size});
    optimizer.zero_grad();
    torch::nll_loss(model(x), y).backward();
    optimizer.step();
  }
}
