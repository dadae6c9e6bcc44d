//===- ExperimentFactories.h - One factory an experiment --------*- C++ -*-===//
#ifndef SKYLINE_LIB_EXPERIMENTS_EXPERIMENTFACTORIES_H
#define SKYLINE_LIB_EXPERIMENTS_EXPERIMENTFACTORIES_H

#include "skyline/Experiments.h"

#include <memory>

namespace skyline {

#define SKYLINE_EXPERIMENT(Name) std::unique_ptr<Experiment> create##Name();
#include "Experiments.def"

} // namespace skyline

#endif // SKYLINE_LIB_EXPERIMENTS_EXPERIMENTFACTORIES_H
