// RUN: %skyline-check --analyze-only %s -- %mock-flags 2>&1 | FileCheck %s
// One loader whose loop the front end cannot see (iterators by hand): it is
// taken as the training loader, with a warning and a low confidence.
#include <torch/torch.h>

int main() {
  torch::nn::Linear model(2, 1);
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), 32);
  // CHECK: guessed.cpp:[[@LINE-1]]:82: note: training batch size 'make_data_loader' = 32 (literal-argument) [skyline-batch-size]
  for (auto it = loader->begin(); it != loader->end(); ++it)
    model(it->data);
}
// CHECK: skyline-check: warning: the training batch size was guessed: 'make_data_loader' feeds no loop with backward() or step()
