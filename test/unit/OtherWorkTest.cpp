// What other work took of the CPUs during a run: /proc/stat's "cpu" line
// read exactly, the run's own CPU time taken out, and the warning that names
// the sizes whose kept runs shared the CPUs.

#include "skyline/OtherWork.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <thread>

using namespace skyline;

namespace {

TEST(OtherWorkTest, ReadsTheCpuLineOfProcStat) {
  // user nice system idle iowait irq softirq steal guest guest_nice, in
  // ticks of 1/100 s; the per-core lines after it are not summed again.
  const char *Stat = "cpu  1000 20 300 5000 80 10 30 40 7 0\n"
                     "cpu0 500 10 150 2500 40 5 15 20 3 0\n"
                     "intr 12345\n";
  auto Times = parseCpuTimes(Stat, 100);
  ASSERT_TRUE(Times);
  EXPECT_DOUBLE_EQ(Times->Busy, (1000 + 20 + 300 + 10 + 30 + 40) / 100.0);
  EXPECT_DOUBLE_EQ(Times->Total, (1400 + 5000 + 80) / 100.0);
  EXPECT_FALSE(parseCpuTimes("intr 1\n", 100)) << "no cpu line";
  EXPECT_FALSE(parseCpuTimes("cpu  1 x 3 4\n", 100)) << "not a number";
  EXPECT_FALSE(parseCpuTimes(Stat, 0));
  // An old kernel's four fields: no iowait, irq or steal.
  auto Old = parseCpuTimes("cpu 10 0 5 100\n", 100);
  ASSERT_TRUE(Old);
  EXPECT_DOUBLE_EQ(Old->Busy, 0.15);
}

TEST(OtherWorkTest, TheRunsOwnTimeIsNotOtherWork) {
  CpuTimes Before{100.0, 500.0}, After{106.0, 510.0};
  // 6 CPU-seconds were busy over 5 s: the run used 4, others 2 = 0.4 cores.
  EXPECT_DOUBLE_EQ(otherWorkCores(Before, After, 4.0, 5.0), 0.4);
  // The run used them all: nothing else ran.
  EXPECT_DOUBLE_EQ(otherWorkCores(Before, After, 6.0, 5.0), 0.0);
  // Ticks round: a run's own time a little above the CPUs' is still 0.
  EXPECT_DOUBLE_EQ(otherWorkCores(Before, After, 6.01, 5.0), 0.0);
  EXPECT_DOUBLE_EQ(otherWorkCores(Before, After, 0.0, 0.0), 0.0);
}

TEST(OtherWorkTest, WarnsOfTheSizesWhoseKeptRunsSharedTheCpus) {
  EXPECT_FALSE(busyDuringRunsWarning({{64, 0.1}, {128, 0.49}}, 2));
  EXPECT_FALSE(busyDuringRunsWarning({}, 2));
  EXPECT_EQ(*busyDuringRunsWarning({{64, 0.8}}, 2),
            "other work held the CPUs during the kept runs at batch size 64 "
            "(0.8 of 2 cores, on average): their times include waiting for a "
            "CPU; measure on a quiet machine");
  EXPECT_EQ(*busyDuringRunsWarning(
                {{64, 0.8}, {128, 0.2}, {256, 1.24}, {512, 0.5}}, 2),
            "other work held the CPUs during the kept runs at batch size 64 "
            "(0.8 of 2 cores, on average), 256 (1.2) and 512 (0.5): their "
            "times include waiting for a CPU; measure on a quiet machine");
}

TEST(OtherWorkTest, TheHypervisorsStealIsMeasuredApart) {
  // The development VM's /proc/stat: steal is the eighth field.
  auto Times =
      parseCpuTimes("cpu  422080 58 60689 190255 1234 0 397 2087 0 0\n", 100);
  ASSERT_TRUE(Times);
  EXPECT_DOUBLE_EQ(Times->Steal, 20.87);
  EXPECT_DOUBLE_EQ(Times->Busy, (422080 + 58 + 60689 + 397 + 2087) / 100.0);
  CpuTimes Before{100.0, 500.0, 3.0}, After{106.0, 510.0, 4.5};
  EXPECT_DOUBLE_EQ(stealCores(Before, After, 5.0), 0.3);
  EXPECT_DOUBLE_EQ(stealCores(After, Before, 5.0), 0.0);
  EXPECT_DOUBLE_EQ(stealCores(Before, After, 0.0), 0.0);
  EXPECT_FALSE(stealDuringRunsWarning({{64, 0.05}, {128, 0.09}}, 2));
  EXPECT_EQ(*stealDuringRunsWarning({{64, 0.05}, {128, 0.3}, {256, 0.12}}, 2),
            "the hypervisor took CPU time from this machine (steal) during "
            "the kept runs at batch size 128 (0.30 of 2 cores), 256 (0.12 of "
            "2 cores): no process here can free it, and their times include "
            "it; measure on a machine with dedicated CPUs, or compare runs "
            "made at the same hour");
}

TEST(OtherWorkTest, WaitingForQuietEndsWhenTheWorkDoesOrTheLimitPasses) {
  // Each sample takes half a second, as otherRunnableTasks does.
  double Clock = 100;
  auto Now = [&] { return Clock; };
  std::vector<std::optional<double>> Samples = {2.0, 1.5, 0.5, 3.0};
  size_t Next = 0;
  auto Sample = [&]() -> std::optional<double> {
    Clock += 0.5;
    return Samples.at(Next++);
  };
  QuietWait Wait = waitForQuiet(Sample, 10, Now);
  EXPECT_TRUE(Wait.Quiet);
  EXPECT_DOUBLE_EQ(Wait.WaitedSeconds, 1.5) << "quiet at the third sample";
  EXPECT_DOUBLE_EQ(*Wait.OtherRunnable, 0.5);

  Samples = {2.0, 2.0, 2.0, 2.0, 2.0};
  Next = 0;
  Wait = waitForQuiet(Sample, 1.2, Now);
  EXPECT_FALSE(Wait.Quiet);
  EXPECT_EQ(Next, 3u) << "the limit passed at the third sample";
  EXPECT_DOUBLE_EQ(Wait.WaitedSeconds, 1.5);
  EXPECT_DOUBLE_EQ(*Wait.OtherRunnable, 2.0);

  Samples = {std::nullopt};
  Next = 0;
  EXPECT_TRUE(waitForQuiet(Sample, 5, Now).Quiet)
      << "no /proc/loadavg: nothing to wait for";
}

TEST(OtherWorkTest, MoreThreadsThanCpusIsSaid) {
  EXPECT_FALSE(threadsWarning(2, 2));
  EXPECT_FALSE(threadsWarning(1, 8));
  EXPECT_FALSE(threadsWarning(0, 2)) << "not known";
  EXPECT_EQ(*threadsWarning(8, 2),
            "LibTorch ran 8 intra-op threads on the 2 CPUs the runs could "
            "use: its parallel regions wait for threads that take turns on a "
            "CPU, so the times are slower than training needs to be; set "
            "OMP_NUM_THREADS=2 (or fewer) for skyline-check and for training");
  EXPECT_NE(threadsWarning(4, 1)->find("on the 1 CPU the runs"),
            std::string::npos);
  unsigned Cpus = usableCpus();
  EXPECT_GE(Cpus, 1u);
  EXPECT_LE(Cpus, std::max(1u, std::thread::hardware_concurrency()));
}

} // namespace
