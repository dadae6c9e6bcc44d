// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s
// A GAN: one loop, two optimizers, two backward passes, two steps.
#include <torch/torch.h>

int main() {
  torch::nn::Sequential generator(torch::nn::Linear(8, 16), torch::nn::ReLU());
  torch::nn::Sequential discriminator(torch::nn::Linear(16, 1));
  torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(2e-4));
  torch::optim::Adam d_opt(discriminator->parameters(), torch::optim::AdamOptions(5e-4));
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
      torch::data::DataLoaderOptions().batch_size(64));
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (auto &batch : *loader) {
      discriminator->zero_grad();
      discriminator->forward(batch.data).mean().backward();
      d_opt.step();
      generator->zero_grad();
      auto fake = generator->forward(torch::randn({64, 8}));
      discriminator->forward(fake).mean().backward();
      g_opt.step();
    }
  }
}
// CHECK-LABEL: training_loop:
// CHECK-NEXT:   file: {{.*}}gan.cpp
// CHECK-NEXT:   line: 13
// CHECK-NEXT:   column: 5
// CHECK-NEXT:   function: main
// CHECK-NEXT:   body_offset: {{[0-9]+}}
// CHECK-NEXT:   body_length: {{[0-9]+}}
// CHECK-NEXT:   body_is_compound: true
// The whole statement, from its `for` (line 13, column 5) to the body's `}`.
// CHECK-NEXT:   loop_offset: 698
// CHECK-NEXT:   loop_length: 314
// CHECK-NEXT:   optimizers:
// CHECK-NEXT:     - name: g_opt
// CHECK-NEXT:       type: torch::optim::Adam
// CHECK-NEXT:       file: {{.*}}gan.cpp
// CHECK-NEXT:       line: 8
// CHECK-NEXT:       declaration_end: [[END:[0-9]+]]
// A statement can follow the declaration, on a line of its own at its
// indentation (the channels-last fix-it's).
// CHECK-NEXT:       after_declaration: {file: {{.*}}gan.cpp, line: 8, column: 86, offset: [[END]], length: 0}
// CHECK-NEXT:       indent: "  "
// CHECK-NEXT:       learning_rate:
// CHECK-NEXT:         text: 2e-4
// CHECK:          - name: d_opt
// CHECK:            text: 5e-4
// CHECK:        zero_grad_calls:
// CHECK-NEXT:     - {file: {{.*}}, line: 14, column: 7, offset: {{[0-9]+}}, length: 26}
// CHECK-NEXT:     - {file: {{.*}}, line: 17, column: 7, offset: {{[0-9]+}}, length: 22}
// CHECK-NEXT:   backward_calls:
// CHECK-NEXT:     - {file: {{.*}}, line: 15, column: 7, offset: {{[0-9]+}}, length: 52}
// CHECK-NEXT:     - {file: {{.*}}, line: 19, column: 7, offset: {{[0-9]+}}, length: 46}
// CHECK-NEXT:   step_calls:
// CHECK-NEXT:     - {file: {{.*}}, line: 16, column: 7, offset: {{[0-9]+}}, length: 12}
// CHECK-NEXT:     - {file: {{.*}}, line: 20, column: 7, offset: {{[0-9]+}}, length: 12}
