// RUN: %skyline-check --analyze-only %s -- %mock-flags 2>&1 | FileCheck %s
// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s --check-prefix=MODEL
// The same written `i = i + batchSize`:
// RUN: rm -rf %t && mkdir -p %t && sed 's/i += batchSize/i = i + batchSize/' %s > %t/loop-stride.cpp
// RUN: %skyline-check --analyze-only %t/loop-stride.cpp -- %mock-flags | FileCheck %s
// Batching by hand: the training loop steps through the samples by the
// batch size and slices each batch out of tensors made once (an LSTM
// regression of a thesis' code does). No loader, no tensor made with it.
#include <torch/torch.h>

int main() {
  const int batchSize = 32;
  // CHECK: loop-stride.cpp:[[@LINE-1]]:25: note: training batch size 'batchSize' = 32 (local-constant) [skyline-batch-size]
  // CHECK-NOT: guessed
  const int64_t samples = 3411;
  auto X = torch::randn({samples, 8});
  auto Y = torch::randn({samples, 1});
  torch::nn::Linear model(8, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  for (int epoch = 0; epoch < 3; ++epoch)
    for (int64_t i = 0; i < samples; i += batchSize) {
      int64_t n = std::min<int64_t>(batchSize, samples - i);
      optimizer.zero_grad();
      torch::mse_loss(model(X.slice(0, i, i + n)), Y.slice(0, i, i + n)).backward();
      optimizer.step();
    }
}

// MODEL: batch_size:
// MODEL-NEXT: name: batchSize
// MODEL-NEXT: value: 32
// MODEL: confidence: 0.9
// MODEL: chain:
// MODEL-NEXT: - {step: stride of the training loop here, file: {{.*}}loop-stride.cpp, line: 21, column: 43}
