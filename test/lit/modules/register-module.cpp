// RUN: %skyline-check --analyze-only %s -- %mock-flags | FileCheck %s
// Modules built in the initializer list and named by register_module, one
// assigned from register_module, one default-constructed member, and a
// member that stays null; calls through ->forward and operator().
#include <torch/torch.h>

struct Net : torch::nn::Module {
  Net()
      : conv1(torch::nn::Conv2dOptions(1, 10, 5)),
        // CHECK-DAG: register-module.cpp:[[@LINE-1]]:9: note: module 'conv1' (torch::nn::Conv2d) constructed here, registered at {{.*}}register-module.cpp:[[@LINE+3]] [skyline-module]
        fc1(320, 50) {
    // CHECK-DAG: register-module.cpp:[[@LINE-1]]:9: note: module 'dense' (torch::nn::Linear) constructed here, registered at {{.*}}register-module.cpp:[[@LINE+3]] [skyline-module]
    register_module("conv1", conv1);
    register_module("drop", drop);
    register_module("dense", fc1);
    fc2 = register_module("fc2", torch::nn::Linear(50, 10));
    // CHECK-DAG: register-module.cpp:[[@LINE-1]]:34: note: module 'fc2' (torch::nn::Linear) constructed here, registered at {{.*}}register-module.cpp:[[@LINE-1]] [skyline-module]
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(conv1->forward(x));
    // CHECK-DAG: register-module.cpp:[[@LINE-1]]:21: note: call of module 'conv1' [skyline-module-call]
    x = drop(fc1(x));
    // CHECK-DAG: register-module.cpp:[[@LINE-1]]:9: note: call of module 'drop' [skyline-module-call]
    // CHECK-DAG: register-module.cpp:[[@LINE-2]]:14: note: call of module 'dense' [skyline-module-call]
    return fc2->forward(x);
    // CHECK-DAG: register-module.cpp:[[@LINE-1]]:12: note: call of module 'fc2' [skyline-module-call]
  }
  torch::nn::Conv2d conv1;
  torch::nn::Dropout drop;
  // CHECK-DAG: register-module.cpp:[[@LINE-1]]:22: note: module 'drop' (torch::nn::Dropout) constructed here, registered at {{.*}}register-module.cpp:14 [skyline-module]
  torch::nn::Linear fc1;
  torch::nn::Linear fc2{nullptr};
};

int main() {
  Net net;
  // CHECK-DAG: register-module.cpp:[[@LINE-1]]:7: note: module 'net' (Net) constructed here [skyline-module]
  torch::optim::SGD opt(net.parameters(), 0.1);
  for (int i = 0; i < 3; ++i) {
    net.forward(torch::randn({4, 1, 28, 28})).mean().backward();
    opt.step();
  }
}
// CHECK: 5 modules, 5 module calls, 1 training loop in 1 source
