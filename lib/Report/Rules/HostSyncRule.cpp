//===- HostSyncRule.cpp - skyline-host-sync -------------------------------===//
//
// The host syncs of the training loop (a tensor's item(), cpu(), to(kCPU),
// a tensor written to a stream; the instrumented copy times each) that
// together take at least MinHostSyncShare of the mean iteration: a
// warning at the one that takes the most, a note at each other that takes
// 1% or more. On CUDA each waits for the work queued before it, so its time
// is mostly the GPU's and the queue runs dry behind it; on the CPU an op has
// finished when it returns, and the time is the call's own (formatting a
// tensor, copying it).
//
//===----------------------------------------------------------------------===//

#include "RuleFactories.h"

#include "skyline/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace skyline {
namespace {

/// The share of the iteration that makes the host syncs a finding; each
/// other sync is a note from NoteShare on.
constexpr double MinHostSyncShare = 0.05;
constexpr double NoteShare = 0.01;

/// The same file, one path maybe relative to where the other was made (a
/// saved report's model shows paths as the user gave them; the runs' table
/// keeps them absolute).
bool sameFile(llvm::StringRef A, llvm::StringRef B) {
  if (A.size() < B.size())
    std::swap(A, B);
  return A == B || (A.ends_with(B) && A[A.size() - B.size() - 1] == '/');
}

/// Where the front end found the sync (its column and extent, as the model
/// names its file); the line alone where no loop of the model has it.
SourceSpan siteOf(const ProgramModel &Program, const HostSyncMeasure &Sync) {
  for (const TrainingLoop &Loop : Program.TrainingLoops)
    for (const HostSyncSite &Site : Loop.HostSyncs)
      if (Site.At.Line == Sync.Line && Site.Text == Sync.Text &&
          sameFile(Site.At.File, Sync.File))
        return Site.At;
  return {Sync.File, Sync.Line, 1, 0, 0};
}

std::string perIteration(const HostSyncMeasure &Sync) {
  return llvm::formatv("'{0}' {1:F3} ms, {2:F1} call{3} an iteration",
                       Sync.Text, Sync.Ms, Sync.Calls,
                       Sync.Calls == 1 ? "" : "s")
      .str();
}

class HostSyncRule : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-host-sync",
        "Host syncs take a large share of the iteration time",
        "Reads of a tensor on the host in the training loop (item(), cpu(), "
        "to(kCPU), a tensor written to a stream) took 5% or more of the "
        "mean iteration, each timed on its own in the runs. On a GPU each "
        "waits for the work queued before it, and the GPU then idles while "
        "the host queues the next; read such values every N iterations, or "
        "sum them on the device and read the sum once.",
        DiagLevel::Warning,
        RulePrecision::High,
        RuleOrigin::Measurement};
    return Info;
  }

  void check(const RuleContext &Context,
             std::vector<Finding> &Out) const override {
    const MeasuredRun *Run = Context.currentRun();
    // The syncs' ms are means over the iterations (a print every tenth
    // iteration is a tenth of its time), so the iteration's is the mean.
    if (!Run || Run->IterationMs.Mean <= 0)
      return;
    std::vector<const HostSyncMeasure *> Syncs;
    double TotalMs = 0;
    for (const HostSyncMeasure &Sync : Run->HostSyncs)
      if (!Sync.File.empty()) {
        Syncs.push_back(&Sync);
        TotalMs += Sync.Ms;
      }
    double Mean = Run->IterationMs.Mean;
    double Share = TotalMs / Mean;
    if (Syncs.empty() || Share < MinHostSyncShare)
      return;
    llvm::stable_sort(Syncs,
                      [](const HostSyncMeasure *A, const HostSyncMeasure *B) {
                        return A->Ms > B->Ms;
                      });
    bool Cuda = Context.Measured.Device == DeviceType::CUDA ||
                Run->Device == DeviceType::CUDA;
    Finding Warning;
    Warning.Rule = std::string(id());
    Warning.Level = DiagLevel::Warning;
    Warning.At = siteOf(Context.Program, *Syncs.front());
    Warning.Message =
        llvm::formatv(
            "{0} host sync{1} in the training loop take{2} {3} of the mean "
            "iteration at batch size {4} ({5:F3} of {6:F3} ms); the most, "
            "{7}{8}",
            Syncs.size(), Syncs.size() == 1 ? "" : "s",
            Syncs.size() == 1 ? "s" : "", formatShare(Share), Run->BatchSize,
            TotalMs, Mean, perIteration(*Syncs.front()),
            Cuda ? ": each waits for the GPU's queued work, which then runs "
                   "dry; read such values every few iterations, or sum them "
                   "on the device and read the sum once"
                 : ": on the CPU an op has finished when it returns, so this "
                   "is the calls' own time (formatting, copying); on a GPU "
                   "each also waits for the queued work")
            .str();
    Warning.Figures = {{"hostSyncShare", Share}, {"hostSyncMs", TotalMs}};
    Out.push_back(std::move(Warning));
    for (const HostSyncMeasure *Sync : llvm::drop_begin(Syncs)) {
      if (Sync->Ms / Mean < NoteShare)
        continue;
      Finding Note;
      Note.Rule = std::string(id());
      Note.Level = DiagLevel::Note;
      Note.At = siteOf(Context.Program, *Sync);
      Note.Message =
          llvm::formatv("host sync {0} of the mean iteration: {1}",
                        formatShare(Sync->Ms / Mean), perIteration(*Sync))
              .str();
      Out.push_back(std::move(Note));
    }
  }
};

} // namespace

std::unique_ptr<Rule> createHostSyncRule() {
  return std::make_unique<HostSyncRule>();
}

} // namespace skyline
