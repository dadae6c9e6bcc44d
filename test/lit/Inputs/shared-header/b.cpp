#include "layers.h"

const int64_t kBatchSize = 64;

int main() {
  Net model;
  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.01));
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                              kBatchSize);
  for (auto &batch : *loader) {
    optimizer.zero_grad();
    torch::nll_loss(model.forward(batch.data), batch.target).backward();
    optimizer.step();
  }
}
