// The batch size is the program's first argument, with no default in the
// source: the runs measure it at the size it is given (--run-arg).
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: argv BATCH_SIZE\n");
    return 2;
  }
  const int64_t batch_size = std::atoll(argv[1]);
  torch::nn::Linear model(16, 4);
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(0.01));
  for (int step = 0; step < 200; ++step) {
    optimizer.zero_grad();
    auto loss = model(torch::randn({batch_size, 16})).pow(2).mean();
    loss.backward();
    optimizer.step();
  }
}
