// A training loop that reads its loss on the host each iteration and
// writes a 300 x 300 tensor to a string stream each iteration: on the CPU
// the formatting is the time, the read is not.
#include <torch/torch.h>

#include <cstdio>
#include <sstream>

int main() {
  const int64_t batch_size = 32;
  torch::manual_seed(0);
  torch::nn::Linear model(64, 64);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  torch::Tensor weights = torch::randn({300, 300});
  std::ostringstream log;
  float total = 0;
  for (int step = 0; step < 200; ++step) {
    auto x = torch::randn({batch_size, 64});
    optimizer.zero_grad();
    auto loss = model(x).pow(2).mean();
    loss.backward();
    optimizer.step();
    total += loss.item<float>();
    log << weights;
  }
  std::printf("total %.3f, logged %zu\n", total, log.str().size());
}
