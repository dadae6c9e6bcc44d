#include "data.h"

namespace data {
std::pair<torch::Tensor, torch::Tensor> generate_xy(int64_t n_batch,
                                                    int64_t n_dim) {
  auto x = torch::rand({n_batch, n_dim});
  return {x, x};
}
} // namespace data
