// A small ResNet for 32x32 images: a stem, three stages of residual blocks
// built with make_layer into Sequentials, and a linear classifier.
#pragma once

#include "residual_block.h"

class ResNetImpl : public torch::nn::Module {
public:
  ResNetImpl(int64_t blocks_per_stage, int64_t num_classes);
  torch::Tensor forward(torch::Tensor x);

private:
  torch::nn::Sequential make_layer(int64_t in_channels, int64_t out_channels,
                                   int64_t blocks, int64_t stride);

  torch::nn::Sequential stem{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ResNet);
