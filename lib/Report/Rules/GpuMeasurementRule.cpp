//===- GpuMeasurementRule.cpp - skyline-gpu-measurement -------------------===//
//
// A note at the batch-size literal when a CUDA run's GPU figures are missing
// or low, and why (the run's gpu note): CUPTI not loaded, records dropped,
// kernels that no layer could be given. Without it the layers' gpu_ms, or
// its absence, would say nothing of the reason.
//
//===----------------------------------------------------------------------===//

#include "RuleFactories.h"

namespace skyline {
namespace {

class GpuMeasurementRule : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-gpu-measurement",
        "The GPU figures of a CUDA run are incomplete",
        "A CUDA run at the declared batch size could not measure all of its "
        "GPU figures (per-layer GPU time, its source, the device memory "
        "kinds); the note says what is missing and why.",
        DiagLevel::Note, RulePrecision::High};
    return Info;
  }

  void check(const RuleContext &Context,
             std::vector<Finding> &Out) const override {
    const MeasuredRun *Run = Context.currentRun();
    if (!Run || Run->GpuNote.empty())
      return;
    Finding F;
    F.Rule = std::string(id());
    F.Level = DiagLevel::Note;
    F.At = Context.Program.BatchSize->Literal;
    F.Message = "the CUDA run at batch size " + std::to_string(Run->BatchSize) +
                " measured its GPU figures in part: " + Run->GpuNote;
    Out.push_back(std::move(F));
  }
};

} // namespace

std::unique_ptr<Rule> createGpuMeasurementRule() {
  return std::make_unique<GpuMeasurementRule>();
}

} // namespace skyline
