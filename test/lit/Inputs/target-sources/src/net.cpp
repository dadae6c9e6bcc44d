// Compiled only as part of the target: the layers are built and called here.
#include "net.h"

NetImpl::NetImpl() {
  hidden = register_module("hidden", torch::nn::Linear(16, 64));
  output = register_module("output", torch::nn::Linear(64, 1));
}

torch::Tensor NetImpl::forward(torch::Tensor x) {
  return output(torch::relu(hidden(x)));
}
