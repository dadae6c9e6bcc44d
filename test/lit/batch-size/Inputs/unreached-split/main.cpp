#include <torch/torch.h>

#include "config.h"

extern int day_4(TrainConfig config);

int main() {
  TrainConfig config;
  config.iter = 1500;
  return day_4(config);
}
