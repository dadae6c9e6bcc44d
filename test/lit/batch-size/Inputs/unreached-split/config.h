#pragma once
struct TrainConfig {
  int batch_size = 64;
  int iter = 1000;
};
