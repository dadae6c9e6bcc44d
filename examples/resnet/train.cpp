// Trains the ResNet of resnet.h on random CIFAR-shaped batches.
#include "resnet.h"

#include <iostream>

int main() {
  torch::manual_seed(0);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);

  const int64_t batch_size = 16;
  const int64_t num_classes = 10;
  const int iterations = 8;

  ResNet model(/*blocks_per_stage=*/1, num_classes);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(5e-4));

  model->train();
  for (int iteration = 0; iteration < iterations; ++iteration) {
    // Made on the host and copied, as a data loader's batch is.
    auto images = torch::randn({batch_size, 3, 32, 32}).to(device);
    auto labels = torch::randint(0, num_classes, {batch_size}, torch::kLong).to(device);
    if (iteration == 0)
      std::cout << "batch size: " << images.size(0) << std::endl;
    optimizer.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(images), labels);
    loss.backward();
    optimizer.step();
    std::cout << "iteration " << iteration << " loss " << loss.item<float>() << std::endl;
  }
}
