// RUN: %skyline-check --analyze-only %s -- %mock-flags -DREAD=0 | FileCheck %s --check-prefix=ARGV
// RUN: %skyline-check --analyze-only %s -- %mock-flags -DREAD=1 | FileCheck %s --check-prefix=TERNARY
// RUN: %skyline-check --analyze-only %s -- %mock-flags -DREAD=2 | FileCheck %s --check-prefix=ENV
// RUN: %skyline-check --analyze-only %s -- %mock-flags -DREAD=3 2>&1 | FileCheck %s --check-prefix=NO-DEFAULT
// RUN: %skyline-check --analyze-only %s -- %mock-flags -DREAD=4 2>&1 | FileCheck %s --check-prefix=CALLERS
// A function of the program's own that reads the training batch size from
// the command line or the environment, called with main's argc and argv:
// its returns are one literal default and reads, so the default is the
// site (the kind says what can override it), with the path through the
// function as notes. Without a default, the read is named (runtime). A
// function whose return uses an argument of the caller's (scaled(16)) is
// not followed: one call's trace cannot say what the others pass.
#include <cstdlib>
#include <string>
#include <torch/torch.h>

#if READ == 0
int64_t readBatchSize(int argc, char **argv) {
  if (argc > 1)
    return std::stoll(argv[1]);
  return 32;
  // ARGV: reader-function.cpp:[[@LINE-1]]:10: note: training batch size 'batch_size' = 32 (command-line-default) [skyline-batch-size]
  // ARGV: reader-function.cpp:[[@LINE+25]]:17: note: variable 'batch_size' initialised here
}
#elif READ == 1
int64_t readBatchSize(int argc, char **argv) {
  return argc > 1 ? std::atoi(argv[1]) : 48;
  // TERNARY: reader-function.cpp:[[@LINE-1]]:42: note: training batch size 'batch_size' = 48 (command-line-default) [skyline-batch-size]
}
#elif READ == 2
int64_t readBatchSize(int, char **) {
  const char *text = std::getenv("TRAIN_BATCH");
  if (text)
    return std::atoi(text);
  return 16;
  // ENV: reader-function.cpp:[[@LINE-1]]:10: note: training batch size 'batch_size' = 16 (environment-default) [skyline-batch-size]
}
#elif READ == 3
int64_t readBatchSize(int, char **argv) { return std::stoll(argv[1]); }
// NO-DEFAULT: reader-function.cpp:[[@LINE-1]]:50: note: training batch size 'batch_size' read at run time from argv[1], with no default in the source (runtime) [skyline-batch-size]
// NO-DEFAULT: reader-function.cpp:[[@LINE-2]]:43: note: returned by readBatchSize() here
#else
int64_t scaled(int base) { return base * 2; }
#endif

int main(int argc, char **argv) {
#if READ < 4
  const int64_t batch_size = readBatchSize(argc, argv);
#else
  const int64_t batch_size = scaled(16);
  // CALLERS: no training batch size found in {{.*}}reader-function.cpp
  // CALLERS-NOT: training batch size 'batch_size'
#endif
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    model(torch::randn({batch_size, 3})).backward();
    opt.step();
  }
}
