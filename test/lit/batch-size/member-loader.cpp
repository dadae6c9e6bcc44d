// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s
// Loaders kept in a trainer's members, one built in the constructor's
// initializer list from a constructor parameter: the batch size is the
// argument of the construction, and the roles come from the loops over the
// members.
#include <torch/torch.h>

using Loader = std::unique_ptr<torch::data::DataLoader<torch::data::Example>>;

class Runner {
public:
  explicit Runner(int64_t size)
      : loader_(torch::data::make_data_loader(torch::data::datasets::MNIST("d"), size)),
        model_(2, 1), opt_(model_->parameters(), 0.1) {
    check_loader_ = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), 999);
  }
  void fit() {
    for (auto &batch : *loader_) {
      model_(batch.data).backward();
      opt_.step();
    }
  }
  void check() {
    for (auto &batch : *check_loader_)
      model_(batch.data);
  }

private:
  Loader loader_, check_loader_;
  torch::nn::Linear model_;
  torch::optim::SGD opt_;
};

int main() {
  Runner runner(128);
  runner.fit();
  runner.check();
}
// CHECK:      batch_size:
// CHECK-NEXT:   name: size
// CHECK-NEXT:   value: 128
// CHECK-NEXT:   file: {{.*}}member-loader.cpp
// CHECK-NEXT:   line: 35
// CHECK:        kind: literal-argument
// CHECK-NEXT:   role: train
// CHECK-NEXT:   confidence: 0.95
// CHECK:      other_batch_sizes:
// CHECK-NEXT:   - name: make_data_loader
// CHECK-NEXT:     value: 999
// CHECK:          role: eval
// CHECK-NEXT:     confidence: 0.95
