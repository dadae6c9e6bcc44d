//===- Driver.cpp - Wires the stages to the command line ------------------===//

#include "skyline/Driver.h"

#include "skyline/Build.h"
#include "skyline/Bundle.h"
#include "skyline/CompilationSetup.h"
#include "skyline/Config.h"
#include "skyline/Experiments.h"
#include "skyline/FileHash.h"
#include "skyline/FixExport.h"
#include "skyline/Frontend.h"
#include "skyline/FrontendCache.h"
#include "skyline/HtmlReport.h"
#include "skyline/Instrument.h"
#include "skyline/MeasurementStore.h"
#include "skyline/Model.h"
#include "skyline/OutputFiles.h"
#include "skyline/Preamble.h"
#include "skyline/ProgramModelYAML.h"
#include "skyline/RunReport.h"
#include "skyline/RuntimeCache.h"
#include "skyline/Sarif.h"
#include "skyline/TextReport.h"
#include "skyline/WorkDirLock.h"
#include "skyline/WorkDirectory.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace skyline {
namespace {

/// Maps the model's absolute paths back to what the user typed.
class PathDisplay {
public:
  explicit PathDisplay(const std::vector<std::string> &Sources) {
    for (const std::string &Source : Sources) {
      llvm::SmallString<256> Absolute(Source);
      llvm::sys::fs::make_absolute(Absolute);
      llvm::sys::path::remove_dots(Absolute, true);
      Given.try_emplace(Absolute, Source);
    }
  }
  /// A source the user did not name: shown relative to the current
  /// directory when it is below it.
  void addFound(llvm::StringRef Absolute) {
    llvm::SmallString<256> Current;
    llvm::sys::fs::current_path(Current);
    llvm::StringRef Shown = Absolute;
    if (Shown.consume_front(Current) && Shown.consume_front("/"))
      Given.try_emplace(Absolute, Shown.str());
  }
  std::string operator()(llvm::StringRef Path) const {
    auto It = Given.find(Path);
    return It == Given.end() ? Path.str() : It->second;
  }
  void apply(ProgramModel &Model) const {
    rewritePaths(Model, [&](llvm::StringRef Path) { return (*this)(Path); });
  }

private:
  llvm::StringMap<std::string> Given;
};

std::string noBatchSizeMessage(const ProgramModel &Model,
                               const CommandLineOptions &Options) {
  std::string Files;
  for (const std::string &Source : Options.Sources)
    Files += (Files.empty() ? "" : ", ") + Source;
  if (!Options.BatchSizeVar.empty())
    return "no variable, field or macro named '" + Options.BatchSizeVar +
           "' with a literal value in " + Files +
           "; check the name (a member is Struct::field)";
  if (const auto &Read = Model.RuntimeBatchSize)
    return "the training batch size '" + Read->Name +
           "' is read at run time from " + Read->ReadFrom + " (" +
           llvm::sys::path::filename(Read->Literal.File).str() + ":" +
           std::to_string(Read->Literal.Line) +
           "), with no default in the source; to predict other sizes, give "
           "it a default there, or name a variable, field or macro that holds "
           "a literal with --batch-size-var=NAME";
  std::string Message =
      "no training batch size found in " + Files +
      "; searched make_data_loader arguments, DataLoaderOptions::batch_size "
      "and "
      "the first dimension of tensors created in the training loop";
  if (Model.TrainingLoops.empty())
    Message +=
        " (no training loop was found: no optimizer step() or backward())";
  if (!Model.OtherBatchSizes.empty())
    Message += "; " + std::to_string(Model.OtherBatchSizes.size()) +
               " test/eval batch size(s) were found";
  return Message +
         "; name the variable, field or macro with --batch-size-var=NAME";
}

/// Where no training batch size was found, whether that ends the run: a
/// name the user gave that matches nothing, or a fix-it asked for, is an
/// error; else the finding is a note, and the runs measure the program at
/// its own size (docs/user-guide.md, "No batch size literal").
bool needsBatchSize(const CommandLineOptions &Options) {
  return !Options.BatchSizeVar.empty() || Options.SetBatchSize.has_value();
}

/// The note a program without a batch size literal gets: what was searched
/// and seen, and what the runs do instead.
void noteNoBatchSize(const ProgramModel &Model,
                     const CommandLineOptions &Options,
                     DiagnosticPrinter &ErrPrinter) {
  if (Model.BatchSize)
    return;
  ErrPrinter.printPlain(
      DiagLevel::Note,
      noBatchSizeMessage(Model, Options) +
          (Options.AnalyzeOnly
               ? "; without --analyze-only the runs measure the program at "
                 "its own batch size"
               : "; the runs measure the program at its own batch size, "
                 "with its arguments (--run-arg), and predict no other"));
}

std::string defaultWorkDir(const CommandLineOptions &Options) {
  llvm::SmallString<256> Dir(Options.WorkDir.empty()
                                 ? (Options.BuildPath.empty()
                                        ? "skyline-work"
                                        : Options.BuildPath + "/skyline-work")
                                 : Options.WorkDir);
  llvm::sys::fs::make_absolute(Dir);
  llvm::sys::path::remove_dots(Dir, true);
  return std::string(Dir);
}

/// Every file the options ask to write, with the option that asks.
std::vector<OutputPath> requestedOutputs(const CommandLineOptions &Options) {
  std::vector<OutputPath> Outputs;
  for (auto [Option, Path] : {std::pair<const char *, const std::string *>{
                                  "--export-fixes", &Options.ExportFixes},
                              {"--report", &Options.Report},
                              {"--sarif", &Options.Sarif},
                              {"--html", &Options.Html}})
    if (!Path->empty())
      Outputs.push_back({Option, *Path});
  return Outputs;
}

/// What the run reads before it analyzes anything.
std::vector<InputPath> givenInputs(const CommandLineOptions &Options) {
  std::vector<InputPath> Inputs;
  for (const std::string &Source : Options.Sources)
    Inputs.push_back({"source", Source});
  if (!Options.FromReport.empty())
    Inputs.push_back({"--from-report file", Options.FromReport});
  if (!Options.FromRuns.empty())
    Inputs.push_back({"--from-runs file", bundleRunsPath(Options.FromRuns)});
  if (!Options.Baseline.empty())
    Inputs.push_back({"--baseline file", Options.Baseline});
  if (!Options.ConfigFile.empty())
    Inputs.push_back({"config file", Options.ConfigFile});
  if (!Options.BuildPath.empty())
    Inputs.push_back(
        {"compilation database", Options.BuildPath + "/compile_commands.json"});
  return Inputs;
}

/// Outputs checked again once the program's own files are known (headers
/// the front end read, the sources a saved report describes).
llvm::Error checkOutputsAgainstProgram(const CommandLineOptions &Options,
                                       const ProgramModel &Program) {
  std::vector<InputPath> Inputs = givenInputs(Options);
  for (const std::string &Source : Program.Sources)
    Inputs.push_back({"source", Source});
  for (const std::string &File : Program.Files)
    Inputs.push_back({"program file", File});
  return checkOutputPaths(requestedOutputs(Options), Inputs);
}

/// The measured sweep, plus what the gate needs: a run at the baseline's
/// batch size, repeated while a throughput drop is not yet confirmed.
llvm::Expected<Measurement> measureForGate(llvm::StringRef Executable,
                                           int64_t Declared,
                                           const MeasureOptions &Options,
                                           const SavedReport *Baseline,
                                           const GateOptions &Gate) {
  auto Measured = measure(Executable, Declared, Options, llvm::errs());
  if (!Measured || !Baseline)
    return Measured;
  std::optional<int64_t> GateSize = gateBatchSize(*Baseline);
  if (!GateSize)
    return Measured;
  MeasureOptions One = Options;
  One.MaxRuns = 1;
  // The gate compares throughput and peak, which a timing run gives; each
  // repeat gets the share of the budget a size of the sweep gets.
  One.Breakdown = BreakdownRuns::None;
  One.TimingRuns = 1; // the repeats are the gate's own
  One.PlanTrials = nullptr; // the experiments ran in the sweep
  One.TimeBudgetSeconds = Options.TimeBudgetSeconds / Options.MaxRuns;
  auto RanAt = [&](int64_t Size) {
    return std::any_of(
        Measured->Runs.begin(), Measured->Runs.end(),
        [&](const MeasuredRun &Run) { return Run.BatchSize == Size; });
  };
  for (unsigned Extra = 0; Extra < Gate.Repeats; ++Extra) {
    if (RanAt(*GateSize) && !needsMoreRuns(*Baseline, *Measured, Gate))
      break;
    llvm::errs() << "skyline-check: gate: measuring batch size " << *GateSize
                 << " again\n";
    auto More = measure(Executable, *GateSize, One, llvm::errs());
    if (!More)
      return More.takeError();
    Measured->Runs.insert(Measured->Runs.end(), More->Runs.begin(),
                          More->Runs.end());
  }
  return Measured;
}

/// The sources to analyze, the given ones first, and the user's CMake target
/// when the File API names one.
struct ProgramSources {
  std::vector<std::string> Sources;
  std::optional<CMakeTarget> Target;
  std::string NoTargetReason;
};

/// For the dynamic phase, the rest of the user's target joins the given
/// sources: a program split over several .cpp files then builds whole (and
/// its layers there are measured) when only the main source was named. The
/// static phase analyzes what it is given, as clang-tidy does.
ProgramSources programSources(const CommandLineOptions &Options,
                              PathDisplay &Display,
                              DiagnosticPrinter &ErrPrinter) {
  ProgramSources Program{Options.Sources, std::nullopt, ""};
  if (Options.AnalyzeOnly || Options.BuildPath.empty())
    return Program;
  std::vector<std::string> Absolute;
  for (const std::string &Source : Options.Sources)
    Absolute.push_back(absolutePathIn(".", Source));
  std::string WorkDir = defaultWorkDir(Options);
  llvm::sys::fs::create_directories(WorkDir);
  auto Target = loadCMakeTarget(Options.BuildPath, Absolute,
                                WorkDir + "/fileapi.log", llvm::errs());
  if (!Target) {
    Program.NoTargetReason = llvm::toString(Target.takeError());
    return Program;
  }
  std::vector<std::string> Others = otherSources(*Target, Absolute);
  Program.Target = std::move(*Target);
  if (Others.empty())
    return Program;
  std::string Shown;
  for (const std::string &Other : Others) {
    Display.addFound(Other);
    Shown += (Shown.empty() ? "" : ", ") + Display(Other);
  }
  ErrPrinter.printPlain(
      DiagLevel::Note,
      "target '" + Program.Target->Name + "' of " + Options.BuildPath +
          " also compiles " + Shown + ": analyzing and instrumenting " +
          (Others.size() == 1 ? "it" : "them") + " with the given source" +
          (Options.Sources.size() == 1 ? "" : "s"));
  llvm::append_range(Program.Sources, Others);
  return Program;
}

/// The training loop shapes tensors by the batch size: a short last batch
/// fails it.
bool needsWholeBatches(const ProgramModel &Program) {
  return llvm::any_of(Program.TrainingLoops, [](const TrainingLoop &Loop) {
    return !Loop.BatchShapes.empty();
  });
}

/// The sweep's options: the command line's, with what the model and the
/// rules decide.
MeasureOptions sweepOptions(const CommandLineOptions &Options,
                            const ProgramModel &Model,
                            const std::string &WorkDir) {
  MeasureOptions Measure = Options.Measure;
  Measure.WorkDir = WorkDir;
  Measure.WholeBatchesOnly = needsWholeBatches(Model);
  Measure.RoundTo = Options.Rules.Model.RoundTo;
  Measure.ThroughputSlack = Options.Rules.Model.ThroughputSlack;
  Measure.MinGain = Options.Rules.Model.MinGain;
  if (!Measure.Experiments)
    Measure.Experiments = llvm::cantFail(selectExperiments("default"));
  Measure.PlanTrials = trialPlanner(*Measure.Experiments, Model);
  return Measure;
}

/// skyline-measure, beside this skyline-check; empty where it is not.
std::string measureBinary() {
  std::string Self = llvm::sys::fs::getMainExecutable(
      "skyline-check", reinterpret_cast<void *>(&measureBinary));
  llvm::SmallString<256> Beside(llvm::sys::path::parent_path(Self));
  llvm::sys::path::append(Beside, "skyline-measure");
  return llvm::sys::fs::can_execute(Beside) ? Beside.str().str() : "";
}

/// --bundle: instrument and build as a measured run does, then write what
/// the runs need into the bundle instead of running them (Bundle.h).
llvm::Error writeMeasureBundle(const CommandLineOptions &Options,
                               const ProgramModel &Model,
                               const clang::tooling::CompilationDatabase &DB,
                               const ProgramSources &Sources,
                               std::unique_ptr<PreambleBuild> Preamble,
                               DiagnosticPrinter &ErrPrinter) {
  std::string WorkDir = defaultWorkDir(Options);
  auto Program = instrumentProgram(Model, WorkDir);
  if (!Program)
    return Program.takeError();
  for (const std::string &Note : Program->Notes)
    ErrPrinter.printPlain(DiagLevel::Remark, Note);
  BuildOptions Build{WorkDir,           Options.TorchDir,
                     Options.BuildPath, Options.LinkArgs,
                     Sources.Target,    Sources.NoTargetReason};
  ProjectFlags Flags = projectFlags(DB, Model, *Program);
  auto Built = buildProgram(*Program, Flags, Build, llvm::errs());
  if (!Built)
    return Built.takeError();
  if (Preamble)
    llvm::consumeError(Preamble->finish());
  MeasurePlan Plan;
  Plan.SkylineVersion = SKYLINE_VERSION;
  Plan.DeclaredBatchSize = Model.BatchSize ? Model.BatchSize->Value : 0;
  Plan.Options = sweepOptions(Options, Model, "");
  // The runs start where a local sweep's would, where the node sees it.
  llvm::SmallString<256> RunDir(Plan.Options.RunDir);
  if (RunDir.empty())
    llvm::sys::fs::current_path(RunDir);
  llvm::sys::fs::make_absolute(RunDir);
  Plan.Options.RunDir = RunDir.str().str();
  Plan.Program = Model;
  Plan.Key = measurementKey(DB, Model, Built->TorchDir, Options.Measure.Device);
  Plan.BuildSeconds = Built->Seconds;
  llvm::SmallString<256> Dir(Options.Bundle);
  llvm::sys::fs::make_absolute(Dir);
  std::string Measure = measureBinary();
  auto Notes = writeBundle(
      Dir, {*Program, Flags, Built->Executable, Measure, std::move(Plan)});
  if (!Notes)
    return Notes.takeError();
  for (const std::string &Note : *Notes)
    ErrPrinter.printPlain(DiagLevel::Note, Note);
  if (Measure.empty())
    ErrPrinter.printPlain(DiagLevel::Warning,
                          "no skyline-measure beside skyline-check: the "
                          "bundle holds none (build the skyline-measure "
                          "target, or run one built on the node)");
  std::string Run = Measure.empty()
                        ? "skyline-measure " + Dir.str().str()
                        : (Dir + "/bin/skyline-measure " + Dir).str();
  llvm::errs() << "skyline-check: measure bundle written to " << Dir
               << "\nskyline-check: where the hardware is, run: " << Run
               << "\nskyline-check: then here: skyline-check --from-runs="
               << Dir << " " << llvm::join(Options.Sources, " ") << "\n";
  return llvm::Error::success();
}

/// Instrument, build and measure; the static model is already printed.
llvm::Expected<SavedReport>
runDynamicPhase(const CommandLineOptions &Options, const ProgramModel &Model,
                const clang::tooling::CompilationDatabase &Database,
                const ProgramSources &Sources, const SavedReport *Baseline,
                std::unique_ptr<PreambleBuild> Preamble,
                DiagnosticPrinter &ErrPrinter) {
  std::string WorkDir = defaultWorkDir(Options);
  auto Program = instrumentProgram(Model, WorkDir);
  if (!Program)
    return Program.takeError();
  for (const std::string &Note : Program->Notes)
    ErrPrinter.printPlain(DiagLevel::Remark, Note);

  BuildOptions Build{WorkDir,           Options.TorchDir,
                     Options.BuildPath, Options.LinkArgs,
                     Sources.Target,    Sources.NoTargetReason};
  auto Built = buildProgram(*Program, projectFlags(Database, Model, *Program),
                            Build, llvm::errs());
  if (!Built)
    return Built.takeError();
  // The preamble precompiled beside the build is finished before the runs,
  // which must have the machine to themselves.
  if (Preamble)
    if (llvm::Error E = Preamble->finish())
      ErrPrinter.printPlain(DiagLevel::Remark,
                            llvm::toString(std::move(E)) +
                                "; the next run parses the program whole");

  MeasureOptions Measure = sweepOptions(Options, Model, WorkDir);
  // No batch size literal: 0, the program's own size (Sweep.h).
  auto Measured = measureForGate(Built->Executable,
                                 Model.BatchSize ? Model.BatchSize->Value : 0,
                                 Measure, Baseline, Options.Gate);
  if (!Measured)
    return Measured.takeError();
  nameLayers(*Measured, Program->Scopes, Model);
  nameObservedCall(*Measured, Program->Scopes);
  nameSetupStatements(*Measured, Program->SetupStatements);
  nameHostSyncs(*Measured, Program->HostSyncs);
  llvm::errs() << llvm::format(
      "skyline-check: build %.1f s%s, runs %.1f s; work directory %s\n",
      Built->Seconds, Built->Recompiled ? "" : " (cached)",
      totalRunSeconds(*Measured), WorkDir.c_str());
  SavedReport Report;
  Report.SkylineVersion = SKYLINE_VERSION;
  Report.Program = Model;
  Report.Measured = std::move(*Measured);
  Report.BuildSeconds = Built->Seconds;
  Report.Key =
      measurementKey(Database, Model, Built->TorchDir, Options.Measure.Device);
  return Report;
}

/// The front end's model: the work directory's from the last run where the
/// program is unchanged (FrontendCache.h), else a new parse, through the
/// program's precompiled preamble where the cache has it (Preamble.h), kept
/// for the next run. A whole parse starts precompiling the preamble, in
/// Preamble, for the next parse: the instrumented build leaves a core
/// free. --analyze-only writes no model and starts no preamble (it may
/// delete one that no longer loads).
llvm::Expected<ProgramModel>
analyzeOrReuse(const CommandLineOptions &Options,
               const clang::tooling::CompilationDatabase &Database,
               llvm::ArrayRef<std::string> Sources, FrontendOptions Frontend,
               std::unique_ptr<PreambleBuild> &Preamble,
               llvm::raw_ostream &Err) {
  if (Options.AnalyzeOnly)
    return analyzeWithPreamble(
        Database, Sources, Frontend,
        planPreamble(Database, Sources, preambleDirectory()));
  std::string Path = defaultWorkDir(Options) + "/program-model.yaml";
  std::string Key = frontendCacheKey(Database, Sources, Frontend);
  if (std::optional<ProgramModel> Cached = readCachedProgram(Path, Key)) {
    Err << "skyline-check: the program is unchanged since the last run: its "
           "model comes from "
        << Path << "\n";
    return std::move(*Cached);
  }
  std::vector<std::string> SystemFiles;
  Frontend.SystemFilesRead = &SystemFiles;
  // Planned only now: a kept model needs no parse, nor the sources read.
  std::optional<PreamblePlan> Plan =
      planPreamble(Database, Sources, preambleDirectory());
  PreambleUse Use = PreambleUse::None;
  auto Model = analyzeWithPreamble(Database, Sources, Frontend, Plan, &Use);
  if (!Model)
    return Model.takeError();
  // One that did not load is made anew by the next run that parses, not
  // this one: where it never loads, every other run pays for it, not each.
  if (Plan && Use == PreambleUse::None) {
    auto Started = PreambleBuild::start(*Plan, SystemFiles);
    if (Started)
      Preamble = std::move(*Started);
    else
      Err << "skyline-check: note: the program's preamble is not "
             "precompiled: "
          << llvm::toString(Started.takeError()) << "\n";
  }
  // A cache that cannot be written costs the next run a parse, no more.
  if (llvm::Error E = writeCachedProgram(Path, Key, *Model, SystemFiles))
    Err << "skyline-check: note: the program's model is not kept for the "
           "next run: "
        << llvm::toString(std::move(E)) << "\n";
  return Model;
}

std::string mainSource(const SavedReport &Report) {
  if (!Report.Program.Sources.empty())
    return Report.Program.Sources.front();
  return Report.Program.BatchSize ? Report.Program.BatchSize->Literal.File : "";
}

/// A saved report's fix-its hold only for the text it was made from: from
/// a report whose files changed (or that names files it does not describe)
/// they are refused where exported, and left out elsewhere, with a warning.
llvm::Error dropStaleFixes(const CommandLineOptions &Options,
                           const ProgramModel &Program,
                           std::vector<Finding> &Findings,
                           DiagnosticPrinter &ErrPrinter) {
  std::optional<std::string> Stale = whyFixesAreStale(Findings, Program);
  if (!Stale)
    return llvm::Error::success();
  std::string Source = Program.Sources.empty() ? std::string("<source>")
                                               : Program.Sources.front();
  std::string Again = "measure again to get fix-its for the code as it is "
                      "now (skyline-check " +
                      Source +
                      " -p <build dir> --report=" + Options.FromReport + ")";
  if (!Options.ExportFixes.empty())
    return llvm::createStringError(
        std::errc::invalid_argument,
        "cannot export fix-its from report '%s': %s; its offsets would land "
        "on other text: %s",
        Options.FromReport.c_str(), Stale->c_str(), Again.c_str());
  ErrPrinter.printPlain(DiagLevel::Warning,
                        "the fix-its of report '" + Options.FromReport +
                            "' are left out: " + *Stale + "; " + Again);
  for (Finding &F : Findings)
    F.Edits.clear();
  return llvm::Error::success();
}

void printVerdict(const GateVerdict &Verdict, llvm::raw_ostream &Out) {
  Out << "gate at batch size " << Verdict.BatchSize << ": ";
  if (!Verdict.CannotCompare.empty()) {
    Out << "cannot compare: " << Verdict.CannotCompare << "\n";
    return;
  }
  if (Verdict.ThroughputChange)
    Out << llvm::format("throughput %+.1f%% (noise %.1f%%, %u run(s)), ",
                        *Verdict.ThroughputChange * 100,
                        Verdict.ThroughputNoise * 100, Verdict.RunsCompared);
  if (Verdict.MemoryChange)
    Out << llvm::format("peak memory %+.2f%%, ", *Verdict.MemoryChange * 100);
  Out << (Verdict.Regressed ? "REGRESSION" : "pass") << "\n";
  auto Effect = [](const TrialEffect &E) {
    if (E.Verdict == TrialVerdict::Failed ||
        E.Verdict == TrialVerdict::NotTried)
      return std::string(verdictName(E.Verdict));
    std::string Text;
    llvm::raw_string_ostream(Text)
        << llvm::format("%+.1f%% (%.1f%% to %.1f%%, %s)", E.Gain * 100,
                        E.Range.Low * 100, E.Range.High * 100,
                        verdictName(E.Verdict));
    return Text;
  };
  for (const ExperimentComparison &C : Verdict.Experiments)
    Out << "gate: experiment " << C.Experiment << " (" << C.Setting
        << "): " << Effect(C.Now) << " now, " << Effect(C.Then)
        << " in the baseline\n";
  for (const std::string &Skipped : Verdict.ExperimentsNotCompared)
    Out << "gate: experiment " << Skipped << "; not compared\n";
}

/// The program model on Out: YAML with --format=yaml, else its notes.
void showProgramModel(const CommandLineOptions &Options,
                      const ProgramModel &Model, const PathDisplay &Display,
                      llvm::raw_ostream &Out) {
  if (Options.Format == OutputFormat::YAML) {
    ProgramModel Shown = Model;
    Display.apply(Shown);
    Out << programModelToYAML(Shown);
    return;
  }
  DiagnosticPrinter Printer(Out, std::cref(Display));
  printProgramModel(Model, Printer, Out);
}

/// The sources named beside --from-report: each must exist, and one the
/// report does not describe is said (the answer is about the report's).
llvm::Error checkSourcesOfReport(const CommandLineOptions &Options,
                                 const SavedReport &Report,
                                 DiagnosticPrinter &ErrPrinter) {
  for (const std::string &Source : Options.Sources) {
    if (!llvm::sys::fs::exists(Source))
      return llvm::createStringError(
          std::errc::no_such_file_or_directory,
          "no such file: '%s' (named beside --from-report=%s)", Source.c_str(),
          Options.FromReport.c_str());
    llvm::sys::fs::UniqueID Given, Described;
    bool Known = false;
    if (!llvm::sys::fs::getUniqueID(Source, Given))
      for (const std::string &Path : Report.Program.Sources)
        Known = Known || (!llvm::sys::fs::getUniqueID(Path, Described) &&
                          Described == Given);
    if (!Known)
      ErrPrinter.printPlain(
          DiagLevel::Warning,
          "'" + Source + "' is not a source of the program the report '" +
              Options.FromReport + "' describes (" +
              llvm::join(Report.Program.Sources, ", ") +
              "); the answer is about that program");
  }
  return llvm::Error::success();
}

/// The rules' findings on Report, and the fix-it --set-batch-size asks for;
/// from a saved report, its stale fix-its left out (refused where they are
/// exported: an error).
llvm::Expected<std::vector<Finding>>
ruleFindings(const CommandLineOptions &Options, const SavedReport &Report,
             const Analysis &Model, DiagnosticPrinter &ErrPrinter) {
  const ProgramModel &Program = Report.Program;
  std::vector<Finding> Findings;
  if (Program.BatchSize)
    Findings = runRules({Program, Report.Measured, Model, Options.Rules});
  if (Options.SetBatchSize && Program.BatchSize)
    addRequestedBatchSize(Findings, *Program.BatchSize, *Options.SetBatchSize);
  if (!Options.FromReport.empty())
    if (llvm::Error E = dropStaleFixes(Options, Program, Findings, ErrPrinter))
      return std::move(E);
  return Findings;
}

/// The gate's verdict on Report against Baseline; its findings, but those
/// silenced, join Findings.
GateVerdict gateAgainstBaseline(const CommandLineOptions &Options,
                                const SavedReport &Report,
                                const SavedReport &Baseline,
                                std::vector<Finding> &Findings) {
  const ProgramModel &Program = Report.Program;
  SourceSpan At = Program.BatchSize ? Program.BatchSize->Literal : SourceSpan();
  GateVerdict Verdict =
      compareWithBaseline(Baseline, Report.Measured, At, Options.Gate);
  if (std::optional<std::string> Foreign =
          whyAnotherProgram(Baseline.Program, Program))
    Verdict.CannotCompare = *Foreign;
  std::vector<Finding> GateFindings = dropSilenced(Verdict.Findings);
  Findings.insert(Findings.end(), GateFindings.begin(), GateFindings.end());
  return Verdict;
}

/// The answer on the terminal: the runs, the predictions and the what-ifs
/// asked for, the gate's verdict, then the findings as diagnostics.
void printConclusion(const CommandLineOptions &Options,
                     const SavedReport &Report, int64_t Declared,
                     const Analysis &Model,
                     const std::optional<GateVerdict> &Verdict,
                     const std::vector<Finding> &Findings,
                     const PathDisplay &Display, llvm::raw_ostream &Out) {
  Out << "\n";
  printRunTable(Report.Measured, Declared, Out);
  if (Report.Measured.AtOwnBatchSize)
    printOwnBatchSize(Report.Measured, Model, Out);
  else
    printPredictions(Model, Out);
  for (int64_t Size : Options.WhatIfBatchSizes)
    printWhatIf(Model, Size, Out);
  if (Verdict)
    printVerdict(*Verdict, Out);
  if (!Findings.empty())
    Out << "\n";
  DiagnosticPrinter Printer(Out, std::cref(Display));
  for (const Finding &F : Findings)
    Printer.print(F);
}

/// --sarif's options: URIs relative to --source-root (else the default root
/// of the current directory), and one automation id a program.
SarifOptions sarifOptions(const CommandLineOptions &Options,
                          llvm::StringRef Main) {
  SarifOptions Sarif;
  Sarif.SourceRoot =
      Options.SourceRoot.empty() ? defaultSourceRoot(".") : Options.SourceRoot;
  llvm::SmallString<256> Root(Sarif.SourceRoot);
  llvm::sys::fs::make_absolute(Root);
  Sarif.SourceRoot = std::string(Root);
  Sarif.ToolVersion = SKYLINE_VERSION;
  // GitHub's category is the id up to its last '/': one per program.
  Sarif.AutomationId =
      "skyline-check/" + llvm::sys::path::stem(Main).str() + "/";
  return Sarif;
}

/// What --html's page shows, its paths as the user typed them.
HtmlReportInput htmlInput(const SavedReport &Report, const Analysis &Model,
                          const std::vector<Finding> &Findings,
                          const PathDisplay &Display, llvm::StringRef Main) {
  HtmlReportInput Html;
  Html.Title = "skyline-check: " + Display(Main);
  if (const auto &BatchSize = Report.Program.BatchSize) {
    Html.BatchSizeName = BatchSize->Name;
    Html.BatchSizeLocation = Display(BatchSize->Literal.File) + ":" +
                             std::to_string(BatchSize->Literal.Line);
  }
  Html.Measured = &Report.Measured;
  Html.Model = &Model;
  Html.Findings = Findings;
  return Html;
}

/// Every output file asked for, written all together or none at all.
llvm::Error writeOutputFiles(const CommandLineOptions &Options,
                             const SavedReport &Report, const Analysis &Model,
                             const std::vector<Finding> &Findings,
                             const PathDisplay &Display) {
  std::string Main = mainSource(Report);
  OutputTransaction Files;
  if (!Options.ExportFixes.empty())
    Files.add({"--export-fixes", Options.ExportFixes},
              fixesToYAML(Main, Findings, Options.ScaleLearningRate));
  if (!Options.Report.empty())
    Files.add({"--report", Options.Report}, reportToYAML(Report, &Model));
  if (!Options.Sarif.empty())
    Files.add({"--sarif", Options.Sarif},
              findingsToSarif(Findings, sarifOptions(Options, Main)));
  if (!Options.Html.empty())
    Files.add(
        {"--html", Options.Html},
        renderHtmlReport(htmlInput(Report, Model, Findings, Display, Main)));
  return Files.commit();
}

/// The gate's answer as the exit status: a gate that cannot compare is an
/// error, said; a regression fails; else success.
int gateExitStatus(const CommandLineOptions &Options,
                   const std::optional<GateVerdict> &Verdict,
                   DiagnosticPrinter &ErrPrinter) {
  if (Verdict && !Verdict->CannotCompare.empty()) {
    ErrPrinter.printPlain(
        DiagLevel::Error,
        "the gate cannot compare this run with baseline '" + Options.Baseline +
            "': " + Verdict->CannotCompare +
            "; a gate that cannot compare does not pass (make a new "
            "baseline with --report, or measure the baseline's batch size)");
    return ExitToolError;
  }
  return Verdict && Verdict->Regressed ? ExitRegression : ExitSuccess;
}

/// What every run ends with, measured now or read from a report: the
/// Model stage, the rules, the gate, the terminal and the output files.
int concludeAnalysis(const CommandLineOptions &Options, SavedReport &Report,
                     const SavedReport *Baseline, const PathDisplay &Display,
                     llvm::raw_ostream &Out, DiagnosticPrinter &ErrPrinter) {
  const ProgramModel &Program = Report.Program;
  int64_t Declared = Program.BatchSize ? Program.BatchSize->Value : 0;
  ModelOptions ForThisProgram = Options.Rules.Model;
  ForThisProgram.WholeBatchesOnly = needsWholeBatches(Program);
  Analysis Model = analyze(Report.Measured, Declared, ForThisProgram);

  auto Findings = ruleFindings(Options, Report, Model, ErrPrinter);
  if (!Findings) {
    ErrPrinter.printPlain(DiagLevel::Error,
                          llvm::toString(Findings.takeError()));
    return ExitToolError;
  }
  std::optional<GateVerdict> Verdict;
  if (Baseline)
    Verdict = gateAgainstBaseline(Options, Report, *Baseline, *Findings);
  printConclusion(Options, Report, Declared, Model, Verdict, *Findings, Display,
                  Out);
  if (llvm::Error E =
          writeOutputFiles(Options, Report, Model, *Findings, Display)) {
    ErrPrinter.printPlain(DiagLevel::Error, llvm::toString(std::move(E)));
    return ExitToolError;
  }
  // The measurement stays in the work directory, by its key and as the
  // latest, where skyline-lsp finds it (docs/editors.md); it is a cache, so
  // failing to keep it only warns.
  if (Options.FromReport.empty())
    if (llvm::Error E = keepMeasurement(
            defaultWorkDir(Options), reportToYAML(Report, &Model), Report.Key))
      ErrPrinter.printPlain(DiagLevel::Warning,
                            "the work directory's report was not kept: " +
                                llvm::toString(std::move(E)));
  return gateExitStatus(Options, Verdict, ErrPrinter);
}

/// --from-runs: the runs skyline-measure made of a bundle, as a report of
/// this program. They belong to it where every source named is one it
/// measured and no file of it changed since --bundle; their layers and
/// setup statements are named from its instrumented copy, made again.
llvm::Expected<SavedReport> readBundleRuns(const CommandLineOptions &Options) {
  std::string Path = bundleRunsPath(Options.FromRuns);
  if (!llvm::sys::fs::exists(Path))
    return llvm::createStringError(
        std::errc::no_such_file_or_directory,
        "--from-runs=%s: no runs.yaml there; run skyline-measure %s where "
        "the hardware is first (docs/cluster.md)",
        Options.FromRuns.c_str(), Options.FromRuns.c_str());
  auto Saved = readReport(Path, "runs file");
  if (!Saved)
    return Saved.takeError();
  const ProgramModel &Program = Saved->Program;
  for (const std::string &Source : Options.Sources) {
    llvm::sys::fs::UniqueID Given, Described;
    bool Known = false;
    if (!llvm::sys::fs::getUniqueID(Source, Given))
      for (const std::string &File : Program.Sources)
        Known = Known || (!llvm::sys::fs::getUniqueID(File, Described) &&
                          Described == Given);
    if (!Known)
      return llvm::createStringError(
          std::errc::invalid_argument,
          "'%s' is not a source of the program the runs in '%s' measured "
          "(%s); bundle this program with --bundle=DIR",
          Source.c_str(), Path.c_str(),
          llvm::join(Program.Sources, ", ").c_str());
  }
  for (const auto &[File, Digest] : Program.FileSha256)
    if (sha256OfFile(File) != Digest)
      return llvm::createStringError(
          std::errc::invalid_argument,
          "'%s' changed since it was bundled: the runs in '%s' measured its "
          "earlier text; bundle and measure again (--bundle=DIR, then "
          "skyline-measure DIR)",
          File.c_str(), Path.c_str());
  auto Copy = instrumentProgram(Program, defaultWorkDir(Options));
  if (!Copy)
    return Copy.takeError();
  nameLayers(Saved->Measured, Copy->Scopes, Program);
  nameObservedCall(Saved->Measured, Copy->Scopes);
  nameSetupStatements(Saved->Measured, Copy->SetupStatements);
  nameHostSyncs(Saved->Measured, Copy->HostSyncs);
  return Saved;
}

llvm::Expected<std::optional<SavedReport>>
loadBaseline(const CommandLineOptions &Options) {
  if (Options.Baseline.empty())
    return std::nullopt;
  auto Baseline = readReport(Options.Baseline, "baseline");
  if (!Baseline)
    return Baseline.takeError();
  if (!gateBatchSize(*Baseline))
    return llvm::createStringError(
        std::errc::invalid_argument,
        "baseline '%s' has no run that fit: nothing to compare with",
        Options.Baseline.c_str());
  return std::optional<SavedReport>(std::move(*Baseline));
}

} // namespace

