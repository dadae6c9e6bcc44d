// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags | FileCheck %s
// A member set in a constructor from a default argument, and a per-rank
// batch scaled from a total at run time: both lead to the literal to change.
#include <torch/torch.h>

int world_size();

class Trainer {
public:
  explicit Trainer(int64_t batch_size = 24) : batch_size_(batch_size) {}
  void run() {
    auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                                batch_size_);
    for (auto &batch : *loader) {
      model_(batch.data).backward();
      opt_.step();
    }
  }

private:
  int64_t batch_size_;
  torch::nn::Linear model_{2, 1};
  torch::optim::SGD opt_{model_->parameters(), 0.1};
};

int main() {
  auto total_batch_size = 256;
  auto eval_batch = total_batch_size / world_size();
  auto eval_loader = torch::data::make_data_loader(torch::data::datasets::MNIST("d"),
                                                   eval_batch);
  Trainer().run();
  for (auto &batch : *eval_loader)
    (void)batch;
}
// CHECK:      batch_size:
// CHECK-NEXT:   name: batch_size
// CHECK-NEXT:   value: 24
// CHECK-NEXT:   file: {{.*}}members-and-scaling.cpp
// CHECK-NEXT:   line: 10
// CHECK:        kind: default-argument
// CHECK:        chain:
// CHECK-NEXT:     - {step: given to make_data_loader() as the batch size here, file: {{.*}}, line: 13, column: 49}
// CHECK-NEXT:     - {step: member 'Trainer::batch_size_' initialised here, file: {{.*}}, line: 10, column: 47}
// CHECK-NEXT:     - {step: default of parameter 'batch_size' of Trainer::Trainer() here, file: {{.*}}, line: 10, column: 28}
// CHECK:      other_batch_sizes:
// CHECK-NEXT:   - name: total_batch_size
// CHECK-NEXT:     value: 256
// CHECK:          kind: local-constant
// CHECK-NEXT:     role: eval
// CHECK:          - {step: scaled as 'total_batch_size / world_size()' here, file: {{.*}}, line: 28, column: 21}
