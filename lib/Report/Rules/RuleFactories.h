//===- RuleFactories.h - One factory per rule -------------------*- C++ -*-===//
#ifndef SKYLINE_LIB_REPORT_RULES_RULEFACTORIES_H
#define SKYLINE_LIB_REPORT_RULES_RULEFACTORIES_H

#include "skyline/Rules.h"

#include <memory>

namespace skyline {

std::unique_ptr<Rule> createBatchSizeRule();
std::unique_ptr<Rule> createMemoryCapacityRule();
std::unique_ptr<Rule> createHotLayerRule();
std::unique_ptr<Rule> createMemoryBreakdownRule();
std::unique_ptr<Rule> createMallocThresholdsRule();

} // namespace skyline

#endif // SKYLINE_LIB_REPORT_RULES_RULEFACTORIES_H
