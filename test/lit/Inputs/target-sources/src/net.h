// The network's declaration; its layers and forward() are in net.cpp.
#pragma once

#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  NetImpl();
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Linear hidden{nullptr}, output{nullptr};
};
TORCH_MODULE(Net);
