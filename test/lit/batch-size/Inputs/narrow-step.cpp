// The batch taken from a start the step moves: slice()'s `start + n` end
// and narrow()'s length are the batch size, not the factor 7 of the step in
// the start (a pseudo-random offset).
#include <torch/torch.h>

int main() {
  const int64_t batch_size = 50;
  // CHECK: narrow-step.cpp:[[@LINE-1]]:30: note: training batch size 'batch_size' = 50 (local-constant) [skyline-batch-size]
  auto features = torch::rand({1000, 1000});
  auto targets = torch::rand({1000, 1});
  torch::nn::Linear model(1000, 1);
  torch::optim::SGD optimizer(model->parameters(), 1e-4);
  for (int step = 0; step < 40; ++step) {
    int64_t start = (step * 7) % (1000 - batch_size + 1);
    auto y = targets.slice(0, start, start + batch_size);
    auto x = features.narrow(0, start, batch_size);
    optimizer.zero_grad();
    torch::mse_loss(model(x), y).backward();
    optimizer.step();
  }
}
// CHECK-NOT: warning
