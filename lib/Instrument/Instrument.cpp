//===- Instrument.cpp - The rewritten copy of the program -----------------===//

#include "skyline/Instrument.h"

#include "skyline/OutputFiles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

namespace skyline {
namespace {

// Orders at one offset: a setup statement's mark goes first (before a
// statement that is a marked loop or a call), a marked loop's braces open, then
// a loop body opens, then calls close (inner first), then calls open (outer
// first); a loop body closes, and the marked loop's braces close last.
constexpr long SetupMark = -(1L << 52);
constexpr long LoopOpen = -(1L << 51);
constexpr long BodyOpen = -(1L << 50);
constexpr long SuffixBase = -(1L << 40);
constexpr long BodyClose = 1L << 50;
constexpr long LoopClose = 1L << 51;

std::string originalText(const BatchSizeSite &Site, llvm::StringRef FileText) {
  return FileText.substr(Site.Literal.Offset, Site.Literal.Length).str();
}

void planBatchSize(const BatchSizeSite &Site, llvm::StringRef FileText,
                   std::map<std::string, std::vector<Insertion>> &Plan) {
  std::string Original = originalText(Site, FileText);
  if (Site.InString) // "48" -> skyline::rt::batch_size_text("48")
    Plan[Site.Literal.File].push_back(
        {Site.Literal.Offset - 1, Site.Literal.Length + 2,
         "skyline::rt::batch_size_text(\"" + Original + "\")", 0});
  else if (!Site.ListInitType.empty()) // int batch_size{64}: no narrowing
    Plan[Site.Literal.File].push_back({Site.Literal.Offset, Site.Literal.Length,
                                       "static_cast<" + Site.ListInitType +
                                           ">(skyline::rt::batch_size(" +
                                           Original + "))",
                                       0});
  else
    Plan[Site.Literal.File].push_back(
        {Site.Literal.Offset, Site.Literal.Length,
         "skyline::rt::batch_size(" + Original + ")", 0});
  for (const TextEdit &Edit : Site.OverrideEdits)
    Plan[Edit.Range.File].push_back(
        {Edit.Range.Offset, Edit.Range.Length, Edit.Text, 0});
  // The loaders' datasets tell the runs their sizes.
  auto Observe = [&](const SourceSpan &Dataset, llvm::StringRef Suffix) {
    auto &Edits = Plan[Dataset.File];
    Edits.push_back({Dataset.Offset, 0, "skyline::rt::observe_dataset(",
                     -long(Dataset.Length)});
    Edits.push_back({Dataset.Offset + Dataset.Length, 0, Suffix.str(),
                     SuffixBase + long(Dataset.Length)});
  };
  if (Site.DatasetArgument)
    Observe(*Site.DatasetArgument, ")");
  for (const SourceSpan &Shared : Site.SharedDatasetArguments)
    Observe(Shared, ", false)");
}

/// The training loader's options go through the runtime, which gives them
/// the loader workers experiment's workers in its trial.
void planLoaderOptions(const DataLoaderSite &Loader,
                       std::map<std::string, std::vector<Insertion>> &Plan) {
  const SourceSpan &Options = Loader.Options;
  auto &Edits = Plan[Options.File];
  Edits.push_back(
      {Options.Offset, 0,
       "skyline::rt::loader_options<::torch::data::DataLoaderOptions>(",
       -long(Options.Length)});
  Edits.push_back({Options.Offset + Options.Length, 0, ")",
                   SuffixBase + long(Options.Length)});
}

/// Each pass of an unguarded evaluation loop is timed, and runs under a
/// torch::NoGradGuard where the no-grad evaluation trial says so.
void planEvaluationLoop(const EvaluationLoop &Loop,
                        std::map<std::string, std::vector<Insertion>> &Plan) {
  const char *Pass = " auto skyline_evaluation_pass = "
                     "::skyline::rt::evaluation_iteration<::torch::"
                     "NoGradGuard>();";
  auto &Edits = Plan[Loop.BodyStart.File];
  if (Loop.Braces) {
    Edits.push_back({Loop.BodyStart.Offset, 0, Pass, BodyOpen});
    return;
  }
  // A body of one statement gets braces of its own, so the pass's marker
  // lives as long as the statement.
  Edits.push_back(
      {Loop.BodyStart.Offset, 0, std::string("{") + Pass + " ", BodyOpen});
  Plan[Loop.BodyEnd.File].push_back({Loop.BodyEnd.Offset, 0, " }", BodyClose});
}

/// SkipForEvaluation: the body starts by leaving the loop in the no-grad
/// evaluation trial, which times the evaluation that follows training.
void planLoop(const TrainingLoop &Loop, bool SkipForEvaluation,
              std::map<std::string, std::vector<Insertion>> &Plan) {
  // step() runs in the optimizer phase; the optimizers' tensors are counted
  // as weights, gradients and optimizer state.
  for (const CallSite &Step : Loop.StepCalls) {
    auto &StepEdits = Plan[Step.File];
    // A member optimizer is tracked where it steps (again each step: the
    // runtime keeps it once).
    std::string Track =
        Step.Optimizer.empty()
            ? ""
            : "skyline::rt::track_optimizer(" + Step.Optimizer + "); ";
    StepEdits.push_back(
        {Step.Offset, 0,
         "skyline::rt::optimizer_step([&]() -> decltype(auto) { " + Track +
             "return ",
         -long(Step.Length)});
    StepEdits.push_back(
        {Step.Offset + Step.Length, 0, "; })", SuffixBase + long(Step.Length)});
  }
  for (const OptimizerSite &Optimizer : Loop.Optimizers)
    if (Optimizer.DeclarationEnd)
      Plan[Optimizer.File].push_back(
          {Optimizer.DeclarationEnd, 0,
           " skyline::rt::track_optimizer(" + Optimizer.Name + ");", 0});
  auto &Edits = Plan[Loop.File];
  // Each start of the loop (an epoch's) is marked: the iteration across it
  // holds an epoch's last, often smaller, batch and what the program does
  // between epochs, and is left out of the time.
  if (Loop.LoopLength) {
    Edits.push_back(
        {Loop.LoopOffset, 0, "{ skyline::rt::loop_begin(); ", LoopOpen});
    Edits.push_back({Loop.LoopOffset + Loop.LoopLength, 0, " }", LoopClose});
  }
  std::string Begin =
      std::string(SkipForEvaluation
                      ? " if (skyline::rt::training_skipped()) break;"
                      : "") +
      " skyline::rt::iteration_begin();";
  if (Loop.BodyIsCompound) {
    Edits.push_back({Loop.BodyOffset + 1, 0, Begin, BodyOpen});
    return;
  }
  Edits.push_back({Loop.BodyOffset, 0, "{" + Begin + " ", BodyOpen});
  Edits.push_back({Loop.BodyOffset + Loop.BodyLength, 0, " }", BodyClose});
}

/// Calls Plan on each of the training loops' Sites once a place (a loop in
/// a header is seen by every source), until it returns false: the runtime's
/// table is full.
template <typename Site, typename PlanSite>
void planEachSiteOnce(const ProgramModel &Model,
                      const std::vector<Site> TrainingLoop::*Sites,
                      const SourceSpan Site::*At, PlanSite Plan) {
  std::set<std::pair<std::string, unsigned>> Planned;
  for (const TrainingLoop &Loop : Model.TrainingLoops)
    for (const Site &Each : Loop.*Sites) {
      const SourceSpan &Place = Each.*At;
      if (!Planned.insert({Place.File, Place.Offset}).second)
        continue;
      if (!Plan(Each))
        return;
    }
}

/// Marks each statement before a training loop (a dataset read into memory,
/// the model) with its id; the runs attribute what it allocates to it. The
/// loop's own start ends the last one (loop_begin).
void planSetupStatements(const ProgramModel &Model,
                         std::map<std::string, std::vector<Insertion>> &Plan,
                         std::vector<SetupEntry> &Setup) {
  planEachSiteOnce(
      Model, &TrainingLoop::SetupStatements, &SetupStatement::At,
      [&](const SetupStatement &Statement) {
        if (int(Setup.size()) >= rt::MaxSetupStatements)
          return false;
        int Id = int(Setup.size());
        Setup.push_back(
            {Id, Statement.At.File, Statement.At.Line, Statement.Text});
        Plan[Statement.At.File].push_back(
            {Statement.At.Offset, 0,
             "skyline::rt::setup_statement(" + std::to_string(Id) + "); ",
             SetupMark});
        return true;
      });
}

/// Each host sync of the training loops is timed on its own
/// (skyline::rt::host_sync).
void planHostSyncs(const ProgramModel &Model,
                   std::map<std::string, std::vector<Insertion>> &Plan,
                   std::vector<HostSyncEntry> &Syncs) {
  planEachSiteOnce(
      Model, &TrainingLoop::HostSyncs, &HostSyncSite::At,
      [&](const HostSyncSite &Sync) {
        if (int(Syncs.size()) >= rt::MaxHostSyncs)
          return false;
        int Id = int(Syncs.size());
        Syncs.push_back({Id, Sync.At.File, Sync.At.Line, Sync.Kind, Sync.Text});
        auto &Edits = Plan[Sync.At.File];
        Edits.push_back({Sync.At.Offset, 0,
                         "skyline::rt::host_sync(" + std::to_string(Id) +
                             ", [&]() -> decltype(auto) { return ",
                         -long(Sync.At.Length)});
        Edits.push_back({Sync.At.Offset + Sync.At.Length, 0, "; })",
                         SuffixBase + long(Sync.At.Length)});
        return true;
      });
}

/// `x.to(device)` becomes `skyline::rt::to_device(x, device)`, which the
/// pinned memory trial makes a non-blocking copy from pinned memory.
void planDeviceCopies(const ProgramModel &Model,
                      std::map<std::string, std::vector<Insertion>> &Plan) {
  planEachSiteOnce(
      Model, &TrainingLoop::DeviceCopies, &DeviceCopySite::Call,
      [&](const DeviceCopySite &Copy) {
        auto &Edits = Plan[Copy.Call.File];
        Edits.push_back({Copy.Call.Offset, 0, "skyline::rt::to_device(",
                         -long(Copy.Call.Length)});
        // `.to(` between the tensor and the device becomes `, `; what ends
        // at the tensor (a wrapped call's suffix) goes first.
        Edits.push_back({Copy.TensorEnd.Offset,
                         Copy.Argument.Offset - Copy.TensorEnd.Offset, ", ",
                         0});
        return true;
      });
}

std::string commonDirectory(const std::vector<std::string> &Files) {
  std::string Common;
  for (const std::string &File : Files) {
    std::string Dir = llvm::sys::path::parent_path(File).str();
    if (Common.empty()) {
      Common = Dir;
      continue;
    }
    while (!Common.empty() &&
           !(llvm::StringRef(Dir).starts_with(Common) &&
             (Dir.size() == Common.size() || Dir[Common.size()] == '/')))
      Common = llvm::sys::path::parent_path(Common).str();
  }
  return Common.empty() ? "/" : Common;
}

llvm::Error writeIfChanged(llvm::StringRef Path, llvm::StringRef Text,
                           bool &Changed) {
  Changed = false;
  if (auto Existing = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false))
    if ((*Existing)->getBuffer() == Text)
      return llvm::Error::success();
  if (std::error_code EC =
          llvm::sys::fs::create_directories(llvm::sys::path::parent_path(Path)))
    return llvm::createStringError(
        EC, "cannot create the work directory for '%s': %s", Path.str().c_str(),
        EC.message().c_str());
  Changed = true;
  return writeFileAtomically(Path, Text);
}

} // namespace

