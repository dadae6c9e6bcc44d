//===- Driver.h - What skyline-check does with its options ------*- C++ -*-===//
//
// The command line parses into CommandLineOptions; runSkylineCheck wires the
// stages together and returns the process exit code.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_DRIVER_H
#define SKYLINE_DRIVER_H

#include "skyline/Gate.h"
#include "skyline/Measure.h"
#include "skyline/Rules.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
class StringRef;
} // namespace llvm

namespace skyline {

/// Exit codes, documented in docs/user-guide.md; each has a lit test.
enum ExitCode : int {
  ExitSuccess = 0,    // warnings do not fail
  ExitToolError = 1,  // tool, input, build or run error
  ExitUsageError = 2, // bad command line
  ExitRegression = 3, // the gate found a regression
};

enum class OutputFormat { Text, YAML };

struct CommandLineOptions {
  std::vector<std::string> Sources;
  std::string BuildPath;                             // -p
  std::optional<std::vector<std::string>> ExtraArgs; // after --
  bool AnalyzeOnly = false;
  OutputFormat Format = OutputFormat::Text;
  std::optional<int64_t> SetBatchSize;
  std::string ExportFixes;
  std::string BatchSizeVar;
  // The dynamic phase (without --analyze-only).
  std::string WorkDir; // default: <build dir>/skyline-work or ./skyline-work
  std::string TorchDir;
  std::vector<std::string> LinkArgs;
  std::string Report;     // --report=FILE
  MeasureOptions Measure; // budgets, runs, run dir and arguments, device
  // The Model stage, the rules and the outputs.
  RuleOptions Rules; // margin, rounding, slack, min gain, hot-layer share
  bool ScaleLearningRate = false; // export the scaled rate with the batch size
  std::string Sarif;              // --sarif=FILE
  std::string SourceRoot;         // SARIF URIs are relative to it
  std::string Html;               // --html=FILE
  std::vector<int64_t> WhatIfBatchSizes;
  std::string FromReport; // answer from a saved report; no build, no runs
  /// --bundle=DIR: instrument and build, then write what the runs need into
  /// DIR instead of running them (Bundle.h).
  std::string Bundle;
  /// --from-runs=DIR: the runs skyline-measure made of a bundle; no build.
  std::string FromRuns;
  std::string Baseline;   // gate against this report
  GateOptions Gate;
  std::string ConfigFile; // the .skyline.yaml the defaults came from
  /// Configurations the search passed over (another user's), to be said.
  std::vector<std::string> ConfigNotes;
};

/// The work directory the options name: --work-dir, else
/// <-p dir>/skyline-work, else ./skyline-work; absolute.
std::string workDirectoryFor(const CommandLineOptions &Options);

/// The report of the latest measurement in a work directory: each measured
/// run (not --analyze-only or --from-report) writes it there, as --report
/// would; skyline-lsp shows the measured findings from it.
std::string latestReportPath(llvm::StringRef WorkDir);

int runSkylineCheck(const CommandLineOptions &Options, llvm::raw_ostream &Out,
                    llvm::raw_ostream &Err);

} // namespace skyline

#endif // SKYLINE_DRIVER_H
