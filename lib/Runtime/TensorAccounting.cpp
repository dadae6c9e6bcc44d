//===- TensorAccounting.cpp - Bytes held by a model's tensors -------------===//

#include "skyline/runtime/TensorAccounting.h"

#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <unordered_set>

namespace skyline::rt {

int64_t uniqueStorageBytes(const std::vector<at::Tensor> &Tensors,
                           std::optional<c10::DeviceType> On) {
  std::unordered_set<const void *> Seen;
  int64_t Bytes = 0;
  for (const at::Tensor &T : Tensors) {
    if (!T.defined() || !T.has_storage())
      continue;
    const c10::Storage &Storage = T.storage();
    if (On && Storage.device_type() != *On)
      continue;
    if (Seen.insert(Storage.unsafeGetStorageImpl()).second)
      Bytes += int64_t(Storage.nbytes());
  }
  return Bytes;
}

std::vector<at::Tensor> moduleTensors(const torch::nn::Module &Module) {
  std::vector<at::Tensor> Tensors = Module.parameters(/*recurse=*/true);
  std::vector<at::Tensor> Buffers = Module.buffers(/*recurse=*/true);
  Tensors.insert(Tensors.end(), Buffers.begin(), Buffers.end());
  return Tensors;
}

int64_t gradientBytes(const std::vector<at::Tensor> &Parameters,
                      std::optional<c10::DeviceType> On) {
  std::vector<at::Tensor> Grads;
  Grads.reserve(Parameters.size());
  for (const at::Tensor &P : Parameters)
    Grads.push_back(P.grad());
  return uniqueStorageBytes(Grads, On);
}

std::vector<at::Tensor>
optimizerStateTensors(const torch::optim::Optimizer &Optimizer) {
  using namespace torch::optim;
  std::vector<at::Tensor> Tensors;
  for (const auto &Entry : Optimizer.state()) {
    const OptimizerParamState *State = Entry.second.get();
    if (const auto *S = dynamic_cast<const AdamParamState *>(State))
      Tensors.insert(Tensors.end(),
                     {S->exp_avg(), S->exp_avg_sq(), S->max_exp_avg_sq()});
    else if (const auto *S = dynamic_cast<const AdamWParamState *>(State))
      Tensors.insert(Tensors.end(),
                     {S->exp_avg(), S->exp_avg_sq(), S->max_exp_avg_sq()});
    else if (const auto *S = dynamic_cast<const SGDParamState *>(State))
      Tensors.push_back(S->momentum_buffer());
    else if (const auto *S = dynamic_cast<const RMSpropParamState *>(State))
      Tensors.insert(Tensors.end(),
                     {S->square_avg(), S->momentum_buffer(), S->grad_avg()});
    else if (const auto *S = dynamic_cast<const AdagradParamState *>(State))
      Tensors.push_back(S->sum());
  }
  return Tensors;
}

} // namespace skyline::rt
