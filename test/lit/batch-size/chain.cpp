// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s
// The path from the loader back to the literal, one step a note (the
// report prints them under the batch size): each step's words, line and
// column, from the use to the literal a user edits.
#include <torch/torch.h>

struct Options {
  explicit Options(int64_t size) : batch_size_(size) {}
  int64_t batch_size_;
};

void train(torch::nn::Linear &model, int64_t batchSize) {
  Options options(batchSize);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  auto data_options = torch::data::DataLoaderOptions().workers(2);
  data_options.batch_size(options.batch_size_);
  auto loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("d"), data_options);
  for (auto &batch : *loader) {
    optimizer.zero_grad();
    model(batch.data).backward();
    optimizer.step();
  }
}

int main() {
  torch::nn::Linear model(784, 10);
  train(model, 32);
}

// CHECK: batch_size:
// CHECK-NEXT: name: batchSize
// CHECK-NEXT: value: 32
// CHECK: kind: literal-argument
// CHECK-NEXT: role: train
// CHECK: chain:
// CHECK-NEXT: - {step: given to make_data_loader() as the batch size here, file: {{.*}}chain.cpp, line: 18, column: 42}
// CHECK-NEXT: - {step: set by DataLoaderOptions::batch_size() here, file: {{.*}}chain.cpp, line: 16, column: 27}
// CHECK-NEXT: - {step: member 'Options::batch_size_' initialised here, file: {{.*}}chain.cpp, line: 8, column: 36}
// CHECK-NEXT: - {step: passed as 'size' to Options::Options() here, file: {{.*}}chain.cpp, line: 13, column: 19}
// CHECK-NEXT: - {step: passed as 'batchSize' to train() here, file: {{.*}}chain.cpp, line: 28, column: 16}
// CHECK-NEXT: other_batch_sizes:
// CHECK-NEXT: []
