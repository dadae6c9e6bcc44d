//===- Driver.cpp - Wires the stages to the command line ------------------===//

#include "skyline/Driver.h"

#include "skyline/Build.h"
#include "skyline/CompilationSetup.h"
#include "skyline/Instrument.h"
#include "skyline/RunReport.h"
#include "skyline/FixExport.h"
#include "skyline/Frontend.h"
#include "skyline/ProgramModelYAML.h"
#include "skyline/TextReport.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

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
  std::string operator()(llvm::StringRef Path) const {
    auto It = Given.find(Path);
    return It == Given.end() ? Path.str() : It->second;
  }
  void apply(ProgramModel &Model) const {
    auto Fix = [&](std::string &Path) {
      if (!Path.empty())
        Path = (*this)(Path);
    };
    auto FixSite = [&](BatchSizeSite &Site) {
      Fix(Site.Literal.File);
      for (TextEdit &Edit : Site.OverrideEdits)
        Fix(Edit.Range.File);
      for (UseStep &Step : Site.Chain)
        Fix(Step.File);
    };
    for (std::string &Source : Model.Sources)
      Fix(Source);
    if (Model.BatchSize)
      FixSite(*Model.BatchSize);
    for (BatchSizeSite &Site : Model.OtherBatchSizes)
      FixSite(Site);
    for (ModuleSite &M : Model.Modules) {
      Fix(M.File);
      if (size_t Colon = M.RegisteredAt.rfind(':'); Colon != std::string::npos)
        M.RegisteredAt = (*this)(M.RegisteredAt.substr(0, Colon)) +
                         M.RegisteredAt.substr(Colon);
    }
    for (ModuleCall &Call : Model.ModuleCalls)
      Fix(Call.File);
    for (SourceSpan &Save : Model.SaveCalls)
      Fix(Save.File);
    for (std::string &File : Model.Files)
      Fix(File);
    for (TrainingLoop &Loop : Model.TrainingLoops) {
      Fix(Loop.File);
      for (OptimizerSite &Opt : Loop.Optimizers) {
        Fix(Opt.File);
        if (Opt.LearningRate)
          Fix(Opt.LearningRate->File);
      }
      for (auto *Calls : {&Loop.ZeroGradCalls, &Loop.BackwardCalls, &Loop.StepCalls})
        for (CallSite &Call : *Calls)
          Fix(Call.File);
    }
  }

private:
  llvm::StringMap<std::string> Given;
};

std::string noBatchSizeMessage(const ProgramModel &Model, const CommandLineOptions &Options) {
  std::string Files;
  for (const std::string &Source : Options.Sources)
    Files += (Files.empty() ? "" : ", ") + Source;
  if (!Options.BatchSizeVar.empty())
    return "no variable, field or macro named '" + Options.BatchSizeVar +
           "' with a literal value in " + Files +
           "; check the name (a member is Struct::field)";
  std::string Message =
      "no training batch size found in " + Files +
      "; searched make_data_loader arguments, DataLoaderOptions::batch_size and "
      "the first dimension of tensors created in the training loop";
  if (Model.TrainingLoops.empty())
    Message += " (no training loop was found: no optimizer step() or backward())";
  if (!Model.OtherBatchSizes.empty())
    Message += "; " + std::to_string(Model.OtherBatchSizes.size()) +
               " test/eval batch size(s) were found";
  return Message + "; name the variable, field or macro with --batch-size-var=NAME";
}

std::string defaultWorkDir(const CommandLineOptions &Options) {
  llvm::SmallString<256> Dir(Options.WorkDir.empty()
                                 ? (Options.BuildPath.empty() ? "skyline-work"
                                                              : Options.BuildPath + "/skyline-work")
                                 : Options.WorkDir);
  llvm::sys::fs::make_absolute(Dir);
  llvm::sys::path::remove_dots(Dir, true);
  return std::string(Dir);
}

