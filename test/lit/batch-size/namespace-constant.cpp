// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// A file-scope training constant next to a test constant: the roles come from
// the loops each loader feeds, not from the order of declaration.
#include <torch/torch.h>

const int64_t kTestBatchSize = 1000;
// CHECK-DAG: namespace-constant.cpp:[[@LINE-1]]:32: note: test/eval batch size 'kTestBatchSize' = 1000 (namespace-constant) [skyline-batch-size]
const int64_t kTrainBatchSize = 64;
// CHECK-DAG: namespace-constant.cpp:[[@LINE-1]]:33: note: training batch size 'kTrainBatchSize' = 64 (namespace-constant) [skyline-batch-size]

int main() {
  torch::nn::Linear model(784, 10);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  auto train_loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("data"), kTrainBatchSize);
  auto test_loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("data", torch::data::datasets::MNIST::Mode::kTest),
      kTestBatchSize);
  for (auto &batch : *train_loader) {
    optimizer.zero_grad();
    torch::nll_loss(model(batch.data), batch.target).backward();
    optimizer.step();
  }
  torch::NoGradGuard no_grad;
  for (auto &batch : *test_loader)
    model(batch.data);
}
