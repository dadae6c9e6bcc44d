// An MLP trained on generated data whose author sized LibTorch's intra-op
// thread pool for another machine: a fixed torch::set_num_threads(8), as
// training code often carries from the workstation it was written on. On a
// machine with fewer CPUs the pool's threads share them, and the threads
// experiment (docs/experiments/threads.md) measures the program with the
// machine's own count and offers the fix-it on this call.
#include <torch/torch.h>

#include <cstdint>
#include <iostream>

constexpr int64_t kFeatures = 256;
constexpr int64_t kHidden = 512;
constexpr int64_t kClasses = 10;
constexpr int kSteps = 200;

struct Classifier : torch::nn::Module {
  Classifier()
      : fc1(kFeatures, kHidden), fc2(kHidden, kHidden), fc3(kHidden, kClasses) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_module("fc3", fc3);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    x = torch::relu(fc2->forward(x));
    return fc3->forward(x);
  }

  torch::nn::Linear fc1, fc2, fc3;
};

int main() {
  torch::set_num_threads(8);
  torch::manual_seed(0);
  const int64_t batch_size = 64;

  auto model = std::make_shared<Classifier>();
  torch::optim::Adam optimizer(model->parameters(),
                               torch::optim::AdamOptions(1e-3));

  for (int step = 0; step < kSteps; ++step) {
    auto inputs = torch::randn({batch_size, kFeatures});
    auto labels = torch::randint(kClasses, {batch_size}, torch::kLong);
    optimizer.zero_grad();
    auto loss = torch::cross_entropy_loss(model->forward(inputs), labels);
    loss.backward();
    optimizer.step();
    if (step % 50 == 0)
      std::cout << "step " << step << " loss " << loss.item<float>()
                << std::endl;
  }
}
