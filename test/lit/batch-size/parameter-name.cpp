// RUN: %skyline-check --analyze-only %s -- %mock-flags 2>&1 | FileCheck %s
// No torch data loader: the batch size is the argument of a parameter named
// like one, of the program's own code (a corpus cut into batch_size rows).
// The tensor it makes is sliced by the training loop's condition: training.
// An argument left to its default is no use.
#include <torch/torch.h>

struct Corpus {
  torch::Tensor batchify(int64_t batch_size, int64_t pad = 0) { return {}; }
  torch::Tensor sample(int64_t sample_batch_size = 4) { return {}; }
};

int main() {
  const int64_t hidden = 32;
  const int64_t kRows = 35;
  // CHECK: parameter-name.cpp:[[@LINE-1]]:25: note: training batch size 'kRows' = 35 (local-constant) [skyline-batch-size]
  const int64_t sequence_length = 16;
  Corpus corpus;
  auto ids = corpus.batchify(kRows);
  auto samples = corpus.sample();
  torch::nn::LSTM lstm(10, hidden);
  torch::optim::Adam optimizer(lstm->parameters());
  for (int64_t i = 0; i + sequence_length < ids.size(1); i += sequence_length) {
    optimizer.zero_grad();
    torch::nll_loss(ids, ids).backward();
    optimizer.step();
  }
}
// CHECK-NOT: warning
// CHECK-NOT: batch size
