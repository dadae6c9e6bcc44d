//===- Measure.h - Training bursts at several batch sizes -------*- C++ -*-===//
//
// The fourth stage: runs the instrumented program at the declared batch size
// first, then at larger ones toward the memory budget (doubling, and one step
// back between the last size that fit and the first that did not), each run
// a short burst that the runtime ends after its measured iterations.
//
// Each batch size gets two runs: a timing run (iteration boundaries and the
// memory tracker only) that measures until the median is stable, and a
// short breakdown run (every hook) for the time split, the memory kinds and
// the layers. A time budget bounds the whole sweep.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_MEASURE_H
#define SKYLINE_MEASURE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace skyline {

enum class DeviceChoice { Auto, CPU, CUDA };

/// Which batch sizes get a breakdown run besides their timing run.
enum class BreakdownRuns { All, Declared, None };

struct MeasureOptions {
  int64_t MemoryBudget = int64_t(4) << 30; // bytes the program may hold (CPU)
  unsigned MaxRuns = 4;                    // batch sizes to try, in all
  unsigned Warmup = 2;
  unsigned Iterations = 50;   // the most a timing run measures
  unsigned MinIterations = 5; // the fewest (at most Iterations)
  /// A timing run stops once the median's relative standard error is at
  /// most this; 0: it measures Iterations.
  double Tolerance = 0.02;
  /// All runs together; a run gets a share of what is left, and no batch
  /// size is added once it is spent. 0: no budget.
  double TimeBudgetSeconds = 120;
  BreakdownRuns Breakdown = BreakdownRuns::All;
  unsigned BreakdownIterations = 3; // measured by a breakdown run
  unsigned RunTimeoutSeconds = 300;
  std::string RunDir; // empty: the current directory
  std::vector<std::string> RunArgs;
  DeviceChoice Device = DeviceChoice::Auto;
  std::string WorkDir; // logs and results go here
};

struct TimeSummary {
  double Median = 0, Mean = 0, Stddev = 0, Min = 0, Max = 0;
};

/// One module call site's share of an iteration. Measure fills the numbers
/// by scope id; the driver names the row from the scope table and the model.
struct LayerMeasure {
  int Scope = -1; // ScopeEntry::Id; -1 is the (unscoped) row
  std::string Name, Type, File;
  unsigned Line = 0;
  double ForwardMs = 0;        // self time per iteration
  double BackwardMs = 0;       // its backward ops, by sequence number
  double GpuMs = -1;           // kernel time on CUDA; -1: not measured
  int64_t ActivationBytes = 0; // allocated in its forward, live at the peak
  int64_t WeightBytes = 0;     // parameters and buffers of the module it calls
};

/// The breakdown run behind a MeasuredRun's split, kinds and layers.
struct BreakdownRun {
  unsigned Iterations = 0;
  double IterationMs = 0; // its mean, the hooks' cost included
  double WallSeconds = 0;
  bool EndedEarly = false;
};

struct MeasuredRun {
  int64_t BatchSize = 0;
  bool OutOfMemory = false;
  /// Iterations, IterationMs and Throughput are the timing run's (the only
  /// run in an older result).
  unsigned Iterations = 0;
  TimeSummary IterationMs;
  double Throughput = 0;
  /// The program returned before the run stopped it; its figures come from
  /// the iterations it measured.
  bool EndedEarly = false;
  unsigned IterationsAsked = 0; // the most the run was to measure
  /// Why it stopped: count, stable, time_limit, ended_early, out_of_memory;
  /// empty in an older result.
  std::string Stopped;
  /// From the result file, for messages: warm-up, the fewest iterations to
  /// measure, and the loop body starts the program reached.
  unsigned Warmup = 0, MinIterations = 0, IterationsReached = 0;
  /// timing or breakdown: what the result file came from.
  std::string Mode;
  /// Where PeakBytesByPhase, Memory, TimeSplitMs and Layers come from; none
  /// when this size had no breakdown run.
  std::optional<BreakdownRun> Breakdown;
  int64_t PeakBytes = 0;
  std::vector<std::pair<std::string, int64_t>> PeakBytesByPhase;
  /// weights, gradients, optimizer_state, activations, data, temporaries,
  /// untracked: the peak by kind, in that order.
  std::vector<std::pair<std::string, int64_t>> Memory;
  /// ms per iteration in data, forward, backward, optimizer and other.
  std::vector<std::pair<std::string, double>> TimeSplitMs;
  std::vector<LayerMeasure> Layers;
  double WallSeconds = 0;
  std::string Log;
  /// Where the run ran, as the runtime saw it; empty or 0 when not written.
  std::string DeviceType;   // cpu or cuda
  std::string DeviceName;   // the CPU's model name, or the GPU's
  std::string TorchVersion; // the LibTorch the program was built with
  int Threads = 0;          // intra-op threads
  /// On CUDA: the device memory the program could hold (free plus the
  /// caching allocator's own); 0 on the CPU.
  int64_t DeviceCapacityBytes = 0;
};

struct Measurement {
  std::string DeviceType = "cpu";
  std::string DeviceName = "CPU";
  std::string TorchVersion; // of the LibTorch the program ran with
  int Threads = 0;          // intra-op threads the runs used
  int64_t MemoryCapacityBytes = 0;
  std::vector<MeasuredRun> Runs;
  /// Runs that failed after the first, runs that ended early, a spent time
  /// budget: each a warning on the terminal.
  std::vector<std::string> Problems;
  double TimeBudgetSeconds = 0; // 0: none
  bool TimeBudgetSpent = false; // batch sizes were left out for it
};

/// "512MiB", "8GiB", "1.5GB", "1000000" to bytes.
std::optional<int64_t> parseByteSize(llvm::StringRef Text);

/// The batch sizes to try after Declared: doubling up to MaxRuns in all.
int64_t nextBatchSize(int64_t LastFit, std::optional<int64_t> FirstOutOfMemory);

/// Reads a result file the runtime wrote.
llvm::Expected<MeasuredRun> readRunResult(llvm::StringRef Path);

/// The time limit of the next timing run: what is left of the budget,
/// shared equally among the batch sizes still to try, less a quarter for
/// the size's breakdown run. 0 (no limit) without a budget.
double timingRunSeconds(double BudgetSeconds, double SpentSeconds,
                        unsigned SizesLeft, bool WithBreakdown);

/// A warning when the machine is busier than its cores (LoadAverage over
/// one minute above Cores): a run then measures the wait for a CPU too.
std::optional<std::string> busyMachineWarning(double LoadAverage,
                                              unsigned Cores);

/// A timing run's figures with a breakdown run's split, kinds and layers.
/// The breakdown run's times are scaled by the ratio of the two runs' mean
/// iterations, so they still add up to the (timing) iteration.
MeasuredRun mergeRuns(MeasuredRun Timing, const MeasuredRun &Breakdown);

llvm::Expected<Measurement> measure(llvm::StringRef Executable,
                                    int64_t DeclaredBatchSize,
                                    const MeasureOptions &Options,
                                    llvm::raw_ostream &Progress);

} // namespace skyline

#endif // SKYLINE_MEASURE_H
