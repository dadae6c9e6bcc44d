#include "loader.h"

namespace po = boost::program_options;

po::options_description parse_arguments() {
  po::options_description args("Options");
  args.add_options()
      ("help", "produce help message")
      ("epochs", po::value<size_t>()->default_value(200), "training total epoch")
      ("batch_size", po::value<size_t>()->default_value(64), "training batch size")
      ("valid_batch_size", po::value<size_t>()->default_value(1), "validation batch size");
  return args;
}

int main() {
  po::options_description args = parse_arguments();
  po::variables_map vm;
  torch::nn::Linear model(4, 2);
  train(vm, model);
}
