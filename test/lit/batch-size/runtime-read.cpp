// RUN: %skyline-check --analyze-only %s -- %mock-flags -DREAD=0 > %t.argv.out 2> %t.argv.err
// RUN: FileCheck %s --check-prefix=ARGV < %t.argv.out
// RUN: FileCheck %s --check-prefix=ARGV-ERR < %t.argv.err
// RUN: %skyline-check --analyze-only %s -- %mock-flags -DREAD=1 2>&1 | FileCheck %s --check-prefix=ENV
// RUN: %skyline-check --analyze-only %s -- %mock-flags -DREAD=2 2>&1 | FileCheck %s --check-prefix=CONFIG
// RUN: %skyline-check --analyze-only %s -- %mock-flags -DREAD=3 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: %skyline-check --analyze-only --format=yaml %s -- %mock-flags -DREAD=0 | FileCheck %s --check-prefix=MODEL
// (stderr comes first in ENV's and CONFIG's output)
// ENV: the training batch size 'batch_size' is read at run time from environment variable 'TRAIN_BATCH'
// CONFIG: the training batch size 'batch_size' is read at run time from configuration key 'batch_size'
// OPTION: the training batch size 'batch-size' is read at run time from command-line option 'batch-size' (runtime-read.cpp:35), with no default in the source
// A training batch size the program reads at run time with no default in
// the source: argv, an environment variable, a configuration key. The front
// end names the read (kind runtime), with its path to the training loop;
// there is no literal to change, so no training batch size (a note, exit 0).
#include <cstdlib>
#include <cxxopts.hpp>
#include <string>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

int main(int argc, char **argv) {
#if READ == 0
  const int64_t batch_size = std::stoll(argv[1]);
  // ARGV: runtime-read.cpp:[[@LINE-1]]:30: note: training batch size 'batch_size' read at run time from argv[1], with no default in the source (runtime) [skyline-batch-size]
  // ARGV: runtime-read.cpp:[[@LINE-2]]:17: note: variable 'batch_size' initialised here
#elif READ == 1
  const char *env = std::getenv("TRAIN_BATCH");
  const int64_t batch_size = std::atoi(env);
  // ENV: runtime-read.cpp:[[@LINE-1]]:30: note: training batch size 'batch_size' read at run time from environment variable 'TRAIN_BATCH', with no default in the source (runtime) [skyline-batch-size]
#elif READ == 3
  cxxopts::Options options("train");
  options.add_options()("b,batch-size", "batch size", cxxopts::value<int64_t>());
  auto result = options.parse(argc, argv);
  const int64_t batch_size = result["batch-size"].as<int64_t>();
  // OPTION: runtime-read.cpp:[[@LINE-1]]:30: note: training batch size 'batch-size' read at run time from command-line option 'batch-size', with no default in the source (runtime) [skyline-batch-size]
#else
  YAML::Node config = YAML::LoadFile(argv[1]);
  const int64_t batch_size = config["batch_size"].as<int64_t>();
  // CONFIG: runtime-read.cpp:[[@LINE-1]]:30: note: training batch size 'batch_size' read at run time from configuration key 'batch_size', with no default in the source (runtime) [skyline-batch-size]
#endif
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    model(torch::randn({batch_size, 3})).backward();
    // ARGV: runtime-read.cpp:[[@LINE-1]]:25: note: first dimension of torch::randn() in the training loop here
    opt.step();
  }
}
// ARGV-NOT: training batch size '{{.*}}' =
// ARGV-ERR: skyline-check: note: the training batch size 'batch_size' is read at run time from argv[1] (runtime-read.cpp:24), with no default in the source; to predict other sizes, give it a default there, or name a variable, field or macro that holds a literal with --batch-size-var=NAME; without --analyze-only the runs measure the program at its own batch size
// ARGV-ERR-NOT: warning

// MODEL: batch_size: ~
// MODEL-NEXT: runtime_batch_size:
// MODEL-NEXT: name: batch_size
// MODEL-NEXT: value: 0
// MODEL-NEXT: file: {{.*}}runtime-read.cpp
// MODEL-NEXT: line: 24
// MODEL-NEXT: column: 30
// MODEL: kind: runtime
// MODEL-NEXT: role: train
// MODEL: read_from: argv[1]
