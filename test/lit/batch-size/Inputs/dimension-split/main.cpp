#include <torch/torch.h>

#include "data.h"

void train_model(torch::nn::Linear &model, int64_t n_sample, int64_t n_batch) {
  torch::optim::Adam optimizer(model->parameters());
  for (int64_t i = 0; i < n_sample / n_batch; ++i) {
    auto xy = data::generate_xy(n_batch, 2);
    optimizer.zero_grad();
    torch::mse_loss(model(xy.first), xy.second).backward();
    optimizer.step();
  }
}

int main() {
  torch::nn::Linear model(2, 2);
  const int64_t n_sample = 10000;
  const int64_t n_batch = 32;
  train_model(model, n_sample, n_batch);
}
