// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// step() inside a helper called once per iteration: the loop is the caller's.
#include <torch/torch.h>

void train_step(torch::nn::Linear &model, torch::optim::Optimizer &opt, torch::Tensor x) {
  opt.zero_grad();
  model(x).mean().backward();
  opt.step();
}

int main() {
  const int64_t kBatch = 8;
  torch::nn::Linear model(3, 1);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  for (int i = 0; i < 5; ++i)
    train_step(model, sgd, torch::randn({kBatch, 3}));
  // CHECK: step-in-function.cpp:[[@LINE-2]]:3: note: training loop in 'main': optimizer 'sgd' (torch::optim::SGD); 1 zero_grad, 1 backward, 1 step [skyline-training-loop]
}
