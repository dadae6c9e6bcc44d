// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s
// The loaders' options as the loader workers experiment edits them: a
// chain in the call (.workers goes past it), a variable written `auto o =
// chain;` (past its initializer), one made by its constructor (past the
// argument), a workers(2) setter on the variable (its argument, with its
// value), a bare batch size, a loader class constructed, and one inside a
// macro (left out). The training loader is the batch size's.
#include <torch/torch.h>

const int64_t kBatchSize = 16;
#define MAKE_LOADER(ds) torch::data::make_data_loader(ds, 4)

int main() {
  torch::nn::Linear model(784, 10);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  auto chained = torch::data::make_data_loader(torch::data::datasets::MNIST("a"), torch::data::DataLoaderOptions().batch_size(8));
  // CHECK:      data_loaders:
  // CHECK-NEXT:   - call: {file: {{.*}}options.cpp, line: [[@LINE-2]], column: 18,
  // CHECK-NEXT:     dataset: {file: {{.*}}options.cpp, line: [[@LINE-3]], column: 48,
  // CHECK-NEXT:     options: {file: {{.*}}options.cpp, line: [[@LINE-4]], column: 83, offset: {{[0-9]+}}, length: 46}
  // CHECK-NEXT:     options_is_count: false
  // CHECK-NEXT:     workers_insert_at: {file: {{.*}}options.cpp, line: [[@LINE-6]], column: 129, offset: {{[0-9]+}}, length: 0}
  // CHECK-NEXT:     training: false
  auto declared = torch::data::DataLoaderOptions().batch_size(8);
  auto fromVariable = torch::data::make_data_loader(torch::data::datasets::MNIST("b"), declared);
  // CHECK-NEXT:   - call: {file: {{.*}}options.cpp, line: [[@LINE-1]], column: 23,
  // CHECK-NEXT:     dataset:
  // CHECK-NEXT:     options: {file: {{.*}}options.cpp, line: [[@LINE-3]], column: 88, offset: {{[0-9]+}}, length: 8}
  // CHECK-NEXT:     options_is_count: false
  // CHECK-NEXT:     workers_insert_at: {file: {{.*}}options.cpp, line: [[@LINE-6]], column: 65, offset: {{[0-9]+}}, length: 0}
  // CHECK-NEXT:     training: false
  torch::data::DataLoaderOptions constructed(8);
  auto fromConstructed = torch::data::make_data_loader(torch::data::datasets::MNIST("c"), constructed);
  // CHECK-NEXT:   - call: {file: {{.*}}options.cpp, line: [[@LINE-1]], column: 26,
  // CHECK-NEXT:     dataset:
  // CHECK-NEXT:     options: {file: {{.*}}options.cpp, line: [[@LINE-3]], column: 91, offset: {{[0-9]+}}, length: 11}
  // CHECK-NEXT:     options_is_count: false
  // CHECK-NEXT:     workers_insert_at: {file: {{.*}}options.cpp, line: [[@LINE-5]], column: 102, offset: {{[0-9]+}}, length: 0}
  // CHECK-NEXT:     training: false
  torch::data::DataLoaderOptions withWorkers(8);
  withWorkers.workers(2);
  auto workers = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), withWorkers);
  // CHECK-NEXT:   - call: {file: {{.*}}options.cpp, line: [[@LINE-1]], column: 18,
  // CHECK-NEXT:     dataset:
  // CHECK-NEXT:     options:
  // CHECK-NEXT:     options_is_count: false
  // CHECK-NEXT:     workers: {file: {{.*}}options.cpp, line: [[@LINE-6]], column: 23, offset: {{[0-9]+}}, length: 1}
  // CHECK-NEXT:     workers_value: 2
  // CHECK-NEXT:     workers_insert_at:
  // CHECK-NEXT:     training: false
  auto train = torch::data::make_data_loader(torch::data::datasets::MNIST("e"), kBatchSize);
  // CHECK-NEXT:   - call: {file: {{.*}}options.cpp, line: [[@LINE-1]], column: 16,
  // CHECK-NEXT:     dataset:
  // CHECK-NEXT:     options: {file: {{.*}}options.cpp, line: [[@LINE-3]], column: 81, offset: {{[0-9]+}}, length: 10}
  // CHECK-NEXT:     options_is_count: true
  // CHECK-NEXT:     training: true
  torch::data::StatelessDataLoader<torch::data::datasets::MNIST, torch::data::samplers::SequentialSampler> direct(torch::data::datasets::MNIST("f"), torch::data::samplers::SequentialSampler(8), 8);
  // CHECK-NEXT:   - call: {file: {{.*}}options.cpp, line: [[@LINE-1]], column: 108,
  // CHECK-NEXT:     dataset:
  // CHECK-NEXT:     options: {file: {{.*}}options.cpp, line: [[@LINE-3]], column: 195, offset: {{[0-9]+}}, length: 1}
  // CHECK-NEXT:     options_is_count: true
  // CHECK-NEXT:     training: false
  // CHECK-NEXT: evaluation_loops:
  // CHECK-NEXT: []
  // CHECK-NEXT: files:
  auto hidden = MAKE_LOADER(torch::data::datasets::MNIST("g"));
  for (auto &batch : *train) {
    optimizer.zero_grad();
    torch::nll_loss(model->forward(batch.data), batch.target).backward();
    optimizer.step();
  }
}
