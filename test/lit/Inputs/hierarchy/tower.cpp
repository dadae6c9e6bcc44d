#include "net.h"

template <typename Block> TowerImpl<Block>::TowerImpl(int64_t width) {
  body = register_module("body",
                         torch::nn::Sequential(Block(width, width), Block(width, width)));
}

template struct TowerImpl<torch::nn::Linear>;
