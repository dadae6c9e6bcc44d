// An MLP trained on images its dataset reads one at a time: get() waits for
// each sample's bytes (a fixed latency here, as a network file system or an
// object store has) and decodes them by hand, pixel by pixel, as a dataset
// that reads JPEGs does. The loader has no worker threads, so every batch
// is read on the training thread while the model waits; the
// loader workers experiment (docs/experiments/loader-workers.md) measures
// the program with a worker that makes the next batch while the model
// trains on this one, and offers `.workers(N)` on the loader's options.
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <thread>
#include <vector>

constexpr int64_t kBatchSize = 32;
constexpr int64_t kPixels = 28 * 28;
constexpr int64_t kHidden = 1024;
constexpr int64_t kClasses = 10;
constexpr int64_t kSamples = 60000;
constexpr auto kReadLatency = std::chrono::microseconds(150); // a sample's
constexpr int kDecodeRounds = 4; // the cost of one pixel's decoding
constexpr int kSteps = 200;

class GeneratedImages : public torch::data::Dataset<GeneratedImages> {
public:
  torch::data::Example<> get(size_t index) override {
    std::this_thread::sleep_for(kReadLatency);
    std::vector<float> pixels(kPixels);
    for (int64_t p = 0; p < kPixels; ++p) {
      float value = 0;
      for (int round = 0; round < kDecodeRounds; ++round)
        value += std::sin(0.001f * float(index) + 0.01f * float(p * round));
      pixels[size_t(p)] = value / kDecodeRounds;
    }
    torch::Tensor image = torch::from_blob(pixels.data(), {kPixels}).clone();
    return {image, torch::tensor(int64_t(index % kClasses))};
  }
  torch::optional<size_t> size() const override { return kSamples; }
};

struct Classifier : torch::nn::Module {
  Classifier()
      : fc1(kPixels, kHidden), fc2(kHidden, kHidden), fc3(kHidden, kClasses) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_module("fc3", fc3);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    x = torch::relu(fc2->forward(x));
    return fc3->forward(x);
  }

  torch::nn::Linear fc1, fc2, fc3;
};

int main() {
  // One intra-op thread: the program is one of several training jobs that
  // share the machine, each given a CPU.
  torch::set_num_threads(1);
  torch::manual_seed(0);
  auto model = std::make_shared<Classifier>();
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(0.01));
  auto loader =
      torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
          GeneratedImages().map(torch::data::transforms::Stack<>()),
          torch::data::DataLoaderOptions().batch_size(kBatchSize));

  int step = 0;
  for (auto &batch : *loader) {
    optimizer.zero_grad();
    auto loss =
        torch::cross_entropy_loss(model->forward(batch.data), batch.target);
    loss.backward();
    optimizer.step();
    if (step % 50 == 0)
      std::cout << "step " << step << " loss " << loss.item<float>()
                << std::endl;
    if (++step == kSteps)
      break;
  }
}
