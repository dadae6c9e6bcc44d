// RUN: %expect-exit 1 %skyline-check --analyze-only %s -- %mock-flags 2>&1 | FileCheck %s
// A while loop that steps through shuffled rows by the batch size, calling
// an overloaded train_step() whose arguments have an error here (an API
// this LibTorch lacks): clang leaves the call unresolved, and it still
// counts as a call of each overload, so the loop is the training loop and
// its stride the batch size.
#include <torch/torch.h>

struct Train {
  explicit Train(int batch_size = 256) : batch_size(batch_size) {}
  // CHECK: while-stride-with-errors.cpp:[[@LINE-1]]:35: note: training batch size 'batch_size' = 256 (default-argument) [skyline-batch-size]
  double train_step(const torch::Tensor &state);
  double train_step(const std::vector<torch::Tensor> &states);
  void run(int size);

  torch::nn::Linear model{4, 1};
  torch::optim::SGD optimizer{model->parameters(), 0.1};
  torch::Tensor states = torch::rand({1000, 4});
  int batch_size;
};

double Train::train_step(const torch::Tensor &state) {
  optimizer.zero_grad();
  model(state).backward();
  optimizer.step();
  return 0;
}

double Train::train_step(const std::vector<torch::Tensor> &states) {
  return train_step(states.front());
}

void Train::run(int size) {
  torch::Tensor index = torch::rand({1000});
  int k = 0;
  while (k < size) {
    torch::Tensor rows = index.slice(0, k, k + this->batch_size);
    train_step(states.index_removed_api(rows));
    k += this->batch_size;
  }
}

int main() {
  Train train;
  train.run(1000);
}
// CHECK: warning: the program does not compile here
