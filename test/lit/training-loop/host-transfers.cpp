// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s
// What crosses between host and device in a training loop's body: the host
// syncs (item, cpu, to a device named as the CPU, a tensor written to a
// stream), each once, the outermost only, none holding a module call; the
// copies to a device with a device as their only argument, with where
// `.pin_memory()` and `, true` would go. Outside the loop, a non-blocking
// copy, a copy through a pointer and a sync in a lambda are none of them.
#include <iostream>
#include <torch/torch.h>

#define READ(t) (t).item<float>()

struct Net : torch::nn::Module {
  Net() { fc = register_module("fc", torch::nn::Linear(4, 2)); }
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc{nullptr};
};

int main() {
  torch::Device device(torch::kCUDA);
  auto model = std::make_shared<Net>();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"), 32);
  torch::Tensor first;
  float total = 0;
  for (auto &batch : *loader) {
    auto data = batch.data.to(device);
    auto target = batch.target.to(torch::kCUDA);
    auto kept = batch.data.to(device, true);
    optimizer.zero_grad();
    auto loss = model->forward(data).mean();
    loss.backward();
    optimizer.step();
    total += loss.item<float>();
    auto back = loss.cpu();
    auto host = loss.to(torch::kCPU);
    std::cout << "loss " << loss << "\n";
    std::cout << loss.item<float>() << "\n";
    float outer = loss.cpu().item<float>();
    float macro = READ(loss);
    float called = model->forward(data).mean().item<float>();
    auto later = [&] { return loss.item<float>(); };
  }
  (void)first.item<float>();
}
// CHECK-LABEL: training_loop:
// CHECK:       host_syncs:
// CHECK-NEXT:    - {kind: item, text: loss.item<float>(), file: {{.*}}host-transfers.cpp, line: 34, column: 14, offset: {{[0-9]+}}, length: 18}
// CHECK-NEXT:    - {kind: cpu, text: loss.cpu(), file: {{.*}}host-transfers.cpp, line: 35, column: 17, offset: {{[0-9]+}}, length: 10}
// CHECK-NEXT:    - {kind: to-cpu, text: loss.to(torch::kCPU), file: {{.*}}host-transfers.cpp, line: 36, column: 17, offset: {{[0-9]+}}, length: 20}
// CHECK-NEXT:    - {kind: print, text: std::cout << "loss " << loss, file: {{.*}}host-transfers.cpp, line: 37, column: 5, offset: {{[0-9]+}}, length: 28}
// CHECK-NEXT:    - {kind: item, text: loss.item<float>(), file: {{.*}}host-transfers.cpp, line: 38, column: 18, offset: {{[0-9]+}}, length: 18}
// CHECK-NEXT:    - {kind: item, text: loss.cpu().item<float>(), file: {{.*}}host-transfers.cpp, line: 39, column: 19, offset: {{[0-9]+}}, length: 24}
// CHECK-NEXT:  device_copies:
// CHECK-NEXT:    - text: batch.data.to(device)
// CHECK-NEXT:      file: {{.*}}host-transfers.cpp
// CHECK-NEXT:      line: 27
// CHECK-NEXT:      column: 17
// CHECK-NEXT:      offset: {{[0-9]+}}
// CHECK-NEXT:      length: 21
// CHECK-NEXT:      tensor_end: {file: {{.*}}host-transfers.cpp, line: 27, column: 27, offset: {{[0-9]+}}, length: 0}
// CHECK-NEXT:      argument: {file: {{.*}}host-transfers.cpp, line: 27, column: 31, offset: {{[0-9]+}}, length: 6}
// CHECK-NEXT:      argument_end: {file: {{.*}}host-transfers.cpp, line: 27, column: 37, offset: {{[0-9]+}}, length: 0}
// CHECK-NEXT:    - text: batch.target.to(torch::kCUDA)
// CHECK-NEXT:      file: {{.*}}host-transfers.cpp
// CHECK-NEXT:      line: 28
// CHECK-NEXT:      column: 19
// CHECK-NEXT:      offset: {{[0-9]+}}
// CHECK-NEXT:      length: 29
// CHECK-NEXT:      tensor_end: {file: {{.*}}host-transfers.cpp, line: 28, column: 31, offset: {{[0-9]+}}, length: 0}
// CHECK-NEXT:      argument: {file: {{.*}}host-transfers.cpp, line: 28, column: 35, offset: {{[0-9]+}}, length: 12}
// CHECK-NEXT:      argument_end: {file: {{.*}}host-transfers.cpp, line: 28, column: 47, offset: {{[0-9]+}}, length: 0}
// CHECK-NEXT:  training_loops:
