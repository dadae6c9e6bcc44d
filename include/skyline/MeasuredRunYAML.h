//===- MeasuredRunYAML.h - A measured run, read and written -----*- C++ -*-===//
//
// A measured run is read from two files: the result file the runtime writes
// at the end of a run (its keys and names are runtime/RunFormat.h's), and
// the report's runs, which the report also writes. Both are here, with the
// checks they share, so a run's fields are named and checked once.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_MEASUREDRUNYAML_H
#define SKYLINE_MEASUREDRUNYAML_H

#include "skyline/Measurement.h"
#include "skyline/YamlFields.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace YAML {
class Emitter;
} // namespace YAML

namespace skyline {

/// Reads a result file the runtime wrote, within RunResultLimits; every
/// value is checked, and an error names the file and the key.
llvm::Expected<MeasuredRun> readRunResult(llvm::StringRef Path);

/// Writes one run of the report (docs/report.md).
void emitReportRun(YAML::Emitter &Out, const MeasuredRun &Run);

/// Reads one run of the report. Throws BadValue.
MeasuredRun readReportRun(const YamlFields &Node);

} // namespace skyline

#endif // SKYLINE_MEASUREDRUNYAML_H
