//===- ExperimentFactories.h - One factory an experiment --------*- C++ -*-===//
#ifndef SKYLINE_LIB_EXPERIMENTS_EXPERIMENTFACTORIES_H
#define SKYLINE_LIB_EXPERIMENTS_EXPERIMENTFACTORIES_H

#include "skyline/Experiments.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace skyline {

#define SKYLINE_EXPERIMENT(Name) std::unique_ptr<Experiment> create##Name();
#include "Experiments.def"

/// Where a note about Module points: its construction; none without one
/// (no module, or none seen in a file).
std::optional<SourceSpan> constructionOf(const ModuleSite *Module);

/// Statements on lines of their own at the start of main, at its first
/// statement's indentation; none where no source here defines main.
std::optional<TextEdit> atMainStart(const ThreadSettings &Main,
                                    llvm::ArrayRef<llvm::StringRef> Statements);

/// The trial of one setting only a GPU run can show, as Experiment E asks
/// for it: on a CPU run, listed as not tried (WhyNotOnTheCpu); none where
/// the program has the setting on already (ProgramHasIt, from its runs);
/// else one run with the Env assignment (NAME=value).
std::vector<TrialRequest> gpuSettingTrial(const Experiment &E,
                                          const Measurement &SoFar,
                                          llvm::StringRef Setting,
                                          llvm::StringRef WhyNotOnTheCpu,
                                          bool ProgramHasIt, std::string Env);

} // namespace skyline

#endif // SKYLINE_LIB_EXPERIMENTS_EXPERIMENTFACTORIES_H
