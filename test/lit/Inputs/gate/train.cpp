// A two-layer MLP whose hidden width the gate test widens from 256 to 1024:
// weights, gradients, optimizer state and activations all grow.
#include <torch/torch.h>

const int64_t kBatchSize = 32;
const int64_t kHidden = 256;

struct Net : torch::nn::Module {
  Net() {
    fc1 = register_module("fc1", torch::nn::Linear(512, kHidden));
    fc2 = register_module("fc2", torch::nn::Linear(kHidden, 10));
  }
  torch::Tensor forward(torch::Tensor x) { return fc2(torch::relu(fc1(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

int main() {
  auto model = std::make_shared<Net>();
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  for (int step = 0; step < 100; ++step) {
    auto x = torch::randn({kBatchSize, 512});
    auto y = torch::randint(0, 10, {kBatchSize});
    optimizer.zero_grad();
    torch::nn::functional::cross_entropy(model->forward(x), y).backward();
    optimizer.step();
  }
}
