#include <torch/torch.h>

int day_3() {
  torch::nn::Linear net(2, 1);
  torch::optim::Adam optimizer(net->parameters());
  const int batch_size = 32;
  for (int iter = 0; iter < 100; ++iter) {
    auto x = torch::rand({batch_size, 2});
    optimizer.zero_grad();
    torch::mse_loss(net(x), x).backward();
    optimizer.step();
  }
  return 0;
}
