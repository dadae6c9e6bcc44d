//===- GateRules.cpp - The gate's findings, declared ----------------------===//
//
// The gate (lib/Gate) compares a run with a baseline and makes these
// findings; they are declared here, below the gate, because the catalog and
// SARIF list them with the measured rules.
//
//===----------------------------------------------------------------------===//

#include "skyline/Rules.h"

namespace skyline::rules {

const RuleInfo &throughputRegression() {
  static const RuleInfo Info{
      "skyline-throughput-regression",
      "Throughput dropped against the baseline",
      "Throughput at the baseline's batch size is lower than the baseline's "
      "by more than "
      "--max-throughput-drop, after repeated measurements and with the noise "
      "taken into "
      "account.",
      DiagLevel::Error,
      RulePrecision::Medium,
      RuleOrigin::Gate};
  return Info;
}

const RuleInfo &memoryRegression() {
  static const RuleInfo Info{
      "skyline-memory-regression",
      "Peak memory grew against the baseline",
      "Peak memory at the baseline's batch size is higher than the baseline's "
      "by more than "
      "--max-memory-growth.",
      DiagLevel::Error,
      RulePrecision::High,
      RuleOrigin::Gate};
  return Info;
}

const RuleInfo &baselineEnvironment() {
  static const RuleInfo Info{
      "skyline-baseline-environment",
      "The baseline ran in a different environment",
      "The baseline report was measured with another LibTorch version, "
      "device, thread "
      "count or memory capacity; the gate still compares, but differences may "
      "come from the "
      "environment rather than the code.",
      DiagLevel::Warning,
      RulePrecision::High,
      RuleOrigin::Gate};
  return Info;
}

} // namespace skyline::rules
