#include "net.h"

int main() {
  Classifier net(16, 10);
  auto tower = std::make_shared<TowerImpl<torch::nn::Linear>>(16);
  torch::optim::SGD opt(net->parameters(), 0.1);
  for (int i = 0; i < 3; ++i) {
    net(tower->forward(torch::randn({4, 16}))).mean().backward();
    opt.step();
  }
}
