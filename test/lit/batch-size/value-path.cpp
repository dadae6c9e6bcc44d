// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// The batch size's path from the literal a user edits to the loader, as
// clang's notes under the finding: each call it is passed through, down to
// the loader. A note has no rule id of its own.
#include <torch/torch.h>

using Loader = std::unique_ptr<torch::data::DataLoader<torch::data::Example>>;

struct Trainer {
  explicit Trainer(int64_t batch)
      : loader(torch::data::make_data_loader(
            torch::data::datasets::MNIST("data"), batch)),
        model(784, 10), opt(model->parameters(), 0.1) {}
  void fit() {
    for (auto &example : *loader) {
      model(example.data).backward();
      opt.step();
    }
  }
  Loader loader;
  torch::nn::Linear model;
  torch::optim::SGD opt;
};

void train(int64_t batchSize) {
  Trainer trainer(batchSize);
  trainer.fit();
}

int main() {
  train(48);
  // CHECK: value-path.cpp:[[@LINE-1]]:9: note: training batch size 'batchSize' = 48 (literal-argument) [skyline-batch-size]
  // CHECK-NEXT: train(48);
  // CHECK-NEXT: ^~
  // CHECK-NEXT: value-path.cpp:[[@LINE-4]]:9: note: passed as 'batchSize' to train() here{{$}}
  // CHECK-NEXT: train(48);
  // CHECK-NEXT: ^{{$}}
  // CHECK-NEXT: value-path.cpp:26:19: note: passed as 'batch' to Trainer::Trainer() here{{$}}
  // CHECK-NEXT: Trainer trainer(batchSize);
  // CHECK-NEXT: ^{{$}}
  // CHECK-NEXT: value-path.cpp:12:51: note: given to make_data_loader() as the batch size here{{$}}
  // CHECK-NEXT: torch::data::datasets::MNIST("data"), batch)),
  // CHECK-NEXT: ^{{$}}
  // CHECK-NEXT: note: module 'model'
}
