// A small transformer text classifier trained for a few epochs on a short
// synthetic dataset, with an evaluation after each epoch: the shape of many
// fine-tuning programs. The batch size is a field default of the run's
// configuration; an epoch's last batch is a short one (2,048 samples).
#include <torch/torch.h>

#include <cstdio>

struct TrainConfig {
  int64_t vocab_size = 1000;
  int64_t sequence_length = 32;
  int64_t model_dim = 64;
  int64_t heads = 4;
  int64_t classes = 10;
  int64_t batch_size = 16;
  double learning_rate = 3e-4;
  int epochs = 2;
};

/// Token sequences whose class is their first token's, modulo the classes.
class TokenDataset : public torch::data::datasets::Dataset<TokenDataset> {
public:
  TokenDataset(int64_t samples, const TrainConfig &config)
      : tokens_(torch::randint(0, config.vocab_size,
                               {samples, config.sequence_length})),
        labels_(tokens_.select(1, 0) % config.classes) {}

  torch::data::Example<> get(size_t index) override {
    return {tokens_[index], labels_[index]};
  }
  torch::optional<size_t> size() const override { return tokens_.size(0); }

private:
  torch::Tensor tokens_, labels_;
};

struct ClassifierImpl : torch::nn::Module {
  explicit ClassifierImpl(const TrainConfig &config)
      : embedding(register_module(
            "embedding",
            torch::nn::Embedding(config.vocab_size, config.model_dim))),
        encoder(register_module(
            "encoder",
            torch::nn::TransformerEncoder(torch::nn::TransformerEncoderOptions(
                torch::nn::TransformerEncoderLayerOptions(config.model_dim,
                                                          config.heads)
                    .dim_feedforward(128),
                2)))),
        head(register_module(
            "head", torch::nn::Linear(config.model_dim, config.classes))) {}

  torch::Tensor forward(torch::Tensor tokens) {
    auto x = embedding(tokens).transpose(0, 1); // (sequence, batch, feature)
    x = encoder(x);
    return head(x.mean(0));
  }

  torch::nn::Embedding embedding;
  torch::nn::TransformerEncoder encoder;
  torch::nn::Linear head;
};
TORCH_MODULE(Classifier);

double evaluate(Classifier &model, const TrainConfig &config) {
  torch::NoGradGuard no_grad;
  model->eval();
  auto tokens =
      torch::randint(0, config.vocab_size, {256, config.sequence_length});
  auto labels = tokens.select(1, 0) % config.classes;
  auto predicted = model->forward(tokens).argmax(1);
  model->train();
  return predicted.eq(labels).to(torch::kFloat).mean().item<double>();
}

int main() {
  torch::manual_seed(0);
  TrainConfig config;
  Classifier model(config);
  auto loader =
      torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
          TokenDataset(2048, config).map(torch::data::transforms::Stack<>()),
          torch::data::DataLoaderOptions().batch_size(config.batch_size));
  torch::optim::AdamW optimizer(
      model->parameters(),
      torch::optim::AdamWOptions(config.learning_rate).weight_decay(0.01));
  for (int epoch = 0; epoch < config.epochs; ++epoch) {
    double total_loss = 0;
    int64_t steps = 0;
    for (auto &batch : *loader) {
      if (epoch == 0 && steps == 0)
        std::printf("batch size: %lld\n",
                    static_cast<long long>(batch.data.size(0)));
      optimizer.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(
          model->forward(batch.data), batch.target);
      loss.backward();
      torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      optimizer.step();
      total_loss += loss.item<double>();
      ++steps;
    }
    std::printf("epoch %d: loss %.4f, accuracy %.3f\n", epoch,
                total_loss / steps, evaluate(model, config));
  }
}
