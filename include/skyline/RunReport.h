//===- RunReport.h - Measured runs as a table and as YAML -------*- C++ -*-===//
#ifndef SKYLINE_RUNREPORT_H
#define SKYLINE_RUNREPORT_H

#include "skyline/Instrument.h"
#include "skyline/Measure.h"
#include "skyline/ProgramModel.h"

#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace skyline {

/// Gives each layer row the name, file, line and type of its scope.
void nameLayers(Measurement &M, const std::vector<ScopeEntry> &Scopes,
                const ProgramModel &Model);

/// The runs as a terminal table, and the layers that take the most forward
/// time in the last run that fit.
void printRunTable(const Measurement &M, const std::vector<ScopeEntry> &Scopes,
                   llvm::raw_ostream &OS);

/// The report of docs/report.md: the program model's batch size and the runs.
std::string runReportToYAML(const ProgramModel &Model, const Measurement &M,
                            const std::vector<ScopeEntry> &Scopes, double BuildSeconds);

} // namespace skyline

#endif // SKYLINE_RUNREPORT_H
