// A training program as the instrumenter leaves it: the batch size through
// batch_size(), iteration_begin() at the top of the loop body, and the model
// call inside a scope. The runtime ends it after its measured iterations;
// reaching the end of main means it did not.
#include "skyline/runtime/Runtime.h"

#include <torch/torch.h>

#include <cstdio>

const int64_t kBatchSize = skyline::rt::batch_size(16);

int main() {
  torch::manual_seed(0);
  torch::nn::Sequential model(torch::nn::Linear(256, 512), torch::nn::ReLU(),
                              torch::nn::Linear(512, 256));
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  skyline::rt::track_optimizer(optimizer);
  for (int step = 0; step < 40; ++step) {
    skyline::rt::iteration_begin();
    auto x = torch::randn({kBatchSize, 256});
    auto y = skyline::rt::scoped(0, [&]() -> decltype(auto) { return model->forward(x); });
    optimizer.zero_grad();
    y.pow(2).mean().backward();
    skyline::rt::optimizer_step([&]() -> decltype(auto) { return optimizer.step(); });
  }
  std::printf("loop ended with batch size %lld\n", static_cast<long long>(kBatchSize));
  return 3;
}
