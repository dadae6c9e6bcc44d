#include "base.h"

BaseNetImpl::BaseNetImpl(int64_t width) {
  stem = register_module("stem", torch::nn::Linear(width, width));
  register_module("act", act);
}