/// Instrument, build and measure; the static model is already printed.
int runDynamicPhase(const CommandLineOptions &Options, const ProgramModel &Model,
                    const clang::tooling::CompilationDatabase &Database,
                    llvm::raw_ostream &Out, DiagnosticPrinter &ErrPrinter) {
  std::string WorkDir = defaultWorkDir(Options);
  auto Program = instrumentProgram(Model, WorkDir);
  if (!Program) {
    ErrPrinter.printPlain(DiagLevel::Error, llvm::toString(Program.takeError()));
    return ExitToolError;
  }
  for (const std::string &Note : Program->Notes)
    ErrPrinter.printPlain(DiagLevel::Remark, Note);

  BuildOptions Build{WorkDir, Options.TorchDir, Options.BuildPath, Options.LinkArgs};
  auto Built = buildProgram(*Program, projectFlags(Database, Model, *Program), Build,
                            llvm::errs());
  if (!Built) {
    ErrPrinter.printPlain(DiagLevel::Error, llvm::toString(Built.takeError()));
    return ExitToolError;
  }

  MeasureOptions Measure = Options.Measure;
  Measure.WorkDir = WorkDir;
  auto Measured = measure(Built->Executable, Model.BatchSize->Value, Measure, llvm::errs());
  if (!Measured) {
    ErrPrinter.printPlain(DiagLevel::Error, llvm::toString(Measured.takeError()));
    return ExitToolError;
  }
  nameLayers(*Measured, Program->Scopes, Model);
  Out << "\n";
  printRunTable(*Measured, Program->Scopes, Out);
  Out << llvm::format("time: build %.1f s%s, runs", Built->Seconds,
                      Built->Recompiled ? "" : " (cached)");
  double RunSeconds = 0;
  for (const MeasuredRun &Run : Measured->Runs)
    RunSeconds += Run.WallSeconds;
  Out << llvm::format(" %.1f s; work directory %s\n", RunSeconds, WorkDir.c_str());
  if (!Options.Report.empty())
    if (llvm::Error E = writeFileAtomically(
            Options.Report,
            runReportToYAML(Model, *Measured, Program->Scopes, Built->Seconds))) {
      ErrPrinter.printPlain(DiagLevel::Error, llvm::toString(std::move(E)));
      return ExitToolError;
    }
  return ExitSuccess;
}

} // namespace

int runSkylineCheck(const CommandLineOptions &Options, llvm::raw_ostream &Out,
                    llvm::raw_ostream &Err) {
  PathDisplay Display(Options.Sources);
  DiagnosticPrinter ErrPrinter(Err, std::cref(Display));

  auto Setup = loadCompilationSetup(Options.BuildPath, Options.ExtraArgs, Options.Sources);
  if (!Setup) {
    ErrPrinter.printPlain(DiagLevel::Error, llvm::toString(Setup.takeError()));
    return ExitToolError;
  }
  for (const std::string &Warning : Setup->Warnings)
    ErrPrinter.printPlain(DiagLevel::Warning, Warning);

  FrontendOptions Frontend;
  Frontend.BatchSizeVar = Options.BatchSizeVar;
  Frontend.DiagnosticStream = &Err;
  auto Model = analyzeProgram(*Setup->Database, Options.Sources, Frontend);
  if (!Model) {
    ErrPrinter.printPlain(DiagLevel::Error, llvm::toString(Model.takeError()));
    return ExitToolError;
  }
  if (!Model->BatchSize) {
    ErrPrinter.printPlain(DiagLevel::Error, noBatchSizeMessage(*Model, Options));
    return ExitToolError;
  }

  std::optional<Fix> BatchSizeFix;
  if (Options.SetBatchSize)
    BatchSizeFix = makeBatchSizeFix(*Model->BatchSize, *Options.SetBatchSize);
  if (BatchSizeFix && !Options.ExportFixes.empty()) {
    if (llvm::Error E = writeFileAtomically(
            Options.ExportFixes, fixesToYAML(Model->Sources.front(), *BatchSizeFix))) {
      ErrPrinter.printPlain(DiagLevel::Error, llvm::toString(std::move(E)));
      return ExitToolError;
    }
  }

  if (Options.Format == OutputFormat::YAML) {
    ProgramModel Shown = *Model;
    Display.apply(Shown);
    Out << programModelToYAML(Shown);
  } else {
    DiagnosticPrinter Printer(Out, std::cref(Display));
    printProgramModel(*Model, Printer, Out);
    if (BatchSizeFix)
      Printer.print(DiagLevel::Note, BatchSizeFix->At.File, BatchSizeFix->At.Line,
                    BatchSizeFix->At.Column, BatchSizeFix->At.Length,
                    BatchSizeFix->Message, BatchSizeFix->Rule,
                    BatchSizeFix->Edits.front().Text);
  }
  if (Options.AnalyzeOnly)
    return ExitSuccess;
  return runDynamicPhase(Options, *Model, *Setup->Database, Out, ErrPrinter);
}

} // namespace skyline
