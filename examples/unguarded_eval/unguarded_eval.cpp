// A deep MLP trained on generated data, with a validation pass after each
// epoch that runs the model without a torch::NoGradGuard: autograd records
// every validation batch's graph and keeps each layer's saved tensors until
// the output is freed, for a backward() that never comes. The no-grad
// evaluation experiment (docs/experiments/no-grad-eval.md) times the
// validation passes without and with the guard, with the memory each held,
// and offers the guard at the start of the loop's body (and, for the last
// test loop, whose body is one statement, braces around it).
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <utility>

constexpr int64_t kBatchSize = 32;
constexpr int64_t kValidationBatchSize = 512;
constexpr int64_t kFeatures = 256;
constexpr int64_t kHidden = 1024;
constexpr int64_t kClasses = 10;
constexpr int64_t kTrainSamples = 32 * 40;
constexpr int64_t kValidationSamples = 512 * 10;
constexpr int kEpochs = 3;

/// Samples drawn once from a fixed seed: a feature vector and its class.
class Generated : public torch::data::Dataset<Generated> {
public:
  Generated(int64_t Samples, uint64_t Seed) {
    torch::manual_seed(Seed);
    features_ = torch::randn({Samples, kFeatures});
    labels_ = torch::randint(kClasses, {Samples});
  }
  torch::data::Example<> get(size_t index) override {
    return {features_[int64_t(index)], labels_[int64_t(index)]};
  }
  torch::optional<size_t> size() const override {
    return size_t(features_.size(0));
  }

private:
  torch::Tensor features_, labels_;
};

struct Classifier : torch::nn::Module {
  Classifier()
      : fc1(kFeatures, kHidden), fc2(kHidden, kHidden), fc3(kHidden, kHidden),
        fc4(kHidden, kHidden), out(kHidden, kClasses) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_module("fc3", fc3);
    register_module("fc4", fc4);
    register_module("out", out);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    x = torch::relu(fc2->forward(x));
    x = torch::relu(fc3->forward(x));
    x = torch::relu(fc4->forward(x));
    return out->forward(x);
  }

  torch::nn::Linear fc1, fc2, fc3, fc4, out;
};

/// The validation loss and accuracy, in that order.
template <typename Loader>
std::pair<double, double> validate(Classifier &model, Loader &loader) {
  model.eval();
  double loss = 0;
  int64_t correct = 0;
  for (auto &batch : loader) {
    auto output = model.forward(batch.data);
    loss += torch::cross_entropy_loss(output, batch.target)
                .template item<double>();
    correct +=
        output.argmax(1).eq(batch.target).sum().template item<int64_t>();
  }
  model.train();
  return {loss, double(correct) / double(kValidationSamples)};
}

int main() {
  torch::manual_seed(0);
  Classifier model;
  torch::optim::SGD optimizer(model.parameters(),
                              torch::optim::SGDOptions(0.01));
  auto train_loader = torch::data::make_data_loader(
      Generated(kTrainSamples, 1).map(torch::data::transforms::Stack<>()),
      kBatchSize);
  auto validation_loader = torch::data::make_data_loader(
      Generated(kValidationSamples, 2).map(torch::data::transforms::Stack<>()),
      kValidationBatchSize);

  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    double last_loss = 0;
    for (auto &batch : *train_loader) {
      optimizer.zero_grad();
      auto loss =
          torch::cross_entropy_loss(model.forward(batch.data), batch.target);
      loss.backward();
      optimizer.step();
      last_loss = loss.item<double>();
    }
    auto [validation_loss, accuracy] = validate(model, *validation_loader);
    std::printf("epoch %d loss %.4f validation loss %.4f accuracy %.3f\n",
                epoch, last_loss, validation_loss, accuracy);
  }

  // A last word on held-out data, a loop of one statement, unguarded too.
  auto test_loader = torch::data::make_data_loader(
      Generated(kValidationSamples, 3).map(torch::data::transforms::Stack<>()),
      kValidationBatchSize);
  double test_loss = 0;
  for (auto &batch : *test_loader)
    test_loss += torch::cross_entropy_loss(model.forward(batch.data),
                                           batch.target)
                     .item<double>();
  std::printf("test loss %.4f\n", test_loss);
}
