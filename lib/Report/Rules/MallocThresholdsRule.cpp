//===- MallocThresholdsRule.cpp - skyline-malloc-thresholds ---------------===//
//
// A warning at the batch-size literal when the program, run as the user
// runs it (glibc's dynamic malloc thresholds), is markedly slower at the
// declared size than the runs with the thresholds pinned: glibc gives
// memory back to the system at the end of an iteration and faults it in
// again in the next. The measured times only hold with the same tunables.
//
//===----------------------------------------------------------------------===//

#include "RuleFactories.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace skyline {
namespace {

/// Slower than this with glibc's own thresholds, than even the slowest of
/// the pinned timing runs, is worth a warning: less is within what two runs
/// of one program differ by.
constexpr double MinSlowdown = 0.10;

class MallocThresholdsRule : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-malloc-thresholds",
        "The program loses time to glibc returning memory each iteration",
        "With glibc's dynamic malloc thresholds the program took markedly "
        "longer an iteration at the declared batch size than with them pinned "
        "(as skyline-check measures): glibc gives memory back to the system "
        "and faults it in again every iteration. The measured times hold with "
        "the GLIBC_TUNABLES the runs had, or a caching allocator.",
        DiagLevel::Warning, RulePrecision::High};
    return Info;
  }

  void check(const RuleContext &Context,
             std::vector<Finding> &Out) const override {
    const MeasuredRun *Run = Context.currentRun();
    if (!Run || Run->DynamicMallocMs <= 0 || Run->IterationMs.Median <= 0 ||
        Context.Measured.GlibcTunables.empty())
      return;
    // One run against several: a slow spell of the machine in the one is
    // not glibc's doing, so it must beat the slowest of them.
    double Slowest = Run->IterationMs.Median;
    for (double Median : Run->TimingRunMedians)
      Slowest = std::max(Slowest, Median);
    if (Run->DynamicMallocMs / Slowest - 1 <= MinSlowdown)
      return;
    double Slowdown = Run->DynamicMallocMs / Run->IterationMs.Median - 1;
    Finding F;
    F.Rule = std::string(id());
    F.Level = DiagLevel::Warning;
    F.At = Context.Program.BatchSize->Literal;
    F.Message =
        llvm::formatv(
            "at batch size {0} an iteration takes {1:F2} ms with glibc's "
            "dynamic malloc thresholds, {2:F0}% longer than the {3:F2} ms "
            "measured with them pinned: glibc gives memory back to the system "
            "and faults it in again each iteration; train with "
            "GLIBC_TUNABLES={4} (or a caching allocator such as jemalloc)",
            Run->BatchSize, Run->DynamicMallocMs, Slowdown * 100,
            Run->IterationMs.Median, Context.Measured.GlibcTunables)
            .str();
    Out.push_back(std::move(F));
  }
};

} // namespace

std::unique_ptr<Rule> createMallocThresholdsRule() {
  return std::make_unique<MallocThresholdsRule>();
}

} // namespace skyline
