// The targets of the synthetic regression, from the project's own library.
#pragma once

#include <torch/torch.h>

torch::Tensor synthetic_targets(const torch::Tensor &x);
