//===- LoaderWorkersExperiment.cpp - skyline-experiment-loader-workers ----===//
//
// Where loading the next batch is a large share of an iteration (the
// breakdown run's data part) and the training loader has no worker threads,
// the trial gives it workers: the runtime sets them on the loader's options
// as the program makes the loader (SKYLINE_LOADER_WORKERS, through
// rt::loader_options), so batches are read and transformed while the model
// trains on the last one. A worker needs a CPU: where the program's
// intra-op threads already take every CPU, the trial gives the workers
// theirs (fewer intra-op threads, SKYLINE_INTRA_OP_THREADS), since a pool
// that waits by spinning (OpenMP's) keeps the worker from running. The
// fix-it adds `.workers(N)` to the options, or changes an existing
// workers(0), and sets the thread count where the trial did
// (docs/experiments/loader-workers.md).
//
//===----------------------------------------------------------------------===//

#include "ExperimentFactories.h"
#include "SettingEdits.h"

#include "skyline/runtime/RunFormat.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

namespace skyline {
namespace {

const DataLoaderSite *trainingLoader(const ProgramModel &Program) {
  for (const DataLoaderSite &Loader : Program.Loaders)
    if (Loader.Training)
      return &Loader;
  return nullptr;
}

class LoaderWorkersExperiment : public Experiment {
public:
  const RuleInfo &info() const override {
    static const RuleInfo Info{
        "skyline-experiment-loader-workers",
        "Loader worker threads train faster, measured",
        "Loading the next batch was a large share of an iteration and the "
        "training loader had no worker threads. skyline-check ran the "
        "program at its declared batch size with workers on the loader's "
        "options, and the iteration was faster beyond the runs' noise. The "
        "fix-it adds .workers(N) to the loader's DataLoaderOptions.",
        DiagLevel::Warning, RulePrecision::Medium};
    return Info;
  }
  llvm::StringRef name() const override { return "loader-workers"; }
  unsigned extraRuns() const override { return 1; }

  std::vector<TrialRequest> plan(const ProgramModel &Program,
                                 const Measurement &SoFar,
                                 const MachineInfo &Machine) const override {
    const DataLoaderSite *Loader = trainingLoader(Program);
    if (!Loader || (Loader->Workers && Loader->WorkersValue != 0) ||
        SoFar.Runs.empty())
      return {};
    double Share = dataShare(SoFar.Runs.front());
    int64_t Workers = loaderWorkersWorthTrying(Share, Machine);
    if (Workers <= 0)
      return {};
    TrialRequest Trial;
    Trial.Experiment = name().str();
    Trial.Value = Workers;
    Trial.Env = {std::string(rt::env::LoaderWorkers) + "=" +
                 std::to_string(Workers)};
    std::string WorkersText =
        llvm::formatv("{0} loader worker{1}", Workers, Workers == 1 ? "" : "s");
    std::string ShareText =
        llvm::formatv("loading took {0:F0}% of an iteration", Share * 100);
    int64_t Threads = SoFar.Threads;
    if (Threads > 0 && Threads + Workers > int64_t(Machine.Cpus)) {
      Trial.IntraOpThreads = std::max<int64_t>(1, Machine.Cpus - Workers);
      Trial.Env.push_back(std::string(rt::env::IntraOpThreads) + "=" +
                          std::to_string(Trial.IntraOpThreads));
      Trial.Setting =
          llvm::formatv("{0} and {1} intra-op thread{2} (the program's 0 "
                        "and {3}; {4})",
                        WorkersText, Trial.IntraOpThreads,
                        Trial.IntraOpThreads == 1 ? "" : "s", Threads,
                        ShareText)
              .str();
    } else {
      Trial.Setting = WorkersText + " (the program's 0; " + ShareText + ")";
    }
    return {Trial};
  }

  std::vector<TextEdit> fixIt(const ProgramModel &Program,
                              const TrialRun &Trial) const override {
    const DataLoaderSite *Loader = trainingLoader(Program);
    if (!Loader)
      return {};
    std::vector<TextEdit> Edits = workersEdits(Loader, Trial.Value);
    if (Trial.IntraOpThreads > 0) {
      std::vector<TextEdit> Threads =
          intraOpThreadEdits(Program, Trial.IntraOpThreads);
      if (Threads.empty())
        return {}; // the fix-it would not be what the trial ran
      Edits.insert(Edits.end(), Threads.begin(), Threads.end());
    }
    return Edits;
  }

private:
  static std::vector<TextEdit> workersEdits(const DataLoaderSite *Loader,
                                            int64_t Workers) {
    std::string Count = std::to_string(Workers);
    if (Loader->Workers)
      return {{*Loader->Workers, Count}};
    if (Loader->OptionsIsCount) {
      // make_data_loader(ds, 64) -> (ds, DataLoaderOptions(64).workers(N)):
      // two insertions, so a batch size fix-it on the 64 still applies.
      SourceSpan Start = Loader->Options, End = Loader->Options;
      Start.Length = 0;
      End.Offset += End.Length;
      End.Column += End.Length;
      End.Length = 0;
      return {{Start, "torch::data::DataLoaderOptions("},
              {End, ").workers(" + Count + ")"}};
    }
    return {{Loader->WorkersInsertAt, ".workers(" + Count + ")"}};
  }
};

} // namespace

double dataShare(const MeasuredRun &Run) {
  double Data = 0, Total = 0;
  for (const auto &[Part, Ms] : Run.TimeSplitMs) {
    Total += Ms;
    if (Part == TimePart::Data)
      Data += Ms;
  }
  return Total > 0 ? Data / Total : 0;
}

int64_t loaderWorkersWorthTrying(double DataShare, const MachineInfo &Machine) {
  // A worker overlaps loading with training only on a CPU of its own.
  if (DataShare < MinDataShare || DataShare >= 1 || Machine.Cpus < 2)
    return 0;
  // Loading L of an iteration L + T is hidden when W workers load W
  // batches in T: W >= L / T.
  int64_t Needed = int64_t(std::ceil(DataShare / (1 - DataShare) - 1e-9));
  int64_t Spare = std::min<int64_t>(Machine.Cpus - 1, 8);
  return std::clamp<int64_t>(Needed, 1, Spare);
}

std::unique_ptr<Experiment> createLoaderWorkersExperiment() {
  return std::make_unique<LoaderWorkersExperiment>();
}

} // namespace skyline
