// Activations of 1 MiB per sample, and from batch size 9 on a 16 MiB
// workspace: memory the line through the small sizes does not foresee, so
// the sweep's step toward a budget of a few tens of MiB crosses it and the
// sweep backs off.
#include <torch/torch.h>

const int64_t kBatchSize = 4;

int main() {
  torch::nn::Linear model(262144, 1);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  for (int step = 0; step < 100; ++step) {
    auto workspace = torch::zeros({kBatchSize > 8 ? 4 << 20 : 1});
    auto x = torch::randn({kBatchSize, 262144});
    optimizer.zero_grad();
    model(x).mean().backward();
    optimizer.step();
  }
}
