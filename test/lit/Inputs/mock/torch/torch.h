// A minimal stand-in for LibTorch's <torch/torch.h>: the same namespaces,
// class shapes and call signatures that skyline-check's matchers look at
// (ModuleHolder, TORCH_MODULE, register_module, make_data_loader,
// DataLoaderOptions, optimizers, tensor factories), so front-end tests parse
// in milliseconds. The end-to-end tests use the real LibTorch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace c10 {
template <typename T> class ArrayRef {
public:
  ArrayRef(std::initializer_list<T> List) : Data(List.begin()), Size(List.size()) {}
  ArrayRef(const std::vector<T> &V) : Data(V.data()), Size(V.size()) {}
  ArrayRef(const T &One) : Data(&One), Size(1) {}
private:
  const T *Data;
  size_t Size;
};
using IntArrayRef = ArrayRef<int64_t>;
struct InferenceMode {
  explicit InferenceMode(bool = true) {}
};
enum class DeviceType { CPU, CUDA };
struct Device {
  Device(DeviceType) {}
};
} // namespace c10

namespace c10 {
enum class MemoryFormat { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };
} // namespace c10

namespace at {
using c10::MemoryFormat;
struct TensorOptions {};
struct Context {
  void setBenchmarkCuDNN(bool) {}
  bool benchmarkCuDNN() const { return false; }
};
inline Context &globalContext() {
  static Context Global;
  return Global;
}
class Tensor {
public:
  void backward() const {}
  Tensor to(c10::Device) const { return *this; }
  Tensor to(c10::Device, bool /*non_blocking*/) const { return *this; }
  Tensor cpu() const { return *this; }
  Tensor pin_memory() const { return *this; }
  int64_t size(int64_t) const { return 0; }
  Tensor view(c10::IntArrayRef) const { return *this; }
  Tensor reshape(c10::IntArrayRef) const { return *this; }
  Tensor slice(int64_t, int64_t, int64_t) const { return *this; }
  Tensor narrow(int64_t, int64_t, int64_t) const { return *this; }
  Tensor detach() const { return *this; }
  int64_t dim() const { return 0; }
  Tensor contiguous(MemoryFormat = MemoryFormat::Contiguous) const {
    return *this;
  }
  void set_data(const Tensor &) const {}
  Tensor mean() const { return *this; }
  float item_float() const { return 0; }
  template <typename T> T item() const { return T(); }
  Tensor operator+(const Tensor &) const { return *this; }
  Tensor operator-(const Tensor &) const { return *this; }
  Tensor operator*(const Tensor &) const { return *this; }
};
std::ostream &operator<<(std::ostream &, const Tensor &);
inline void set_num_threads(int) {}
inline int get_num_threads() { return 1; }
} // namespace at

