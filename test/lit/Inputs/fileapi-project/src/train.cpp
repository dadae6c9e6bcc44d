// Linear regression whose targets come from the project's library 'helpers'.
#include "helper.h"

#include <iostream>

constexpr int64_t kFeatures = 4;
constexpr int kSteps = kForcedSteps; // src/forced.h, by -include

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(kFeatures, 1);
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(0.1));
  const int64_t batch_size = 32;
  for (int step = 0; step < kSteps; ++step) {
    auto x = torch::randn({batch_size, kFeatures});
    auto y = synthetic_targets(x);
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model(x), y);
    loss.backward();
    optimizer.step();
  }
  std::cout << "learned bias " << model->bias.item<float>() << std::endl;
}
