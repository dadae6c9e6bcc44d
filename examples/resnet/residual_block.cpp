#include "residual_block.h"

ResidualBlockImpl::ResidualBlockImpl(int64_t in_channels, int64_t out_channels,
                                     int64_t stride)
    : conv1(torch::nn::Conv2dOptions(in_channels, out_channels, 3)
                .stride(stride)
                .padding(1)
                .bias(false)),
      bn1(out_channels),
      conv2(torch::nn::Conv2dOptions(out_channels, out_channels, 3)
                .padding(1)
                .bias(false)),
      bn2(out_channels) {
  register_module("conv1", conv1);
  register_module("bn1", bn1);
  register_module("conv2", conv2);
  register_module("bn2", bn2);
  if (stride != 1 || in_channels != out_channels) {
    shortcut = register_module(
        "shortcut",
        torch::nn::Sequential(
            torch::nn::Conv2d(torch::nn::Conv2dOptions(in_channels, out_channels, 1)
                                  .stride(stride)
                                  .bias(false)),
            torch::nn::BatchNorm2d(out_channels)));
  }
}

torch::Tensor ResidualBlockImpl::forward(torch::Tensor x) {
  auto out = torch::relu(bn1(conv1(x)));
  out = bn2->forward(conv2->forward(out));
  auto identity = shortcut ? shortcut->forward(x) : x;
  return torch::relu(out + identity);
}