namespace torch {
using at::get_num_threads;
using at::set_num_threads;
using at::Tensor;
using c10::Device;
using c10::MemoryFormat;
constexpr c10::DeviceType kCPU = c10::DeviceType::CPU;
constexpr c10::DeviceType kCUDA = c10::DeviceType::CUDA;
namespace cuda {
inline bool is_available() { return false; }
} // namespace cuda
struct NoGradGuard {};
inline Tensor randn(c10::IntArrayRef, at::TensorOptions = {}) { return {}; }
inline Tensor rand(c10::IntArrayRef, at::TensorOptions = {}) { return {}; }
inline Tensor zeros(c10::IntArrayRef, at::TensorOptions = {}) { return {}; }
inline Tensor ones(c10::IntArrayRef, at::TensorOptions = {}) { return {}; }
inline Tensor empty(c10::IntArrayRef, at::TensorOptions = {}) { return {}; }
inline Tensor randint(int64_t, c10::IntArrayRef, at::TensorOptions = {}) { return {}; }
inline Tensor relu(const Tensor &T) { return T; }
inline Tensor sigmoid(const Tensor &T) { return T; }
inline Tensor log_softmax(const Tensor &T, int64_t) { return T; }
inline Tensor max_pool2d(const Tensor &T, int64_t) { return T; }
inline Tensor dropout(const Tensor &T, double, bool) { return T; }
inline Tensor nll_loss(const Tensor &T, const Tensor &) { return T; }
inline Tensor mse_loss(const Tensor &T, const Tensor &) { return T; }
inline Tensor cross_entropy_loss(const Tensor &T, const Tensor &) { return T; }
template <typename T> void save(const T &, const std::string &) {}
namespace autograd {
inline void backward(const std::vector<Tensor> &) {}
inline std::vector<Tensor> grad(const std::vector<Tensor> &,
                                const std::vector<Tensor> &) {
  return {};
}
} // namespace autograd

namespace nn {
template <typename Contained> class ModuleHolder;

class Module {
public:
  virtual ~Module() = default;
  template <typename ModuleType>
  std::shared_ptr<ModuleType> register_module(std::string Name,
                                              std::shared_ptr<ModuleType> M) {
    return M;
  }
  template <typename ModuleType>
  std::shared_ptr<ModuleType> register_module(std::string Name,
                                              ModuleHolder<ModuleType> Holder) {
    return Holder.ptr();
  }
  Tensor register_parameter(std::string, Tensor T) { return T; }
  std::vector<Tensor> parameters() const { return {}; }
  void train(bool = true) {}
  void eval() {}
  void zero_grad() {}
  void to(c10::Device) {}
};

template <typename Contained> class ModuleHolder {
public:
  ModuleHolder() : Impl(std::make_shared<Contained>()) {}
  ModuleHolder(std::nullptr_t) {}
  template <typename Head, typename... Tail,
            typename = std::enable_if_t<
                !(std::is_same_v<std::decay_t<Head>, std::nullptr_t> &&
                  sizeof...(Tail) == 0)>>
  explicit ModuleHolder(Head &&H, Tail &&...T)
      : Impl(new Contained(std::forward<Head>(H), std::forward<Tail>(T)...)) {}
  ModuleHolder(std::shared_ptr<Contained> M) : Impl(std::move(M)) {}
  Contained *operator->() { return Impl.get(); }
  const Contained *operator->() const { return Impl.get(); }
  Contained &operator*() { return *Impl; }
  template <typename... Args> auto operator()(Args &&...A) {
    return Impl->forward(std::forward<Args>(A)...);
  }
  const std::shared_ptr<Contained> &ptr() const { return Impl; }

protected:
  std::shared_ptr<Contained> Impl;
};

#define TORCH_MODULE_IMPL(Name, ImplType)                                      \
  class Name : public torch::nn::ModuleHolder<ImplType> {                      \
  public:                                                                      \
    using torch::nn::ModuleHolder<ImplType>::ModuleHolder;                     \
  }
#define TORCH_MODULE(Name) TORCH_MODULE_IMPL(Name, Name##Impl)

struct LinearOptions {
  LinearOptions(int64_t In, int64_t Out) {}
  LinearOptions &bias(bool) { return *this; }
};
class LinearImpl : public Module {
public:
  LinearImpl(int64_t In, int64_t Out) {}
  explicit LinearImpl(const LinearOptions &) {}
  Tensor forward(const Tensor &X) { return X; }
};
TORCH_MODULE(Linear);

struct Conv2dOptions {
  Conv2dOptions(int64_t In, int64_t Out, int64_t Kernel) {}
  Conv2dOptions &stride(int64_t) { return *this; }
  Conv2dOptions &padding(int64_t) { return *this; }
  Conv2dOptions &bias(bool) { return *this; }
};
class Conv2dImpl : public Module {
public:
  Conv2dImpl(int64_t In, int64_t Out, int64_t Kernel) {}
  explicit Conv2dImpl(const Conv2dOptions &) {}
  Tensor forward(const Tensor &X) { return X; }
};
TORCH_MODULE(Conv2d);

class BatchNorm2dImpl : public Module {
public:
  explicit BatchNorm2dImpl(int64_t Features) {}
  Tensor forward(const Tensor &X) { return X; }
};
TORCH_MODULE(BatchNorm2d);

class DropoutImpl : public Module {
public:
  explicit DropoutImpl(double P = 0.5) {}
  Tensor forward(const Tensor &X) { return X; }
};
TORCH_MODULE(Dropout);

class Dropout2dImpl : public Module {
public:
  explicit Dropout2dImpl(double P = 0.5) {}
  Tensor forward(const Tensor &X) { return X; }
};
TORCH_MODULE(Dropout2d);

class ReLUImpl : public Module {
public:
  ReLUImpl() {}
  Tensor forward(const Tensor &X) { return X; }
};
TORCH_MODULE(ReLU);

class EmbeddingImpl : public Module {
public:
  EmbeddingImpl(int64_t Num, int64_t Dim) {}
  Tensor forward(const Tensor &X) { return X; }
};
TORCH_MODULE(Embedding);

struct LSTMOptions {
  LSTMOptions(int64_t In, int64_t Hidden) {}
  LSTMOptions &num_layers(int64_t) { return *this; }
  LSTMOptions &batch_first(bool) { return *this; }
};
class LSTMImpl : public Module {
public:
  LSTMImpl(int64_t In, int64_t Hidden) {}
  explicit LSTMImpl(const LSTMOptions &) {}
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor &X) { return {}; }
};
TORCH_MODULE(LSTM);

class FunctionalImpl : public Module {
public:
  explicit FunctionalImpl(std::function<Tensor(Tensor)> F) {}
  Tensor forward(Tensor X) { return X; }
};
TORCH_MODULE(Functional);

// One {"name", module} of Sequential({{"conv", Conv2d(...)}, ...}).
struct NamedAnyModule {
  template <typename M> NamedAnyModule(std::string Name, M &&Module) {}
};
class SequentialImpl : public Module {
public:
  SequentialImpl() = default;
  template <typename... Modules> explicit SequentialImpl(Modules &&...M) {}
  explicit SequentialImpl(std::initializer_list<NamedAnyModule> Named) {}
  template <typename M> void push_back(M &&Module) {}
  template <typename M> void push_back(std::string Name, M &&Module) {}
  Tensor forward(const Tensor &X) { return X; }
};
class Sequential : public ModuleHolder<SequentialImpl> {
public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  Sequential() = default;
  Sequential(std::initializer_list<NamedAnyModule> Named)
      : ModuleHolder<SequentialImpl>(std::make_shared<SequentialImpl>(Named)) {}
};

class ModuleListImpl : public Module {
public:
  ModuleListImpl() = default;
  template <typename... Modules> explicit ModuleListImpl(Modules &&...M) {}
  template <typename M> void push_back(M &&Module) {}
  size_t size() const { return 0; }
};
TORCH_MODULE(ModuleList);

class ModuleDictImpl : public Module {
public:
  ModuleDictImpl() = default;
  template <typename M> void insert(std::string Key, M &&Module) {}
};
TORCH_MODULE(ModuleDict);
} // namespace nn

