// A training program as the instrumenter leaves it: the batch size through
// batch_size(), iteration_begin() at the top of the loop body, and the model
// calls inside scopes. The runtime ends it after its measured iterations;
// reaching the end of main means it did not.
//
// Without arguments: one Sequential called in a scope of the older form
// (no module). With `short`: the same for 6 steps only, then it returns 0,
// as a program that runs out of data does. With `layers`: a model (scope 0)
// whose layers are called in scopes that name their module: a dominant
// Linear(1024, 1024) (scope 1), a BatchNorm2d(64) (scope 2) and a Linear(1024,
// 16) (scope 3). With `epochs`: 3 epochs of 4 steps, each marked by
// loop_begin() as the instrumenter marks a training loop; an epoch's last
// step is a quarter batch and each epoch ends with 60 ms of other work (an
// evaluation), so the step across an epoch's end is the odd one out. With
// `every-step-a-loop`: loop_begin() before every step. With `setup`: the
// statements before the loop marked as the instrumenter marks them: a
// "dataset" of 1000 x 1000 floats (statement 0, 4,000,000 bytes), the model
// (statement 1: its weights only) and the optimizer (statement 2, SGD
// without momentum: no state), then the loop, whose start ends statement 2.
// With `own-size N`: no batch_size(); batches of N cut from 100 samples (an
// epoch's last is short), 3 epochs, each model call an outermost scope (0)
// returning a pair whose first tensor is the batch's, around an inner call
// (scope 1) whose result is not batch-first: the runs observe N. With
// `evaluate`: 2 epochs of 5 training steps, each body starting with
// training_skipped() as the instrumenter starts it where the program has an
// unguarded evaluation loop, then an evaluation of 12 passes marked as the
// instrumenter marks them, each with an inner loop of 2 marked passes (not
// timed: one pass at a time); each pass prints E where autograd records
// (grad mode on) and N where the guard holds, the inner ones in brackets.
// With `conv` (or `conv channels-last`, whose weights the program itself
// makes channels-last): a Conv2d(3, 8, 3) and a Linear trained by SGD
// tracked after its declaration; at its end it prints the memory order of
// the convolution's weight and whether the optimizer's parameter is the
// module's tensor still. With `syncs`: a Linear trained on batches copied
// with to_device (to the CPU: no trial applies), each step reading its loss
// with item() (sync 0) and, every other step, writing a 200 x 200 tensor
// to a string stream (sync 1), as the instrumenter wraps them; it prints
// how many steps it took and the loss's value each time.
#include "skyline/runtime/Runtime.h"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

namespace {

/// The declared size, read where a step first needs it rather than at
/// start-up: the own-size mode never reads it, as a program without a
/// literal does not.
int64_t batchSize() {
  static const int64_t Size = skyline::rt::batch_size(16);
  return Size;
}

int trainSequential(int Steps) {
  torch::nn::Sequential model(torch::nn::Linear(256, 512), torch::nn::ReLU(),
                              torch::nn::Linear(512, 256));
  torch::optim::Adam optimizer(model->parameters(),
                               torch::optim::AdamOptions(1e-3));
  skyline::rt::track_optimizer(optimizer);
  for (int step = 0; step < Steps; ++step) {
    skyline::rt::iteration_begin();
    auto x = torch::randn({batchSize(), 256});
    auto y = skyline::rt::scoped(
        0, [&]() -> decltype(auto) { return model->forward(x); });
    optimizer.zero_grad();
    y.pow(2).mean().backward();
    skyline::rt::optimizer_step(
        [&]() -> decltype(auto) { return optimizer.step(); });
  }
  return 0;
}

/// trainSequential's model and Adam, the optimizer held by a pointer that
/// is null where it is declared (and tracked), made after.
int trainHeldOptimizer(int Steps) {
  torch::nn::Sequential model(torch::nn::Linear(256, 512), torch::nn::ReLU(),
                              torch::nn::Linear(512, 256));
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  skyline::rt::track_optimizer(optimizer);
  optimizer = std::make_unique<torch::optim::Adam>(
      model->parameters(), torch::optim::AdamOptions(1e-3));
  for (int step = 0; step < Steps; ++step) {
    skyline::rt::iteration_begin();
    auto x = torch::randn({batchSize(), 256});
    auto y = skyline::rt::scoped(
        0, [&]() -> decltype(auto) { return model->forward(x); });
    optimizer->zero_grad();
    y.pow(2).mean().backward();
    skyline::rt::optimizer_step(
        [&]() -> decltype(auto) { return optimizer->step(); });
  }
  return 0;
}

/// The `conv` mode (above).
int trainConvolution(bool ChannelsLastAlready) {
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 8, 3));
  torch::nn::Linear head(8 * 6 * 6, 4);
  if (ChannelsLastAlready)
    conv->weight.set_data(
        conv->weight.detach().contiguous(torch::MemoryFormat::ChannelsLast));
  std::vector<torch::Tensor> parameters = conv->parameters();
  for (const torch::Tensor &P : head->parameters())
    parameters.push_back(P);
  torch::optim::SGD optimizer(parameters, torch::optim::SGDOptions(0.01));
  skyline::rt::track_optimizer(optimizer);
  for (int step = 0; step < 40; ++step) {
    skyline::rt::iteration_begin();
    auto x = torch::randn({batchSize(), 3, 8, 8});
    optimizer.zero_grad();
    auto y = head->forward(conv->forward(x).flatten(1));
    y.pow(2).mean().backward();
    skyline::rt::optimizer_step(
        [&]() -> decltype(auto) { return optimizer.step(); });
    if (step == 1) {
      bool Last = conv->weight.is_contiguous(torch::MemoryFormat::ChannelsLast);
      bool Same = optimizer.param_groups()[0].params()[0].is_same(conv->weight);
      std::printf("weight %s, the optimizer's %s\n",
                  Last ? "channels-last" : "contiguous",
                  Same ? "the module's" : "another tensor");
      std::fflush(stdout);
    }
  }
  return 0;
}

