// RUN: %skyline-check --analyze-only %s -- %mock-flags 2>&1 | FileCheck %s
// A language model: the batch size reaches no data loader and no first
// dimension of a tensor in the training loop, only the program's own corpus
// reader and a middle dimension. A variable named like a batch size is no
// answer, only a candidate the warning lists; a test one is not listed.
#include <torch/torch.h>

struct Corpus {
  torch::Tensor get_data(int64_t rows) { return {}; }
};

int main() {
  const int64_t num_layers = 2;
  const int64_t hidden_size = 64;
  const int64_t kTestBatchSize = 1;
  const int64_t batch_size = 20;
  // CHECK-NOT: note: training batch size
  const int64_t sequence_length = 30;
  Corpus corpus;
  auto ids = corpus.get_data(batch_size);
  torch::nn::LSTM lstm(10, hidden_size);
  torch::optim::Adam optimizer(lstm->parameters());
  for (int epoch = 0; epoch < 5; ++epoch) {
    auto state = torch::zeros({num_layers, batch_size, hidden_size});
    for (int64_t i = 0; i + sequence_length < ids.size(1); i += sequence_length) {
      optimizer.zero_grad();
      torch::nll_loss(ids, ids).backward();
      optimizer.step();
    }
  }
  auto sample_state = torch::zeros({num_layers, kTestBatchSize, hidden_size});
}
// CHECK: skyline-check: warning: the training batch size is not chosen, no use of a size decides it; candidate: 'batch_size' = 20 at named-only.cpp:16 (named like a batch size, but reaches no data loader, no tensor made in the training loop and no loop stride)