namespace optim {
class OptimizerParamGroup {
public:
  std::vector<Tensor> &params() { return Params; }
  const std::vector<Tensor> &params() const { return Params; }

private:
  std::vector<Tensor> Params;
};
class Optimizer {
public:
  virtual ~Optimizer() = default;
  void zero_grad() {}
  std::vector<OptimizerParamGroup> &param_groups() { return Groups; }
  virtual Tensor step(std::function<Tensor()> Closure = nullptr) { return {}; }

private:
  std::vector<OptimizerParamGroup> Groups;
};
struct SGDOptions {
  SGDOptions(double LR) {}
  SGDOptions &momentum(double) { return *this; }
  SGDOptions &lr(double) { return *this; }
};
class SGD : public Optimizer {
public:
  SGD(std::vector<Tensor> Params, SGDOptions Defaults) {}
  Tensor step(std::function<Tensor()> Closure = nullptr) override { return {}; }
};
struct AdamOptions {
  AdamOptions(double LR = 1e-3) {}
  AdamOptions &betas(std::tuple<double, double>) { return *this; }
  AdamOptions &weight_decay(double) { return *this; }
};
class Adam : public Optimizer {
public:
  Adam(std::vector<Tensor> Params, AdamOptions Defaults = {}) {}
  Tensor step(std::function<Tensor()> Closure = nullptr) override { return {}; }
};
} // namespace optim

namespace data {
struct Example {
  Tensor data;
  Tensor target;
};
namespace samplers {
struct RandomSampler {
  RandomSampler() = default;
  explicit RandomSampler(size_t Size) {}
};
struct SequentialSampler {
  SequentialSampler() = default;
  explicit SequentialSampler(size_t Size) {}
};
} // namespace samplers
struct DataLoaderOptions {
  DataLoaderOptions() = default;
  DataLoaderOptions(size_t BatchSize) {}
  auto batch_size(const size_t &New) -> decltype(*this) { return *this; }
  const size_t &batch_size() const noexcept { return Batch; }
  auto workers(const size_t &New) -> decltype(*this) { return *this; }
  auto drop_last(const bool &New) -> decltype(*this) { return *this; }
  size_t Batch = 1;
};
template <typename Batch> class DataLoader {
public:
  Batch *begin() { return nullptr; }
  Batch *end() { return nullptr; }
};
template <typename Dataset, typename Sampler>
class StatelessDataLoader : public DataLoader<Example> {
public:
  StatelessDataLoader(Dataset D, Sampler S, DataLoaderOptions Options) {}
};
// As in LibTorch: a bare batch size converts to DataLoaderOptions(size).
template <typename Dataset, typename Sampler>
std::unique_ptr<DataLoader<Example>>
make_data_loader(Dataset D, Sampler S, DataLoaderOptions Options) {
  return nullptr;
}
template <typename Sampler = samplers::RandomSampler, typename Dataset>
std::unique_ptr<DataLoader<Example>>
make_data_loader(Dataset D, DataLoaderOptions Options = DataLoaderOptions()) {
  return nullptr;
}
namespace transforms {
struct Stack {};
struct Normalize {
  Normalize(double, double) {}
};
} // namespace transforms
namespace datasets {
class MNIST {
public:
  enum class Mode { kTrain, kTest };
  explicit MNIST(const std::string &Root, Mode M = Mode::kTrain) {}
  template <typename T> MNIST map(T) const { return *this; }
  size_t size() const { return 0; }
};
struct TensorDataset {
  explicit TensorDataset(const Tensor &, const Tensor &) {}
  template <typename T> TensorDataset map(T) const { return *this; }
};
} // namespace datasets
} // namespace data
} // namespace torch
