// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s --check-prefix=MODEL
// A batch size read from a configuration file with a fallback in the code
// (yaml-cpp's as<T>(fallback)); an optional's value_or for the test size.
#include <optional>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

std::optional<int64_t> eval_batch_from_env();

int main(int argc, char **argv) {
  YAML::Node config = argc > 1 ? YAML::LoadFile(argv[1]) : YAML::Node();
  const int64_t batch_size = config["batch_size"].as<int64_t>(128);
  // CHECK-DAG: config-default.cpp:[[@LINE-1]]:63: note: training batch size 'batch_size' = 128 (config-default) [skyline-batch-size]
  const int64_t eval_batch = eval_batch_from_env().value_or(1000);
  // CHECK-DAG: config-default.cpp:[[@LINE-1]]:61: note: test/eval batch size 'eval_batch' = 1000 (config-default) [skyline-batch-size]
  torch::nn::Linear model(2, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto train = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), batch_size);
  auto test = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), eval_batch);
  for (auto &batch : *train) {
    opt.zero_grad();
    model(batch.data).backward();
    opt.step();
  }
  for (auto &batch : *test)
    model(batch.data);
}

// MODEL: batch_size:
// MODEL-NEXT: name: batch_size
// MODEL-NEXT: value: 128
// MODEL: kind: config-default
// MODEL: chain:
// MODEL-NEXT: - {step: given to make_data_loader() as the batch size here, file: {{.*}}config-default.cpp, line: 19, column: 81}
// MODEL-NEXT: - {step: variable 'batch_size' initialised here, file: {{.*}}config-default.cpp, line: 13, column: 17}
// MODEL-NEXT: - {step: "fallback of as('batch_size', ...) here, where the configuration has no value", file: {{.*}}config-default.cpp, line: 13, column: 30}
