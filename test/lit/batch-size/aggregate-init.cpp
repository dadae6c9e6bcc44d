// RUN: %skyline-check --analyze-only %s -- %mock-flags -std=c++20 | FileCheck %s
// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags -std=c++20 | FileCheck %s --check-prefix=YAML
// Batch sizes set where an aggregate is initialized, positionally or by
// designator, over the members' defaults.
#include <torch/torch.h>

struct TrainConfig {
  int epochs = 1;
  unsigned batch_size = 0;
  double lr = 0.01;
};

struct EvalConfig {
  int64_t batch_size;
  int workers;
};

int main() {
  TrainConfig train{.epochs = 2, .batch_size = 48, .lr = 0.05};
  // CHECK-DAG: aggregate-init.cpp:[[@LINE-1]]:48: note: training batch size 'TrainConfig::batch_size' = 48 (local-constant) [skyline-batch-size]
  EvalConfig eval{256, 0};
  // CHECK-DAG: aggregate-init.cpp:[[@LINE-1]]:19: note: test/eval batch size 'EvalConfig::batch_size' = 256 (local-constant) [skyline-batch-size]
  torch::nn::Linear model(2, 1);
  torch::optim::SGD opt(model->parameters(), train.lr);
  auto a = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                         train.batch_size);
  auto b = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                         eval.batch_size);
  for (auto &batch : *a) {
    opt.zero_grad();
    model(batch.data).backward();
    opt.step();
  }
  for (auto &batch : *b)
    model(batch.data);
}

// The run's int64_t is cast to the unsigned member: braces do not narrow.
// YAML: batch_size:
// YAML-NEXT: name: TrainConfig::batch_size
// YAML-NEXT: value: 48
// YAML: kind: local-constant
// YAML: list_init_type: unsigned int
// YAML: - {step: member 'TrainConfig::batch_size' initialised in braces here, file: {{.*}}aggregate-init.cpp, line: 19, column: 48}
// YAML: other_batch_sizes:
// YAML-NEXT: - name: EvalConfig::batch_size
// YAML-NEXT: value: 256
// YAML: list_init_type: ""
