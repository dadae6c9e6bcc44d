// The device memory reporter on the CPU, with the real LibTorch: installed
// for DeviceType::CPU (without the CPU allocator wrapper) it gets c10's
// default CPU allocator's reports, so its tagging is checked to the byte on
// real tensors; installed for CUDA it is fed the reports the caching
// allocator makes, through the same c10 entry point
// (c10::reportMemoryUsageToProfiler), which needs no GPU.

#include "skyline/runtime/DeviceMemoryReporter.h"
#include "skyline/runtime/MemoryTracker.h"

#include <ATen/ThreadLocalState.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/torch.h>

#include "CountingNew.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <thread>
#include <vector>

using counting_new::AllocationsOnThread;

using namespace skyline::rt;

namespace {

constexpr int64_t MiB4 = 1024 * 1024 * 4; // 1024 x 1024 floats

class DeviceMemoryReporterTest : public ::testing::Test {
protected:
  void TearDown() override {
    TaggedBytes::setPhase(Phase::Construction);
    TaggedBytes::setThreadScope(-1);
  }

  static std::shared_ptr<DeviceMemoryReporter>
  reporter(c10::DeviceType Type, size_t Slots = size_t(1) << 16) {
    return std::make_shared<DeviceMemoryReporter>(Type, Slots);
  }

