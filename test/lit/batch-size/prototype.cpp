// RUN: %skyline-check --analyze-only %s -- %mock-flags 2>&1 | FileCheck %s
// A function declared before it is defined: a call names the prototype,
// and the tensor its parameter shapes in the training loop is still traced
// to the caller's argument.
#include <torch/torch.h>

void update(torch::nn::Linear &model, torch::optim::SGD &opt, int epochs,
            int mini_batch_size);

void update(torch::nn::Linear &model, torch::optim::SGD &opt, int epochs,
            int mini_batch_size) {
  for (int e = 0; e < epochs; e++) {
    auto states = torch::zeros({mini_batch_size, 4});
    opt.zero_grad();
    model(states).backward();
    opt.step();
  }
}

int main() {
  torch::nn::Linear model(4, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  int mini_batch_size = 512;
  // CHECK: prototype.cpp:[[@LINE-1]]:25: note: training batch size 'mini_batch_size' = 512 (local-constant) [skyline-batch-size]
  update(model, opt, 10, mini_batch_size);
}
// CHECK-NOT: warning
