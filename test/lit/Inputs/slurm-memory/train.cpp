// Memory that grows with the batch size, resident for the whole run: 128 MiB
// a sample of ballast made before the loop, and iterations slow enough (a
// quarter second) that Slurm's memory limit, polled every second on the test
// cluster (jobacct_gather, no cgroups), sees the run's peak. Asleep for most
// of each iteration, its times agree run to run, whatever else keeps the
// machine busy (test/lit/slurm/parallel.test times two sweeps of it).
#include <torch/torch.h>

#include <chrono>
#include <thread>

const int64_t kBatchSize = 2;

int main() {
  auto ballast = torch::ones({kBatchSize, 32 << 20});
  torch::nn::Linear model(64, 1);
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(0.01));
  for (int step = 0; step < 100; ++step) {
    auto x = torch::randn({kBatchSize, 64});
    optimizer.zero_grad();
    model(x).mean().backward();
    optimizer.step();
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return ballast.sum().item<float>() > 0 ? 0 : 1;
}