std::string workDirectoryFor(const CommandLineOptions &Options) {
  return defaultWorkDir(Options);
}

std::string latestReportPath(llvm::StringRef WorkDir) {
  return (WorkDir + "/report.yaml").str();
}

int runSkylineCheck(const CommandLineOptions &Options, llvm::raw_ostream &Out,
                    llvm::raw_ostream &Err) {
  PathDisplay Display(Options.Sources);
  DiagnosticPrinter ErrPrinter(Err, std::cref(Display));
  auto Fail = [&](llvm::Error E) {
    ErrPrinter.printPlain(DiagLevel::Error, llvm::toString(std::move(E)));
    return ExitToolError;
  };
  for (const std::string &Note : Options.ConfigNotes)
    ErrPrinter.printPlain(DiagLevel::Warning, Note);
  if (!Options.ConfigFile.empty())
    ErrPrinter.printPlain(DiagLevel::Note,
                          "option defaults from config file '" +
                              Options.ConfigFile + "'");
  // Before any work: a bad output path is found now, not after the runs.
  if (llvm::Error E =
          checkOutputPaths(requestedOutputs(Options), givenInputs(Options)))
    return Fail(std::move(E));
  if (!Options.Bundle.empty())
    if (llvm::Error E = checkBundleDirectory(Options.Bundle))
      return Fail(std::move(E));
  auto Baseline = loadBaseline(Options);
  if (!Baseline)
    return Fail(Baseline.takeError());
  const SavedReport *BaselineReport = *Baseline ? &**Baseline : nullptr;

  if (!Options.FromReport.empty()) {
    auto Saved = readReport(Options.FromReport);
    if (!Saved)
      return Fail(Saved.takeError());
    if (llvm::Error E = checkSourcesOfReport(Options, *Saved, ErrPrinter))
      return Fail(std::move(E));
    if (llvm::Error E = checkOutputsAgainstProgram(Options, Saved->Program))
      return Fail(std::move(E));
    return concludeAnalysis(Options, *Saved, BaselineReport, Display, Out,
                            ErrPrinter);
  }

  // One instance per work directory, before its first use: two would
  // rebuild and run under each other.
  if (!Options.AnalyzeOnly) {
    if (llvm::Error E = claimWorkDirectory(defaultWorkDir(Options)))
      return Fail(std::move(E));
    if (llvm::Error E = lockWorkDirectory(defaultWorkDir(Options)))
      return Fail(std::move(E));
  }
  if (!Options.FromRuns.empty()) {
    auto Saved = readBundleRuns(Options);
    if (!Saved)
      return Fail(Saved.takeError());
    if (llvm::Error E = checkOutputsAgainstProgram(Options, Saved->Program))
      return Fail(std::move(E));
    showProgramModel(Options, Saved->Program, Display, Out);
    return concludeAnalysis(Options, *Saved, BaselineReport, Display, Out,
                            ErrPrinter);
  }
  ProgramSources Sources = programSources(Options, Display, ErrPrinter);
  auto Setup = loadCompilationSetup(Options.BuildPath, Options.ExtraArgs,
                                    Sources.Sources);
  if (!Setup)
    return Fail(Setup.takeError());
  for (const std::string &Warning : Setup->Warnings)
    ErrPrinter.printPlain(DiagLevel::Warning, Warning);
  for (const std::string &Note : Setup->Notes)
    ErrPrinter.printPlain(DiagLevel::Note, Note);

  FrontendOptions Frontend;
  Frontend.BatchSizeVar = Options.BatchSizeVar;
  Frontend.DiagnosticStream = &Err;
  // As clang-tidy: the facts outside broken code are still facts.
  Frontend.AcceptCompileErrors = true;
  unsigned CompileErrors = 0;
  Frontend.CompileErrorsSeen = &CompileErrors;
  std::unique_ptr<PreambleBuild> Preamble;
  auto Model = analyzeOrReuse(Options, *Setup->Database, Sources.Sources,
                              Frontend, Preamble, Err);
  if (!Model)
    return Fail(Model.takeError());
  // --analyze-only has only clang's word: code that does not compile gets
  // its model shown and no fix-it (as clang-tidy without --fix-errors). A
  // measurement goes on: the program's own compiler builds it, or says why.
  if (Options.AnalyzeOnly && CompileErrors) {
    showProgramModel(Options, *Model, Display, Out);
    ErrPrinter.printPlain(
        DiagLevel::Error,
        "the program does not compile; fix the errors above, or check the "
        "compile command (-p DIR or flags after --); the model above is what "
        "clang could read, and no fix-it was written");
    return ExitToolError;
  }
  if (!Model->BatchSize && needsBatchSize(Options)) {
    // What was found is shown all the same (the layers, the loops, the
    // evaluation sizes): a batch size not found is one fact of many.
    showProgramModel(Options, *Model, Display, Out);
    ErrPrinter.printPlain(DiagLevel::Error,
                          noBatchSizeMessage(*Model, Options));
    return ExitToolError;
  }
  if (llvm::Error E = checkOutputsAgainstProgram(Options, *Model))
    return Fail(std::move(E));

  if (Options.AnalyzeOnly) {
    std::optional<Finding> BatchSizeFix;
    if (Options.SetBatchSize)
      BatchSizeFix = makeBatchSizeFix(*Model->BatchSize, *Options.SetBatchSize);
    if (BatchSizeFix && !Options.ExportFixes.empty()) {
      OutputTransaction Fixes;
      Fixes.add({"--export-fixes", Options.ExportFixes},
                fixesToYAML(Model->Sources.front(), *BatchSizeFix));
      if (llvm::Error E = Fixes.commit())
        return Fail(std::move(E));
    }
    showProgramModel(Options, *Model, Display, Out);
    if (BatchSizeFix && Options.Format != OutputFormat::YAML) {
      DiagnosticPrinter Printer(Out, std::cref(Display));
      Printer.print(*BatchSizeFix);
    }
    noteNoBatchSize(*Model, Options, ErrPrinter);
    return ExitSuccess;
  }

  showProgramModel(Options, *Model, Display, Out);
  noteNoBatchSize(*Model, Options, ErrPrinter);
  if (!Options.Bundle.empty()) {
    if (llvm::Error E =
            writeMeasureBundle(Options, *Model, *Setup->Database, Sources,
                               std::move(Preamble), ErrPrinter))
      return Fail(std::move(E));
    return ExitSuccess;
  }
  auto Report =
      runDynamicPhase(Options, *Model, *Setup->Database, Sources,
                      BaselineReport, std::move(Preamble), ErrPrinter);
  if (!Report)
    return Fail(Report.takeError());
  return concludeAnalysis(Options, *Report, BaselineReport, Display, Out,
                          ErrPrinter);
}

} // namespace skyline
