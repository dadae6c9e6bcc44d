#include <torch/torch.h>

const int64_t kBatchSize = 16;

struct Net : torch::nn::Module {
  Net() { fc = register_module("fc", torch::nn::Linear(784, 10)); }
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc{nullptr};
};

int main() {
  torch::Device device(torch::kCUDA);
  auto model = std::make_shared<Net>();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), kBatchSize);
  for (auto &batch : *loader) {
    auto data = batch.data.to(device), target = batch.target.to(device);
    optimizer.zero_grad();
    torch::nll_loss(model->forward(data), target).backward();
    optimizer.step();
  }
}
