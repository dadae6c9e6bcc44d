//===- TensorAccounting.h - Bytes held by a model's tensors -----*- C++ -*-===//
//
// Weights, gradients and optimizer state measured from the tensors
// themselves, each storage counted once (tied weights, views and parameters
// that share a flat buffer are not counted twice).
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_TENSORACCOUNTING_H
#define SKYLINE_RUNTIME_TENSORACCOUNTING_H

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace skyline::rt {

/// Bytes of the distinct storages behind Tensors (undefined ones skipped),
/// only those on devices of type On when it is given.
int64_t uniqueStorageBytes(const std::vector<at::Tensor> &Tensors,
                           std::optional<c10::DeviceType> On = std::nullopt);

/// A module's parameters and buffers, its submodules' included: its weights.
std::vector<at::Tensor> moduleTensors(const torch::nn::Module &Module);

/// Bytes of the parameters' .grad() storages (on devices of type On).
int64_t gradientBytes(const std::vector<at::Tensor> &Parameters,
                      std::optional<c10::DeviceType> On = std::nullopt);

/// The state tensors of SGD (momentum), Adam, AdamW, RMSprop and Adagrad.
std::vector<at::Tensor>
optimizerStateTensors(const torch::optim::Optimizer &Optimizer);

} // namespace skyline::rt

#endif // SKYLINE_RUNTIME_TENSORACCOUNTING_H
