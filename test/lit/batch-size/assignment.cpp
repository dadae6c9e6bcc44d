// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// An options struct whose default is overridden in main: the assignment is
// what the program runs with, so it is the literal to change.
#include <torch/torch.h>

struct Options {
  size_t batch_size = 8;
};

int main() {
  Options opts;
  opts.batch_size = 16;
  // CHECK: assignment.cpp:[[@LINE-1]]:21: note: training batch size 'Options::batch_size' = 16 (local-constant) [skyline-batch-size]
  torch::nn::Linear model(2, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                              opts.batch_size);
  for (auto &batch : *loader) {
    model(batch.data).backward();
    opt.step();
  }
}
