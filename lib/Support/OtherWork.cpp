//===- OtherWork.cpp - What else the CPUs did during a run ----------------===//

#include "skyline/OtherWork.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <chrono>
#include <sched.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace skyline {

std::optional<std::string> busyMachineWarning(double OtherRunnable,
                                              unsigned Cores) {
  if (OtherRunnable < 1.0)
    return std::nullopt;
  return llvm::formatv("the machine was busy ({0:f1} other tasks running on "
                       "{1} cores): times include waiting for a CPU; measure "
                       "on a quiet machine, or fix OMP_NUM_THREADS",
                       OtherRunnable, Cores)
      .str();
}

std::optional<unsigned> runnableTasks(llvm::StringRef LoadavgText) {
  llvm::SmallVector<llvm::StringRef, 5> Fields;
  LoadavgText.split(Fields, ' ', -1, /*KeepEmpty=*/false);
  if (Fields.size() < 4)
    return std::nullopt;
  unsigned Running = 0;
  if (Fields[3].split('/').first.getAsInteger(10, Running))
    return std::nullopt;
  return Running;
}

/// The other tasks runnable now, on average over half a second: not the
/// one-minute load average, which still counts the instrumented build that
/// has just ended. nullopt where /proc/loadavg is not there.
std::optional<double> otherRunnableTasks() {
  constexpr int Samples = 5;
  unsigned Others = 0;
  for (int I = 0; I < Samples; ++I) {
    if (I)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto Text = llvm::MemoryBuffer::getFileAsStream("/proc/loadavg");
    if (!Text)
      return std::nullopt;
    std::optional<unsigned> Running = runnableTasks((*Text)->getBuffer());
    if (!Running)
      return std::nullopt;
    Others += *Running > 0 ? *Running - 1 : 0; // less this reader
  }
  return double(Others) / Samples;
}

QuietWait waitForQuiet(llvm::function_ref<std::optional<double>()> Sample,
                       double LimitSeconds, llvm::function_ref<double()> Now) {
  QuietWait Wait;
  double Start = Now();
  while (true) {
    Wait.OtherRunnable = Sample();
    Wait.WaitedSeconds = Now() - Start;
    if (!Wait.OtherRunnable || *Wait.OtherRunnable < 1.0) {
      Wait.Quiet = true;
      return Wait;
    }
    if (Wait.WaitedSeconds >= LimitSeconds)
      return Wait;
  }
}

std::optional<CpuTimes> parseCpuTimes(llvm::StringRef ProcStat,
                                      long TicksPerSecond) {
  if (TicksPerSecond <= 0)
    return std::nullopt;
  for (llvm::StringRef Line : llvm::split(ProcStat, '\n')) {
    if (!Line.consume_front("cpu "))
      continue;
    llvm::SmallVector<llvm::StringRef, 10> Fields;
    Line.split(Fields, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    // user nice system idle iowait irq softirq steal (guest time is in
    // user already).
    double Ticks[8] = {};
    if (Fields.size() < 4)
      return std::nullopt;
    for (size_t I = 0; I < 8 && I < Fields.size(); ++I)
      if (Fields[I].getAsDouble(Ticks[I]))
        return std::nullopt;
    double Idle = Ticks[3] + Ticks[4];
    double Busy =
        Ticks[0] + Ticks[1] + Ticks[2] + Ticks[5] + Ticks[6] + Ticks[7];
    return CpuTimes{Busy / TicksPerSecond, (Busy + Idle) / TicksPerSecond,
                    Ticks[7] / TicksPerSecond};
  }
  return std::nullopt;
}

std::optional<CpuTimes> readCpuTimes() {
  auto Text = llvm::MemoryBuffer::getFileAsStream("/proc/stat");
  if (!Text)
    return std::nullopt;
  return parseCpuTimes((*Text)->getBuffer(), sysconf(_SC_CLK_TCK));
}

double otherWorkCores(const CpuTimes &Before, const CpuTimes &After,
                      double RunCpuSeconds, double WallSeconds) {
  if (WallSeconds <= 0)
    return 0;
  double Others = (After.Busy - Before.Busy) - RunCpuSeconds;
  return std::max(0.0, Others / WallSeconds);
}

double stealCores(const CpuTimes &Before, const CpuTimes &After,
                  double WallSeconds) {
  if (WallSeconds <= 0)
    return 0;
  return std::max(0.0, (After.Steal - Before.Steal) / WallSeconds);
}

std::optional<std::string>
stealDuringRunsWarning(llvm::ArrayRef<std::pair<int64_t, double>> SizeSteal,
                       unsigned Cores) {
  std::vector<std::string> Sizes;
  for (const auto &[Size, Steal] : SizeSteal)
    if (Steal >= StealCoresLimit)
      Sizes.push_back(
          std::to_string(Size) +
          llvm::formatv(" ({0:f2} of {1} cores)", Steal, Cores).str());
  if (Sizes.empty())
    return std::nullopt;
  return "the hypervisor took CPU time from this machine (steal) during the "
         "kept runs at batch size " +
         llvm::join(Sizes, ", ") +
         ": no process here can free it, and their times include it; "
         "measure on a machine with dedicated CPUs, or compare runs made "
         "at the same hour";
}

std::optional<std::string>
busyDuringRunsWarning(llvm::ArrayRef<std::pair<int64_t, double>> SizeCores,
                      unsigned Cores) {
  std::vector<std::string> Sizes;
  for (const auto &[Size, Busy] : SizeCores)
    if (Busy >= BusyCoresLimit)
      Sizes.push_back(std::to_string(Size) +
                      (Sizes.empty()
                           ? llvm::formatv(" ({0:f1} of {1} cores, on average)",
                                           Busy, Cores)
                                 .str()
                           : llvm::formatv(" ({0:f1})", Busy).str()));
  if (Sizes.empty())
    return std::nullopt;
  std::string Listed = Sizes.front();
  for (size_t I = 1; I < Sizes.size(); ++I)
    Listed += (I + 1 == Sizes.size() ? " and " : ", ") + Sizes[I];
  return "other work held the CPUs during the kept runs at batch size " +
         Listed +
         ": their times include waiting for a CPU; measure on a quiet machine";
}

unsigned usableCpus() {
  cpu_set_t Set;
  CPU_ZERO(&Set);
  if (sched_getaffinity(0, sizeof(Set), &Set) != 0)
    return std::max(1u, std::thread::hardware_concurrency());
  return std::max(1, CPU_COUNT(&Set));
}

std::optional<std::string> threadsWarning(int Threads, unsigned Cpus) {
  if (Threads <= 0 || unsigned(Threads) <= Cpus)
    return std::nullopt;
  return llvm::formatv("LibTorch ran {0} intra-op threads on the {1} CPU{2} "
                       "the runs could use: its parallel regions wait for "
                       "threads that take turns on a CPU, so the times are "
                       "slower than training needs to be; set "
                       "OMP_NUM_THREADS={1} (or fewer) for skyline-check and "
                       "for training",
                       Threads, Cpus, Cpus == 1 ? "" : "s")
      .str();
}

} // namespace skyline
