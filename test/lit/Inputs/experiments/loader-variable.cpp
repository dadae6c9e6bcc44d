#include <torch/torch.h>

const int64_t kBatchSize = 16;

int main() {
  torch::nn::Linear model(784, 10);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  auto options = torch::data::DataLoaderOptions().batch_size(kBatchSize);
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), options);
  for (auto &batch : *loader) {
    optimizer.zero_grad();
    torch::nll_loss(model->forward(batch.data), batch.target).backward();
    optimizer.step();
  }
}
