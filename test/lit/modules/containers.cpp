// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s
// Layers kept in containers: a ModuleList's constructor arguments and
// push_back, a ModuleDict's insert, a std::vector of holders filled by
// push_back and emplace_back (the vector builds that one from its
// options), and an unregistered local made in forward.
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  NetImpl(int64_t depth) {
    blocks = register_module(
        "blocks", torch::nn::ModuleList(torch::nn::Linear(8, 8),
                                        torch::nn::ReLU()));
    for (int64_t i = 0; i < depth; ++i)
      blocks->push_back(torch::nn::Linear(8, 8));
    heads = register_module("heads", torch::nn::ModuleDict());
    heads->insert("cls", torch::nn::Linear(8, 2));
    for (int64_t i = 0; i < depth; ++i) {
      extra.push_back(torch::nn::Linear(8, 8));
      register_module("extra" + std::to_string(i), extra.back());
      convs.emplace_back(8, 8, 3);
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::nn::ReLU act;
    return act(x);
  }
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::ModuleDict heads{nullptr};
  std::vector<torch::nn::Linear> extra;
  std::vector<torch::nn::Conv2d> convs;
};
TORCH_MODULE(Net);

int main() {
  Net net(2);
  torch::optim::SGD opt(net->parameters(), 0.1);
  for (int i = 0; i < 2; ++i) {
    net(torch::randn({4, 8})).mean().backward();
    opt.step();
  }
}
// CHECK-LABEL: modules:
// CHECK:      - name: blocks
// CHECK-NEXT:   type: torch::nn::ModuleList
// CHECK:        line: 11
// CHECK:      - name: blocks.0
// CHECK-NEXT:   type: torch::nn::Linear
// CHECK-NEXT:   options: 8, 8
// CHECK-NEXT:   parent: blocks
// CHECK:        line: 11
// CHECK:      - name: blocks.1
// CHECK-NEXT:   type: torch::nn::ReLU
// CHECK-NEXT:   options: ""
// CHECK-NEXT:   parent: blocks
// CHECK:        line: 12
// CHECK:      - name: blocks.2
// CHECK-NEXT:   type: torch::nn::Linear
// CHECK-NEXT:   options: 8, 8
// CHECK-NEXT:   parent: blocks
// CHECK:        line: 14
// CHECK:      - name: heads
// CHECK-NEXT:   type: torch::nn::ModuleDict
// CHECK:        line: 15
// CHECK:      - name: heads.cls
// CHECK-NEXT:   type: torch::nn::Linear
// CHECK-NEXT:   options: 8, 2
// CHECK-NEXT:   parent: heads
// CHECK:        line: 16
// CHECK:      - name: extra
// CHECK-NEXT:   type: torch::nn::Linear
// CHECK:        line: 18
// CHECK:      - name: convs
// CHECK-NEXT:   type: torch::nn::Conv2d
// CHECK-NEXT:   options: 8, 8, 3
// CHECK:        line: 20
// CHECK:      - name: act
// CHECK-NEXT:   type: torch::nn::ReLU
// CHECK:        line: 24
// CHECK:      - name: net
// CHECK-NEXT:   type: Net
// CHECK-LABEL: module_calls:
