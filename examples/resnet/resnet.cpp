#include "resnet.h"

ResNetImpl::ResNetImpl(int64_t blocks_per_stage, int64_t num_classes) {
  stem = register_module(
      "stem", torch::nn::Sequential{
                  torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 16, 3).padding(1).bias(false)),
                  torch::nn::BatchNorm2d(16), torch::nn::ReLU()});
  layer1 = register_module("layer1", make_layer(16, 16, blocks_per_stage, 1));
  layer2 = register_module("layer2", make_layer(16, 32, blocks_per_stage, 2));
  layer3 = register_module("layer3", make_layer(32, 64, blocks_per_stage, 2));
  fc = register_module("fc", torch::nn::Linear(64, num_classes));
}

torch::nn::Sequential ResNetImpl::make_layer(int64_t in_channels, int64_t out_channels,
                                             int64_t blocks, int64_t stride) {
  torch::nn::Sequential layer;
  layer->push_back(ResidualBlock(in_channels, out_channels, stride));
  for (int64_t i = 1; i < blocks; ++i)
    layer->push_back(ResidualBlock(out_channels, out_channels, 1));
  return layer;
}

torch::Tensor ResNetImpl::forward(torch::Tensor x) {
  x = stem->forward(x);
  x = layer3->forward(layer2->forward(layer1->forward(x)));
  x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return fc->forward(x);
}
