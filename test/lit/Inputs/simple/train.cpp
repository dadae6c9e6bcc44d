#include <torch/torch.h>

const int64_t kTrainBatchSize = 64;
const int64_t kTestBatchSize = 1000;

int main() {
  torch::nn::Linear model(784, 10);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                              kTrainBatchSize);
  for (auto &batch : *loader) {
    optimizer.zero_grad();
    torch::nll_loss(model(batch.data), batch.target).backward();
    optimizer.step();
  }
  auto test = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                            kTestBatchSize);
  for (auto &batch : *test)
    model(batch.data);
}
