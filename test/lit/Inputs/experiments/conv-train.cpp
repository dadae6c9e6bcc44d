#include <torch/torch.h>

const int64_t kBatchSize = 16;

struct Net : torch::nn::Module {
  Net() {
    conv = register_module("conv", torch::nn::Conv2d(1, 8, 3));
    fc = register_module("fc", torch::nn::Linear(8 * 26 * 26, 10));
  }
  torch::Tensor forward(torch::Tensor x) { return fc(torch::relu(conv(x))); }
  torch::nn::Conv2d conv{nullptr};
  torch::nn::Linear fc{nullptr};
};

int main() {
  auto model = std::make_shared<Net>();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), kBatchSize);
  for (auto &batch : *loader) {
    optimizer.zero_grad();
    torch::nll_loss(model->forward(batch.data), batch.target).backward();
    optimizer.step();
  }
}
