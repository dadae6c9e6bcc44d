// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// A call that comes from a macro expansion cannot be instrumented: it is
// reported, marked, and not guessed at.
#include <torch/torch.h>

#define APPLY(layer, x) layer->forward(x)

struct Net : torch::nn::Module {
  Net() : fc(register_module("fc", torch::nn::Linear(2, 2))) {}
  torch::Tensor forward(torch::Tensor x) { return APPLY(fc, x); }
  // CHECK: macro-call.cpp:[[@LINE-1]]:51: note: call of module 'fc' (in a macro expansion) [skyline-module-call]
  torch::nn::Linear fc;
};

int main() {
  Net net;
  torch::optim::SGD opt(net.parameters(), 0.1);
  for (int i = 0; i < 2; ++i) {
    net.forward(torch::randn({3, 2})).mean().backward();
    opt.step();
  }
}
