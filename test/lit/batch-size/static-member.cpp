// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// A static constexpr member used through DataLoaderOptions' builder.
#include <torch/torch.h>

struct Hyper {
  static constexpr int64_t kBatchSize = 32;
  // CHECK: static-member.cpp:[[@LINE-1]]:41: note: training batch size 'Hyper::kBatchSize' = 32 (static-member) [skyline-batch-size]
};

int main() {
  torch::nn::Linear model(2, 1);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(2e-4));
  auto loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("data"),
      torch::data::DataLoaderOptions().batch_size(Hyper::kBatchSize).workers(2));
  for (auto &batch : *loader) {
    model(batch.data).backward();
    optimizer.step();
  }
}
