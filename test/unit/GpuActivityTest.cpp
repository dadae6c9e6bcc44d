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
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#if __has_include(<cupti.h>)
#include <cupti.h>
#define SKYLINE_HAVE_CUPTI_HEADER 1
#endif

using namespace skyline::rt;

namespace {

/// Plays CUPTI at its C interface, as cupti_activity.h (CUDA 13.0) says the
/// real one behaves, behind the real CuptiActivityApi (Cupti.cpp): kinds are
/// enabled one by one; a launch makes an API record (kinds RUNTIME or DRIVER)
/// and, only when such a kind and EXTERNAL_CORRELATION are enabled and an id
/// is pushed on the launching thread, an external-correlation record in
/// front of it; a kernel record (CONCURRENT_KERNEL) carries the API record's
/// correlation id. Records wait in their own streams (API, kernels) until a
/// flush hands each stream to a buffer the runtime gives; a stream with no
/// buffer is dropped and counted.
namespace fake_cupti {
constexpr size_t KernelSize = 128, ExternalSize = 24, ApiSize = 40;

struct State {
  std::set<uint32_t> Enabled, Refused;
  cupti::BufferRequestFn Request = nullptr;
  cupti::BufferCompleteFn Complete = nullptr;
  std::vector<std::vector<uint8_t>> ApiStream, KernelStream;
  uint32_t LastCorrelation = 0;
  uint64_t Now = 0;
  size_t Dropped = 0;
  uint32_t LaunchKind = cupti_layout::KindRuntime; // LibTorch's launches
};
State &state() {
  static State S;
  return S;
}
thread_local std::vector<uint64_t> Pushed;

template <typename T> void put(std::vector<uint8_t> &Record, size_t At, T V) {
  std::memcpy(Record.data() + At, &V, sizeof(T));
}

bool enabled(uint32_t Kind) { return state().Enabled.count(Kind) > 0; }

cupti::Result enable(uint32_t Kind) {
  if (state().Refused.count(Kind))
    return 17; // CUPTI_ERROR_NOT_COMPATIBLE, say
  state().Enabled.insert(Kind);
  return cupti::Success;
}
cupti::Result disable(uint32_t Kind) {
  state().Enabled.erase(Kind);
  return cupti::Success;
}
cupti::Result registerCallbacks(cupti::BufferRequestFn Request,
                                cupti::BufferCompleteFn Complete) {
  state().Request = Request;
  state().Complete = Complete;
  return cupti::Success;
}
size_t recordSize(const uint8_t *Record) {
  uint32_t Kind;
  std::memcpy(&Kind, Record, 4);
  return Kind == cupti_layout::KindConcurrentKernel      ? KernelSize
         : Kind == cupti_layout::KindExternalCorrelation ? ExternalSize
                                                         : ApiSize;
}
cupti::Result nextRecord(uint8_t *Buffer, size_t Valid, void **Record) {
  size_t At = *Record ? size_t(static_cast<uint8_t *>(*Record) - Buffer) +
                            recordSize(static_cast<uint8_t *>(*Record))
                      : 0;
  if (At >= Valid)
    return cupti::ErrorMaxLimitReached;
  *Record = Buffer + At;
  return cupti::Success;
}
cupti::Result droppedRecords(void *, uint32_t, size_t *Dropped) {
  *Dropped = std::exchange(state().Dropped, 0);
  return cupti::Success;
}
void deliver(std::vector<std::vector<uint8_t>> &Stream) {
  if (Stream.empty())
    return;
  uint8_t *Buffer = nullptr;
  size_t Size = 0, MaxRecords = 0;
  state().Request(&Buffer, &Size, &MaxRecords);
  size_t Valid = 0;
  for (const std::vector<uint8_t> &Record : Stream) {
    if (!Buffer || Valid + Record.size() > Size) {
      ++state().Dropped;
      continue;
    }
    std::memcpy(Buffer + Valid, Record.data(), Record.size());
    Valid += Record.size();
  }
  Stream.clear();
  if (Buffer)
    state().Complete(nullptr, 0, Buffer, Size, Valid);
}
cupti::Result flushAll(uint32_t) {
  // Kernels first: records of different streams arrive in no set order.
  deliver(state().KernelStream);
  deliver(state().ApiStream);
  return cupti::Success;
}
cupti::Result push(uint32_t Kind, uint64_t Id) {
  if (Kind != cupti_layout::ExternalKindCustom0)
    return 2; // CUPTI_ERROR_INVALID_PARAMETER
  Pushed.push_back(Id);
  return cupti::Success;
}
cupti::Result pop(uint32_t, uint64_t *Last) {
  if (Pushed.empty())
    return 2;
  *Last = Pushed.back();
  Pushed.pop_back();
  return cupti::Success;
}
cupti::Result timestamp(uint64_t *Now) {
  *Now = state().Now;
  return cupti::Success;
}
cupti::Result resultString(cupti::Result, const char **Text) {
  *Text = "CUPTI_ERROR_NOT_COMPATIBLE";
  return cupti::Success;
}

/// A kernel launched now on the calling thread, running [Start, End).
void launch(uint64_t Start, uint64_t End) {
  State &S = state();
  uint32_t Correlation = ++S.LastCorrelation;
  if (enabled(S.LaunchKind)) {
    if (enabled(cupti_layout::KindExternalCorrelation) && !Pushed.empty()) {
      std::vector<uint8_t> Ext(ExternalSize);
      put(Ext, 0, cupti_layout::KindExternalCorrelation);
      put(Ext, cupti_layout::ExternalKind, cupti_layout::ExternalKindCustom0);
      put(Ext, cupti_layout::ExternalId, Pushed.back());
      put(Ext, cupti_layout::ExternalCorrelationId, Correlation);
      S.ApiStream.push_back(std::move(Ext));
    }
    std::vector<uint8_t> Api(ApiSize);
    put(Api, 0, S.LaunchKind);
    put(Api, cupti_layout::ApiStart, Start);
    put(Api, cupti_layout::ApiEnd, Start);
    put(Api, cupti_layout::ApiCorrelationId, Correlation);
    S.ApiStream.push_back(std::move(Api));
  }
  if (enabled(cupti_layout::KindConcurrentKernel)) {
    std::vector<uint8_t> Kernel(KernelSize);
    put(Kernel, 0, cupti_layout::KindConcurrentKernel);
    put(Kernel, cupti_layout::KernelStart, Start);
    put(Kernel, cupti_layout::KernelEnd, End);
    put(Kernel, cupti_layout::KernelCorrelationId, Correlation);
    S.KernelStream.push_back(std::move(Kernel));
  }
}

cupti::Functions functions() {
  return {&enable,
          &disable,
          &registerCallbacks,
          &nextRecord,
          &droppedRecords,
          &flushAll,
          &push,
          &pop,
          &timestamp,
          &resultString};
}
} // namespace fake_cupti

/// A fresh fake CUPTI and the real ActivityApi over it.
struct FakeCupti {
  FakeCupti() {
    fake_cupti::state() = fake_cupti::State();
    fake_cupti::Pushed.clear();
    Api = makeCuptiActivityApi(fake_cupti::functions());
  }
  void launch(uint64_t Start, uint64_t End) { fake_cupti::launch(Start, End); }
  void setNow(uint64_t Now) { fake_cupti::state().Now = Now; }
  std::unique_ptr<ActivityApi> Api;
};

TEST(GpuActivityTest, StartEnablesTheApiKindsExternalRecordsNeed) {
  FakeCupti Cupti;
  GpuTracer Tracer(*Cupti.Api);
  ASSERT_TRUE(Tracer.start()) << Cupti.Api->failure();
  const std::set<uint32_t> &On = fake_cupti::state().Enabled;
  EXPECT_TRUE(On.count(cupti_layout::KindRuntime));
  EXPECT_TRUE(On.count(cupti_layout::KindDriver));
  EXPECT_TRUE(On.count(cupti_layout::KindExternalCorrelation));
  EXPECT_TRUE(On.count(cupti_layout::KindConcurrentKernel));
  EXPECT_EQ(Cupti.Api->failure(), "");
  Tracer.finish(1);
  EXPECT_TRUE(On.empty()) << "stop disables every kind it enabled";
}

TEST(GpuActivityTest, TwoScopesGetTheirKernels) {
  FakeCupti Cupti;
  GpuTracer Tracer(*Cupti.Api);
  ASSERT_TRUE(Tracer.start());
  Cupti.setNow(1000);
  Tracer.beginMeasured();
  for (int Iteration = 0; Iteration < 2; ++Iteration) {
    uint64_t Base = 1000 + Iteration * 100000;
    Tracer.enterScope(0);
    Cupti.launch(Base, Base + 3000); // 3 us
    Tracer.exitScope();
    Tracer.enterScope(7);
    Cupti.launch(Base + 4000, Base + 5000); // 1 us
    Cupti.launch(Base + 5000, Base + 7000); // 2 us
    Tracer.exitScope();
  }
  Cupti.setNow(300000);
  Tracer.endMeasured();
  GpuTimes T = Tracer.finish(2);
  ASSERT_EQ(T.ScopeMs.size(), 2u);
  EXPECT_DOUBLE_EQ(T.ScopeMs[0], 0.003); // 3 us per iteration, in ms
  EXPECT_DOUBLE_EQ(T.ScopeMs[7], 0.003);
  EXPECT_DOUBLE_EQ(T.UnscopedMs, 0);
  EXPECT_EQ(T.Kernels, 6u);
  EXPECT_EQ(T.CorrelatedKernels, 6u);
  EXPECT_EQ(T.ApiRecords, 6u);
  EXPECT_EQ(T.ExternalRecords, 6u);
  EXPECT_EQ(unattributedNote(T, true), "");
  EXPECT_TRUE(fake_cupti::Pushed.empty()) << "every push popped";
}

TEST(GpuActivityTest, DriverLaunchesAreAttributedToo) {
  // A library that calls cuLaunchKernel itself: a DRIVER API record.
  FakeCupti Cupti;
  fake_cupti::state().LaunchKind = cupti_layout::KindDriver;
  GpuTracer Tracer(*Cupti.Api);
  ASSERT_TRUE(Tracer.start());
  Tracer.beginMeasured();
  Tracer.enterScope(2);
  Cupti.launch(0, 8000);
  Tracer.exitScope();
  Cupti.setNow(10000);
  Tracer.endMeasured();
  GpuTimes T = Tracer.finish(1);
  EXPECT_DOUBLE_EQ(T.ScopeMs[2], 0.008);
}

TEST(GpuActivityTest, OneApiKindRefusedStillAttributesWhatTheOtherCovers) {
  FakeCupti Cupti;
  fake_cupti::state().Refused = {cupti_layout::KindDriver};
  GpuTracer Tracer(*Cupti.Api);
  ASSERT_TRUE(Tracer.start());
  EXPECT_NE(Cupti.Api->failure().find("cuptiActivityEnable(DRIVER)"),
            std::string::npos)
      << Cupti.Api->failure();
  Tracer.beginMeasured();
  Tracer.enterScope(1);
  Cupti.launch(0, 1000); // through the runtime API
  Tracer.exitScope();
  Cupti.setNow(2000);
  Tracer.endMeasured();
  EXPECT_DOUBLE_EQ(Tracer.finish(1).ScopeMs[1], 0.001);
}

TEST(GpuActivityTest, NoApiKindMeansNoStart) {
  // Without API records CUPTI writes no external-correlation record: a
  // start would time kernels that can never find their scope.
  FakeCupti Cupti;
  fake_cupti::state().Refused = {cupti_layout::KindDriver,
                                 cupti_layout::KindRuntime};
  GpuTracer Tracer(*Cupti.Api);
  EXPECT_FALSE(Tracer.start());
  EXPECT_NE(Cupti.Api->failure().find("cuptiActivityEnable(RUNTIME) failed: "
                                      "CUPTI_ERROR_NOT_COMPATIBLE (17)"),
            std::string::npos)
      << Cupti.Api->failure();
  EXPECT_TRUE(fake_cupti::state().Enabled.empty());
}

TEST(GpuActivityTest, KernelsWithoutExternalRecordsGetANote) {
  // What the runtime saw before the API kinds were enabled: kernel records
  // only. Played by a CUPTI whose API records never come.
  FakeCupti Cupti;
  GpuTracer Tracer(*Cupti.Api);
  ASSERT_TRUE(Tracer.start());
  fake_cupti::state().Enabled.erase(cupti_layout::KindRuntime);
  fake_cupti::state().Enabled.erase(cupti_layout::KindDriver);
  Tracer.beginMeasured();
  Tracer.enterScope(3);
  Cupti.launch(0, 5000);
  Cupti.launch(5000, 6000);
  Tracer.exitScope();
  Cupti.setNow(10000);
  Tracer.endMeasured();
  GpuTimes T = Tracer.finish(1);
  EXPECT_TRUE(T.ScopeMs.empty());
  EXPECT_DOUBLE_EQ(T.UnscopedMs, 0.006);
  EXPECT_EQ(T.CorrelatedKernels, 0u);
  EXPECT_EQ(unattributedNote(T, true),
            "CUPTI timed 2 kernels but none could be attributed to a layer (0 "
            "API records, 0 external-correlation records): the layers' gpu_ms "
            "is unknown, not 0, and the (unscoped) row holds every kernel");
  EXPECT_EQ(unattributedNote(T, false), "") << "a program with no scopes";
}

TEST(GpuActivityTest, NoKernelRecordsAtAllGetANote) {
  // CUPTI started, API and external records came, but no kernel record (a
  // CUPTI that never writes them): the layers' 0 would be silently wrong.
  FakeCupti Cupti;
  GpuTracer Tracer(*Cupti.Api);
  ASSERT_TRUE(Tracer.start());
  fake_cupti::state().Enabled.erase(cupti_layout::KindConcurrentKernel);
  Tracer.beginMeasured();
  Tracer.enterScope(3);
  Cupti.launch(0, 5000);
  Tracer.exitScope();
  Cupti.setNow(10000);
  Tracer.endMeasured();
  GpuTimes T = Tracer.finish(1);
  EXPECT_EQ(T.Kernels, 0u);
  EXPECT_EQ(unattributedNote(T, true),
            "CUPTI delivered no kernel records for the measured iterations (1 "
            "API records, 1 external-correlation records, 0 dropped): every "
            "row's gpu_ms is unknown, not 0");
  EXPECT_EQ(unattributedNote(T, false), "") << "a program with no scopes";
}

TEST(GpuActivityTest, InnermostScopeGetsTheKernel) {
  FakeCupti Cupti;
  GpuTracer Tracer(*Cupti.Api);
  ASSERT_TRUE(Tracer.start());
  Tracer.beginMeasured();
  Tracer.enterScope(1); // the model
  Cupti.launch(10, 20);
  Tracer.enterScope(2); // a layer inside it
  Cupti.launch(20, 60);
  Tracer.exitScope();
  Cupti.launch(60, 65);
  Tracer.exitScope();
  Cupti.setNow(100);
  Tracer.endMeasured();
  GpuTimes T = Tracer.finish(1);
  EXPECT_DOUBLE_EQ(T.ScopeMs[1], 15e-6);
  EXPECT_DOUBLE_EQ(T.ScopeMs[2], 40e-6);
}

TEST(GpuActivityTest, EpochEndIterationsCountInTheWindowsDivisor) {
  // 4 measured iterations, one of which spans an epoch's end: CUPTI's
  // window holds the kernels of all 4, so the per-iteration time divides by
  // 4 (the window, as the layers' CPU times do), not by the 3 kept.
  RunResult R;
  R.Iterations = 3;
  R.EpochEndIterations = 1;
  ASSERT_EQ(windowIterations(R), 4);
  FakeCupti Cupti;
  GpuTracer Tracer(*Cupti.Api);
  ASSERT_TRUE(Tracer.start());
  Cupti.setNow(1000);
  Tracer.beginMeasured();
  for (int Iteration = 0; Iteration < 4; ++Iteration) {
    uint64_t Base = 1000 + Iteration * 10000;
    Tracer.enterScope(2);
    Cupti.launch(Base, Base + 2000); // 2 us
    Tracer.exitScope();
  }
  Cupti.setNow(50000);
  Tracer.endMeasured();
  GpuTimes T = Tracer.finish(windowIterations(R));
  EXPECT_DOUBLE_EQ(T.ScopeMs[2], 0.002);
  RunResult Kept; // no epoch end: every iteration is kept
  Kept.Iterations = 4;
  EXPECT_EQ(windowIterations(Kept), 4);
}

TEST(GpuActivityTest, KernelsOutsideTheMeasuredIterationsAreIgnored) {
  FakeCupti Cupti;
  GpuTracer Tracer(*Cupti.Api);
  ASSERT_TRUE(Tracer.start());
  Tracer.enterScope(3);
  Cupti.launch(100, 900); // warm-up
  Tracer.exitScope();
  Cupti.setNow(1000);
  Tracer.beginMeasured();
  Tracer.enterScope(3);
  Cupti.launch(1000, 1500);
  Tracer.exitScope();
  Cupti.setNow(2000);
  Tracer.endMeasured();
  Tracer.enterScope(3);
  Cupti.launch(2000, 2600); // after the last boundary
  Tracer.exitScope();
  GpuTimes T = Tracer.finish(1);
  EXPECT_DOUBLE_EQ(T.ScopeMs[3], 500e-6);
  EXPECT_EQ(T.Kernels, 1u);
}

TEST(GpuActivityTest, UnknownCorrelationIsUnscoped) {
  FakeCupti Cupti;
  GpuTracer Tracer(*Cupti.Api);
  ASSERT_TRUE(Tracer.start());
  Tracer.beginMeasured();
  Cupti.launch(0, 4000); // outside every scope: no external record
  Tracer.enterScope(-1); // a backward op of no known scope pushes id 0
  Cupti.launch(4000, 5000);
  Tracer.exitScope();
  Cupti.setNow(10000);
  Tracer.endMeasured();
  GpuTimes T = Tracer.finish(2);
  EXPECT_TRUE(T.ScopeMs.empty());
  EXPECT_DOUBLE_EQ(T.UnscopedMs, 0.0025); // 5 us over 2 iterations
  EXPECT_EQ(T.CorrelatedKernels, 1u);
  EXPECT_EQ(unattributedNote(T, true), "") << "one kernel found its record";
}

TEST(GpuActivityTest, FullBuffersDropRecordsAndSayHowMany) {
  FakeCupti Cupti;
  GpuTracer Tracer(*Cupti.Api);
  ASSERT_TRUE(Tracer.start());
  Tracer.beginMeasured();
  Tracer.enterScope(0);
  // 1 MiB buffers of 128-byte kernel records: 8,192 fit, the rest drop.
  for (uint64_t I = 0; I < 8200; ++I)
    Cupti.launch(I * 10, I * 10 + 10);
  Tracer.exitScope();
  Cupti.setNow(1000000);
  Tracer.endMeasured();
  GpuTimes T = Tracer.finish(1);
  EXPECT_EQ(T.Kernels, 8192u);
  EXPECT_EQ(T.DroppedRecords, 8u);
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
  FakeCupti Cupti;
  GpuTracer Tracer(*Cupti.Api);
  ASSERT_TRUE(Tracer.start());
  fake_cupti::Pushed.push_back(99); // someone else's id
  Tracer.exitScope();
  EXPECT_EQ(fake_cupti::Pushed.size(), 1u);
  Tracer.finish(1);
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
  EXPECT_EQ(cupti_layout::KindDriver, uint32_t(CUPTI_ACTIVITY_KIND_DRIVER));
  EXPECT_EQ(cupti_layout::KindRuntime, uint32_t(CUPTI_ACTIVITY_KIND_RUNTIME));
  EXPECT_EQ(cupti_layout::ApiStart, offsetof(CUpti_ActivityAPI, start));
  EXPECT_EQ(cupti_layout::ApiEnd, offsetof(CUpti_ActivityAPI, end));
  EXPECT_EQ(cupti_layout::ApiCorrelationId,
            offsetof(CUpti_ActivityAPI, correlationId));
  EXPECT_EQ(cupti::ErrorMaxLimitReached, int(CUPTI_ERROR_MAX_LIMIT_REACHED));
}
#endif

TEST(GpuActivityTest, OutOfMemoryMessagesOfTheDeviceAndItsLibraries) {
  // c10::OutOfMemoryError's, the CUDA runtime's, cuBLAS's and cuDNN's own.
  EXPECT_TRUE(saysOutOfMemory("CUDA out of memory. Tried to allocate 2.00 GiB "
                              "(GPU 0; 79.10 GiB total capacity)"));
  EXPECT_TRUE(saysOutOfMemory("CUDA error: out of memory\nCUDA kernel errors "
                              "might be asynchronously reported"));
  EXPECT_TRUE(saysOutOfMemory("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when "
                              "calling `cublasCreate(handle)`"));
  EXPECT_TRUE(saysOutOfMemory("cuDNN error: CUDNN_STATUS_ALLOC_FAILED"));
  EXPECT_FALSE(saysOutOfMemory("CUDA error: CUBLAS_STATUS_EXECUTION_FAILED"));
  EXPECT_FALSE(saysOutOfMemory("mat1 and mat2 shapes cannot be multiplied"));
}

TEST(GpuActivityTest, WorkspaceComesOutOfActivationsTemporariesAndLayers) {
  RunResult R;
  R.Memory.Weights = 100;
  R.Memory.Activations = 1000;
  R.Memory.Temporaries = 300;
  R.Layers = {{0, 0, 0, 700, 0}, {1, 0, 0, 200, 0}, {-1, 0, 0, 100, 0}};
  WorkspaceBytes W;
  W.Bytes = 600;
  W.ByPhase[size_t(Phase::Forward)] = 500; // cuBLAS's, in scope 0's forward
  W.ForwardByScope[0] = 500;
  W.ByPhase[size_t(Phase::Backward)] = 100; // autograd's thread's
  takeOutWorkspace(R, W);
  EXPECT_EQ(R.Memory.Workspace, 600);
  EXPECT_EQ(R.Memory.Activations, 500);
  EXPECT_EQ(R.Memory.Temporaries, 200);
  EXPECT_EQ(R.Layers[0].ActivationBytes, 200);
  EXPECT_EQ(R.Layers[1].ActivationBytes, 200);
  EXPECT_EQ(R.Layers[2].ActivationBytes, 100) << "the rows add up to 500";
  const RunResult::Breakdown &M = R.Memory;
  EXPECT_EQ(M.Weights + M.Activations + M.Temporaries + M.Workspace, 1400)
      << "the kinds' sum is the peak still";
}

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
  EXPECT_EQ(R.Cuda, CudaUse::Hidden);
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
  EXPECT_GT(T.CorrelatedKernels, 0u) << "external records need the API kinds";
  EXPECT_GT(T.ScopeMs[4], 0.0);
}

} // namespace
