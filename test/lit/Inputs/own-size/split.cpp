// No batch size anywhere the front end looks: the data, 200 samples, is cut
// into batches of 12 (the last one of 8) by split(). The runs observe 12,
// the short last batch of each epoch left out with its iteration.
#include <torch/torch.h>

int main() {
  torch::nn::Sequential model(torch::nn::Linear(16, 32), torch::nn::ReLU(),
                              torch::nn::Linear(32, 1));
  torch::optim::Adam optimizer(model->parameters(),
                               torch::optim::AdamOptions(1e-3));
  torch::Tensor data = torch::randn({200, 16});
  for (int epoch = 0; epoch < 50; ++epoch) {
    for (const torch::Tensor &batch : data.split(12)) {
      optimizer.zero_grad();
      model->forward(batch).pow(2).mean().backward();
      optimizer.step();
    }
  }
}
