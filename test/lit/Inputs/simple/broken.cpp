#include <torch/torch.h>

int main() {
  torch::nn::Linear model(3, 1)
  return undeclared_variable;
}
