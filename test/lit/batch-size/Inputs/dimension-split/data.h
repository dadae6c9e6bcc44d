#pragma once
#include <torch/torch.h>
#include <utility>

namespace data {
std::pair<torch::Tensor, torch::Tensor> generate_xy(int64_t n_batch,
                                                    int64_t n_dim);
}
