// The batch size is also a template argument: a run-time override cannot
// compile, and the error must point at this file, not at skyline's copy.
#include <torch/torch.h>

#include <array>

constexpr int64_t kBatchSize = 8;

int main() {
  std::array<float, kBatchSize> losses{};
  torch::nn::Linear model(4, 1);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  for (int step = 0; step < 100; ++step) {
    optimizer.zero_grad();
    auto loss = model(torch::randn({kBatchSize, 4})).mean();
    loss.backward();
    optimizer.step();
    losses[step % kBatchSize] = loss.item<float>();
  }
}
