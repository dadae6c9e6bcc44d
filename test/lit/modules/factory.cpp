// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// Modules made by factory functions of the program's own: each call is a
// construction, named by what it initializes, and the factory's own return
// is none. A getter returning a held module builds nothing, nor does an
// empty shared_ptr member; a registered copy of a parameter is still a
// module; a class template's member is found once.
#include <torch/torch.h>

torch::nn::Conv2d conv3x3(int64_t in, int64_t out);

torch::nn::Conv2d conv3x3(int64_t in, int64_t out) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1));
}
// CHECK-NOT: factory.cpp:[[@LINE-2]]:{{.*}} [skyline-module]

struct BlockImpl : torch::nn::Module {
  BlockImpl(int64_t in, int64_t out, torch::nn::Sequential down)
      : conv1(conv3x3(in, out)), downsample(down) {
    // CHECK-DAG: factory.cpp:[[@LINE-1]]:15: note: module 'conv1' (torch::nn::Conv2d) constructed here, registered at {{.*}}factory.cpp:[[@LINE+1]] [skyline-module]
    register_module("conv1", conv1);
    register_module("downsample", downsample);
    // CHECK-DAG: factory.cpp:[[@LINE-4]]:34: note: module 'downsample' (torch::nn::Sequential) constructed here, registered at {{.*}}factory.cpp:[[@LINE-1]] [skyline-module]
    head = register_module("head", std::make_shared<torch::nn::LinearImpl>(4, 2));
  }
  torch::Tensor forward(torch::Tensor x) { return downsample->forward(conv1->forward(x)); }
  torch::nn::Conv2d conv1;
  torch::nn::Sequential downsample;
  std::shared_ptr<torch::nn::LinearImpl> head;
  // CHECK-NOT: factory.cpp:[[@LINE-1]]:{{.*}} [skyline-module]
};
TORCH_MODULE(Block);

template <typename B> struct NetImpl : torch::nn::Module {
  NetImpl() {
    register_module("stem", stem);
    register_module("bn", bn);
    register_module("down", down);
  }
  torch::nn::Conv2d stem{conv3x3(3, 16)};
  // CHECK-DAG: factory.cpp:[[@LINE-1]]:26: note: module 'stem' (torch::nn::Conv2d) constructed here, registered at {{.*}}factory.cpp:[[@LINE-5]] [skyline-module]
  torch::nn::BatchNorm2d bn{16};
  torch::nn::Sequential down{conv3x3(16, 32), torch::nn::BatchNorm2d(32)};
  // CHECK-DAG: factory.cpp:[[@LINE-1]]:30: note: module 'down.0' (torch::nn::Conv2d) constructed here [skyline-module]
  torch::nn::Conv2d first() const { return stem; }
  torch::Tensor forward(torch::Tensor x) { return down->forward(stem(x)); }
};
template <typename B> struct Net : torch::nn::ModuleHolder<NetImpl<B>> {
  using torch::nn::ModuleHolder<NetImpl<B>>::ModuleHolder;
};

int main() {
  Net<Block> net;
  auto stem = net->first();
  torch::optim::SGD opt(net->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    net->forward(torch::randn({8, 3, 32, 32})).backward();
    opt.step();
  }
}
// CHECK: 9 modules
