// RUN: %skyline-check --analyze-only %s -- %mock-flags \
// RUN:   | FileCheck %s --implicit-check-not='(TextDataset)'
// TORCH_MODULE gives a dataset class a holder too: a holder of a class that
// is not a torch::nn::Module is no module, where it is built nor where a
// function returns one.
#include <torch/torch.h>

class TextDatasetImpl {
public:
  explicit TextDatasetImpl(const std::string &Root) {}
  torch::data::Example get(size_t) { return {}; }
};
TORCH_MODULE(TextDataset);

TextDataset load(const std::string &Root) { return TextDataset(Root); }

int main() {
  torch::nn::Linear fc(8, 2);
  // CHECK: dataset-holder.cpp:[[@LINE-1]]:21: note: module 'fc' (torch::nn::Linear) constructed here [skyline-module]
  TextDataset train("./data/");
  auto test = load("./data/");
  torch::optim::SGD opt(fc->parameters(), 0.1);
  for (int i = 0; i < 2; ++i) {
    fc(torch::randn({4, 8})).mean().backward();
    opt.step();
  }
}
// CHECK: 1 module, 1 module call
