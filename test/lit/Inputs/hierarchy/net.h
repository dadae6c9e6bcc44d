#pragma once
#include "base.h"

// Derived from the base above, constructor in net.cpp.
struct ClassifierImpl : BaseNetImpl {
  ClassifierImpl(int64_t width, int64_t classes);
  torch::Tensor forward(torch::Tensor x) { return head(features(x)); }
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Classifier);

// A class template whose constructor is defined, and instantiated, in
// tower.cpp.
template <typename Block> struct TowerImpl : torch::nn::Module {
  explicit TowerImpl(int64_t width);
  torch::Tensor forward(torch::Tensor x) { return body->forward(x); }
  torch::nn::Sequential body{nullptr};
};
