// MNIST-style CNN in the shape of PyTorch's C++ MNIST example: file-scope
// constants, an on-disk dataset read through torch::data::datasets::MNIST,
// a training loader and a test loader. The IDX files are synthesized on first
// run (random digits), so the example needs no download.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <sys/stat.h>

// Where the synthetic MNIST files live (relative to the working directory).
const char *kDataRoot = "./mnist-data";

// The batch size for training.
const int64_t kTrainBatchSize = 64;

// The batch size for testing.
const int64_t kTestBatchSize = 1000;

// The number of epochs to train.
const int64_t kNumberOfEpochs = 1;

// After how many batches to log a new update with the loss value.
const int64_t kLogInterval = 10;

// Keeps the example short on a CPU: an epoch stops after this many batches.
const int64_t kMaxBatchesPerEpoch = 40;

struct Net : torch::nn::Module {
  Net()
      : conv1(torch::nn::Conv2dOptions(1, 10, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(10, 20, /*kernel_size=*/5)),
        fc1(320, 50),
        fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv2_drop", conv2_drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = torch::relu(
        torch::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 320});
    x = torch::relu(fc1->forward(x));
    x = torch::dropout(x, /*p=*/0.5, /*training=*/is_training());
    x = fc2->forward(x);
    return torch::log_softmax(x, /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Dropout2d conv2_drop;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};

static void writeBigEndian(std::ofstream &Out, uint32_t Value) {
  const char Bytes[4] = {char(Value >> 24), char(Value >> 16), char(Value >> 8),
                         char(Value)};
  Out.write(Bytes, 4);
}

/// Writes IDX files in MNIST's format (the reader expects 60000 training and
/// 10000 test images): Count random 28x28 images, labels 0-9.
static void writeSyntheticSplit(const std::string &Prefix, uint32_t Count) {
  torch::manual_seed(Count);
  auto Images = torch::randint(0, 256, {Count, 28, 28}, torch::kUInt8);
  auto Labels = torch::randint(0, 10, {Count}, torch::kUInt8);
  std::ofstream ImageFile(Prefix + "-images-idx3-ubyte", std::ios::binary);
  writeBigEndian(ImageFile, 2051);
  writeBigEndian(ImageFile, Count);
  writeBigEndian(ImageFile, 28);
  writeBigEndian(ImageFile, 28);
  ImageFile.write(reinterpret_cast<const char *>(Images.data_ptr<uint8_t>()),
                  Images.numel());
  std::ofstream LabelFile(Prefix + "-labels-idx1-ubyte", std::ios::binary);
  writeBigEndian(LabelFile, 2049);
  writeBigEndian(LabelFile, Count);
  LabelFile.write(reinterpret_cast<const char *>(Labels.data_ptr<uint8_t>()),
                  Labels.numel());
}

static void ensureSyntheticMnist(const std::string &Root) {
  struct stat Info;
  if (stat((Root + "/t10k-labels-idx1-ubyte").c_str(), &Info) == 0)
    return;
  mkdir(Root.c_str(), 0755);
  writeSyntheticSplit(Root + "/train", 60000);
  writeSyntheticSplit(Root + "/t10k", 10000);
}

template <typename DataLoader>
void train(size_t epoch, Net &model, torch::Device device, DataLoader &data_loader,
           torch::optim::Optimizer &optimizer, size_t dataset_size) {
  model.train();
  size_t batch_idx = 0;
  for (auto &batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    if (batch_idx == 0)
      std::cout << "batch size: " << data.size(0) << std::endl;
    optimizer.zero_grad();
    auto output = model.forward(data);
    auto loss = torch::nll_loss(output, targets);
    loss.backward();
    optimizer.step();

    if (batch_idx++ % kLogInterval == 0) {
      std::printf("Train Epoch: %zu [%5ld/%5zu] Loss: %.4f\n", epoch,
                  batch_idx * batch.data.size(0), dataset_size,
                  loss.template item<float>());
    }
    if (batch_idx == kMaxBatchesPerEpoch)
      break;
  }
}

template <typename DataLoader>
void test(Net &model, torch::Device device, DataLoader &data_loader,
          size_t dataset_size) {
  torch::NoGradGuard no_grad;
  model.eval();
  double test_loss = 0;
  int32_t correct = 0;
  for (const auto &batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model.forward(data);
    test_loss += torch::nll_loss(output, targets, /*weight=*/{},
                                 torch::Reduction::Sum)
                     .template item<float>();
    auto pred = output.argmax(1);
    correct += pred.eq(targets).sum().template item<int64_t>();
  }
  test_loss /= dataset_size;
  std::printf("Test set: Average loss: %.4f | Accuracy: %.3f\n", test_loss,
              static_cast<double>(correct) / dataset_size);
}

int main() {
  torch::manual_seed(1);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  ensureSyntheticMnist(kDataRoot);

  Net model;
  model.to(device);

  auto train_dataset = torch::data::datasets::MNIST(kDataRoot)
                           .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                           .map(torch::data::transforms::Stack<>());
  const size_t train_dataset_size = train_dataset.size().value();
  auto train_loader =
      torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
          std::move(train_dataset), kTrainBatchSize);

  auto test_dataset =
      torch::data::datasets::MNIST(kDataRoot,
                                   torch::data::datasets::MNIST::Mode::kTest)
          .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
          .map(torch::data::transforms::Stack<>());
  const size_t test_dataset_size = test_dataset.size().value();
  auto test_loader =
      torch::data::make_data_loader(std::move(test_dataset), kTestBatchSize);

  torch::optim::SGD optimizer(model.parameters(),
                              torch::optim::SGDOptions(0.01).momentum(0.5));

  for (size_t epoch = 1; epoch <= kNumberOfEpochs; ++epoch) {
    train(epoch, model, device, *train_loader, optimizer, train_dataset_size);
    test(model, device, *test_loader, test_dataset_size);
  }
}
