// A word-level LSTM language model (embedding, two-layer LSTM, decoder) in the
// shape of PyTorch's word_language_model, trained with truncated BPTT on a
// synthetic corpus that it generates: a noisy cyclic token sequence, so the
// loss has something to learn.
#include <torch/torch.h>

#include <iostream>

#define BATCH_SIZE 20
#define SEQ_LEN 35

constexpr int64_t kVocabSize = 200;
constexpr int64_t kEmbeddingSize = 64;
constexpr int64_t kHiddenSize = 128;
constexpr int64_t kNumLayers = 2;
constexpr int kIterations = 6;

struct LanguageModelImpl : torch::nn::Module {
  LanguageModelImpl()
      : embedding(kVocabSize, kEmbeddingSize),
        lstm(torch::nn::LSTMOptions(kEmbeddingSize, kHiddenSize)
                 .num_layers(kNumLayers)
                 .batch_first(true)),
        dropout(0.2),
        decoder(kHiddenSize, kVocabSize) {
    register_module("embedding", embedding);
    register_module("lstm", lstm);
    register_module("dropout", dropout);
    register_module("decoder", decoder);
  }

  torch::Tensor forward(torch::Tensor tokens) {
    auto embedded = dropout(embedding(tokens));
    auto output = std::get<0>(lstm->forward(embedded));
    return decoder->forward(dropout->forward(output));
  }

  torch::nn::Embedding embedding;
  torch::nn::LSTM lstm;
  torch::nn::Dropout dropout;
  torch::nn::Linear decoder;
};
TORCH_MODULE(LanguageModel);

/// A batch of sequences from the synthetic corpus: token t+1 follows token t
/// with probability 0.9.
torch::Tensor sample_sequences(int64_t batch, int64_t length) {
  auto start = torch::randint(0, kVocabSize, {batch, 1});
  auto steps = torch::arange(length + 1).unsqueeze(0);
  auto noise = (torch::rand({batch, length + 1}) < 0.1).to(torch::kLong) *
               torch::randint(0, kVocabSize, {batch, length + 1});
  return (start + steps + noise).remainder(kVocabSize);
}

int main() {
  torch::manual_seed(0);
  LanguageModel model;
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  model->train();
  for (int iteration = 0; iteration < kIterations; ++iteration) {
    auto sequences = sample_sequences(BATCH_SIZE, SEQ_LEN);
    auto inputs = sequences.narrow(1, 0, SEQ_LEN);
    auto targets = sequences.narrow(1, 1, SEQ_LEN);
    if (iteration == 0)
      std::cout << "batch size: " << inputs.size(0) << std::endl;
    optimizer.zero_grad();
    auto logits = model->forward(inputs);
    auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, kVocabSize}),
                                                     targets.reshape({-1}));
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 0.25);
    optimizer.step();
    std::cout << "iteration " << iteration << " loss " << loss.item<float>() << std::endl;
  }
}
