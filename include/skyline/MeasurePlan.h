//===- MeasurePlan.h - What a measure bundle's runs need --------*- C++ -*-===//
//
// skyline-check --bundle=DIR writes DIR/plan.yaml beside the instrumented
// program's sources; skyline-measure reads it on the machine with the
// hardware and runs the same sweep measure() would have run here. The plan
// holds the sweep's options, the declared batch size, and what the report
// needs that only the source machine knows (the program model, the
// measurement key, the build time), so the runs file skyline-measure
// writes is a report without its analysis (docs/cluster.md).
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_MEASUREPLAN_H
#define SKYLINE_MEASUREPLAN_H

#include "skyline/Measure.h"
#include "skyline/ProgramModel.h"
#include "skyline/RunReport.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace skyline {

constexpr int MeasurePlanVersion = 1;

struct MeasurePlan {
  int Version = MeasurePlanVersion;
  std::string SkylineVersion;
  /// 0: the program's own size (Sweep.h).
  int64_t DeclaredBatchSize = 0;
  /// WorkDir is not kept: skyline-measure's runs go to the bundle.
  MeasureOptions Options;
  ProgramModel Program;
  std::optional<MeasurementKey> Key;
  double BuildSeconds = 0;
};

/// The plan as plan.yaml holds it.
std::string measurePlanToYAML(const MeasurePlan &Plan);

/// Reads a plan measurePlanToYAML wrote; every value is checked, and an
/// error names the file and the key.
llvm::Expected<MeasurePlan> readMeasurePlan(llvm::StringRef Path);

/// Where a bundle keeps its parts.
std::string bundlePlanPath(llvm::StringRef BundleDir);
std::string bundleRunsPath(llvm::StringRef BundleDir);

} // namespace skyline

#endif // SKYLINE_MEASUREPLAN_H
