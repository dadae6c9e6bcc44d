// RUN: %skyline-check --analyze-only %s -- %mock-flags 2>&1 | FileCheck %s
// One loader whose loop the front end cannot see (iterators by hand): its
// batches reach no backward() or step() that the front end sees, so it is
// not taken as the training loader; it is listed as the candidate.
#include <torch/torch.h>

int main() {
  torch::nn::Linear model(2, 1);
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), 32);
  // CHECK: guessed.cpp:[[@LINE-1]]:82: note: other batch size 'make_data_loader' = 32 (literal-argument) [skyline-batch-size]
  // CHECK-NOT: training batch size
  for (auto it = loader->begin(); it != loader->end(); ++it)
    model(it->data);
}
// CHECK: skyline-check: warning: the training batch size is not chosen, no use of a size decides it; candidate: 'make_data_loader' = 32 at guessed.cpp:9 (its batches reach no loop with backward() or step())
