// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// DataLoaderOptions built into a variable first, with a literal.
#include <torch/torch.h>

int main() {
  torch::nn::Linear model(2, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto options = torch::data::DataLoaderOptions().batch_size(128).workers(4);
  // CHECK: options-builder.cpp:[[@LINE-1]]:62: note: training batch size 'DataLoaderOptions::batch_size' = 128 (options-builder) [skyline-batch-size]
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), options);
  for (auto &batch : *loader) {
    model(batch.data).backward();
    opt.step();
  }
}