  /// What the CUDA caching allocator reports for a block (no GPU needed:
  /// the c10 function only forwards to the thread's reporter).
  static void cudaBlock(uintptr_t Ptr, int64_t Bytes) {
    c10::reportMemoryUsageToProfiler(reinterpret_cast<void *>(Ptr), Bytes, 0, 0,
                                     c10::Device(c10::DeviceType::CUDA, 0));
  }
};

TEST_F(DeviceMemoryReporterTest, CpuTensorsTaggedToTheByte) {
  auto Reporter = reporter(c10::DeviceType::CPU);
  c10::DebugInfoGuard Installed(c10::DebugInfoKind::PROFILER_STATE, Reporter);
  ASSERT_TRUE(c10::memoryProfilingEnabled()) << "a CPU reporter asks for them";
  const TaggedBytes &Bytes = Reporter->bytes();

  TaggedBytes::setPhase(Phase::Forward);
  TaggedBytes::setThreadScope(3);
  auto Activation = torch::empty({1024, 1024}, torch::kFloat);
  TaggedBytes::setThreadScope(-1);
  EXPECT_EQ(Bytes.liveBytes(), MiB4);
  EXPECT_EQ(Bytes.liveByPhase()[size_t(Phase::Forward)], MiB4);
  EXPECT_EQ(Bytes.liveForwardByScope()[3], MiB4);

  TaggedBytes::setPhase(Phase::Backward);
  auto Gradient = torch::empty({512}, torch::kFloat); // 2 KiB
  EXPECT_EQ(Bytes.liveByPhase()[size_t(Phase::Backward)], 2048);
  EXPECT_EQ(Bytes.liveForwardByScope()[3], MiB4) << "not an activation";
  EXPECT_EQ(Bytes.peakBytes(), MiB4 + 2048);

  Activation = at::Tensor(); // freed: leaves the live total
  EXPECT_EQ(Bytes.liveBytes(), 2048);
  EXPECT_EQ(Bytes.liveForwardByScope()[3], 0);
  EXPECT_EQ(Bytes.peakForwardByScope()[3], MiB4) << "the peak's snapshot";
  EXPECT_EQ(Bytes.peakByPhase()[size_t(Phase::Forward)], MiB4);
  Gradient = at::Tensor();
  EXPECT_EQ(Bytes.liveBytes(), 0);
  EXPECT_EQ(Reporter->unknownFrees(), 0u);
}

TEST_F(DeviceMemoryReporterTest, OnlyTheThreadsThatSeeItReport) {
  auto Reporter = reporter(c10::DeviceType::CPU);
  c10::DebugInfoGuard Installed(c10::DebugInfoKind::PROFILER_STATE, Reporter);
  at::Tensor Plain, Propagated;
  std::thread([&] { Plain = torch::empty({1024}, torch::kFloat); }).join();
  EXPECT_EQ(Reporter->bytes().liveBytes(), 0)
      << "a thread of its own (a DataLoader worker) does not see it";
  // What autograd's engine does on its worker threads around each node.
  at::ThreadLocalState Caller;
  std::thread([&] {
    at::ThreadLocalStateGuard Guard(Caller);
    Propagated = torch::empty({1024}, torch::kFloat);
  }).join();
  EXPECT_EQ(Reporter->bytes().liveBytes(), 4096)
      << "at::ThreadLocalState carries the debug info";
}

TEST_F(DeviceMemoryReporterTest, CudaReporterLeavesTheCpuAlone) {
  auto Reporter = reporter(c10::DeviceType::CUDA);
  c10::DebugInfoGuard Installed(c10::DebugInfoKind::PROFILER_STATE, Reporter);
  EXPECT_FALSE(c10::memoryProfilingEnabled())
      << "the CPU allocator's own size table stays off";
  auto OnCpu = torch::empty({1024, 1024}, torch::kFloat);
  EXPECT_EQ(Reporter->bytes().liveBytes(), 0);
  // The CUDA allocator's reports arrive whatever memoryProfilingEnabled()
  // says (c10::reportMemoryUsageToProfiler does not ask it).
  cudaBlock(0x7f0000000000, 1 << 20);
  EXPECT_EQ(Reporter->bytes().liveBytes(), 1 << 20);
  c10::reportMemoryUsageToProfiler(reinterpret_cast<void *>(0x1000), 512, 0, 0,
                                   c10::Device(c10::DeviceType::CPU));
  EXPECT_EQ(Reporter->bytes().liveBytes(), 1 << 20) << "a CPU report ignored";
  cudaBlock(0x7f0000000000, -(1 << 20));
  EXPECT_EQ(Reporter->bytes().liveBytes(), 0);
}

TEST_F(DeviceMemoryReporterTest, WithTheCpuWrapperACpuReporterWouldCountTwice) {
  // MemoryTracker wraps c10's default CPU allocator, which reports the
  // wrapper's blocks (its 64-byte header included): a CPU reporter in a run
  // would count CPU memory a second time. A run installs it for CUDA only.
  MemoryTracker &Tracker = MemoryTracker::install();
  int64_t TrackerBefore = Tracker.liveBytes();
  {
    auto Cpu = reporter(c10::DeviceType::CPU);
    c10::DebugInfoGuard Installed(c10::DebugInfoKind::PROFILER_STATE, Cpu);
    auto T = torch::empty({1024}, torch::kFloat);
    EXPECT_EQ(Tracker.liveBytes() - TrackerBefore, 4096);
    EXPECT_EQ(Cpu->bytes().liveBytes(), 4096 + 64) << "the same block again";
  }
  {
    auto Cuda = reporter(c10::DeviceType::CUDA);
    c10::DebugInfoGuard Installed(c10::DebugInfoKind::PROFILER_STATE, Cuda);
    auto T = torch::empty({1024}, torch::kFloat);
    EXPECT_EQ(Tracker.liveBytes() - TrackerBefore, 4096);
    EXPECT_EQ(Cuda->bytes().liveBytes(), 0);
  }
  Tracker.uninstall();
}

TEST_F(DeviceMemoryReporterTest, BlocksArePhaseAndScopeTagged) {
  auto Reporter = reporter(c10::DeviceType::CUDA);
  c10::DebugInfoGuard Installed(c10::DebugInfoKind::PROFILER_STATE, Reporter);
  const TaggedBytes &Bytes = Reporter->bytes();
  TaggedBytes::setPhase(Phase::Construction);
  cudaBlock(0x10000, 4096); // a weight
  TaggedBytes::setPhase(Phase::Data);
  cudaBlock(0x20000, 2048); // the batch
  TaggedBytes::setPhase(Phase::Forward);
  TaggedBytes::setThreadScope(9);
  cudaBlock(0x30000, 1024);
  TaggedBytes::setThreadScope(-1);
  cudaBlock(0x40000, 512); // the loss: outside every scope
  TaggedBytes::setPhase(Phase::Backward);
  cudaBlock(0x30000, -1024); // its activation freed in backward
  cudaBlock(0x50000, 512);   // a gradient
  PhaseBytes Live = Bytes.liveByPhase();
  EXPECT_EQ(Live[size_t(Phase::Construction)], 4096);
  EXPECT_EQ(Live[size_t(Phase::Data)], 2048);
  EXPECT_EQ(Live[size_t(Phase::Forward)], 512)
      << "freed with the tag it was made with";
  EXPECT_EQ(Live[size_t(Phase::Backward)], 512);
  EXPECT_EQ(Bytes.liveForwardByScope()[9], 0);
  EXPECT_EQ(Bytes.liveForwardByScope()[UnscopedSlot], 512);
  // The peak was before the activation's free: 4096 + 2048 + 1024 + 512
  // (7168 after it).
  EXPECT_EQ(Bytes.peakBytes(), 7680);
  EXPECT_EQ(Bytes.peakForwardByScope()[9], 1024);
  EXPECT_EQ(Bytes.peakByPhase()[size_t(Phase::Backward)], 0);
}

TEST_F(DeviceMemoryReporterTest, WorkspaceIsWhatWarmUpMadeAndNeverFreed) {
  // What LibTorch 2.11 does on CUDA: the first matmul of a thread and stream
  // gets cuBLAS's workspace from the caching allocator (inside the first
  // Linear's scope in forward, and again for autograd's thread in
  // backward) and holds it for the process.
  auto Reporter = reporter(c10::DeviceType::CUDA);
  c10::DebugInfoGuard Installed(c10::DebugInfoKind::PROFILER_STATE, Reporter);
  constexpr int64_t MiB = 1024 * 1024;
  // Warm-up.
  TaggedBytes::setPhase(Phase::Forward);
  TaggedBytes::setThreadScope(2);
  cudaBlock(0x100000, MiB);       // an activation
  cudaBlock(0x2000000, 32 * MiB); // the forward thread's workspace
  TaggedBytes::setPhase(Phase::Backward);
  TaggedBytes::setThreadScope(-1);
  cudaBlock(0x40000000, 4096);    // a gradient, kept across iterations
  cudaBlock(0x50000000, 8 * MiB); // autograd's thread's workspace
  cudaBlock(0x60000000, 2048);    // a temporary
  cudaBlock(0x60000000, -2048);
  cudaBlock(0x100000, -MiB); // the activation freed
  Reporter->startMeasuring();
  // A measured iteration: its activation still live at the end is no
  // workspace.
  TaggedBytes::setPhase(Phase::Forward);
  TaggedBytes::setThreadScope(2);
  cudaBlock(0x70000000, MiB);
  DeviceMemoryReporter::Workspace W = Reporter->workspace({0x40000000});
  EXPECT_EQ(W.Bytes, 40 * MiB);
  EXPECT_EQ(W.ByPhase[size_t(Phase::Forward)], 32 * MiB);
  EXPECT_EQ(W.ByPhase[size_t(Phase::Backward)], 8 * MiB);
  EXPECT_EQ(W.ForwardByScope[2], 32 * MiB);
  EXPECT_EQ(W.ForwardByScope[UnscopedSlot], 0);
  // Without the gradients excluded they would read as workspace too.
  EXPECT_EQ(Reporter->workspace({}).Bytes, 40 * MiB + 4096);
}

TEST_F(DeviceMemoryReporterTest, FreesItNeverSawAndReusedAddresses) {
  auto Reporter = reporter(c10::DeviceType::CUDA);
  c10::DebugInfoGuard Installed(c10::DebugInfoKind::PROFILER_STATE, Reporter);
  cudaBlock(0xA000, -8192); // allocated before it was installed
  EXPECT_EQ(Reporter->unknownFrees(), 1u);
  EXPECT_EQ(Reporter->bytes().liveBytes(), 0);
  // A free reported to a thread without the reporter, then the caching
  // allocator hands the same block out again: the stale entry goes.
  cudaBlock(0xB000, 1024);
  cudaBlock(0xB000, 2048);
  EXPECT_EQ(Reporter->unseenFrees(), 1u);
  EXPECT_EQ(Reporter->bytes().liveBytes(), 2048);
  cudaBlock(0xB000, -2048);
  EXPECT_EQ(Reporter->bytes().liveBytes(), 0);
}

TEST_F(DeviceMemoryReporterTest, AFullTableLeavesBlocksUntagged) {
  auto Reporter = reporter(c10::DeviceType::CUDA, 16); // 12 usable slots
  c10::DebugInfoGuard Installed(c10::DebugInfoKind::PROFILER_STATE, Reporter);
  for (uintptr_t I = 1; I <= 13; ++I)
    cudaBlock(I << 9, 512);
  EXPECT_EQ(Reporter->untaggedBlocks(), 1u);
  EXPECT_EQ(Reporter->bytes().liveBytes(), 12 * 512);
  cudaBlock(13 << 9, -512); // the untagged one's free is not found
  EXPECT_EQ(Reporter->unknownFrees(), 1u);
  cudaBlock(1 << 9, -512);
  cudaBlock(14 << 9, 512); // room again
  EXPECT_EQ(Reporter->untaggedBlocks(), 1u);
  EXPECT_EQ(Reporter->bytes().liveBytes(), 12 * 512);
}

TEST_F(DeviceMemoryReporterTest, TableStaysExactUnderChurn) {
  // Random allocations and frees in a small table: every free finds its
  // block (deletion keeps each probe intact) and the live total is exact.
  auto Reporter = reporter(c10::DeviceType::CUDA, 64); // 48 usable
  c10::DebugInfoGuard Installed(c10::DebugInfoKind::PROFILER_STATE, Reporter);
  std::mt19937 Random(7);
  std::vector<std::pair<uintptr_t, int64_t>> Live;
  int64_t Expected = 0;
  uintptr_t NextPtr = 1;
  for (int Step = 0; Step < 20000; ++Step) {
    bool Allocate = Live.empty() || (Live.size() < 40 && Random() % 2);
    if (Allocate) {
      int64_t Bytes = 512 * int64_t(1 + Random() % 8);
      uintptr_t Ptr = (NextPtr++) << 9;
      cudaBlock(Ptr, Bytes);
      Live.push_back({Ptr, Bytes});
      Expected += Bytes;
    } else {
      size_t Pick = Random() % Live.size();
      cudaBlock(Live[Pick].first, -Live[Pick].second);
      Expected -= Live[Pick].second;
      Live.erase(Live.begin() + Pick);
    }
    ASSERT_EQ(Reporter->bytes().liveBytes(), Expected) << "step " << Step;
  }
  EXPECT_EQ(Reporter->unknownFrees(), 0u);
  EXPECT_EQ(Reporter->untaggedBlocks(), 0u);
  EXPECT_EQ(Reporter->unseenFrees(), 0u);
}

TEST_F(DeviceMemoryReporterTest, ReportsAllocateNothing) {
  auto Reporter = reporter(c10::DeviceType::CUDA);
  c10::DebugInfoGuard Installed(c10::DebugInfoKind::PROFILER_STATE, Reporter);
  TaggedBytes::setPhase(Phase::Forward);
  TaggedBytes::setThreadScope(5);
  uint64_t Before = AllocationsOnThread;
  for (uintptr_t I = 1; I <= 1000; ++I)
    cudaBlock(I << 9, 512 * int64_t(I)); // each one a new peak
  for (uintptr_t I = 1; I <= 1000; ++I)
    cudaBlock(I << 9, -512 * int64_t(I));
  EXPECT_EQ(AllocationsOnThread, Before);
  EXPECT_EQ(Reporter->bytes().liveBytes(), 0);
}

TEST_F(DeviceMemoryReporterTest, TheProfilerSlotSeesADisabledProfiler) {
  auto Reporter = reporter(c10::DeviceType::CUDA);
  c10::DebugInfoGuard Installed(c10::DebugInfoKind::PROFILER_STATE, Reporter);
#ifdef SKYLINE_REPORTER_IS_PROFILER_STATE
  // Code that finds the slot filled casts it to the profiler's state.
  EXPECT_FALSE(torch::profiler::impl::profilerEnabled());
  EXPECT_EQ(torch::profiler::impl::profilerType(),
            torch::profiler::impl::ActiveProfilerType::NONE);
#else
  GTEST_SKIP() << "this LibTorch has no ProfilerStateBase";
#endif
}

} // namespace
