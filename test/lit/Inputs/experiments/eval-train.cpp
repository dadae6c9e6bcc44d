#include <torch/torch.h>

const int64_t kBatchSize = 16;

struct Net : torch::nn::Module {
  Net() {
    fc1 = register_module("fc1", torch::nn::Linear(784, 512));
    fc2 = register_module("fc2", torch::nn::Linear(512, 10));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1(x));
    return fc2(x);
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

int main() {
  auto model = std::make_shared<Net>();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), kBatchSize);
  auto test_loader = torch::data::make_data_loader(torch::data::datasets::MNIST("t"), 64);
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (auto &batch : *loader) {
      optimizer.zero_grad();
      torch::nll_loss(model->forward(batch.data), batch.target).backward();
      optimizer.step();
    }
    double correct = 0;
    for (auto &batch : *test_loader) {
      auto output = model->forward(batch.data);
      correct += output.item<double>();
    }
  }
}
