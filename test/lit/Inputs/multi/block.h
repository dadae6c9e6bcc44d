#pragma once
#include <torch/torch.h>

struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(int64_t width);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Linear inner{nullptr};
  torch::nn::Linear outer{nullptr};
};
TORCH_MODULE(Block);
