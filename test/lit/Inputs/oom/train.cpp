// Activations of 1 MiB per sample: a memory budget of a few tens of MiB
// is crossed at a predictable batch size.
#include <torch/torch.h>

const int64_t kBatchSize = 4;

int main() {
  torch::nn::Linear model(262144, 1);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  for (int step = 0; step < 100; ++step) {
    auto x = torch::randn({kBatchSize, 262144});
    optimizer.zero_grad();
    model(x).mean().backward();
    optimizer.step();
  }
}
