// The runtime's memory accounting against models whose sizes are known to the
// byte, with the real LibTorch on the CPU.

#include "skyline/runtime/MemoryTracker.h"
#include "skyline/runtime/Runtime.h"
#include "skyline/runtime/TensorAccounting.h"

#include <c10/core/CPUAllocator.h>
#include <torch/torch.h>

#include "gtest/gtest.h"

#include <new>
#include <thread>

using namespace skyline::rt;

namespace {

class RuntimeMemoryTest : public ::testing::Test {
protected:
  void SetUp() override { Tracker = &MemoryTracker::install(); }
  void TearDown() override {
    Tracker->setBudget(0, nullptr);
    Tracker->setPhase(Phase::Construction);
    Tracker->uninstall();
  }
  MemoryTracker *Tracker = nullptr;
};

TEST_F(RuntimeMemoryTest, LinearWeightsToTheByte) {
  int64_t Before = Tracker->liveBytes();
  torch::nn::Linear Layer(1024, 1024);
  // 1024 * 1024 weights + 1024 biases, fp32.
  EXPECT_EQ(uniqueStorageBytes(Layer->parameters()), 4198400);
  EXPECT_EQ(Tracker->liveBytes() - Before, 4198400);
}

TEST_F(RuntimeMemoryTest, GradientsEqualWeightsAndAdamStateIsTwice) {
  torch::nn::Sequential Model(torch::nn::Linear(784, 256), torch::nn::ReLU(),
                              torch::nn::Linear(256, 10));
  const int64_t Weights = (784 * 256 + 256 + 256 * 10 + 10) * 4;
  EXPECT_EQ(uniqueStorageBytes(Model->parameters()), Weights);
  torch::optim::Adam Adam(Model->parameters(), torch::optim::AdamOptions(1e-3));
  EXPECT_EQ(gradientBytes(Model->parameters()), 0);
  Model->forward(torch::randn({32, 784})).sum().backward();
  EXPECT_EQ(gradientBytes(Model->parameters()), Weights);
  Adam.step();
  EXPECT_EQ(uniqueStorageBytes(optimizerStateTensors(Adam)), 2 * Weights);
}

TEST_F(RuntimeMemoryTest, BatchNormBuffersAreWeightsToo) {
  int64_t Before = Tracker->liveBytes();
  torch::nn::BatchNorm2d Norm(32);
  // weight and bias; running_mean and running_var (fp32, one per channel)
  // and num_batches_tracked (one int64).
  const int64_t Parameters = 2 * 32 * 4, Buffers = 2 * 32 * 4 + 8;
  EXPECT_EQ(uniqueStorageBytes(Norm->parameters()), Parameters);
  EXPECT_EQ(uniqueStorageBytes(moduleTensors(*Norm)), Parameters + Buffers);
  EXPECT_EQ(Tracker->liveBytes() - Before, Parameters + Buffers);
  Norm->forward(torch::randn({4, 32, 3, 3})).sum().backward();
  EXPECT_EQ(gradientBytes(Norm->parameters()), Parameters)
      << "gradients are the parameters' only";
}

TEST_F(RuntimeMemoryTest, ModuleTensorsIncludeSubmodulesOnce) {
  torch::nn::Sequential Model(torch::nn::Linear(1024, 1024),
                              torch::nn::BatchNorm1d(1024));
  EXPECT_EQ(uniqueStorageBytes(moduleTensors(*Model)),
            4198400 + 2 * 1024 * 4 + 2 * 1024 * 4 + 8);
}

TEST_F(RuntimeMemoryTest, ForwardAllocationsAreCountedPerScope) {
  Tracker->resetPeak();
  ScopeBytes Start = Tracker->liveForwardByScope();
  auto Grown = [&](int Slot) {
    return Tracker->liveForwardByScope()[Slot] - Start[Slot];
  };
  Tracker->setPhase(Phase::Forward);
  MemoryTracker::setThreadScope(7);
  auto InScope = torch::empty({1024}, torch::kFloat); // 4 KiB
  MemoryTracker::setThreadScope(-1);
  auto Outside = torch::empty({512}, torch::kFloat); // 2 KiB
  at::Tensor FromWorker;
  std::thread Worker([&] { FromWorker = torch::empty({256}, torch::kFloat); });
  Worker.join();
  Tracker->setPhase(Phase::Backward);
  MemoryTracker::setThreadScope(7);
  auto Gradient = torch::empty({2048}, torch::kFloat); // not an activation
  MemoryTracker::setThreadScope(-1);
  EXPECT_EQ(Grown(7), 4096);
  EXPECT_EQ(Grown(UnscopedSlot), 2048 + 1024) << "a thread with no scope";
  EXPECT_EQ(Tracker->peakForwardByScope()[7] - Start[7], 4096);
  InScope = at::Tensor();
  EXPECT_EQ(Grown(7), 0);
  EXPECT_EQ(Tracker->peakForwardByScope()[7] - Start[7], 4096)
      << "the peak's snapshot stays";
}

// Construction-phase allocations belong to the setup statement running
// then (on every thread), to the byte; other phases' to none.
TEST_F(RuntimeMemoryTest, ConstructionAllocationsBelongToTheirSetupStatement) {
  Tracker->setPhase(Phase::Construction);
  Tracker->resetPeak();
  SetupBytes Start = Tracker->peakBySetupStatement();
  MemoryTracker::setSetupStatement(1);
  torch::Tensor Dataset = torch::ones({1000, 1000});
  MemoryTracker::setSetupStatement(-1);
  torch::Tensor Outside = torch::ones({1000});
  EXPECT_EQ(Tracker->peakBySetupStatement()[1] - Start[1], 4000000);
  const c10::DataPtr &Data = Dataset.storage().data_ptr();
  const AllocationTag *Tag =
      MemoryTracker::tagOf(Data.get(), Data.get_deleter());
  ASSERT_TRUE(Tag);
  EXPECT_EQ(Tag->SetupSlot, 1);
  const c10::DataPtr &Other = Outside.storage().data_ptr();
  ASSERT_TRUE(MemoryTracker::tagOf(Other.get(), Other.get_deleter()));
  EXPECT_EQ(MemoryTracker::tagOf(Other.get(), Other.get_deleter())->SetupSlot,
            -1);

  MemoryTracker::setSetupStatement(2);
  Tracker->setPhase(Phase::Forward);
  torch::Tensor InTraining = torch::ones({1000, 1000});
  Tracker->setPhase(Phase::Construction);
  MemoryTracker::setSetupStatement(-1);
  EXPECT_EQ(Tracker->peakBySetupStatement()[2] - Start[2], 0)
      << "a setup statement holds construction's bytes only";
  Dataset = torch::Tensor();
  Tracker->resetPeak();
  EXPECT_EQ(Tracker->peakBySetupStatement()[1] - Start[1], 0)
      << "freed: no longer held";
}

TEST(RuntimeScopeTest, TheCalleesModuleWhateverHoldsIt) {
  using skyline::rt::detail::moduleOf;
  torch::nn::Linear Holder(2, 2);
  const torch::nn::Module *Impl = Holder.get();
  EXPECT_EQ(moduleOf(Holder), Impl);
  EXPECT_EQ(moduleOf(Holder.ptr()), Impl) << "std::shared_ptr<LinearImpl>";
  EXPECT_EQ(moduleOf(*Holder), Impl) << "the module object itself";
  EXPECT_EQ(moduleOf(Holder.get()), Impl) << "a raw pointer";
  torch::nn::Sequential Seq(torch::nn::Linear(2, 2));
  EXPECT_EQ(moduleOf(Seq[0]), Seq[0].get()) << "std::shared_ptr<Module>";
  EXPECT_EQ(moduleOf(torch::nn::Linear(nullptr)), nullptr) << "an empty holder";
  EXPECT_EQ(moduleOf(std::shared_ptr<torch::nn::LinearImpl>()), nullptr);
  EXPECT_EQ(moduleOf(42), nullptr) << "not a module";
}

TEST_F(RuntimeMemoryTest, SgdMomentumIsOnceTheWeights) {
  torch::nn::Linear Layer(100, 10);
  torch::optim::SGD Sgd(Layer->parameters(),
                        torch::optim::SGDOptions(0.1).momentum(0.9));
  Layer->forward(torch::randn({4, 100})).sum().backward();
  Sgd.step();
  EXPECT_EQ(uniqueStorageBytes(optimizerStateTensors(Sgd)),
            (100 * 10 + 10) * 4);
}

TEST_F(RuntimeMemoryTest, SharedStorageCountsOnce) {
  auto Base = torch::zeros({256}); // 1 KiB
  EXPECT_EQ(
      uniqueStorageBytes({Base, Base.view({16, 16}), Base.narrow(0, 0, 8)}),
      1024);
}

TEST_F(RuntimeMemoryTest, PhasesAndPeak) {
  Tracker->resetPeak();
  int64_t Start = Tracker->liveBytes();
  PhaseBytes StartPhases = Tracker->liveByPhase();
  Tracker->setPhase(Phase::Forward);
  {
    auto Activation = torch::empty({1024}, torch::kFloat); // 4 KiB
    EXPECT_EQ(Tracker->liveByPhase()[size_t(Phase::Forward)] -
                  StartPhases[size_t(Phase::Forward)],
              4096);
    Tracker->setPhase(Phase::Backward);
    auto Gradient = torch::empty({512}, torch::kFloat); // 2 KiB
    EXPECT_EQ(Tracker->peakBytes() - Start, 6144);
    EXPECT_EQ(Tracker->peakByPhase()[size_t(Phase::Backward)] -
                  StartPhases[size_t(Phase::Backward)],
              2048);
  }
  EXPECT_EQ(Tracker->liveBytes(), Start);
  EXPECT_EQ(Tracker->peakBytes() - Start, 6144) << "the peak stays after frees";
}

TEST_F(RuntimeMemoryTest, AllocationsOnOtherThreadsAreSeen) {
  int64_t Before = Tracker->liveBytes();
  at::Tensor FromWorker;
  std::thread Worker([&] { FromWorker = torch::empty({2048}, torch::kFloat); });
  Worker.join();
  EXPECT_EQ(Tracker->liveBytes() - Before, 8192);
}

[[noreturn]] void throwBadAlloc(size_t, int64_t, int64_t) {
  throw std::bad_alloc();
}

TEST_F(RuntimeMemoryTest, BudgetStopsTheAllocationThatCrossesIt) {
  Tracker->setBudget(Tracker->liveBytes() + (1 << 20), &throwBadAlloc);
  auto Fits = torch::empty({(1 << 18) - 16}, torch::kFloat); // just under 1 MiB
  EXPECT_THROW(torch::empty({1024}, torch::kFloat), std::bad_alloc);
  Tracker->setBudget(0, nullptr);
  EXPECT_NO_THROW(torch::empty({1024}, torch::kFloat));
}

} // namespace

namespace {

TEST_F(RuntimeMemoryTest, RawAllocationsAsOneDnnMakesThem) {
  // Convolutions on the CPU allocate through raw_allocate(), which requires
  // the context to be the data pointer.
  int64_t Before = Tracker->liveBytes();
  void *Raw = c10::GetCPUAllocator()->raw_allocate(4096);
  EXPECT_EQ(Tracker->liveBytes() - Before, 4096);
  c10::GetCPUAllocator()->raw_deallocate(Raw);
  EXPECT_EQ(Tracker->liveBytes(), Before);
  torch::nn::Conv2d Conv(torch::nn::Conv2dOptions(3, 8, 3));
  auto Out = Conv->forward(torch::randn({2, 3, 16, 16}));
  EXPECT_EQ(Out.size(1), 8);
}

} // namespace
