//===- MeasurementStore.h - Measurements by what decided them -*- C++ -*-===//
//
// Each measured run of skyline-check keeps its report in its work directory
// under the key of what decided it (the program's files, the compile flags
// of its sources, the LibTorch, the device asked for), beside report.yaml,
// the latest. skyline-lsp shows the one whose key is the program's key now,
// else the latest, marked as measured before the change and saying what
// changed (docs/editors.md).
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_MEASUREMENTSTORE_H
#define SKYLINE_MEASUREMENTSTORE_H

#include "skyline/Measure.h"
#include "skyline/ProgramModel.h"
#include "skyline/RunReport.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace clang::tooling {
class CompilationDatabase;
} // namespace clang::tooling

namespace skyline {

/// How many keyed reports a work directory keeps; the oldest go first.
constexpr unsigned KeptMeasurements = 8;

/// The name --device gives Device (auto, cpu, cuda).
llvm::StringRef deviceChoiceName(DeviceChoice Device);

/// The key of a measurement of Program: the SHA-256 of its files as
/// Program.FileSha256 lists them, the compile commands DB gives each of
/// Program.Sources (directory and arguments), the LibTorch in TorchDir
/// (torchIdentity, RuntimeCache.h; an empty TorchDir is none) and Device.
MeasurementKey measurementKey(const clang::tooling::CompilationDatabase &DB,
                              const ProgramModel &Program,
                              llvm::StringRef TorchDir, DeviceChoice Device);

/// Program's key as it is now on disk: its files' SHA-256 read again (a
/// file gone or unreadable counts as changed), the rest as measurementKey.
MeasurementKey
currentMeasurementKey(const clang::tooling::CompilationDatabase &DB,
                      const ProgramModel &Program, llvm::StringRef TorchDir,
                      DeviceChoice Device);

/// The key as a file name: 24 hex digits of the SHA-256 of its parts.
std::string keyName(const MeasurementKey &Key);

/// Where a work directory keeps the report measured under Key:
/// <WorkDir>/reports/<keyName>.yaml.
std::string keptReportPath(llvm::StringRef WorkDir, const MeasurementKey &Key);

/// Keeps a report's YAML in WorkDir: under its key when it has one (the
/// oldest beyond KeptMeasurements removed), and as report.yaml
/// (latestReportPath, Driver.h). Each file is written atomically.
llvm::Error keepMeasurement(llvm::StringRef WorkDir, llvm::StringRef YAML,
                            const std::optional<MeasurementKey> &Key);

/// What differs between a measurement's key and the program's now, in this
/// order: "sources", "compile flags", "LibTorch", "device".
std::vector<std::string> keyChanges(const MeasurementKey &Then,
                                    const MeasurementKey &Now);

} // namespace skyline

#endif // SKYLINE_MEASUREMENTSTORE_H
