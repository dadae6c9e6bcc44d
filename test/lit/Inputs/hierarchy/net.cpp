#include "net.h"

ClassifierImpl::ClassifierImpl(int64_t width, int64_t classes)
    : BaseNetImpl(width) {
  head = register_module("head", torch::nn::Linear(width, classes));
}
