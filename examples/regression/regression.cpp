// Linear regression on generated data, the batch size a default argument of
// the function that makes each batch.
#include <torch/torch.h>

#include <iostream>

constexpr int64_t kFeatures = 4;
constexpr int kSteps = 60;

struct Batch {
  torch::Tensor x, y;
};

/// y = x w + b + noise, for a fixed true w and b.
Batch make_batch(const torch::Tensor &true_weight, double true_bias,
                 int64_t batch_size = 32) {
  auto x = torch::randn({batch_size, kFeatures});
  auto y = x.mm(true_weight) + true_bias + 0.01 * torch::randn({batch_size, 1});
  return {x, y};
}

int main() {
  torch::manual_seed(0);
  auto true_weight = torch::tensor({0.5, -1.0, 2.0, 0.25}).reshape({kFeatures, 1});
  const double true_bias = 3.0;

  torch::nn::Linear model(kFeatures, 1);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));

  for (int step = 0; step < kSteps; ++step) {
    Batch batch = make_batch(true_weight, true_bias);
    if (step == 0)
      std::cout << "batch size: " << batch.x.size(0) << std::endl;
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model(batch.x), batch.y);
    loss.backward();
    optimizer.step();
    if (step % 20 == 0)
      std::cout << "step " << step << " loss " << loss.item<float>() << std::endl;
  }
  std::cout << "learned bias " << model->bias.item<float>() << std::endl;
}
