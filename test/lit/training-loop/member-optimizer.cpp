// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s
// Optimizers kept in class members (a Trainer; an agent's raw pointer set in
// its constructor's body), and one declared through the base class and made
// with make_unique: the type is the one made.
#include <torch/torch.h>

class Trainer {
public:
  Trainer()
      : model_(4, 2), opt_(model_->parameters(), torch::optim::SGDOptions(0.05)) {}
  void fit() {
    for (int i = 0; i < 10; ++i) {
      opt_.zero_grad();
      model_(torch::randn({8, 4})).backward();
      opt_.step();
    }
  }

private:
  torch::nn::Linear model_;
  torch::optim::SGD opt_;
};

struct Agent {
  Agent() : policy(4, 2) {
    optimizer = new torch::optim::Adam(policy->parameters(),
                                       torch::optim::AdamOptions(3e-4));
  }
  void update(int64_t mini_batch_size) {
    for (int epoch = 0; epoch < 4; ++epoch) {
      policy(torch::randint(100, {mini_batch_size})).backward();
      optimizer->step();
    }
  }
  torch::nn::Linear policy;
  torch::optim::Adam *optimizer{nullptr};
};

int main() {
  Trainer trainer;
  trainer.fit();
  Agent agent;
  agent.update(64);
  torch::nn::Linear head(4, 2);
  std::unique_ptr<torch::optim::Optimizer> optimizer =
      std::make_unique<torch::optim::Adam>(head->parameters(),
                                           torch::optim::AdamOptions(2e-4));
  for (int i = 0; i < 10; ++i) {
    head(torch::randn({8, 4})).backward();
    optimizer->step();
  }
}
// CHECK-LABEL: training_loops:
// CHECK:        function: Trainer::fit
// CHECK:          - name: opt_
// CHECK-NEXT:       type: torch::optim::SGD
// CHECK-NEXT:       file: {{.*}}member-optimizer.cpp
// CHECK-NEXT:       line: 21
// CHECK-NEXT:       declaration_end: 0
// CHECK-NEXT:       learning_rate:
// CHECK-NEXT:         text: 0.05
// CHECK:        function: Agent::update
// CHECK:          - name: optimizer
// CHECK-NEXT:       type: torch::optim::Adam
// CHECK-NEXT:       file: {{.*}}member-optimizer.cpp
// CHECK-NEXT:       line: 36
// CHECK-NEXT:       declaration_end: 0
// CHECK-NEXT:       learning_rate:
// CHECK-NEXT:         text: 3e-4
// CHECK:        function: main
// CHECK:          - name: optimizer
// CHECK-NEXT:       type: torch::optim::Adam
// CHECK:            text: 2e-4
