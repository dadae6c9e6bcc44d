//===- ProgramModel.cpp - Names of the model's enumerations ---------------===//

#include "skyline/ProgramModel.h"

#include <array>
#include <utility>

namespace skyline {
namespace {

constexpr std::array<std::pair<BatchSizeKind, const char *>, 13> KindNames{{
    {BatchSizeKind::NamespaceConstant, "namespace-constant"},
    {BatchSizeKind::LocalConstant, "local-constant"},
    {BatchSizeKind::StaticMember, "static-member"},
    {BatchSizeKind::FieldDefault, "field-default"},
    {BatchSizeKind::DefaultArgument, "default-argument"},
    {BatchSizeKind::LiteralArgument, "literal-argument"},
    {BatchSizeKind::OptionsBuilder, "options-builder"},
    {BatchSizeKind::CommandLineDefault, "command-line-default"},
    {BatchSizeKind::EnvironmentDefault, "environment-default"},
    {BatchSizeKind::ConfigDefault, "config-default"},
    {BatchSizeKind::Macro, "macro"},
    {BatchSizeKind::Derived, "derived"},
    {BatchSizeKind::RuntimeRead, "runtime"},
}};

} // namespace

const char *batchSizeKindName(BatchSizeKind Kind) {
  for (const auto &[K, Name] : KindNames)
    if (K == Kind)
      return Name;
  return "unknown";
}

std::optional<BatchSizeKind> parseBatchSizeKind(const std::string &Name) {
  for (const auto &[K, KName] : KindNames)
    if (Name == KName)
      return K;
  return std::nullopt;
}

const char *batchSizeRoleName(BatchSizeRole Role) {
  switch (Role) {
  case BatchSizeRole::Train:
    return "train";
  case BatchSizeRole::Eval:
    return "eval";
  case BatchSizeRole::Unknown:
    return "unknown";
  }
  return "unknown";
}

std::vector<const EvaluationLoop *>
unguardedEvaluationLoops(const ProgramModel &Model) {
  std::vector<const EvaluationLoop *> Loops;
  for (const EvaluationLoop &Loop : Model.EvaluationLoops)
    if (!Loop.Guarded)
      Loops.push_back(&Loop);
  return Loops;
}

void rewritePaths(ProgramModel &Model,
                  llvm::function_ref<std::string(llvm::StringRef)> Map) {
  auto Fix = [&](std::string &Path) {
    if (!Path.empty())
      Path = Map(Path);
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
  if (Model.RuntimeBatchSize)
    FixSite(*Model.RuntimeBatchSize);
  for (BatchSizeSite &Site : Model.OtherBatchSizes)
    FixSite(Site);
  for (ModuleSite &M : Model.Modules) {
    Fix(M.File);
    if (size_t Colon = M.RegisteredAt.rfind(':'); Colon != std::string::npos)
      M.RegisteredAt = Map(llvm::StringRef(M.RegisteredAt).take_front(Colon)) +
                       M.RegisteredAt.substr(Colon);
  }
  for (ModuleCall &Call : Model.ModuleCalls)
    Fix(Call.File);
  for (SourceSpan &Save : Model.SaveCalls)
    Fix(Save.File);
  for (SourceSpan &Call : Model.Threads.Calls)
    Fix(Call.File);
  if (Model.Threads.MainStart)
    Fix(Model.Threads.MainStart->File);
  if (Model.Threads.IncludeAt)
    Fix(Model.Threads.IncludeAt->File);
  for (DataLoaderSite &Loader : Model.Loaders) {
    for (SourceSpan *Span : {&Loader.Call, &Loader.Dataset, &Loader.Options,
                             &Loader.WorkersInsertAt})
      Fix(Span->File);
    if (Loader.Workers)
      Fix(Loader.Workers->File);
  }
  for (EvaluationLoop &Loop : Model.EvaluationLoops) {
    Fix(Loop.File);
    Fix(Loop.BodyStart.File);
    Fix(Loop.HeaderEnd.File);
    Fix(Loop.BodyEnd.File);
  }
  for (std::string &File : Model.Files)
    Fix(File);
  std::map<std::string, std::string> Digests;
  for (const auto &[File, Digest] : Model.FileSha256)
    Digests[Map(File)] = Digest;
  Model.FileSha256 = std::move(Digests);
  for (TrainingLoop &Loop : Model.TrainingLoops) {
    Fix(Loop.File);
    for (OptimizerSite &Opt : Loop.Optimizers) {
      Fix(Opt.File);
      if (Opt.LearningRate)
        Fix(Opt.LearningRate->File);
      if (Opt.AfterDeclaration)
        Fix(Opt.AfterDeclaration->File);
    }
    for (auto *Calls :
         {&Loop.ZeroGradCalls, &Loop.BackwardCalls, &Loop.StepCalls})
      for (CallSite &Call : *Calls)
        Fix(Call.File);
    for (BatchShape &Shape : Loop.BatchShapes)
      Fix(Shape.Call.File);
    for (SetupStatement &Setup : Loop.SetupStatements)
      Fix(Setup.At.File);
    for (HostSyncSite &Sync : Loop.HostSyncs)
      Fix(Sync.At.File);
    for (DeviceCopySite &Copy : Loop.DeviceCopies)
      for (SourceSpan *Span :
           {&Copy.Call, &Copy.TensorEnd, &Copy.Argument, &Copy.ArgumentEnd})
        Fix(Span->File);
  }
}

} // namespace skyline
