// RUN: %skyline-check --analyze-only %s -- %mock-flags 2>&1 | FileCheck %s
// Two loaders of the program's own, both named train_loader. The first
// only computes the loss of the training split (its batches, copied to the
// device, are indexed by a loop with no backward()); the second's reach
// backward() and step() through the copy and a function of the program's
// own. The first is an evaluation size, the second the training one.
#include <torch/torch.h>
#include <vector>

struct Batch {
  torch::Tensor inputs, targets;
};

class TextLoader {
public:
  TextLoader(const std::vector<int> &ids, int64_t batch_size) {}
  const std::vector<Batch> &batches() const { return Batches; }

private:
  std::vector<Batch> Batches;
};

std::vector<Batch> to_device(const std::vector<Batch> &batches) {
  return batches;
}

double loss_of(torch::nn::Linear &model, const std::vector<Batch> &loader) {
  double total = 0;
  for (size_t i = 0; i < loader.size(); ++i)
    total += torch::mse_loss(model(loader[i].inputs), loader[i].targets)
                 .item<double>();
  return total;
}

void train_simple(torch::nn::Linear &model,
                  const std::vector<Batch> &train_loader,
                  torch::optim::SGD &optimizer) {
  for (const auto &batch : train_loader) {
    optimizer.zero_grad();
    torch::mse_loss(model(batch.inputs), batch.targets).backward();
    optimizer.step();
  }
}

void dataset_loss(torch::nn::Linear &model, const std::vector<int> &ids) {
  const int64_t batch_size = 8;
  // CHECK-DAG: eval-only-loader.cpp:[[@LINE-1]]:30: note: test/eval batch size 'batch_size' = 8 (local-constant) [skyline-batch-size]
  TextLoader train_loader(ids, batch_size);
  auto train_b = to_device(train_loader.batches());
  loss_of(model, train_b);
}

void training(torch::nn::Linear &model, const std::vector<int> &ids) {
  const int64_t batch_size = 2;
  // CHECK-DAG: eval-only-loader.cpp:[[@LINE-1]]:30: note: training batch size 'batch_size' = 2 (local-constant) [skyline-batch-size]
  TextLoader train_loader(ids, batch_size);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  auto train_b = to_device(train_loader.batches());
  train_simple(model, train_b, optimizer);
}

int main() {
  torch::nn::Linear model(4, 1);
  std::vector<int> ids(100);
  dataset_loss(model, ids);
  training(model, ids);
}
// CHECK-NOT: warning
