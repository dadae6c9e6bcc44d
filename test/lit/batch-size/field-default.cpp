// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// Batch sizes as field defaults of an options struct.
#include <torch/torch.h>

struct Options {
  size_t train_batch_size = 8;
  // CHECK-DAG: field-default.cpp:[[@LINE-1]]:29: note: training batch size 'Options::train_batch_size' = 8 (field-default) [skyline-batch-size]
  size_t test_batch_size = 100;
  // CHECK-DAG: field-default.cpp:[[@LINE-1]]:28: note: test/eval batch size 'Options::test_batch_size' = 100 (field-default) [skyline-batch-size]
};

template <typename Loader>
void train(torch::nn::Linear &model, Loader &loader, torch::optim::Optimizer &opt) {
  for (auto &batch : loader) {
    opt.zero_grad();
    model(batch.data).backward();
    opt.step();
  }
}

template <typename Loader> void evaluate(torch::nn::Linear &model, Loader &loader) {
  for (auto &batch : loader)
    model(batch.data);
}

int main() {
  Options options;
  torch::nn::Linear model(2, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto a = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                         options.train_batch_size);
  auto b = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                         options.test_batch_size);
  train(model, *a, opt);
  evaluate(model, *b);
}
