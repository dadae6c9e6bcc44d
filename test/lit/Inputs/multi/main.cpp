#include "block.h"
#include "config.h"

int main() {
  Block block(config::kWidth);
  torch::optim::SGD opt(block->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    block->forward(torch::randn({config::kBatchSize, config::kWidth})).mean().backward();
    opt.step();
  }
}
