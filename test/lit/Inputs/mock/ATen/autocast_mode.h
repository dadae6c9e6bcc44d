// A stand-in for LibTorch's <ATen/autocast_mode.h>: the calls the
// autocast-bf16 experiment's fix-it writes, with LibTorch's signatures.
#pragma once
#include <torch/torch.h>

namespace at {
enum class ScalarType { Float, BFloat16, Half };
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr c10::DeviceType kCUDA = c10::DeviceType::CUDA;
namespace autocast {
inline bool is_autocast_enabled(c10::DeviceType) { return false; }
inline void set_autocast_enabled(c10::DeviceType, bool) {}
inline void set_autocast_dtype(c10::DeviceType, ScalarType) {}
inline void set_autocast_cache_enabled(bool) {}
} // namespace autocast
} // namespace at
