//===- RunReport.h - The report: runs, fits, predictions --------*- C++ -*-===//
//
// The YAML of --report (docs/report.md), one schema for every stage: the
// program model, the measured runs and what the Model stage concluded. It
// reads back (--from-report, --baseline), so a saved report answers
// questions without building or running anything.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNREPORT_H
#define SKYLINE_RUNREPORT_H

#include "skyline/Measurement.h"
#include "skyline/Model.h"
#include "skyline/ProgramModel.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace skyline {

constexpr int ReportSchemaVersion = 2;

/// What decides a measurement besides the batch sizes: each part a SHA-256
/// in hex (MeasurementStore.h makes them), the device as --device named it.
/// Two measurements with equal keys measured the same program the same way.
struct MeasurementKey {
  std::string Sources;  // the program's files and their SHA-256
  std::string Flags;    // the compile commands of its sources
  std::string LibTorch; // the LibTorch it was built against
  std::string Device;   // auto, cpu or cuda
  bool operator==(const MeasurementKey &Other) const {
    return Sources == Other.Sources && Flags == Other.Flags &&
           LibTorch == Other.LibTorch && Device == Other.Device;
  }
  bool operator!=(const MeasurementKey &Other) const {
    return !(*this == Other);
  }
};

struct SavedReport {
  int SchemaVersion = ReportSchemaVersion;
  std::string SkylineVersion;
  ProgramModel Program;
  Measurement Measured;
  double BuildSeconds = 0;
  /// None in a report written before keys were kept.
  std::optional<MeasurementKey> Key;
};

/// Gives each layer row the name, file, line and type of its scope.
void nameLayers(Measurement &M, const std::vector<ScopeEntry> &Scopes,
                const ProgramModel &Model);

/// Where the runs measured the program at its own batch size, names the
/// call its size was read from (Measurement::ObservedBy) from the scope
/// table.
void nameObservedCall(Measurement &M, const std::vector<ScopeEntry> &Scopes);

/// Gives each setup statement row the file, line and text of its entry in
/// the instrumented copy's table; a row with an id the table lacks is
/// dropped (its bytes stay in the setup kind).
void nameSetupStatements(Measurement &M, const std::vector<SetupEntry> &Table);

/// The same for the host syncs' rows, from the table of host syncs.
void nameHostSyncs(Measurement &M, const std::vector<HostSyncEntry> &Table);

/// The runs as a terminal table, the memory by kind, the time split and
/// the layers that take the most time in the declared size's run.
void printRunTable(const Measurement &M, int64_t DeclaredBatchSize,
                   llvm::raw_ostream &OS);

/// The fits, the predicted points and the suggestion (or why there is none).
void printPredictions(const Analysis &A, llvm::raw_ostream &OS);

/// Where the runs measured the program at its own batch size
/// (Measurement::AtOwnBatchSize), what one size gives in place of the
/// predictions: the size and the call it was read from, the time per
/// iteration and the throughput with their 90% intervals, the peak; and
/// that no other size was predicted, and why.
void printOwnBatchSize(const Measurement &M, const Analysis &A,
                       llvm::raw_ostream &OS);

/// One line per asked size: predicted time, throughput, memory and fit.
void printWhatIf(const Analysis &A, int64_t BatchSize, llvm::raw_ostream &OS);

/// The report's YAML; Model may be null (nothing could be measured).
std::string reportToYAML(const SavedReport &Report, const Analysis *Model);

/// Reads a report that reportToYAML wrote (schema 1 has no program model).
/// What names the file in errors ("report", "baseline"). The file is read
/// within ReportLimits (InputFile.h) and every value is checked: an error
/// names the file, the key (runs[2].iteration_ms.median) and the problem.
llvm::Expected<SavedReport> readReport(llvm::StringRef Path,
                                       llvm::StringRef What = "report");

} // namespace skyline

#endif // SKYLINE_RUNREPORT_H
