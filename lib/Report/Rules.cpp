//===- Rules.cpp - The rule catalog, the registry and NOLINT --------------===//

#include "skyline/Rules.h"

#include "skyline/Experiments.h"
#include "skyline/InputFile.h"

#include "Rules/RuleFactories.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <deque>
#include <string>

namespace skyline {

namespace {

/// Declarations with their docs pages filled in: docs/rules/<id>.md. The
/// pages' text outlives the catalog's entries, which point into it.
std::vector<RuleInfo> withDocsPages(std::vector<RuleInfo> Rules) {
  static std::deque<std::string> Pages;
  for (RuleInfo &Rule : Rules) {
    Pages.push_back(("docs/rules/" + Rule.Id + ".md").str());
    Rule.DocsPage = Pages.back();
  }
  return Rules;
}

/// The experiments' rules, each with its page: docs/experiments/<name>.md.
std::vector<RuleInfo> experimentRules() {
  static std::deque<std::string> Pages; // the catalog's pages outlive it
  std::vector<RuleInfo> Rules;
  for (const std::unique_ptr<Experiment> &E : createExperiments()) {
    Rules.push_back(E->info());
    Pages.push_back(("docs/experiments/" + E->name() + ".md").str());
    Rules.back().DocsPage = Pages.back();
  }
  return Rules;
}

} // namespace

llvm::ArrayRef<RuleInfo> ruleCatalog() {
  static const std::vector<RuleInfo> Catalog = [] {
    std::vector<RuleInfo> Rules;
    for (const std::unique_ptr<Rule> &R : createRules())
      Rules.push_back(R->info());
    for (const RuleInfo *Gate :
         {&rules::throughputRegression(), &rules::memoryRegression(),
          &rules::baselineEnvironment()})
      Rules.push_back(*Gate);
    Rules = withDocsPages(std::move(Rules));
    llvm::append_range(Rules, experimentRules());
    return Rules;
  }();
  return Catalog;
}

llvm::ArrayRef<RuleInfo> noteCatalog() {
  static const std::vector<RuleInfo> Notes =
      withDocsPages({rules::moduleNote(), rules::moduleCallNote(),
                     rules::trainingLoopNote()});
  return Notes;
}

const RuleInfo *findRule(llvm::StringRef Id) {
  for (const RuleInfo &Rule : ruleCatalog())
    if (Rule.Id == Id)
      return &Rule;
  return nullptr;
}

Rule::~Rule() = default;

const MeasuredRun *RuleContext::currentRun() const {
  const MeasuredRun *FirstFit = nullptr;
  for (const MeasuredRun &Run : Measured.Runs) {
    if (Run.OutOfMemory || Run.Iterations == 0)
      continue;
    if (Run.BatchSize == Program.BatchSize->Value)
      return &Run;
    if (!FirstFit)
      FirstFit = &Run;
  }
  return FirstFit;
}

std::vector<std::unique_ptr<Rule>> createRules() {
  std::vector<std::unique_ptr<Rule>> Rules;
#define SKYLINE_RULE(Name) Rules.push_back(create##Name());
#include "Rules/Rules.def"
  return Rules;
}

std::vector<Finding> runRules(const RuleContext &Context) {
  std::vector<Finding> Findings;
  if (!Context.Program.BatchSize)
    return Findings;
  for (const std::unique_ptr<Rule> &R : createRules())
    R->check(Context, Findings);
  llvm::append_range(Findings,
                     experimentFindings(Context.Program, Context.Measured));
  return dropSilenced(std::move(Findings));
}

namespace {

/// Whether the comment after Marker (NOLINT or NOLINTNEXTLINE) in Line
/// names Rule; a bare marker names every rule.
bool markerSilences(llvm::StringRef Line, llvm::StringRef Marker,
                    llvm::StringRef Rule) {
  for (size_t At = Line.find(Marker); At != llvm::StringRef::npos;
       At = Line.find(Marker, At + 1)) {
    llvm::StringRef Rest = Line.drop_front(At + Marker.size());
    if (Marker == "NOLINT" && Rest.starts_with("NEXTLINE"))
      continue;
    if (!Rest.starts_with("("))
      return true;
    llvm::StringRef Names =
        Rest.drop_front().take_until([](char C) { return C == ')'; });
    llvm::SmallVector<llvm::StringRef, 4> Parts;
    Names.split(Parts, ',');
    for (llvm::StringRef Name : Parts) {
      Name = Name.trim();
      if (Name == Rule || Name == "*" ||
          (Name.ends_with("*") && Rule.starts_with(Name.drop_back())))
        return true;
    }
  }
  return false;
}

} // namespace

bool isSilenced(llvm::StringRef Line, llvm::StringRef PreviousLine,
                llvm::StringRef Rule) {
  return markerSilences(Line, "NOLINT", Rule) ||
         markerSilences(PreviousLine, "NOLINTNEXTLINE", Rule);
}

std::vector<Finding> dropSilenced(std::vector<Finding> Findings) {
  llvm::StringMap<std::vector<llvm::StringRef>> Lines;
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> Buffers;
  auto LinesOf =
      [&](llvm::StringRef File) -> const std::vector<llvm::StringRef> & {
    auto It = Lines.find(File);
    if (It != Lines.end())
      return It->second;
    std::vector<llvm::StringRef> &Split = Lines[File];
    // A saved report can name any path: regular files only, bounded.
    if (auto Buffer = readSourceBuffer(File)) {
      llvm::SmallVector<llvm::StringRef, 0> Parts;
      Buffer->getBuffer().split(Parts, '\n');
      Split.assign(Parts.begin(), Parts.end());
      Buffers[File] = std::move(Buffer);
    }
    return Split;
  };
  std::vector<Finding> Kept;
  // A note belongs to the warning or error before it: silencing one
  // silences its notes, as in clang-tidy.
  std::string SilencedRule;
  for (Finding &F : Findings) {
    if (F.Level == DiagLevel::Note && F.Rule == SilencedRule)
      continue;
    if (F.Level != DiagLevel::Note)
      SilencedRule.clear();
    const std::vector<llvm::StringRef> &Text = LinesOf(F.At.File);
    llvm::StringRef Line =
        F.At.Line && F.At.Line <= Text.size() ? Text[F.At.Line - 1] : "";
    llvm::StringRef Previous = F.At.Line > 1 && F.At.Line - 1 <= Text.size()
                                   ? Text[F.At.Line - 2]
                                   : "";
    if (!F.At.File.empty() && isSilenced(Line, Previous, F.Rule)) {
      if (F.Level != DiagLevel::Note)
        SilencedRule = F.Rule;
      continue;
    }
    Kept.push_back(std::move(F));
  }
  return Kept;
}

} // namespace skyline
