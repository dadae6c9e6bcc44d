// Kernel time per scope, behind the ActivityApi seam: a fake API fed
// hand-made launches checks the attribution to exact numbers on the CPU;
// the CUPTI loader fails cleanly where the library is absent; CUDA itself is
// tried only where a GPU is (GTEST_SKIP elsewhere).

#include "skyline/runtime/GpuActivity.h"
#include "skyline/runtime/CudaSupport.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#if __has_include(<cupti.h>)
#include <cupti.h>
#define SKYLINE_HAVE_CUPTI_HEADER 1
#endif

using namespace skyline::rt;

namespace {

/// Plays CUPTI: a stack of external ids, launches stamped with the top one,
/// records held until flush, a clock the test sets.
class FakeActivityApi final : public ActivityApi {
public:
  bool start(ActivitySink &S) override {
    if (RefuseStart)
      return false;
    Sink = &S;
    return true;
  }
  void stop() override {
    flush();
    Sink = nullptr;
  }
  void flush() override {
    if (!Sink)
      return;
    for (const KernelRecord &K : PendingKernels)
      Sink->onKernel(K);
    for (const ExternalCorrelationRecord &E : PendingExternal)
      Sink->onExternalCorrelation(E);
    PendingKernels.clear();
    PendingExternal.clear();
  }
  void pushExternalCorrelation(uint64_t Id) noexcept override {
    Stack.push_back(Id);
  }
  void popExternalCorrelation() noexcept override {
    if (!Stack.empty())
      Stack.pop_back();
  }
  uint64_t timestampNs() noexcept override { return Now; }
  std::string failure() const override { return RefuseStart ? "refused" : ""; }

  /// A kernel launched now on the calling thread, running [Start, End).
  void launch(uint64_t Start, uint64_t End) {
    uint32_t Correlation = ++LastCorrelation;
    PendingKernels.push_back({Correlation, Start, End});
    if (!Stack.empty())
      PendingExternal.push_back({Correlation, Stack.back()});
  }

