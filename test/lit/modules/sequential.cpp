// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s
// Sequential children are named parent.index, in parentheses, braces and
// push_back alike; Functional and ReLU count as modules, as in PyTorch.
#include <torch/torch.h>

struct Net : torch::nn::Module {
  Net() {
    features = register_module("features", torch::nn::Sequential(
        torch::nn::Conv2d(3, 8, 3),
        torch::nn::ReLU()));
    head = register_module("head", torch::nn::Sequential{
        torch::nn::Linear(8, 4), torch::nn::Functional(torch::relu)});
    head->push_back(torch::nn::Linear(4, 2));
  }
  torch::Tensor forward(torch::Tensor x) { return head->forward(features->forward(x)); }
  torch::nn::Sequential features{nullptr}, head{nullptr};
};

int main() {
  Net net;
  torch::optim::SGD opt(net.parameters(), 0.1);
  for (int i = 0; i < 3; ++i) {
    net.forward(torch::randn({2, 3, 8, 8})).mean().backward();
    opt.step();
  }
}
// CHECK-LABEL: modules:
// CHECK:      - name: features
// CHECK-NEXT:   type: torch::nn::Sequential
// CHECK:      - name: features.0
// CHECK-NEXT:   type: torch::nn::Conv2d
// CHECK-NEXT:   options: 3, 8, 3
// CHECK-NEXT:   parent: features
// CHECK-NEXT:   file: {{.*}}sequential.cpp
// CHECK-NEXT:   line: 9
// CHECK:      - name: features.1
// CHECK-NEXT:   type: torch::nn::ReLU
// CHECK:      - name: head
// CHECK:      - name: head.0
// CHECK-NEXT:   type: torch::nn::Linear
// CHECK:      - name: head.1
// CHECK-NEXT:   type: torch::nn::Functional
// CHECK-NEXT:   options: torch::relu
// CHECK:      - name: head.2
// CHECK-NEXT:   type: torch::nn::Linear
// CHECK-NEXT:   options: 4, 2
// CHECK-NEXT:   parent: head
// CHECK:      - name: net
// CHECK-LABEL: module_calls:
// CHECK-NEXT: - {name: head, file: {{.*}}, line: 15,
// CHECK-NEXT: - {name: features, file: {{.*}}, line: 15,
// CHECK-NEXT: - {name: net, file: {{.*}}, line: 23,
