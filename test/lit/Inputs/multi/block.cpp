#include "block.h"

BlockImpl::BlockImpl(int64_t width) {
  inner = register_module("inner", torch::nn::Linear(width, width));
  outer = register_module("outer", torch::nn::Linear(width, width));
}

torch::Tensor BlockImpl::forward(torch::Tensor x) { return outer(torch::relu(inner(x))); }
