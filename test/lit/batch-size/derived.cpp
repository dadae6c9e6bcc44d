// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s
// A batch size computed from others: the whole expression is the site.
#include <torch/torch.h>

const int64_t kGlobalBatch = 256;
const int64_t kWorldSize = 4;
const int64_t kLocalBatch = kGlobalBatch / kWorldSize;
// CHECK: batch_size:
// CHECK-NEXT:   name: kLocalBatch
// CHECK-NEXT:   value: 64
// CHECK-NEXT:   file: {{.*}}derived.cpp
// CHECK-NEXT:   line: [[@LINE-5]]
// CHECK-NEXT:   column: 29
// CHECK-NEXT:   offset: {{[0-9]+}}
// CHECK-NEXT:   length: 25
// CHECK-NEXT:   kind: derived

int main() {
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    model(torch::randn({kLocalBatch, 3})).backward();
    opt.step();
  }
}