/// The `syncs` mode (above).
int trainWithHostSyncs() {
  torch::nn::Linear model(64, 64);
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(0.01));
  torch::Tensor big = torch::randn({200, 200});
  std::ostringstream printed;
  double total = 0;
  for (int step = 0; step < 40; ++step) {
    skyline::rt::iteration_begin();
    auto x = skyline::rt::to_device(torch::randn({batchSize(), 64}),
                                    torch::kCPU);
    optimizer.zero_grad();
    auto loss = model->forward(x).pow(2).mean();
    loss.backward();
    skyline::rt::optimizer_step(
        [&]() -> decltype(auto) { return optimizer.step(); });
    total += skyline::rt::host_sync(
        0, [&]() -> decltype(auto) { return loss.item<float>(); });
    if (step % 2 == 0)
      skyline::rt::host_sync(
          1, [&]() -> decltype(auto) { return printed << big; });
  }
  std::printf("total %.3f, printed %zu\n", total, printed.str().size());
  return 0;
}

struct NetImpl : torch::nn::Module {
  NetImpl()
      : big(register_module("big", torch::nn::Linear(1024, 1024))),
        norm(register_module("norm", torch::nn::BatchNorm2d(64))),
        head(register_module("head", torch::nn::Linear(1024, 16))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = skyline::rt::scoped(
        1, big, [&]() -> decltype(auto) { return big->forward(x); });
    // The features as 64 channels of 4 x 4, for a BatchNorm2d.
    x = skyline::rt::scoped(2, norm, [&]() -> decltype(auto) {
      return norm(x.view({-1, 64, 4, 4}));
    });
    x = torch::relu(x).view({-1, 1024});
    return skyline::rt::scoped(
        3, head, [&]() -> decltype(auto) { return head->forward(x); });
  }
  torch::nn::Linear big;
  torch::nn::BatchNorm2d norm;
  torch::nn::Linear head;
};
TORCH_MODULE(Net);

int trainLayers() {
  Net net;
  torch::optim::SGD optimizer(net->parameters(),
                              torch::optim::SGDOptions(0.01));
  skyline::rt::track_optimizer(optimizer);
  for (int step = 0; step < 40; ++step) {
    skyline::rt::iteration_begin();
    auto x = torch::randn({batchSize(), 1024});
    auto y = skyline::rt::scoped(
        0, net, [&]() -> decltype(auto) { return net->forward(x); });
    optimizer.zero_grad();
    y.pow(2).mean().backward();
    skyline::rt::optimizer_step(
        [&]() -> decltype(auto) { return optimizer.step(); });
  }
  return 0;
}

/// A loop entered once a step (an inner loop that is a training loop too):
/// every step spans a start of it.
int trainEveryStepALoop() {
  torch::nn::Linear model(256, 256);
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(0.01));
  for (int step = 0; step < 40; ++step) {
    skyline::rt::loop_begin();
    skyline::rt::iteration_begin();
    optimizer.zero_grad();
    model->forward(torch::randn({batchSize(), 256})).pow(2).mean().backward();
    optimizer.step();
  }
  return 0;
}

int trainEpochs() {
  torch::nn::Linear model(256, 256);
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(0.01));
  for (int epoch = 0; epoch < 3; ++epoch) {
    {
      skyline::rt::loop_begin();
      for (int step = 0; step < 4; ++step) {
        skyline::rt::iteration_begin();
        auto x = torch::randn({step == 3 ? batchSize() / 4 : batchSize(), 256});
        optimizer.zero_grad();
        model->forward(x).pow(2).mean().backward();
        optimizer.step();
      }
    }
    // An evaluation: far longer than a step, even one slowed by a busy
    // machine (steps of 1 ms took up to 96 ms under a full test suite).
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  return 0;
}

