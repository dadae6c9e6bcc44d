//===- OtherWork.h - What else the CPUs did during a run --------*- C++ -*-===//
//
// A run's times hold only if it had the CPUs it asked for: LibTorch starts a
// thread per core, and a core that other work holds (another process, or the
// hypervisor's steal on a VM) makes every iteration wait for it. The CPUs'
// busy time over the run, from /proc/stat, less the CPU time the run itself
// used, is what other work took; it is measured around every run, where the
// load before the sweep (busyMachineWarning) says only how it began.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_OTHERWORK_H
#define SKYLINE_OTHERWORK_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace skyline {

/// A warning when other work keeps the machine's CPUs (OtherRunnable: the
/// tasks besides skyline-check that were runnable, on average over a moment;
/// at least one): the runs use every core, so they would measure the wait
/// for a CPU too.
std::optional<std::string> busyMachineWarning(double OtherRunnable,
                                              unsigned Cores);

/// The runnable tasks /proc/loadavg's text counts now (its fourth field,
/// "running/total"), the reader itself included; nullopt if it has none.
std::optional<unsigned> runnableTasks(llvm::StringRef LoadavgText);

/// The other tasks runnable now, on average over half a second: not the
/// one-minute load average, which still counts the instrumented build that
/// has just ended. nullopt where /proc/loadavg is not there.
std::optional<double> otherRunnableTasks();

/// What waiting for other work to end found.
struct QuietWait {
  std::optional<double> OtherRunnable; // the last sample; none: unknown
  double WaitedSeconds = 0;
  bool Quiet = false; // fewer than one other task runnable at the end
};

/// Samples the other runnable tasks (Sample: otherRunnableTasks, which
/// itself takes half a second) until fewer than one is runnable or
/// LimitSeconds have passed on Now. A machine that cannot say (no
/// /proc/loadavg) counts as quiet.
QuietWait waitForQuiet(llvm::function_ref<std::optional<double>()> Sample,
                       double LimitSeconds, llvm::function_ref<double()> Now);

/// The CPUs' time since boot, all cores together, in seconds.
struct CpuTimes {
  double Busy = 0;  // user, nice, system, irq, softirq and steal
  double Total = 0; // those, idle and iowait
  /// Of Busy, what the hypervisor gave other guests (a VM's steal): no
  /// process of this machine's frees it.
  double Steal = 0;
};

/// The "cpu" line of /proc/stat's text, its ticks TicksPerSecond a second;
/// none when the text has no such line.
std::optional<CpuTimes> parseCpuTimes(llvm::StringRef ProcStat,
                                      long TicksPerSecond);

/// /proc/stat now; none where there is none.
std::optional<CpuTimes> readCpuTimes();

/// The cores other work kept busy, on average, over a run of WallSeconds
/// that used RunCpuSeconds between Before and After; never below 0.
double otherWorkCores(const CpuTimes &Before, const CpuTimes &After,
                      double RunCpuSeconds, double WallSeconds);

/// The cores the hypervisor took, on average, over a run of WallSeconds
/// between Before and After (steal); never below 0.
double stealCores(const CpuTimes &Before, const CpuTimes &After,
                  double WallSeconds);

/// A warning naming the sizes whose kept runs lost at least StealCoresLimit
/// cores to the hypervisor (SizeSteal: each size and its steal); none when
/// no size's did. Other work that the user can stop is busyDuringRunsWarning's.
std::optional<std::string>
stealDuringRunsWarning(llvm::ArrayRef<std::pair<int64_t, double>> SizeSteal,
                       unsigned Cores);

/// Steal of at least this share of a core during a kept run is said apart.
inline constexpr double StealCoresLimit = 0.1;

/// Other work that held, on average, at least this share of a core during a
/// kept run makes its time suspect.
inline constexpr double BusyCoresLimit = 0.5;

/// A warning naming the sizes whose kept runs shared the CPUs with other
/// work (SizeCores: each size and the cores other work kept busy during its
/// kept run); none when no size's did.
std::optional<std::string>
busyDuringRunsWarning(llvm::ArrayRef<std::pair<int64_t, double>> SizeCores,
                      unsigned Cores);

/// The CPUs this process may run on (its affinity: a container's cpuset,
/// taskset); the runs inherit it. At least 1.
unsigned usableCpus();

/// A warning when LibTorch ran more intra-op threads than the runs had
/// CPUs: every parallel region then waits for threads that take turns on a
/// CPU, which no training on those CPUs would choose; none otherwise (and
/// where Threads is not known, 0).
std::optional<std::string> threadsWarning(int Threads, unsigned Cpus);

} // namespace skyline

#endif // SKYLINE_OTHERWORK_H
