// RUN: %skyline-check --analyze-only --batch-size-var=kMicroBatch %s -- %mock-flags | FileCheck %s
// RUN: %skyline-check --analyze-only --batch-size-var=MICRO %s -- %mock-flags | FileCheck %s --check-prefix=MACRO
// RUN: %skyline-check --analyze-only --batch-size-var=Config::micro %s -- %mock-flags | FileCheck %s --check-prefix=FIELD
// When the uses say nothing, the user names the declaration.
#include <torch/torch.h>

const int64_t kMicroBatch = 12;
// CHECK: batch-size-var.cpp:[[@LINE-1]]:29: note: training batch size 'kMicroBatch' = 12 (namespace-constant) [skyline-batch-size]
#define MICRO 6
// MACRO: batch-size-var.cpp:[[@LINE-1]]:15: note: training batch size 'MICRO' = 6 (macro) [skyline-batch-size]
struct Config {
  int micro = 3;
  // FIELD: batch-size-var.cpp:[[@LINE-1]]:15: note: training batch size 'Config::micro' = 3 (field-default) [skyline-batch-size]
};

int main() { torch::nn::Linear model(3, 1); }
