// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s
// A training loop in a function template over its loader's type: in the
// template a batch's tensors have dependent types; its instantiation says
// which calls are a tensor's to() and item(), each listed once (the
// template is called twice).
#include <torch/torch.h>

struct Net : torch::nn::Module {
  Net() { fc = register_module("fc", torch::nn::Linear(4, 2)); }
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc{nullptr};
};

template <typename Loader>
float train(Net &model, torch::Device device, Loader &loader,
            torch::optim::Optimizer &optimizer) {
  float total = 0;
  for (auto &batch : loader) {
    auto data = batch.data.to(device);
    optimizer.zero_grad();
    auto loss = model.forward(data).mean();
    loss.backward();
    optimizer.step();
    total += loss.template item<float>();
  }
  return total;
}

int main() {
  Net model;
  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.1));
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), 32);
  auto other = torch::data::make_data_loader(torch::data::datasets::MNIST("e"), 32);
  train(model, torch::Device(torch::kCUDA), *loader, optimizer);
  train(model, torch::Device(torch::kCUDA), *other, optimizer);
}
// CHECK-LABEL: training_loops:
// CHECK:       host_syncs:
// CHECK-NEXT:    - {kind: item, text: loss.template item<float>(), file: {{.*}}host-transfers-template.cpp, line: 24, column: 14, offset: {{[0-9]+}}, length: 27}
// CHECK-NEXT:  device_copies:
// CHECK-NEXT:    - text: batch.data.to(device)
// CHECK-NEXT:      file: {{.*}}host-transfers-template.cpp
// CHECK-NEXT:      line: 19
// CHECK-NOT:     - text:
// CHECK:       save_calls:
