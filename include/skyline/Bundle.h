//===- Bundle.h - A measure bundle: the runs without LLVM -------*- C++ -*-===//
//
// skyline-check --bundle=DIR stops before the runs and writes what they
// need into DIR: the instrumented sources with a CMake project that builds
// them against the LibTorch of the machine that runs them, the runtime's
// sources, the program built here, skyline-measure, and the plan
// (MeasurePlan.h). skyline-measure DIR runs the sweep there and writes
// DIR/runs.yaml; skyline-check --from-runs=DIR finishes the analysis where
// the sources are (docs/cluster.md).
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_BUNDLE_H
#define SKYLINE_BUNDLE_H

#include "skyline/Build.h"
#include "skyline/Instrument.h"
#include "skyline/MeasurePlan.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace skyline {

struct BundleInput {
  const InstrumentedProgram &Program;
  const ProjectFlags &Flags;
  std::string Executable;    // built here: DIR/prebuilt/
  std::string MeasureBinary; // skyline-measure to ship; empty: none
  MeasurePlan Plan;
};

/// The bundle's CMake project (DIR/project/CMakeLists.txt): every path
/// relative to the bundle, LibTorch found on the machine that builds it.
/// Notes: what of the program's build it leaves out.
std::string bundleProjectText(const InstrumentedProgram &Program,
                              const ProjectFlags &Flags,
                              std::vector<std::string> &Notes);

/// Whether Dir may take a bundle: it is new, empty, or holds one (checked
/// before the build, and again by writeBundle).
llvm::Error checkBundleDirectory(llvm::StringRef Dir);

/// Writes the bundle into Dir: a new or empty directory, or an earlier
/// bundle (its parts are replaced, its build directory kept, its runs
/// removed). Returns what it left out of the program's build, as notes.
llvm::Expected<std::vector<std::string>> writeBundle(llvm::StringRef Dir,
                                                     const BundleInput &Input);

} // namespace skyline

#endif // SKYLINE_BUNDLE_H