llvm::Expected<std::string> applyInsertions(llvm::StringRef Text,
                                            std::vector<Insertion> Insertions) {
  std::stable_sort(Insertions.begin(), Insertions.end(),
                   [](const Insertion &A, const Insertion &B) {
                     return std::tie(A.Offset, A.Order) <
                            std::tie(B.Offset, B.Order);
                   });
  std::string Out;
  Out.reserve(Text.size() + Insertions.size() * 48);
  unsigned Position = 0;
  for (const Insertion &I : Insertions) {
    if (I.Offset < Position || I.Offset + I.Length > Text.size())
      return llvm::createStringError(
          std::errc::invalid_argument,
          "overlapping or out-of-range edit at byte %u", I.Offset);
    Out.append(Text.data() + Position, I.Offset - Position);
    Out += I.Text;
    Position = I.Offset + I.Length;
  }
  Out.append(Text.data() + Position, Text.size() - Position);
  return Out;
}

std::map<std::string, std::vector<Insertion>>
planInsertions(const ProgramModel &Model, std::vector<ScopeEntry> &Scopes,
               std::vector<std::string> &Notes, std::vector<SetupEntry> *Setup,
               std::vector<HostSyncEntry> *Syncs) {
  std::map<std::string, std::vector<Insertion>> Plan;
  std::vector<SetupEntry> Unkept;
  planSetupStatements(Model, Plan, Setup ? *Setup : Unkept);
  std::vector<HostSyncEntry> UnkeptSyncs;
  planHostSyncs(Model, Plan, Syncs ? *Syncs : UnkeptSyncs);
  planDeviceCopies(Model, Plan);
  if (Model.BatchSize) {
    auto Text = llvm::MemoryBuffer::getFile(Model.BatchSize->Literal.File);
    if (Text)
      planBatchSize(*Model.BatchSize, (*Text)->getBuffer(), Plan);
  }
  std::vector<const EvaluationLoop *> Evaluations =
      unguardedEvaluationLoops(Model);
  for (const TrainingLoop &Loop : Model.TrainingLoops)
    planLoop(Loop, !Evaluations.empty(), Plan);
  for (const EvaluationLoop *Loop : Evaluations)
    planEvaluationLoop(*Loop, Plan);
  for (const DataLoaderSite &Loader : Model.Loaders)
    if (Loader.Training)
      planLoaderOptions(Loader, Plan);
  for (const ModuleCall &Call : Model.ModuleCalls) {
    if (Call.InMacro || Call.UsesBinding) {
      Notes.push_back(Call.File + ":" + std::to_string(Call.Line) +
                      ": call of module '" + Call.Name +
                      "' is not measured on its own (" +
                      (Call.InMacro ? "it comes from a macro expansion"
                                    : "it names a structured binding") +
                      "); its time counts as (unscoped)");
      continue;
    }
    int Id = int(Scopes.size());
    Scopes.push_back({Id, Call.Name, Call.File, Call.Line});
    auto &Edits = Plan[Call.File];
    // With the callee the runtime also sees the layer's weights.
    std::string Module = Call.Callee.empty() ? "" : Call.Callee + ", ";
    Edits.push_back({Call.Offset, 0,
                     "skyline::rt::scoped(" + std::to_string(Id) + ", " +
                         Module + "[&]() -> decltype(auto) { return ",
                     -long(Call.Length)});
    Edits.push_back(
        {Call.Offset + Call.Length, 0, "; })", SuffixBase + long(Call.Length)});
  }
  for (const SourceSpan &Save : Model.SaveCalls) {
    Plan[Save.File].push_back(
        {Save.Offset, Save.Length, "skyline::rt::skipped_save", 0});
    Notes.push_back(
        Save.File + ":" + std::to_string(Save.Line) +
        ": torch::save is a no-op in measured runs, so no checkpoint is "
        "overwritten");
  }
  return Plan;
}

