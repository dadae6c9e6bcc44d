// A GAN that learns a ring of 2-D points: a generator and a discriminator,
// each with its own Adam optimizer, two backward passes and two steps per
// iteration, and a custom dataset served by torch::data with two workers.
#include <torch/torch.h>

#include <cmath>
#include <iostream>

struct Hyper {
  static constexpr int64_t kBatchSize = 64;
  static constexpr int64_t kNoiseSize = 16;
  static constexpr int64_t kDatasetSize = 2048;
  static constexpr int kEpochs = 1;
};

/// Points on the unit circle with a little noise.
class RingDataset : public torch::data::datasets::Dataset<RingDataset> {
public:
  explicit RingDataset(int64_t size) {
    auto angle = torch::rand({size}) * 2 * M_PI;
    points_ = torch::stack({torch::cos(angle), torch::sin(angle)}, 1) +
              0.05 * torch::randn({size, 2});
  }
  torch::data::Example<> get(size_t index) override {
    return {points_[index], torch::ones({1})};
  }
  torch::optional<size_t> size() const override { return points_.size(0); }

private:
  torch::Tensor points_;
};

int main() {
  torch::manual_seed(0);
  torch::nn::Sequential generator(
      torch::nn::Linear(Hyper::kNoiseSize, 64), torch::nn::ReLU(),
      torch::nn::Linear(64, 64), torch::nn::ReLU(), torch::nn::Linear(64, 2));
  torch::nn::Sequential discriminator(
      torch::nn::Linear(2, 64), torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      torch::nn::Linear(64, 1), torch::nn::Sigmoid());

  torch::optim::Adam generator_optimizer(
      generator->parameters(), torch::optim::AdamOptions(2e-4).betas({0.5, 0.5}));
  torch::optim::Adam discriminator_optimizer(
      discriminator->parameters(), torch::optim::AdamOptions(5e-4).betas({0.5, 0.5}));

  auto dataset = RingDataset(Hyper::kDatasetSize).map(torch::data::transforms::Stack<>());
  auto data_loader = torch::data::make_data_loader(
      std::move(dataset),
      torch::data::DataLoaderOptions().batch_size(Hyper::kBatchSize).workers(2));

  for (int epoch = 0; epoch < Hyper::kEpochs; ++epoch) {
    int64_t batch_index = 0;
    for (torch::data::Example<> &batch : *data_loader) {
      const int64_t n = batch.data.size(0);
      if (batch_index == 0)
        std::cout << "batch size: " << n << std::endl;
      // Discriminator: real points towards 1, generated ones towards 0.
      discriminator->zero_grad();
      auto real_output = discriminator->forward(batch.data);
      auto d_loss_real = torch::binary_cross_entropy(real_output, torch::full({n, 1}, 0.9));
      d_loss_real.backward();
      auto noise = torch::randn({n, Hyper::kNoiseSize});
      auto fake = generator->forward(noise);
      auto fake_output = discriminator->forward(fake.detach());
      auto d_loss_fake = torch::binary_cross_entropy(fake_output, torch::zeros({n, 1}));
      d_loss_fake.backward();
      discriminator_optimizer.step();

      // Generator: make the discriminator say 1.
      generator->zero_grad();
      auto g_loss = torch::binary_cross_entropy(discriminator->forward(fake),
                                                torch::ones({n, 1}));
      g_loss.backward();
      generator_optimizer.step();

      if (batch_index++ % 8 == 0)
        std::cout << "batch " << batch_index << " d_loss "
                  << (d_loss_real + d_loss_fake).item<float>() << " g_loss "
                  << g_loss.item<float>() << std::endl;
    }
  }
}
