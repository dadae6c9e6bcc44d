// RUN: %expect-exit 1 %skyline-check --analyze-only %s -- %mock-flags > %t.out 2> %t.err
// RUN: FileCheck %s < %t.out
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: grep -c 'error: use of undeclared identifier' %t.err | FileCheck --check-prefix=SHOWN %s
// A header this machine lacks (OpenCV, another machine's path) is one error,
// not the end of the parse: the facts outside the broken code are found,
// the module's holder (a template) included, and no fix-it is written.
#include <opencv2/opencv.hpp>
// ERR: missing-header.cpp:[[@LINE-1]]:10: error: 'opencv2/opencv.hpp' file not found
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 2))) {}
  // CHECK-DAG: missing-header.cpp:[[@LINE-1]]:40: note: module 'fc' (torch::nn::Linear) constructed here, registered at {{.*}}missing-header.cpp:[[@LINE-1]] [skyline-module]
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(Net);

// Thirty errors: the first twenty are shown, as clang's own limit would.
void show(const cv::Mat &a0, const cv::Mat &a1, const cv::Mat &a2,
          const cv::Mat &a3, const cv::Mat &a4, const cv::Mat &a5,
          const cv::Mat &a6, const cv::Mat &a7, const cv::Mat &a8,
          const cv::Mat &a9, const cv::Mat &b0, const cv::Mat &b1,
          const cv::Mat &b2, const cv::Mat &b3, const cv::Mat &b4,
          const cv::Mat &b5, const cv::Mat &b6, const cv::Mat &b7,
          const cv::Mat &b8, const cv::Mat &b9, const cv::Mat &c0,
          const cv::Mat &c1, const cv::Mat &c2, const cv::Mat &c3,
          const cv::Mat &c4, const cv::Mat &c5, const cv::Mat &c6,
          const cv::Mat &c7, const cv::Mat &c8, const cv::Mat &c9);

int main() {
  const int64_t batch_size = 16;
  // CHECK-DAG: missing-header.cpp:[[@LINE-1]]:30: note: training batch size 'batch_size' = 16 (local-constant) [skyline-batch-size]
  Net net;
  // CHECK-DAG: missing-header.cpp:[[@LINE-1]]:7: note: module 'net' (Net) constructed here [skyline-module]
  torch::optim::SGD opt(net->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    net(torch::randn({batch_size, 4})).backward();
    opt.step();
  }
}
// CHECK: warning: the program does not compile here (31 errors, the first at {{.*}}missing-header.cpp:8: 'opencv2/opencv.hpp' file not found): the model holds what clang could read, and facts in the code it could not may be missing
// CHECK: 2 modules, 2 module calls, 1 training loop in 1 source
// ERR: skyline-check: note: errors past the first 20 are not shown
// ERR: skyline-check: error: the program does not compile; fix the errors above, or check the compile command (-p DIR or flags after --); the model above is what clang could read, and no fix-it was written
// SHOWN: {{^}}19{{$}}
