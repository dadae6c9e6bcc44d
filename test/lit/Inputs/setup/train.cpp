// Regression on a dataset held in memory, as MNIST's dataset holds its
// images: 1000 samples of 1000 features (4,000,000 bytes of floats) and
// their targets (4,000 bytes), made before the training loop; each step
// trains on a slice of them.
#include <torch/torch.h>

#include <iostream>

int main() {
  torch::manual_seed(0);
  const int64_t batch_size = 50;
  auto features = torch::rand({1000, 1000});
  auto targets = features.sum(1, /*keepdim=*/true);
  torch::nn::Linear model(1000, 1);
  torch::optim::SGD optimizer(model->parameters(), 1e-4);
  for (int step = 0; step < 40; ++step) {
    int64_t start = (step * batch_size) % (1000 - batch_size + 1);
    auto x = features.narrow(0, start, batch_size);
    auto y = targets.narrow(0, start, batch_size);
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model(x), y);
    loss.backward();
    optimizer.step();
  }
  std::cout << "trained" << std::endl;
}
