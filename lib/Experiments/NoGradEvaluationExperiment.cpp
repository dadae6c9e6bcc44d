//===- NoGradEvaluationExperiment.cpp - skyline-experiment-no-grad-eval ---===//
//
// An evaluation loop (ProgramModel::EvaluationLoops) that runs the model
// outside any torch::NoGradGuard or c10::InferenceMode records the autograd
// graph of every forward: each layer's saved inputs stay alive until the
// pass's output is freed, for a backward() that never comes. The trial is
// one run that skips the training loops (SKYLINE_EVALUATION) and times the
// evaluation passes, alternately without and with a NoGradGuard, with the
// most memory each held: its baseline is in the same run, compared pass by
// pass. The fix-it declares the guard at the start of each such loop's body
// (docs/experiments/no-grad-eval.md).
//
//===----------------------------------------------------------------------===//

#include "ExperimentFactories.h"

#include "skyline/runtime/RunFormat.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

namespace skyline {
namespace {

std::string whereIs(const EvaluationLoop &Loop) {
  std::string Function = Loop.Function.empty() ? "" : Loop.Function + "(), ";
  return llvm::formatv("{0}{1}:{2}", Function,
                       llvm::sys::path::filename(Loop.File), Loop.Line)
      .str();
}

class NoGradEvaluationExperiment : public Experiment {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-experiment-no-grad-eval",
        "An evaluation loop without a no-grad guard, measured",
        "A loop runs the model's forward without backward() or step(), "
        "outside any torch::NoGradGuard or c10::InferenceMode, so autograd "
        "records every pass's graph and keeps its saved tensors until the "
        "output is freed. skyline-check ran the program's evaluation passes "
        "alternately without and with a torch::NoGradGuard, and the guarded "
        "passes were faster beyond the passes' noise or held clearly less "
        "memory. The fix-it declares the guard at the start of the loop's "
        "body.",
        DiagLevel::Warning, RulePrecision::High};
    return Info;
  }
  llvm::StringRef name() const override { return "no-grad-eval"; }
  unsigned extraRuns() const override { return 1; }
  bool pairedTrial() const override { return true; }

  std::vector<TrialRequest> plan(const ProgramModel &Program,
                                 const Measurement &,
                                 const MachineInfo &) const override {
    std::vector<const EvaluationLoop *> Loops =
        unguardedEvaluationLoops(Program);
    // The trial reaches evaluation by leaving the training loops.
    if (Loops.empty() || Program.TrainingLoops.empty())
      return {};
    TrialRequest Trial;
    Trial.Experiment = name().str();
    Trial.Value = int64_t(Loops.size());
    Trial.Paired = true;
    Trial.Env = {std::string(rt::env::Evaluation) + "=1"};
    if (Loops.size() == 1) {
      Trial.Setting = "torch::NoGradGuard in the evaluation loop of " +
                      whereIs(*Loops.front());
    } else {
      std::string Places;
      for (const EvaluationLoop *Loop : Loops)
        Places += (Places.empty() ? "" : "; ") + whereIs(*Loop);
      Trial.Setting = llvm::formatv("torch::NoGradGuard in {0} evaluation "
                                    "loops ({1})",
                                    Loops.size(), Places)
                          .str();
    }
    return {Trial};
  }

  std::vector<TextEdit> fixIt(const ProgramModel &Program,
                              const TrialRun &) const override {
    std::vector<TextEdit> Edits;
    for (const EvaluationLoop *Loop : unguardedEvaluationLoops(Program)) {
      std::string Guard = "torch::NoGradGuard " + Loop->GuardName + ";";
      if (Loop->Braces) {
        Edits.push_back({Loop->BodyStart, "\n" + Loop->Indent + Guard});
        continue;
      }
      // for (...)\n  stmt;  ->  for (...) {\n  guard;\n  stmt;\n}
      Edits.push_back({Loop->HeaderEnd, " {\n" + Loop->Indent + Guard});
      Edits.push_back({Loop->BodyEnd, "\n" + Loop->LoopIndent + "}"});
    }
    return Edits;
  }

  std::optional<SourceSpan> place(const ProgramModel &Program) const override {
    std::vector<const EvaluationLoop *> Loops =
        unguardedEvaluationLoops(Program);
    if (Loops.empty())
      return std::nullopt;
    SourceSpan At;
    At.File = Loops.front()->File;
    At.Line = Loops.front()->Line;
    At.Column = Loops.front()->Column;
    return At;
  }
};

} // namespace

std::unique_ptr<Experiment> createNoGradEvaluationExperiment() {
  return std::make_unique<NoGradEvaluationExperiment>();
}

} // namespace skyline
