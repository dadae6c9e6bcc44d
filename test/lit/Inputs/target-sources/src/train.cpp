// Regression on random data through the network of net.cpp.
#include "net.h"

#include <iostream>

int main() {
  torch::manual_seed(0);
  Net net;
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.01));
  const int64_t batch_size = 16;
  for (int step = 0; step < 50; ++step) {
    auto x = torch::randn({batch_size, 16});
    optimizer.zero_grad();
    auto loss = torch::mse_loss(net->forward(x), x.sum(1, true));
    loss.backward();
    optimizer.step();
  }
  std::cout << "final loss computed" << std::endl;
}
