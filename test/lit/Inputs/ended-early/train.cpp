// Trains for six iterations only, then returns 0: a program that runs out of
// data before its measured iterations are done.
#include <torch/torch.h>

#include <iostream>

int main() {
  const int64_t batch_size = 8;
  torch::nn::Linear model(4, 1);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  for (int step = 0; step < 6; ++step) {
    optimizer.zero_grad();
    model(torch::randn({batch_size, 4})).mean().backward();
    optimizer.step();
  }
  std::cout << "trained 6 steps" << std::endl;
}
