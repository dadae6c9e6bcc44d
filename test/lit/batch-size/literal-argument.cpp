// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// A literal batch size straight in make_data_loader, with a sampler template
// argument, and the (dataset, sampler, options) overload for the test set.
#include <torch/torch.h>

int main() {
  torch::nn::Linear model(2, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      torch::data::datasets::MNIST("data"), 64);
  // CHECK-DAG: literal-argument.cpp:[[@LINE-1]]:45: note: training batch size 'make_data_loader' = 64 (literal-argument) [skyline-batch-size]
  auto test_loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("data"), torch::data::samplers::SequentialSampler(),
      torch::data::DataLoaderOptions(500));
  // CHECK-DAG: literal-argument.cpp:[[@LINE-1]]:38: note: test/eval batch size 'DataLoaderOptions' = 500 (options-builder) [skyline-batch-size]
  for (auto &batch : *loader) {
    model(batch.data).backward();
    opt.step();
  }
  for (auto &batch : *test_loader)
    model(batch.data);
}
