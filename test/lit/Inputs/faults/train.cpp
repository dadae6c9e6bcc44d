// Every fault of a measured program that test/lit/errors/run-faults.test
// tries, in one program so that it is built once; the first argument
// (--run-arg) chooses:
//   benign      reads stdin to its end, changes directory and leaves a
//               daemon (setsid) behind, then trains normally
//   exit        prints megabytes, then calls std::exit(3) in the loop
//   throw       throws in the loop
//   abort       aborts in the loop, leaving a helper process behind (as a
//               data loader worker would be)
//   hang        hangs in the loop, with a helper process that ignores
//               SIGTERM (as a stuck data loader worker might)
//   hang-alone  hangs in the loop without a helper (test/lit/slurm: under
//               the test cluster's proctrack/linuxproc a helper orphaned by
//               the kill escapes the step, which then stays completing)
//   bad-result  writes a malformed result file and ends at once (_Exit(0))
//   rm-run-dir  deletes the directory its result file goes to
#include <torch/torch.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <ftw.h>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

/// A daemon, as a careless program makes one: its own session, its parent
/// gone, running forever.
void leaveADaemon() {
  if (fork() != 0)
    return;
  setsid();
  if (fork() != 0)
    std::_Exit(0);
  for (;;)
    pause();
}

/// Not std::filesystem::remove_all: LibTorch 2.11's copy of it crashes.
void removeTree(const std::string &Dir) {
  nftw(
      Dir.c_str(),
      [](const char *Path, const struct stat *, int, struct FTW *) {
        return std::remove(Path);
      },
      16, FTW_DEPTH | FTW_PHYS);
}

void beforeTheLoop(const std::string &Fault) {
  if (Fault == "benign") {
    std::string Line;
    std::size_t Lines = 0;
    while (std::getline(std::cin, Line))
      ++Lines;
    std::cout << "read " << Lines << " line(s) from stdin" << std::endl;
    if (chdir("/") != 0)
      std::_Exit(2);
    leaveADaemon();
  } else if (Fault == "rm-run-dir") {
    if (const char *Result = std::getenv("SKYLINE_RESULT")) {
      std::string Path = Result;
      removeTree(Path.substr(0, Path.rfind('/')));
    }
  }
}

void inTheLoop(const std::string &Fault, int Step) {
  if (Step != 2)
    return;
  if (Fault == "exit") {
    std::string Line(99, 'x');
    for (int I = 0; I < 40000; ++I) // 4 MB
      std::cout << Line << '\n';
    std::cout << "exiting with code 3 at step 3" << std::endl;
    std::exit(3);
  }
  if (Fault == "throw")
    throw std::runtime_error("a fault at step 3");
  if (Fault == "abort") {
    if (fork() == 0)
      for (;;)
        pause();
    std::cout << "aborting after step 3" << std::endl;
    std::abort();
  }
  if (Fault == "hang") {
    if (fork() == 0) {
      std::signal(SIGTERM, SIG_IGN);
      for (;;)
        pause();
    }
    std::cout << "stuck after step 3" << std::endl;
    for (;;)
      std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (Fault == "hang-alone") {
    std::cout << "stuck after step 3" << std::endl;
    for (;;)
      std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (Fault == "bad-result") {
    if (const char *Result = std::getenv("SKYLINE_RESULT"))
      std::ofstream(Result) << "batch_size: [8\n";
    std::_Exit(0);
  }
}

} // namespace

int main(int argc, char **argv) {
  std::string Fault = argc > 1 ? argv[1] : "";
  const int64_t batch_size = 8;
  torch::nn::Linear model(4, 1);
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(0.01));
  beforeTheLoop(Fault);
  for (int step = 0; step < 100; ++step) {
    optimizer.zero_grad();
    model(torch::randn({batch_size, 4})).mean().backward();
    optimizer.step();
    inTheLoop(Fault, step);
    if (Fault == "fixed-shape") // a shape written for the declared size
      torch::zeros({8, 4}).add_(torch::randn({batch_size, 4}));
  }
}
