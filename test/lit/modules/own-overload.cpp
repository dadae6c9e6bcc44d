// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s --check-prefix=MODEL
// RUN: %skyline-check --analyze-only %s -- %mock-flags | not grep -E "own-overload.cpp:(13|20):.*skyline-module-call"
// A module whose forward calls another overload of its own (`forward(x,
// 2)`, `this->forward(x, 2)`): that is part of its own call, not a call of
// another module, so none is reported there (the instrumented copy would
// scope a call through the overload set's name, which does not build); the
// calls of its layer and of the model in the loop are.
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 4))) {}
  torch::Tensor forward(torch::Tensor x) { return forward(x, 2); }
  torch::Tensor forward(torch::Tensor x, int times) {
    for (int i = 0; i < times; ++i)
      x = fc(x);
    // CHECK-DAG: own-overload.cpp:[[@LINE-1]]:11: note: call of module 'fc' [skyline-module-call]
    return x;
  }
  torch::Tensor twice(torch::Tensor x) { return this->forward(x, 2); }
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(Net);

int main() {
  Net model;
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 2; ++i) {
    model(torch::randn({8, 4})).mean().backward();
    // CHECK-DAG: own-overload.cpp:[[@LINE-1]]:5: note: call of module 'model' [skyline-module-call]
    opt.step();
  }
}
// Exactly two calls: the layer's and the model's.
// MODEL: module_calls:
// MODEL-NEXT: - {name: fc, {{.*}}, callee: fc}
// MODEL-NEXT: - {name: model, {{.*}}, callee: model}
// MODEL-NEXT: training_loop:
