// An MLP classifier whose hyperparameters come from the command line through
// cxxopts: the batch size is the default of --batch-size.
#include <torch/torch.h>

#include <cxxopts.hpp>
#include <iostream>

/// Two Gaussian blobs per class in 8 dimensions.
class BlobDataset : public torch::data::datasets::Dataset<BlobDataset> {
public:
  BlobDataset(int64_t size, int64_t classes) {
    labels_ = torch::randint(0, classes, {size});
    features_ = torch::randn({size, 8}) + labels_.unsqueeze(1).to(torch::kFloat);
  }
  torch::data::Example<> get(size_t index) override {
    return {features_[index], labels_[index]};
  }
  torch::optional<size_t> size() const override { return labels_.size(0); }

private:
  torch::Tensor features_, labels_;
};

int main(int argc, char **argv) {
  cxxopts::Options options("cli_options", "Trains an MLP on generated blobs");
  options.add_options()
      ("b,batch-size", "training batch size", cxxopts::value<int64_t>()->default_value("48"))
      ("e,epochs", "number of epochs", cxxopts::value<int>()->default_value("1"))
      ("lr", "learning rate", cxxopts::value<double>()->default_value("0.05"))
      ("h,help", "print usage");
  auto result = options.parse(argc, argv);
  if (result.count("help")) {
    std::cout << options.help() << std::endl;
    return 0;
  }
  const auto batch_size = result["batch-size"].as<int64_t>();
  const auto epochs = result["epochs"].as<int>();
  const auto lr = result["lr"].as<double>();

  torch::manual_seed(0);
  const int64_t classes = 4;
  torch::nn::Sequential model(torch::nn::Linear(8, 32), torch::nn::ReLU(),
                              torch::nn::Linear(32, classes));
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(lr));

  auto loader = torch::data::make_data_loader(
      BlobDataset(960, classes).map(torch::data::transforms::Stack<>()), batch_size);
  for (int epoch = 0; epoch < epochs; ++epoch) {
    bool first = true;
    for (auto &batch : *loader) {
      if (first && epoch == 0)
        std::cout << "batch size: " << batch.data.size(0) << std::endl;
      first = false;
      optimizer.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model->forward(batch.data), batch.target);
      loss.backward();
      optimizer.step();
    }
    std::cout << "epoch " << epoch << " done" << std::endl;
  }
}
