// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s
// Evaluation loops: the innermost loop whose body runs the model and reaches
// no backward() or step(), directly or through the functions it calls. A
// guard in scope (NoGradGuard or InferenceMode, in the body, before the loop
// or before every call of its function) makes it guarded. Left out: the
// model's own loop over its layers, a loop inside a training loop, a loop
// around another evaluation loop, and loops that need gradients. A body
// without braces is one: where the fix-it opens a brace and closes it.
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  NetImpl() {
    for (int I = 0; I < 2; ++I)
      layers.push_back(register_module("fc" + std::to_string(I), torch::nn::Linear(8, 8)));
  }
  torch::Tensor forward(torch::Tensor X) {
    for (auto &Layer : layers) {
      X = Layer->forward(X);
    }
    return X;
  }
  std::vector<torch::nn::Linear> layers;
};
TORCH_MODULE(Net);

template <typename Loader> void train(Net &model, torch::optim::SGD &optimizer, Loader &loader) {
  for (auto &batch : *loader) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model->forward(batch.data), batch.target);
    for (int Step = 0; Step < 2; ++Step) {
      loss = loss + model->forward(batch.data);
    }
    loss.backward();
    optimizer.step();
  }
}

template <typename Loader> double test(Net &model, Loader &loader) {
  model->eval();
  double no_grad = 0;
  for (auto &batch : *loader) {
    auto output = model->forward(batch.data);
    no_grad += output.template item<double>();
  }
  return no_grad;
}
// CHECK:      evaluation_loops:
// CHECK-NEXT:   - file: {{.*}}evaluation-loops.cpp
// CHECK-NEXT:     line: [[@LINE-8]]
// CHECK-NEXT:     column: 3
// CHECK-NEXT:     function: test
// CHECK-NEXT:     body_start: {file: {{.*}}evaluation-loops.cpp, line: [[@LINE-11]], column: 32, offset: {{[0-9]+}}, length: 0}
// CHECK-NEXT:     indent: "    "
// CHECK-NEXT:     guarded: false
// CHECK-NEXT:     guard_name: no_grad_guard

template <typename Loader> void validate(Net &model, Loader &loader) {
  torch::NoGradGuard guard;
  for (auto &batch : *loader) {
    model(batch.data);
  }
}
// CHECK-NEXT:   - file: {{.*}}evaluation-loops.cpp
// CHECK-NEXT:     line: [[@LINE-5]]
// CHECK:          function: validate
// CHECK:          guarded: true
// CHECK-NEXT:     guard_name: no_grad

void predict(Net &model) {
  for (int I = 0; I < 3; ++I) {
    c10::InferenceMode guard;
    model->forward(torch::randn({1, 8}));
  }
}
// CHECK-NEXT:   - file: {{.*}}evaluation-loops.cpp
// CHECK-NEXT:     line: [[@LINE-6]]
// CHECK:          function: predict
// CHECK:          guarded: true
// CHECK-NEXT:     guard_name: no_grad

void score(Net &model) {
  while (true) {
    model->forward(torch::randn({1, 8}));
    break;
  }
}
// CHECK-NEXT:   - file: {{.*}}evaluation-loops.cpp
// CHECK-NEXT:     line: [[@LINE-6]]
// CHECK:          function: score
// CHECK:          guarded: true
// CHECK-NEXT:     guard_name: no_grad

// Left out too: a loop that needs gradients (torch::autograd::grad), and one
// whose outputs are kept for a backward() after it.
template <typename Loader> void saliency(Net &model, Loader &loader) {
  for (auto &batch : *loader) {
    auto output = model->forward(batch.data);
    torch::autograd::grad({output}, {batch.data});
  }
}

void summed(Net &model) {
  torch::Tensor total = torch::randn({1, 8});
  for (int I = 0; I < 3; ++I) {
    total = total + model->forward(torch::randn({1, 8}));
  }
  total.backward();
}

int main() {
  Net model;
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("a"), 16);
  auto test_loader = torch::data::make_data_loader(torch::data::datasets::MNIST("b"), 64);
  for (int epoch = 0; epoch < 2; ++epoch) {
    train(model, optimizer, loader);
    test(model, test_loader);
  }
  for (int round = 0; round < 2; ++round) {
    test(model, test_loader);
  }
  validate(model, test_loader);
  predict(model);
  {
    torch::NoGradGuard guard;
    score(model);
  }
  for (int I = 0; I < 2; ++I)
    model->forward(torch::randn({1, 8}));
  saliency(model, test_loader);
  summed(model);
}
// CHECK-NEXT:   - file: {{.*}}evaluation-loops.cpp
// CHECK-NEXT:     line: [[@LINE-6]]
// CHECK-NEXT:     column: 3
// CHECK-NEXT:     function: main
// CHECK-NEXT:     body_start: {file: {{.*}}, line: [[@LINE-8]], column: 5, offset: {{[0-9]+}}, length: 0}
// CHECK-NEXT:     indent: "    "
// CHECK-NEXT:     guarded: false
// CHECK-NEXT:     guard_name: no_grad
// CHECK-NEXT:     braces: false
// CHECK-NEXT:     header_end: {file: {{.*}}, line: [[@LINE-14]], column: 30, offset: {{[0-9]+}}, length: 0}
// CHECK-NEXT:     body_end: {file: {{.*}}, line: [[@LINE-14]], column: 42, offset: {{[0-9]+}}, length: 0}
// CHECK-NEXT:     loop_indent: "  "
// CHECK-NEXT: files:
