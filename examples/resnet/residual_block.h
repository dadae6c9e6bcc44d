// A ResNet basic block: two 3x3 convolutions with batch norm and an optional
// 1x1 projection on the shortcut. Declared here, defined in residual_block.cpp.
#pragma once

#include <torch/torch.h>

class ResidualBlockImpl : public torch::nn::Module {
public:
  ResidualBlockImpl(int64_t in_channels, int64_t out_channels, int64_t stride = 1);
  torch::Tensor forward(torch::Tensor x);

private:
  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::BatchNorm2d bn2;
  torch::nn::Sequential shortcut{nullptr};
};
TORCH_MODULE(ResidualBlock);
