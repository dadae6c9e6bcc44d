// A training program whose loops shape their batches by the batch size
// (`view({batch_size, -1})`), as many tutorials do: a short last batch
// fails them. The training data holds 480 samples, the evaluation data,
// given the same batch size, 240; each step also waits 3 ms (a fixed cost
// a step, like a logging call), so a larger batch trains faster.
#include <torch/torch.h>

#include <chrono>
#include <iostream>
#include <optional>
#include <thread>

class Points : public torch::data::datasets::Dataset<Points> {
public:
  explicit Points(size_t Count) : Count(Count) {}
  torch::data::Example<> get(size_t Index) override {
    return {torch::full({4, 4}, float(Index % 7)),
            torch::tensor(int64_t(Index % 3))};
  }
  std::optional<size_t> size() const override { return Count; }

private:
  size_t Count;
};

int main() {
  torch::manual_seed(0);
  const int64_t batch_size = 40;
  auto loader = torch::data::make_data_loader<
      torch::data::samplers::SequentialSampler>(
      Points(480).map(torch::data::transforms::Stack<>()), batch_size);
  auto eval_loader = torch::data::make_data_loader<
      torch::data::samplers::SequentialSampler>(
      Points(240).map(torch::data::transforms::Stack<>()), batch_size);
  torch::nn::Linear model(16, 3);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  int epochs = 0;
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (auto &batch : *loader) {
      auto x = batch.data.view({batch_size, -1});
      optimizer.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model(x), batch.target);
      loss.backward();
      optimizer.step();
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
    ++epochs;
  }
  torch::NoGradGuard no_grad;
  int evaluated = 0;
  for (auto &batch : *eval_loader) {
    auto x = batch.data.view({batch_size, -1});
    evaluated += int(model(x).size(0));
  }
  std::cout << "trained " << epochs << " epochs at batch size " << batch_size
            << ", evaluated " << evaluated << std::endl;
}
