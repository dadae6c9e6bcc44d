#include <torch/torch.h>

int main() {
  torch::nn::Linear model(3, 1);
  auto y = model(torch::randn({5, 3}));
}
