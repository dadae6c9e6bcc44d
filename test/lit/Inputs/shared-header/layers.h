// A model two training programs share (a.cpp and b.cpp): its layers are
// found in each program, and the editor shows them once.
#pragma once
#include <torch/torch.h>

struct Net : torch::nn::Module {
  Net() { fc = register_module("fc", torch::nn::Linear(784, 10)); }
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc{nullptr};
};
