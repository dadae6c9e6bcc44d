//===- ThreadsExperiment.cpp - skyline-experiment-threads -----------------===//
//
// The program's intra-op thread count against the one most worth trying on
// this machine: the usable CPUs where it runs more threads than them (an
// oversubscribed pool) or fewer, the physical cores where it runs one a
// logical CPU on SMT siblings, else half (other work on the machine, a
// memory-bound model). The trial sets the count at its first iteration
// (SKYLINE_INTRA_OP_THREADS), after the program's own call; the fix-it
// changes the argument of the program's calls (ProgramModel::Threads), or
// adds torch::set_num_threads(N) at the start of main
// (docs/experiments/threads.md).
//
//===----------------------------------------------------------------------===//

#include "ExperimentFactories.h"
#include "SettingEdits.h"

#include "skyline/runtime/RunFormat.h"

namespace skyline {
namespace {

class ThreadsExperiment : public Experiment {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-experiment-threads",
        "Another intra-op thread count trains faster, measured",
        "skyline-check ran the program at its declared batch size with "
        "another intra-op thread count (the CPUs the runs may use, the "
        "physical cores, or half the program's), and the iteration was "
        "faster beyond the runs' noise. The fix-it sets that count: it "
        "changes the argument of the program's torch::set_num_threads call, "
        "or adds one at the start of main.",
        DiagLevel::Warning, RulePrecision::Medium};
    return Info;
  }
  llvm::StringRef name() const override { return "threads"; }
  unsigned extraRuns() const override { return 1; }

  std::vector<TrialRequest> plan(const ProgramModel &,
                                 const Measurement &SoFar,
                                 const MachineInfo &Machine) const override {
    if (SoFar.Device != DeviceType::CPU || SoFar.Threads <= 0)
      return {};
    int64_t Tried = threadsWorthTrying(SoFar.Threads, Machine);
    if (Tried <= 0 || Tried == SoFar.Threads)
      return {};
    TrialRequest Trial;
    Trial.Experiment = name().str();
    Trial.Value = Tried;
    Trial.Setting = std::to_string(Tried) + " intra-op thread" +
                    (Tried == 1 ? "" : "s") + " (the program's " +
                    std::to_string(SoFar.Threads) + ")";
    Trial.Env = {std::string(rt::env::IntraOpThreads) + "=" +
                 std::to_string(Tried)};
    return {Trial};
  }

  std::vector<TextEdit> fixIt(const ProgramModel &Program,
                              const TrialRun &Trial) const override {
    return intraOpThreadEdits(Program, Trial.Value);
  }
};

} // namespace

std::vector<TextEdit> intraOpThreadEdits(const ProgramModel &Program,
                                         int64_t Count) {
  std::string Text = std::to_string(Count);
  std::vector<TextEdit> Edits;
  for (const SourceSpan &Argument : Program.Threads.Calls)
    Edits.push_back({Argument, Text});
  if (!Edits.empty())
    return Edits;
  std::string Call = "torch::set_num_threads(" + Text + ");";
  if (auto Edit = atMainStart(Program.Threads, {Call}))
    Edits.push_back(*Edit);
  return Edits;
}

int64_t threadsWorthTrying(int64_t Current, const MachineInfo &Machine) {
  int64_t Cpus = Machine.Cpus, Cores = Machine.PhysicalCores;
  if (Current != Cpus)
    return Cpus; // oversubscribed, or CPUs left idle
  if (Cores < Cpus)
    return Cores; // one a logical CPU, on SMT siblings
  return Cpus > 1 ? Cpus / 2 : 0;
}

std::unique_ptr<Experiment> createThreadsExperiment() {
  return std::make_unique<ThreadsExperiment>();
}

} // namespace skyline
