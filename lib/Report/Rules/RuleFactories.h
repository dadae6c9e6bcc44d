//===- RuleFactories.h - One factory per rule -------------------*- C++ -*-===//
#ifndef SKYLINE_LIB_REPORT_RULES_RULEFACTORIES_H
#define SKYLINE_LIB_REPORT_RULES_RULEFACTORIES_H

#include "skyline/Rules.h"

#include <memory>

namespace skyline {

#define SKYLINE_RULE(Name) std::unique_ptr<Rule> create##Name();
#include "Rules.def"

} // namespace skyline

#endif // SKYLINE_LIB_REPORT_RULES_RULEFACTORIES_H
