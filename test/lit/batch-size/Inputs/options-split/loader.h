#pragma once
#include <boost/program_options.hpp>
#include <torch/torch.h>

// A data loader of the program's own: the batch size is a constructor
// argument, a batch comes out of operator() until the epoch ends.
class FolderLoader {
public:
  FolderLoader() = default;
  FolderLoader(const std::string &root, size_t batch_size_, bool shuffle_ = false);
  bool operator()(torch::Tensor &batch);
};

void train(boost::program_options::variables_map &vm, torch::nn::Linear &model);
