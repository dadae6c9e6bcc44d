//===- RunResult.h - What one measured run produced -------------*- C++ -*-===//
//
// Written by the runtime at the end of a run with a small writer of its own
// (the runtime depends on LibTorch alone), read back by Measure.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_RUNRESULT_H
#define SKYLINE_RUNTIME_RUNRESULT_H

#include "skyline/runtime/ExitCodes.h"
#include "skyline/runtime/MemoryTracker.h"

#include <array>
#include <string>
#include <vector>

namespace skyline::rt {

struct Summary {
  double Median = 0, Mean = 0, Stddev = 0, Min = 0, Max = 0;
};
Summary summarize(std::vector<double> Values);

struct RunResult {
  int64_t BatchSize = 0;
  bool OutOfMemory = false;
  int Iterations = 0;
  Summary IterationMs;
  double Throughput = 0; // samples per second
  int64_t PeakBytes = 0;
  PhaseBytes PeakByPhase{};
  /// The peak by kind; the kinds add up to PeakBytes.
  struct Breakdown {
    int64_t Weights = 0, Gradients = 0, OptimizerState = 0, Activations = 0,
            Data = 0, Temporaries = 0, Untracked = 0;
  } Memory;
  /// Mean ms per measured iteration spent in each phase (construction: 0).
  std::array<double, NumPhases> TimeSplitMs{};
  /// One module-call scope's share of a measured iteration; ScopeId -1 is
  /// what ran or was allocated outside every scope.
  struct Layer {
    int ScopeId = -1;
    /// Self time, ms per iteration.
    double ForwardMs = 0;
    /// Its backward ops' self time and what autograd does after each before
    /// the next, ms per iteration.
    double BackwardMs = 0;
    /// Allocated in its forward, live at the peak.
    int64_t ActivationBytes = 0;
    /// Parameters and buffers of the module it calls (each storage counted
    /// for the innermost called module that holds it).
    int64_t WeightBytes = 0;
  };
  std::vector<Layer> Layers;
  /// Where the run ran.
  std::string TorchVersion;
  int Threads = 0; // intra-op threads
  std::string DeviceType = "cpu";
  std::string DeviceName;
};

/// Splits the peak's phases into kinds, given the bytes of the weights (the
/// modules' parameters and buffers, the optimizers' parameters) and of the
/// optimizers' gradients and state: weights were made in construction,
/// gradients and optimizer state in backward and step; the rest of each
/// phase is what it says.
RunResult::Breakdown breakDown(const PhaseBytes &AtPeak, int64_t Weights,
                               int64_t Gradients, int64_t OptimizerState);

/// Writes R as YAML to Path (through a temporary file); false on failure.
bool writeRunResult(const RunResult &R, const std::string &Path);

} // namespace skyline::rt

#endif // SKYLINE_RUNTIME_RUNRESULT_H