llvm::Expected<InstrumentedProgram> instrumentProgram(const ProgramModel &Model,
                                                      llvm::StringRef WorkDir) {
  InstrumentedProgram Program;
  std::vector<std::string> Files = Model.Files;
  for (const std::string &Source : Model.Sources)
    if (std::find(Files.begin(), Files.end(), Source) == Files.end())
      Files.push_back(Source);
  Program.SourceRoot = commonDirectory(Files);
  Program.MirrorRoot = (WorkDir + "/src").str();
  auto Plan = planInsertions(Model, Program.Scopes, Program.Notes,
                             &Program.SetupStatements, &Program.HostSyncs);

  for (const std::string &File : Files) {
    auto Buffer = llvm::MemoryBuffer::getFile(File, /*IsText=*/false);
    if (!Buffer)
      return llvm::createStringError(Buffer.getError(), "cannot read '%s': %s",
                                     File.c_str(),
                                     Buffer.getError().message().c_str());
    std::string Text = (*Buffer)->getBuffer().str();
    if (auto It = Plan.find(File); It != Plan.end()) {
      auto Rewritten = applyInsertions(Text, It->second);
      if (!Rewritten)
        return llvm::createStringError(
            std::errc::invalid_argument, "cannot instrument '%s': %s",
            File.c_str(), llvm::toString(Rewritten.takeError()).c_str());
      Text = std::move(*Rewritten);
    }
    llvm::SmallString<256> Mirror(Program.MirrorRoot);
    llvm::sys::path::append(
        Mirror, llvm::StringRef(File).drop_front(
                    Program.SourceRoot == "/" ? 0 : Program.SourceRoot.size()));
    // The copy never replaces what it copies (a work directory inside the
    // program's own tree can make the two paths one).
    llvm::sys::fs::UniqueID MirrorID, FileID;
    if (!llvm::sys::fs::getUniqueID(Mirror, MirrorID) &&
        !llvm::sys::fs::getUniqueID(File, FileID) && MirrorID == FileID)
      return llvm::createStringError(
          std::errc::file_exists,
          "the instrumented copy of '%s' would replace the file itself: give "
          "--work-dir a directory outside the program's sources",
          File.c_str());
    bool Changed = false;
    if (llvm::Error E = writeIfChanged(Mirror, Text, Changed))
      return std::move(E);
    Program.FilesWritten += Changed;
    Program.MirrorOf[File] = std::string(Mirror);
  }
  for (const std::string &Source : Model.Sources)
    Program.Sources.push_back(Program.MirrorOf[Source]);

  YAML::Emitter Table;
  Table << YAML::BeginMap << YAML::Key << "scopes" << YAML::Value
        << YAML::BeginSeq;
  for (const ScopeEntry &Scope : Program.Scopes)
    Table << YAML::Flow << YAML::BeginMap << YAML::Key << "id" << YAML::Value
          << Scope.Id << YAML::Key << "module" << YAML::Value << Scope.Module
          << YAML::Key << "file" << YAML::Value << Scope.File << YAML::Key
          << "line" << YAML::Value << Scope.Line << YAML::EndMap;
  Table << YAML::EndSeq;
  Table << YAML::Key << "setup_statements" << YAML::Value << YAML::BeginSeq;
  for (const SetupEntry &Setup : Program.SetupStatements)
    Table << YAML::Flow << YAML::BeginMap << YAML::Key << "id" << YAML::Value
          << Setup.Id << YAML::Key << "file" << YAML::Value << Setup.File
          << YAML::Key << "line" << YAML::Value << Setup.Line << YAML::Key
          << "text" << YAML::Value << Setup.Text << YAML::EndMap;
  Table << YAML::EndSeq;
  Table << YAML::Key << "host_syncs" << YAML::Value << YAML::BeginSeq;
  for (const HostSyncEntry &Sync : Program.HostSyncs)
    Table << YAML::Flow << YAML::BeginMap << YAML::Key << "id" << YAML::Value
          << Sync.Id << YAML::Key << "file" << YAML::Value << Sync.File
          << YAML::Key << "line" << YAML::Value << Sync.Line << YAML::Key
          << "kind" << YAML::Value << Sync.Kind << YAML::Key << "text"
          << YAML::Value << Sync.Text << YAML::EndMap;
  Table << YAML::EndSeq << YAML::EndMap;
  bool Changed = false;
  if (llvm::Error E =
          writeIfChanged((WorkDir + "/scopes.yaml").str(),
                         std::string(Table.c_str()) + "\n", Changed))
    return std::move(E);
  return Program;
}

} // namespace skyline