  uint64_t Now = 0;
  bool RefuseStart = false;
  std::vector<uint64_t> Stack;

private:
  ActivitySink *Sink = nullptr;
  std::vector<KernelRecord> PendingKernels;
  std::vector<ExternalCorrelationRecord> PendingExternal;
  uint32_t LastCorrelation = 0;
};

TEST(GpuActivityTest, TwoScopesGetTheirKernels) {
  FakeActivityApi Api;
  GpuTracer Tracer(Api);
  ASSERT_TRUE(Tracer.start());
  Api.Now = 1000;
  Tracer.beginMeasured();
  for (int Iteration = 0; Iteration < 2; ++Iteration) {
    uint64_t Base = 1000 + Iteration * 100000;
    Tracer.enterScope(0);
    Api.launch(Base, Base + 3000); // 3 us
    Tracer.exitScope();
    Tracer.enterScope(7);
    Api.launch(Base + 4000, Base + 5000); // 1 us
    Api.launch(Base + 5000, Base + 7000); // 2 us
    Tracer.exitScope();
  }
  Api.Now = 300000;
  Tracer.endMeasured();
  GpuTimes T = Tracer.finish(2);
  ASSERT_EQ(T.ScopeMs.size(), 2u);
  EXPECT_DOUBLE_EQ(T.ScopeMs[0], 0.003); // 3 us per iteration, in ms
  EXPECT_DOUBLE_EQ(T.ScopeMs[7], 0.003);
  EXPECT_DOUBLE_EQ(T.UnscopedMs, 0);
  EXPECT_EQ(T.Kernels, 6u);
  EXPECT_TRUE(Api.Stack.empty()) << "every push popped";
}

TEST(GpuActivityTest, InnermostScopeGetsTheKernel) {
  FakeActivityApi Api;
  GpuTracer Tracer(Api);
  ASSERT_TRUE(Tracer.start());
  Tracer.beginMeasured();
  Tracer.enterScope(1); // the model
  Api.launch(10, 20);
  Tracer.enterScope(2); // a layer inside it
  Api.launch(20, 60);
  Tracer.exitScope();
  Api.launch(60, 65);
  Tracer.exitScope();
  Api.Now = 100;
  Tracer.endMeasured();
  GpuTimes T = Tracer.finish(1);
  EXPECT_DOUBLE_EQ(T.ScopeMs[1], 15e-6);
  EXPECT_DOUBLE_EQ(T.ScopeMs[2], 40e-6);
}

TEST(GpuActivityTest, KernelsOutsideTheMeasuredIterationsAreIgnored) {
  FakeActivityApi Api;
  GpuTracer Tracer(Api);
  ASSERT_TRUE(Tracer.start());
  Tracer.enterScope(3);
  Api.launch(100, 900); // warm-up
  Tracer.exitScope();
  Api.Now = 1000;
  Tracer.beginMeasured();
  Tracer.enterScope(3);
  Api.launch(1000, 1500);
  Tracer.exitScope();
  Api.Now = 2000;
  Tracer.endMeasured();
  Tracer.enterScope(3);
  Api.launch(2000, 2600); // after the last boundary
  Tracer.exitScope();
  GpuTimes T = Tracer.finish(1);
  EXPECT_DOUBLE_EQ(T.ScopeMs[3], 500e-6);
  EXPECT_EQ(T.Kernels, 1u);
}

TEST(GpuActivityTest, UnknownCorrelationIsUnscoped) {
  FakeActivityApi Api;
  GpuTracer Tracer(Api);
  ASSERT_TRUE(Tracer.start());
  Tracer.beginMeasured();
  Api.launch(0, 4000);   // outside every scope: no external record
  Tracer.enterScope(-1); // a backward op of no known scope pushes id 0
  Api.launch(4000, 5000);
  Tracer.exitScope();
  Api.Now = 10000;
  Tracer.endMeasured();
  GpuTimes T = Tracer.finish(2);
  EXPECT_TRUE(T.ScopeMs.empty());
  EXPECT_DOUBLE_EQ(T.UnscopedMs, 0.0025); // 5 us over 2 iterations
}

TEST(GpuActivityTest, AggregationJoinsRecordsInAnyOrder) {
  // CUPTI delivers external correlations and kernels in separate buffers.
  GpuScopeTimes Times;
  Times.onExternalCorrelation({42, GpuScopeTimes::externalId(5)});
  Times.onKernel({41, 0, 1000000});
  Times.onKernel({42, 0, 2000000});
  Times.onExternalCorrelation({41, GpuScopeTimes::externalId(5)});
  Times.onDropped(3);
  GpuTimes T = Times.times(3);
  EXPECT_DOUBLE_EQ(T.ScopeMs[5], 1.0); // 3 ms over 3 iterations
  EXPECT_EQ(T.DroppedRecords, 3u);
}

TEST(GpuActivityTest, ExitWithoutEntryPopsNothing) {
  // Tracing that begins inside a scope sees its exit only.
  FakeActivityApi Api;
  GpuTracer Tracer(Api);
  ASSERT_TRUE(Tracer.start());
  Api.Stack.push_back(99); // someone else's id
  Tracer.exitScope();
  EXPECT_EQ(Api.Stack.size(), 1u);
}

TEST(GpuActivityTest, CuptiLoaderFailsCleanlyWhenAbsent) {
  std::string Failure;
  auto Api = loadCupti({"/nonexistent/skyline/libcupti.so"}, Failure);
  EXPECT_EQ(Api, nullptr);
  EXPECT_NE(Failure.find("CUPTI could not be loaded"), std::string::npos)
      << Failure;
  EXPECT_NE(Failure.find("/nonexistent/skyline/libcupti.so"), std::string::npos)
      << Failure;
}

TEST(GpuActivityTest, CuptiLoaderSaysWhichSymbolsAreMissing) {
  std::string Failure;
  // A library that loads but is not CUPTI.
  auto Api = loadCupti({"libc.so.6"}, Failure);
  EXPECT_EQ(Api, nullptr);
  EXPECT_NE(Failure.find("lacks cuptiActivityEnable"), std::string::npos)
      << Failure;
}

TEST(GpuActivityTest, CuptiCandidatesStartWithTheOverride) {
  setenv("SKYLINE_CUPTI_LIBRARY", "/opt/x/libcupti.so.13", 1);
  std::vector<std::string> Paths = cuptiCandidates();
  unsetenv("SKYLINE_CUPTI_LIBRARY");
  ASSERT_FALSE(Paths.empty());
  EXPECT_EQ(Paths.front(), "/opt/x/libcupti.so.13");
  EXPECT_NE(std::find(Paths.begin(), Paths.end(),
                      "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"),
            Paths.end());
}

#ifdef SKYLINE_HAVE_CUPTI_HEADER
TEST(GpuActivityTest, RecordLayoutMatchesCuptiHeader) {
  EXPECT_EQ(cupti_layout::KindConcurrentKernel,
            uint32_t(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  EXPECT_EQ(cupti_layout::KindExternalCorrelation,
            uint32_t(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
  EXPECT_EQ(cupti_layout::ExternalKindCustom0,
            uint32_t(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0));
  EXPECT_EQ(cupti_layout::ExternalKind,
            offsetof(CUpti_ActivityExternalCorrelation, externalKind));
  EXPECT_EQ(cupti_layout::ExternalId,
            offsetof(CUpti_ActivityExternalCorrelation, externalId));
  EXPECT_EQ(cupti_layout::ExternalCorrelationId,
            offsetof(CUpti_ActivityExternalCorrelation, correlationId));
#if CUPTI_API_VERSION >= 130000
  using Kernel = CUpti_ActivityKernel10;
#else
  using Kernel = CUpti_ActivityKernel9;
#endif
  EXPECT_EQ(cupti_layout::KernelStart, offsetof(Kernel, start));
  EXPECT_EQ(cupti_layout::KernelEnd, offsetof(Kernel, end));
  EXPECT_EQ(cupti_layout::KernelCorrelationId, offsetof(Kernel, correlationId));
}
#endif

TEST(GpuActivityTest, HiddenCudaTouchesNothing) {
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  EXPECT_TRUE(cuda::hiddenByEnvironment());
  for (int Index = 0; Index < 4; ++Index) {
    cuda::iterationBegin(Index, 2, true, nullptr);
    cuda::scopeEnter(0);
    cuda::scopeExit();
  }
  RunResult R;
  cuda::describeDevice(R);
  cuda::completeLayers(R);
  unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(R.DeviceType, "cpu");
  EXPECT_FALSE(R.Gpu.Used);
  // (LibTorch's Kineto may link libcupti: what matters is that the run
  // started no CUPTI session of its own.)
  EXPECT_FALSE(cuda::cuptiStarted()) << "CUPTI is started only on CUDA runs";
}

TEST(GpuActivityTest, RealCuptiAttributesAKernel) {
  if (!torch::cuda::is_available())
    GTEST_SKIP() << "no CUDA device";
  std::string Failure;
  auto Api = loadCupti(cuptiCandidates(), Failure);
  if (!Api)
    GTEST_SKIP() << Failure;
  GpuTracer Tracer(*Api);
  ASSERT_TRUE(Tracer.start()) << Api->failure();
  torch::Tensor A = torch::randn({1024, 1024}, torch::kCUDA);
  torch::cuda::synchronize();
  Tracer.beginMeasured();
  Tracer.enterScope(4);
  torch::Tensor B = A.matmul(A);
  Tracer.exitScope();
  torch::cuda::synchronize();
  Tracer.endMeasured();
  GpuTimes T = Tracer.finish(1);
  EXPECT_GT(T.Kernels, 0u);
  EXPECT_GT(T.ScopeMs[4], 0.0);
}

} // namespace
