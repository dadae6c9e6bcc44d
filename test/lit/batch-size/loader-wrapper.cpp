// RUN: %skyline-check --analyze-only %s -- %mock-flags 2>&1 | FileCheck %s
// A loader built by a function of the program's own, straight from
// StatelessDataLoader: its role comes from the loop over what the caller
// keeps, and of two batch_size setters the one that leads to a literal counts.
#include <torch/torch.h>

struct Config {
  size_t batch_size = 48;
  // CHECK-DAG: loader-wrapper.cpp:[[@LINE-1]]:23: note: training batch size 'Config::batch_size' = 48 (field-default) [skyline-batch-size]
  size_t test_batch_size = 500;
  // CHECK-DAG: loader-wrapper.cpp:[[@LINE-1]]:28: note: test/eval batch size 'Config::test_batch_size' = 500 (field-default) [skyline-batch-size]
};

using Loader =
    torch::data::StatelessDataLoader<torch::data::datasets::MNIST,
                                     torch::data::samplers::RandomSampler>;

std::unique_ptr<Loader> build_loader(torch::data::datasets::MNIST ds,
                                     const Config &config, bool whole) {
  auto options = torch::data::DataLoaderOptions().workers(2);
  if (whole)
    options.batch_size(ds.size());
  else
    options.batch_size(config.batch_size);
  torch::data::samplers::RandomSampler sampler(ds.size());
  return std::make_unique<Loader>(std::move(ds), sampler, options);
}

int main() {
  Config config;
  torch::nn::Linear model(2, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto train_loader =
      build_loader(torch::data::datasets::MNIST("d"), config, false);
  auto test_loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("d", torch::data::datasets::MNIST::Mode::kTest),
      config.test_batch_size);
  for (auto &batch : *train_loader) {
    model(batch.data).backward();
    opt.step();
  }
  for (auto &batch : *test_loader)
    model(batch.data);
}
// CHECK-NOT: warning
