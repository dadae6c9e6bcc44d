// A program that sets its own thread count: the fix-it changes the call's
// argument (every such call), not main.
#include <torch/torch.h>

const int64_t kBatchSize = 16;

int main() {
  torch::set_num_threads(4);
  torch::nn::Linear model(784, 10);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), kBatchSize);
  for (auto &batch : *loader) {
    optimizer.zero_grad();
    torch::nll_loss(model->forward(batch.data), batch.target).backward();
    optimizer.step();
  }
}
