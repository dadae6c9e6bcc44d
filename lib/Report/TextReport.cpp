//===- TextReport.cpp - clang-style diagnostics on the terminal -----------===//

#include "skyline/TextReport.h"

#include "skyline/InputFile.h"
#include "skyline/Rules.h"
#include "skyline/TerminalText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace skyline {

DiagnosticPrinter::DiagnosticPrinter(
    llvm::raw_ostream &OS,
    std::function<std::string(llvm::StringRef)> DisplayPath)
    : OS(OS), DisplayPath(std::move(DisplayPath)) {}

DiagnosticPrinter::~DiagnosticPrinter() = default;

const char *diagLevelName(DiagLevel Level) {
  switch (Level) {
  case DiagLevel::Note:
    return "note";
  case DiagLevel::Remark:
    return "remark";
  case DiagLevel::Warning:
    return "warning";
  case DiagLevel::Error:
    return "error";
  }
  return "note";
}

std::optional<std::string> DiagnosticPrinter::lineText(llvm::StringRef File,
                                                       unsigned Line) {
  auto It = Files.find(File);
  if (It == Files.end()) {
    // A saved report can name any path: regular files only, bounded.
    It = Files.try_emplace(File, readSourceBuffer(File)).first;
  }
  if (!It->second || Line == 0)
    return std::nullopt;
  llvm::StringRef Rest = It->second->getBuffer();
  for (unsigned I = 1; I < Line; ++I) {
    size_t NewLine = Rest.find('\n');
    if (NewLine == llvm::StringRef::npos)
      return std::nullopt;
    Rest = Rest.drop_front(NewLine + 1);
  }
  return Rest.take_until([](char C) { return C == '\n' || C == '\r'; }).str();
}

void DiagnosticPrinter::print(DiagLevel Level, llvm::StringRef File,
                              unsigned Line, unsigned Column, unsigned Length,
                              llvm::StringRef Message, llvm::StringRef Rule,
                              std::optional<std::string> FixIt) {
  // Names in the message come from sources and reports: escaped, so none
  // drives the terminal or starts a line CI reads as a command.
  OS << escapeForTerminal(DisplayPath(File)) << ":" << Line;
  if (Column)
    OS << ":" << Column;
  OS << ": " << diagLevelName(Level) << ": " << escapeForTerminal(Message);
  if (!Rule.empty())
    OS << " [" << escapeForTerminal(Rule) << "]";
  OS << "\n";
  std::optional<std::string> Text = lineText(File, Line);
  if (!Text || Column == 0)
    return;
  *Text = escapeForTerminal(*Text);
  if (FixIt)
    FixIt = escapeForTerminal(*FixIt);
  OS << *Text << "\n";
  // Tabs keep their width so the caret lines up under the source.
  std::string Indent;
  for (unsigned I = 0; I + 1 < Column && I < Text->size(); ++I)
    Indent += (*Text)[I] == '\t' ? '\t' : ' ';
  OS << Indent << "^";
  unsigned Visible = std::min<unsigned>(
      Length, Text->size() >= Column ? Text->size() - Column + 1 : 1);
  for (unsigned I = 1; I < Visible; ++I)
    OS << "~";
  OS << "\n";
  if (FixIt)
    OS << Indent << *FixIt << "\n";
}

void DiagnosticPrinter::print(const Finding &F) {
  if (F.At.File.empty()) {
    printPlain(F.Level, F.Message + " [" + F.Rule + "]");
    return;
  }
  std::optional<std::string> FixIt;
  // As clang shows fix-its: on the diagnostic's line, and none that would
  // add a line (the line under the caret cannot show it).
  if (!F.Edits.empty() && F.Edits.front().Range.File == F.At.File &&
      F.Edits.front().Range.Line == F.At.Line &&
      llvm::StringRef(F.Edits.front().Text).find_first_of("\r\n") ==
          llvm::StringRef::npos)
    FixIt = F.Edits.front().Text;
  print(F.Level, F.At.File, F.At.Line, F.At.Column, F.At.Length, F.Message,
        F.Rule, FixIt);
}

void DiagnosticPrinter::printPlain(DiagLevel Level, llvm::StringRef Message) {
  // Several lines by design (a build log's tail); the names in it are the
  // sources', escaped but for line ends.
  OS << "skyline-check: " << diagLevelName(Level) << ": "
     << escapeForTerminalKeepingLines(Message) << "\n";
}

static std::string describeBatchSize(const BatchSizeSite &Site,
                                     const char *What) {
  std::string Text;
  llvm::raw_string_ostream S(Text);
  if (Site.Kind == BatchSizeKind::RuntimeRead)
    S << What << " batch size '" << Site.Name << "' read at run time from "
      << Site.ReadFrom << ", with no default in the source ("
      << batchSizeKindName(Site.Kind) << ")";
  else
    S << What << " batch size '" << Site.Name << "' = " << Site.Value << " ("
      << batchSizeKindName(Site.Kind) << ")";
  return Text;
}

