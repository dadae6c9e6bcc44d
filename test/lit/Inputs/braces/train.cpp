// A training program whose settings are brace-initialized members of an
// aggregate, one of them set where the object is built: the batch size is
// an int, which braces refuse to narrow an int64_t to.
#include <torch/torch.h>

#include <iostream>

struct TrainConfig {
  int steps{60};
  int batch_size{32};
  float lr{0.05f};
};

int main() {
  torch::manual_seed(0);
  TrainConfig config{40};
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), config.lr);
  std::cout << "batch size " << config.batch_size << std::endl;
  for (int step = 0; step < config.steps; ++step) {
    auto x = torch::randn({config.batch_size, 16});
    optimizer.zero_grad();
    auto loss = model(x).pow(2).mean();
    loss.backward();
    optimizer.step();
  }
}
