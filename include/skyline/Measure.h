//===- Measure.h - Training bursts at several batch sizes -------*- C++ -*-===//
//
// The fourth stage: runs the instrumented program at the declared batch size
// first, then at larger ones toward the memory budget (doubling, and one step
// back between the last size that fit and the first that did not), each run
// a short burst that the runtime ends after its measured iterations.
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

struct MeasureOptions {
  int64_t MemoryBudget = int64_t(4) << 30; // bytes the program may hold (CPU)
  unsigned MaxRuns = 4;                    // batch sizes to try, in all
  unsigned Warmup = 2;
  unsigned Iterations = 8;
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

struct MeasuredRun {
  int64_t BatchSize = 0;
  bool OutOfMemory = false;
  unsigned Iterations = 0;
  TimeSummary IterationMs;
  double Throughput = 0;
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
};

struct Measurement {
  std::string DeviceType = "cpu";
  std::string DeviceName = "CPU";
  std::string TorchVersion; // of the LibTorch the program ran with
  int Threads = 0;          // intra-op threads the runs used
  int64_t MemoryCapacityBytes = 0;
  std::vector<MeasuredRun> Runs;
  std::vector<std::string> Problems; // runs that failed after the first
};

/// "512MiB", "8GiB", "1.5GB", "1000000" to bytes.
std::optional<int64_t> parseByteSize(llvm::StringRef Text);

/// The batch sizes to try after Declared: doubling up to MaxRuns in all.
int64_t nextBatchSize(int64_t LastFit, std::optional<int64_t> FirstOutOfMemory);

/// Reads a result file the runtime wrote.
llvm::Expected<MeasuredRun> readRunResult(llvm::StringRef Path);

llvm::Expected<Measurement> measure(llvm::StringRef Executable,
                                    int64_t DeclaredBatchSize,
                                    const MeasureOptions &Options,
                                    llvm::raw_ostream &Progress);

} // namespace skyline

#endif // SKYLINE_MEASURE_H