std::vector<Finding> programModelNotes(
    const ProgramModel &Model,
    const std::function<std::string(llvm::StringRef)> &DisplayPath) {
  std::vector<Finding> Notes;
  auto Add = [&](llvm::StringRef File, unsigned Line, unsigned Column,
                 unsigned Offset, unsigned Length, std::string Message,
                 llvm::StringRef Rule) {
    Finding F;
    F.Rule = Rule.str();
    F.Level = DiagLevel::Note;
    F.Message = std::move(Message);
    F.At = {File.str(), Line, Column, Offset, Length};
    Notes.push_back(std::move(F));
  };
  auto AddBatchSize = [&](const BatchSizeSite &Site, const char *What) {
    Add(Site.Literal.File, Site.Literal.Line, Site.Literal.Column,
        Site.Literal.Offset, Site.Literal.Length, describeBatchSize(Site, What),
        rules::batchSize().Id);
    // The value's path to its use, from the literal on, as clang's notes
    // under a diagnostic (no rule of their own): "passed as ... here". The
    // declaration on the literal's own line says what the note above did,
    // unless it names the call the literal is passed to.
    for (const UseStep &Step : llvm::reverse(Site.Chain)) {
      bool Declaration = &Step == &Site.Chain.back();
      if (Step.File.empty() || !Step.Line ||
          (Declaration && Step.File == Site.Literal.File &&
           Step.Line == Site.Literal.Line &&
           !llvm::StringRef(Step.Description).starts_with("passed as")))
        continue;
      Add(Step.File, Step.Line, Step.Column, 0, Step.Column ? 1 : 0,
          Step.Description, "");
    }
  };
  if (const auto &Site = Model.BatchSize)
    AddBatchSize(*Site, "training");
  if (const auto &Site = Model.RuntimeBatchSize)
    AddBatchSize(*Site, "training");
  for (const BatchSizeSite &Site : Model.OtherBatchSizes)
    AddBatchSize(Site,
                 Site.Role == BatchSizeRole::Eval ? "test/eval" : "other");
  // Modules and loops carry no offset in the model: one column is marked.
  for (const ModuleSite &M : Model.Modules) {
    std::string Message =
        "module '" + M.Name + "' (" + M.Type + ") constructed here";
    if (size_t Colon = M.RegisteredAt.rfind(':'); Colon != std::string::npos)
      Message += ", registered at " +
                 DisplayPath(M.RegisteredAt.substr(0, Colon)) +
                 M.RegisteredAt.substr(Colon);
    Add(M.File, M.Line, M.Column, 0, 1, Message, rules::moduleNote().Id);
  }
  for (const ModuleCall &Call : Model.ModuleCalls)
    Add(Call.File, Call.Line, Call.Column, Call.Offset, 1,
        "call of module '" + Call.Name + "'" +
            (Call.InMacro ? " (in a macro expansion)" : ""),
        rules::moduleCallNote().Id);
  for (const TrainingLoop &Loop : Model.TrainingLoops) {
    std::string Message = "training loop";
    if (!Loop.Function.empty())
      Message += " in '" + Loop.Function + "'";
    Message += ": ";
    for (size_t I = 0; I < Loop.Optimizers.size(); ++I)
      Message += (I ? ", " : "") + std::string("optimizer '") +
                 Loop.Optimizers[I].Name + "' (" + Loop.Optimizers[I].Type +
                 ")";
    if (Loop.Optimizers.empty())
      Message += "no optimizer variable found";
    Message += "; " + std::to_string(Loop.ZeroGradCalls.size()) +
               " zero_grad, " + std::to_string(Loop.BackwardCalls.size()) +
               " backward, " + std::to_string(Loop.StepCalls.size()) + " step";
    Add(Loop.File, Loop.Line, Loop.Column, Loop.LoopOffset, 1, Message,
        rules::trainingLoopNote().Id);
  }
  return Notes;
}

void printProgramModel(const ProgramModel &Model, DiagnosticPrinter &Printer,
                       llvm::raw_ostream &OS) {
  for (const Finding &Note :
       programModelNotes(Model, [&](llvm::StringRef Path) {
         return Printer.displayPath(Path);
       }))
    Printer.print(Note);
  for (const std::string &Warning : Model.Warnings)
    Printer.printPlain(DiagLevel::Warning, Warning);
  OS << Model.Modules.size() << " module"
     << (Model.Modules.size() == 1 ? "" : "s") << ", "
     << Model.ModuleCalls.size() << " module call"
     << (Model.ModuleCalls.size() == 1 ? "" : "s") << ", "
     << Model.TrainingLoops.size() << " training loop"
     << (Model.TrainingLoops.size() == 1 ? "" : "s") << " in "
     << Model.Sources.size() << " source"
     << (Model.Sources.size() == 1 ? "" : "s") << "\n";
}

} // namespace skyline
