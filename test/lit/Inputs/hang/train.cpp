// Hangs in its training loop after three steps, with a helper process that
// ignores SIGTERM (as a stuck data loader worker might): a run timeout must
// stop both.
#include <torch/torch.h>

#include <chrono>
#include <csignal>
#include <iostream>
#include <thread>
#include <unistd.h>

int main() {
  const int64_t batch_size = 8;
  torch::nn::Linear model(4, 1);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  for (int step = 0; step < 100; ++step) {
    optimizer.zero_grad();
    model(torch::randn({batch_size, 4})).mean().backward();
    optimizer.step();
    if (step == 2) {
      if (fork() == 0) {
        std::signal(SIGTERM, SIG_IGN);
        for (;;)
          pause();
      }
      std::cout << "stuck after step 3" << std::endl;
      for (;;)
        std::this_thread::sleep_for(std::chrono::hours(1));
    }
  }
}
