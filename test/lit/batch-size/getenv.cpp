// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// An environment variable with a literal default.
#include <torch/torch.h>

int main() {
  const char *env = std::getenv("BATCH_SIZE");
  const int64_t batch_size = env ? std::atoll(env) : 96;
  // CHECK: getenv.cpp:[[@LINE-1]]:54: note: training batch size 'batch_size' = 96 (environment-default) [skyline-batch-size]
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    model(torch::randn({batch_size, 3})).backward();
    opt.step();
  }
}
