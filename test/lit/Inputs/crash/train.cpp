// Aborts in its training loop after three steps, leaving a helper process
// behind (as a data loader worker would be): the crash must be named, and
// the helper must not outlive the run.
#include <torch/torch.h>

#include <cstdlib>
#include <iostream>
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
      if (fork() == 0)
        for (;;)
          pause();
      std::cout << "aborting after step 3" << std::endl;
      std::abort();
    }
  }
}
