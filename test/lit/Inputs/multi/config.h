#pragma once
#include <cstdint>

namespace config {
constexpr int64_t kBatchSize = 24;
constexpr int64_t kWidth = 16;
} // namespace config
