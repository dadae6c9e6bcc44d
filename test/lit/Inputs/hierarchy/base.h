#pragma once
#include <torch/torch.h>

// A base module class: its constructor (base.cpp) registers two layers.
struct BaseNetImpl : torch::nn::Module {
  explicit BaseNetImpl(int64_t width);
  torch::Tensor features(torch::Tensor x) { return act(stem(x)); }
  torch::nn::Linear stem{nullptr};
  torch::nn::ReLU act;
};
