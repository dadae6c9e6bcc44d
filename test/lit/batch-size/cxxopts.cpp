// RUN: %skyline-check --analyze-only %s -- %mock-flags -isystem %inputs/mock | FileCheck %s
// cxxopts: the digits inside default_value("32") of the option read later.
#include <cxxopts.hpp>
#include <torch/torch.h>

int main(int argc, char **argv) {
  cxxopts::Options options("train");
  options.add_options()
    ("e,epochs", "epochs", cxxopts::value<int>()->default_value("3"))
    ("b,batch-size", "batch size", cxxopts::value<int64_t>()->default_value("32"));
  // CHECK: cxxopts.cpp:[[@LINE-1]]:78: note: training batch size 'batch-size' = 32 (command-line-default) [skyline-batch-size]
  // CHECK-NEXT: {{^}}    ("b,batch-size", "batch size", cxxopts::value<int64_t>()->default_value("32"));{{$}}
  // CHECK-NEXT: {{^}}                                                                             ^~{{$}}
  auto result = options.parse(argc, argv);
  const auto batch_size = result["batch-size"].as<int64_t>();
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < result["epochs"].as<int>(); ++i) {
    model(torch::randn({batch_size, 3})).backward();
    opt.step();
  }
}
