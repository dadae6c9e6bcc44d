// Memory spent before the training loop: a reader that keeps a tensor for
// every record it "reads", as one looping on a file that did not open
// (`while (!in.eof())`) does, crosses any budget before the loop sees a
// batch. Its batch size is never the reason.
#include <torch/torch.h>

#include <vector>

const int64_t kBatchSize = 4;

int main() {
  std::vector<torch::Tensor> records;
  for (int record = 0; record < 1000000; ++record)
    records.push_back(torch::zeros({1 << 18}));
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  for (int step = 0; step < 100; ++step) {
    auto x = torch::randn({kBatchSize, 16});
    optimizer.zero_grad();
    model(x).mean().backward();
    optimizer.step();
  }
}
