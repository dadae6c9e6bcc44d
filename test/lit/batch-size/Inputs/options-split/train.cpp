#include "loader.h"

namespace po = boost::program_options;

void train(po::variables_map &vm, torch::nn::Linear &model) {
  FolderLoader dataloader, valid_dataloader;
  dataloader = FolderLoader("train", vm["batch_size"].as<size_t>(), true);
  valid_dataloader = FolderLoader("valid", vm["valid_batch_size"].as<size_t>());
  torch::optim::Adam optimizer(model->parameters());
  torch::Tensor batch;
  for (size_t epoch = 0; epoch < vm["epochs"].as<size_t>(); ++epoch) {
    while (dataloader(batch)) {
      optimizer.zero_grad();
      model(batch).backward();
      optimizer.step();
    }
  }
}
