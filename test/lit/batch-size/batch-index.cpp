// RUN: %skyline-check --analyze-only %s -- %mock-flags 2>&1 | FileCheck %s
// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s --check-prefix=MODEL
// RUN: %skyline-check --analyze-only %S/Inputs/narrow-step.cpp -- %mock-flags 2>&1 | FileCheck %S/Inputs/narrow-step.cpp
// Batching by hand with a batch counter: each step slices the rows
// batch_size * b to batch_size * (b + 1) of tensors made once. A loop of
// the same shape in a function main never calls (its call is commented
// out) comes first and is no answer: its size is only another one.
#include <torch/torch.h>

void old_experiment() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  auto X = torch::randn({1000, 8});
  int batch_size = 16;
  // CHECK-DAG: batch-index.cpp:[[@LINE-1]]:20: note: other batch size 'batch_size' = 16 (local-constant) [skyline-batch-size]
  for (int b_idx = 0; b_idx < 1000 / batch_size; b_idx++) {
    int i_min = batch_size * b_idx;
    optimizer.zero_grad();
    model(X.slice(0, i_min, i_min + batch_size)).backward();
    optimizer.step();
  }
}

void train() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  auto X = torch::randn({1000, 8});
  auto Y = torch::randn({1000, 1});
  int batch_size = 4;
  // CHECK-DAG: batch-index.cpp:[[@LINE-1]]:20: note: training batch size 'batch_size' = 4 (local-constant) [skyline-batch-size]
  int nb_batch = 1000 / batch_size;
  for (int epoch = 0; epoch < 3; ++epoch)
    for (int b = 0; b < nb_batch; b++) {
      auto x = X.slice(0, batch_size * b, batch_size * (b + 1));
      auto y = Y.slice(0, b * batch_size, (b + 1) * batch_size);
      optimizer.zero_grad();
      torch::mse_loss(model(x), y).backward();
      optimizer.step();
    }
}

int main() {
  // old_experiment();
  train();
}
// CHECK-NOT: warning

// MODEL: batch_size:
// MODEL-NEXT: name: batch_size
// MODEL-NEXT: value: 4
// MODEL: role: train
// MODEL-NEXT: confidence: 0.9
// MODEL: chain:
// MODEL-NEXT: - {step: batch 'b' sliced from row 'batch_size * b' by slice() in the training loop here, file: {{.*}}batch-index.cpp, line: 34, column: 27}
// MODEL-NEXT: - {step: variable 'batch_size' initialised here, file: {{.*}}batch-index.cpp, line: 29, column: 7}
// MODEL: other_batch_sizes:
// MODEL-NEXT: - name: batch_size
// MODEL-NEXT: value: 16
// MODEL: role: unknown
