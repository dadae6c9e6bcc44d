// A trainer class that keeps its model and optimizer as members, made with
// `new` in its constructor (soumik12345/libtorch-examples' ConvNetClassifier
// does): no statement follows the optimizer's declaration, so the runs
// track it where it steps.
#include <torch/torch.h>

constexpr int64_t kFeatures = 4;

class Trainer {
public:
  Trainer() {
    model = new torch::nn::Linear(kFeatures, 1);
    optimizer = new torch::optim::Adam((*model)->parameters(),
                                       torch::optim::AdamOptions(1e-2));
  }
  ~Trainer() {
    delete optimizer;
    delete model;
  }
  void train(int64_t batch_size, int steps) {
    for (int step = 0; step < steps; ++step) {
      auto x = torch::randn({batch_size, kFeatures});
      auto y = x.sum(1, /*keepdim=*/true);
      (*optimizer).zero_grad();
      torch::mse_loss((*model)(x), y).backward();
      (*optimizer).step();
    }
  }

private:
  torch::nn::Linear *model{};
  torch::optim::Adam *optimizer{};
};

int main() {
  Trainer trainer;
  trainer.train(/*batch_size=*/32, 60);
}
