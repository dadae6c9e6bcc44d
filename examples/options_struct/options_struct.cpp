// Hyperparameters in a struct of options, in the manner of PyTorch's C++
// MNIST example's Options: a training and a test batch size as field
// defaults, a TORCH_MODULE network, and a generated dataset.
#include <torch/torch.h>

#include <iostream>

struct TrainOptions {
  size_t train_batch_size = 8;
  size_t test_batch_size = 100;
  size_t epochs = 1;
  double lr = 0.01;
  double momentum = 0.5;
  torch::DeviceType device = torch::kCPU;
};

/// Noisy sine curves: y = sin(a x) with a per-sample a, from 16 samples of x.
class SineDataset : public torch::data::datasets::Dataset<SineDataset> {
public:
  explicit SineDataset(int64_t size) {
    frequency_ = torch::rand({size, 1}) * 3;
    auto grid = torch::linspace(0, 3.14159, 16).unsqueeze(0);
    curves_ = torch::sin(frequency_ * grid) + 0.05 * torch::randn({size, 16});
  }
  torch::data::Example<> get(size_t index) override {
    return {curves_[index], frequency_[index]};
  }
  torch::optional<size_t> size() const override { return curves_.size(0); }

private:
  torch::Tensor curves_, frequency_;
};

struct RegressorImpl : torch::nn::Module {
  RegressorImpl()
      : hidden(register_module("hidden", torch::nn::Linear(16, 32))),
        output(register_module("output", torch::nn::Linear(32, 1))) {}
  torch::Tensor forward(torch::Tensor x) {
    return output->forward(torch::tanh(hidden->forward(x)));
  }
  torch::nn::Linear hidden, output;
};
TORCH_MODULE(Regressor);

int main() {
  torch::manual_seed(0);
  TrainOptions options;
  if (torch::cuda::is_available())
    options.device = torch::kCUDA;

  Regressor model;
  model->to(options.device);
  torch::optim::SGD optimizer(
      model->parameters(), torch::optim::SGDOptions(options.lr).momentum(options.momentum));

  auto train_loader = torch::data::make_data_loader(
      SineDataset(256).map(torch::data::transforms::Stack<>()), options.train_batch_size);
  auto test_loader = torch::data::make_data_loader(
      SineDataset(200).map(torch::data::transforms::Stack<>()), options.test_batch_size);

  for (size_t epoch = 0; epoch < options.epochs; ++epoch) {
    model->train();
    bool first = true;
    for (auto &batch : *train_loader) {
      if (first)
        std::cout << "batch size: " << batch.data.size(0) << std::endl;
      first = false;
      optimizer.zero_grad();
      auto loss = torch::mse_loss(model->forward(batch.data.to(options.device)),
                                  batch.target.to(options.device));
      loss.backward();
      optimizer.step();
    }
    model->eval();
    torch::NoGradGuard no_grad;
    double total = 0;
    for (auto &batch : *test_loader)
      total += torch::mse_loss(model->forward(batch.data), batch.target).item<double>();
    std::cout << "epoch " << epoch << " test loss " << total << std::endl;
  }
}