int trainWithSetup() {
  skyline::rt::setup_statement(0);
  torch::Tensor dataset = torch::ones({1000, 1000});
  skyline::rt::setup_statement(1);
  torch::nn::Linear model(256, 256);
  skyline::rt::setup_statement(2);
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(0.01));
  skyline::rt::track_optimizer(optimizer);
  skyline::rt::loop_begin();
  for (int step = 0; step < 40; ++step) {
    skyline::rt::iteration_begin();
    auto x = dataset.narrow(0, 0, batchSize()).narrow(1, 0, 256);
    optimizer.zero_grad();
    model->forward(x).pow(2).mean().backward();
    skyline::rt::optimizer_step(
        [&]() -> decltype(auto) { return optimizer.step(); });
  }
  return 0;
}

/// The batch size the program chose itself (a command-line argument): the
/// run observes it from the outermost call's result, a pair.
int trainAtOwnSize(int64_t Batch) {
  torch::nn::Linear inner(8, 8);
  torch::optim::SGD optimizer(inner->parameters(),
                              torch::optim::SGDOptions(0.01));
  torch::Tensor data = torch::randn({100, 8});
  for (int epoch = 0; epoch < 3; ++epoch) {
    skyline::rt::loop_begin();
    for (const torch::Tensor &x : data.split(Batch)) {
      skyline::rt::iteration_begin();
      auto [y, t] = skyline::rt::scoped(0, [&]() -> decltype(auto) {
        // Features first, the batch second: never the size observed.
        torch::Tensor Transposed = skyline::rt::scoped(
            1, inner, [&]() -> decltype(auto) { return inner(x).t(); });
        return std::make_pair(Transposed.t(), Transposed);
      });
      optimizer.zero_grad();
      y.pow(2).mean().backward();
      optimizer.step();
    }
  }
  return 0;
}

/// Evaluation without a guard after a short training, as `evaluate` says.
int trainThenEvaluate() {
  torch::nn::Sequential model(
      torch::nn::Linear(1024, 1024), torch::nn::ReLU(),
      torch::nn::Linear(1024, 1024), torch::nn::ReLU(),
      torch::nn::Linear(1024, 1024), torch::nn::ReLU(),
      torch::nn::Linear(1024, 1024), torch::nn::ReLU());
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(0.01));
  int Trained = 0;
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (int step = 0; step < 5; ++step) {
      if (skyline::rt::training_skipped())
        break;
      skyline::rt::iteration_begin();
      optimizer.zero_grad();
      model->forward(torch::randn({16, 1024})).pow(2).mean().backward();
      optimizer.step();
      ++Trained;
    }
  }
  std::printf("trained %d steps\n", Trained);
  for (int pass = 0; pass < 12; ++pass) {
    auto skyline_evaluation_pass =
        skyline::rt::evaluation_iteration<torch::NoGradGuard>();
    std::printf("%c", torch::GradMode::is_enabled() ? 'E' : 'N');
    torch::Tensor Output = model->forward(torch::randn({256, 1024}));
    std::printf("[");
    for (int inner = 0; inner < 2; ++inner) {
      auto skyline_inner_pass =
          skyline::rt::evaluation_iteration<torch::NoGradGuard>();
      std::printf("%c", torch::GradMode::is_enabled() ? 'E' : 'N');
    }
    std::printf("]");
  }
  std::printf("\nevaluated\n");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  torch::manual_seed(0);
  if (argc > 1 && std::strcmp(argv[1], "short") == 0) {
    trainSequential(6);
    std::printf("trained 6 steps\n");
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "every-step-a-loop") == 0) {
    trainEveryStepALoop();
    std::printf("loop ended\n");
    return 3;
  }
  if (argc > 1 && std::strcmp(argv[1], "epochs") == 0) {
    trainEpochs();
    std::printf("trained 3 epochs\n");
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "setup") == 0) {
    trainWithSetup();
    std::printf("loop ended\n");
    return 3;
  }
  if (argc > 1 && std::strcmp(argv[1], "held-optimizer") == 0) {
    trainHeldOptimizer(40);
    return 3;
  }
  if (argc > 1 && std::strcmp(argv[1], "conv") == 0)
    return trainConvolution(argc > 2 &&
                            std::strcmp(argv[2], "channels-last") == 0);
  if (argc > 1 && std::strcmp(argv[1], "syncs") == 0)
    return trainWithHostSyncs();
  if (argc > 1 && std::strcmp(argv[1], "evaluate") == 0)
    return trainThenEvaluate();
  if (argc > 2 && std::strcmp(argv[1], "own-size") == 0) {
    trainAtOwnSize(std::atoll(argv[2]));
    std::printf("trained 3 epochs\n");
    return 0;
  }
  bool Layers = argc > 1 && std::strcmp(argv[1], "layers") == 0;
  Layers ? trainLayers() : trainSequential(40);
  std::printf("loop ended with batch size %lld\n",
              static_cast<long long>(batchSize()));
  return 3;
}
