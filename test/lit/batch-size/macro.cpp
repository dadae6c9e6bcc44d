// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// A #define: the fix-it must land in the definition, not at the use.
#include <torch/torch.h>

#define BATCH_SIZE 20
// CHECK: macro.cpp:[[@LINE-1]]:20: note: training batch size 'BATCH_SIZE' = 20 (macro) [skyline-batch-size]

int main() {
  torch::nn::Embedding embedding(100, 8);
  torch::optim::Adam opt(embedding->parameters());
  for (int i = 0; i < 10; ++i) {
    auto tokens = torch::randint(100, {BATCH_SIZE, 35});
    embedding(tokens).mean().backward();
    opt.step();
  }
}
