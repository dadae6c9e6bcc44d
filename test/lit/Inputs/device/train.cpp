// A program on the CPU whose larger batches fail as cuBLAS does when it
// cannot allocate its handle near a GPU's capacity (outside the caching
// allocator). OOM_MODE=uncaught lets the exception end the program;
// otherwise main catches it, prints it and returns 1.
#include <torch/torch.h>

#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

int main() {
  const int64_t batch_size = 16;
  torch::nn::Linear model(4, 1);
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(0.01));
  const char *Mode = std::getenv("OOM_MODE");
  try {
    for (int step = 0; step < 40; ++step) {
      optimizer.zero_grad();
      torch::Tensor x = torch::randn({batch_size, 4});
      if (batch_size > 16 && step == 1)
        throw std::runtime_error("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when "
                                 "calling `cublasCreate(handle)`");
      model(x).mean().backward();
      optimizer.step();
    }
  } catch (const std::exception &E) {
    if (Mode && std::string(Mode) == "uncaught")
      throw;
    std::cerr << "training failed: " << E.what() << std::endl;
    return 1;
  }
}
