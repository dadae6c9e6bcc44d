//===- RunReport.h - Measured runs as a table and as YAML -------*- C++ -*-===//
#ifndef SKYLINE_RUNREPORT_H
#define SKYLINE_RUNREPORT_H

#include "skyline/Measure.h"
#include "skyline/ProgramModel.h"

#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace skyline {

/// The runs as a terminal table.
void printRunTable(const Measurement &M, llvm::raw_ostream &OS);

/// The report of docs/report.md: the program model's batch size and the runs.
std::string runReportToYAML(const ProgramModel &Model, const Measurement &M,
                            double BuildSeconds);

} // namespace skyline

#endif // SKYLINE_RUNREPORT_H
