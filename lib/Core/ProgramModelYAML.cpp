//===- ProgramModelYAML.cpp - ProgramModel to and from YAML ---------------===//

#include "skyline/ProgramModelYAML.h"

#include "skyline/InputFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <yaml-cpp/yaml.h>

namespace skyline {
namespace {

void emitSpanFields(YAML::Emitter &Out, const SourceSpan &Span) {
  Out << YAML::Key << "file" << YAML::Value << Span.File;
  Out << YAML::Key << "line" << YAML::Value << Span.Line;
  Out << YAML::Key << "column" << YAML::Value << Span.Column;
  Out << YAML::Key << "offset" << YAML::Value << Span.Offset;
  Out << YAML::Key << "length" << YAML::Value << Span.Length;
}

void emitBatchSize(YAML::Emitter &Out, const BatchSizeSite &Site) {
  Out << YAML::BeginMap;
  Out << YAML::Key << "name" << YAML::Value << Site.Name;
  Out << YAML::Key << "value" << YAML::Value << Site.Value;
  emitSpanFields(Out, Site.Literal);
  Out << YAML::Key << "kind" << YAML::Value << batchSizeKindName(Site.Kind);
  Out << YAML::Key << "role" << YAML::Value << batchSizeRoleName(Site.Role);
  Out << YAML::Key << "confidence" << YAML::Value << Site.Confidence;
  Out << YAML::Key << "uses" << YAML::Value << Site.Uses;
  Out << YAML::Key << "in_string" << YAML::Value << Site.InString;
  Out << YAML::Key << "list_init_type" << YAML::Value << Site.ListInitType;
  if (!Site.ReadFrom.empty())
    Out << YAML::Key << "read_from" << YAML::Value << Site.ReadFrom;
  if (Site.DatasetArgument) {
    Out << YAML::Key << "dataset_argument" << YAML::Value << YAML::Flow
        << YAML::BeginMap;
    emitSpanFields(Out, *Site.DatasetArgument);
    Out << YAML::EndMap;
  }
  if (!Site.SharedDatasetArguments.empty()) {
    Out << YAML::Key << "shared_dataset_arguments" << YAML::Value
        << YAML::BeginSeq;
    for (const SourceSpan &Shared : Site.SharedDatasetArguments) {
      Out << YAML::Flow << YAML::BeginMap;
      emitSpanFields(Out, Shared);
      Out << YAML::EndMap;
    }
    Out << YAML::EndSeq;
  }
  Out << YAML::Key << "override_edits" << YAML::Value << YAML::BeginSeq;
  for (const TextEdit &Edit : Site.OverrideEdits) {
    Out << YAML::Flow << YAML::BeginMap;
    emitSpanFields(Out, Edit.Range);
    Out << YAML::Key << "text" << YAML::Value << Edit.Text << YAML::EndMap;
  }
  Out << YAML::EndSeq;
  Out << YAML::Key << "chain" << YAML::Value << YAML::BeginSeq;
  for (const UseStep &Step : Site.Chain) {
    Out << YAML::Flow << YAML::BeginMap;
    Out << YAML::Key << "step" << YAML::Value << Step.Description;
    Out << YAML::Key << "file" << YAML::Value << Step.File;
    Out << YAML::Key << "line" << YAML::Value << Step.Line;
    if (Step.Column)
      Out << YAML::Key << "column" << YAML::Value << Step.Column;
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq << YAML::EndMap;
}

void emitCalls(YAML::Emitter &Out, const char *Key,
               const std::vector<CallSite> &Calls) {
  Out << YAML::Key << Key << YAML::Value << YAML::BeginSeq;
  for (const CallSite &Call : Calls) {
    Out << YAML::Flow << YAML::BeginMap << YAML::Key << "file" << YAML::Value
        << Call.File << YAML::Key << "line" << YAML::Value << Call.Line
        << YAML::Key << "column" << YAML::Value << Call.Column << YAML::Key
        << "offset" << YAML::Value << Call.Offset << YAML::Key << "length"
        << YAML::Value << Call.Length;
    if (!Call.Optimizer.empty())
      Out << YAML::Key << "optimizer" << YAML::Value << Call.Optimizer;
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq;
}

void emitLoop(YAML::Emitter &Out, const TrainingLoop &Loop) {
  Out << YAML::BeginMap;
  Out << YAML::Key << "file" << YAML::Value << Loop.File;
  Out << YAML::Key << "line" << YAML::Value << Loop.Line;
  Out << YAML::Key << "column" << YAML::Value << Loop.Column;
  Out << YAML::Key << "function" << YAML::Value << Loop.Function;
  Out << YAML::Key << "body_offset" << YAML::Value << Loop.BodyOffset;
  Out << YAML::Key << "body_length" << YAML::Value << Loop.BodyLength;
  Out << YAML::Key << "body_is_compound" << YAML::Value << Loop.BodyIsCompound;
  Out << YAML::Key << "loop_offset" << YAML::Value << Loop.LoopOffset;
  Out << YAML::Key << "loop_length" << YAML::Value << Loop.LoopLength;
  Out << YAML::Key << "optimizers" << YAML::Value << YAML::BeginSeq;
  for (const OptimizerSite &Opt : Loop.Optimizers) {
    Out << YAML::BeginMap;
    Out << YAML::Key << "name" << YAML::Value << Opt.Name;
    Out << YAML::Key << "type" << YAML::Value << Opt.Type;
    Out << YAML::Key << "file" << YAML::Value << Opt.File;
    Out << YAML::Key << "line" << YAML::Value << Opt.Line;
    Out << YAML::Key << "declaration_end" << YAML::Value << Opt.DeclarationEnd;
    if (Opt.AfterDeclaration) {
      Out << YAML::Key << "after_declaration" << YAML::Value << YAML::Flow
          << YAML::BeginMap;
      emitSpanFields(Out, *Opt.AfterDeclaration);
      Out << YAML::EndMap;
      Out << YAML::Key << "indent" << YAML::Value << YAML::DoubleQuoted
          << Opt.Indent;
    }
    if (Opt.ThroughPointer)
      Out << YAML::Key << "through_pointer" << YAML::Value << true;
    if (Opt.LearningRate) {
      Out << YAML::Key << "learning_rate" << YAML::Value << YAML::BeginMap;
      Out << YAML::Key << "text" << YAML::Value << Opt.LearningRateText;
      emitSpanFields(Out, *Opt.LearningRate);
      Out << YAML::EndMap;
    }
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq;
  emitCalls(Out, "zero_grad_calls", Loop.ZeroGradCalls);
  emitCalls(Out, "backward_calls", Loop.BackwardCalls);
  emitCalls(Out, "step_calls", Loop.StepCalls);
  if (!Loop.BatchShapes.empty()) {
    Out << YAML::Key << "batch_shapes" << YAML::Value << YAML::BeginSeq;
    for (const BatchShape &Shape : Loop.BatchShapes)
      Out << YAML::Flow << YAML::BeginMap << YAML::Key << "text"
          << YAML::Value << Shape.Text << YAML::Key << "variable"
          << YAML::Value << Shape.Variable << YAML::Key << "file"
          << YAML::Value << Shape.Call.File << YAML::Key << "line"
          << YAML::Value << Shape.Call.Line << YAML::Key << "column"
          << YAML::Value << Shape.Call.Column << YAML::Key << "offset"
          << YAML::Value << Shape.Call.Offset << YAML::Key << "length"
          << YAML::Value << Shape.Call.Length << YAML::EndMap;
    Out << YAML::EndSeq;
  }
  if (!Loop.SetupStatements.empty()) {
    Out << YAML::Key << "setup_statements" << YAML::Value << YAML::BeginSeq;
    for (const SetupStatement &Setup : Loop.SetupStatements)
      Out << YAML::Flow << YAML::BeginMap << YAML::Key << "text" << YAML::Value
          << Setup.Text << YAML::Key << "file" << YAML::Value << Setup.At.File
          << YAML::Key << "line" << YAML::Value << Setup.At.Line << YAML::Key
          << "column" << YAML::Value << Setup.At.Column << YAML::Key << "offset"
          << YAML::Value << Setup.At.Offset << YAML::Key << "length"
          << YAML::Value << Setup.At.Length << YAML::EndMap;
    Out << YAML::EndSeq;
  }
  if (!Loop.HostSyncs.empty()) {
    Out << YAML::Key << "host_syncs" << YAML::Value << YAML::BeginSeq;
    for (const HostSyncSite &Sync : Loop.HostSyncs) {
      Out << YAML::Flow << YAML::BeginMap << YAML::Key << "kind" << YAML::Value
          << Sync.Kind << YAML::Key << "text" << YAML::Value << Sync.Text;
      emitSpanFields(Out, Sync.At);
      Out << YAML::EndMap;
    }
    Out << YAML::EndSeq;
  }
  if (!Loop.DeviceCopies.empty()) {
    Out << YAML::Key << "device_copies" << YAML::Value << YAML::BeginSeq;
    for (const DeviceCopySite &Copy : Loop.DeviceCopies) {
      Out << YAML::BeginMap << YAML::Key << "text" << YAML::Value
          << Copy.Text;
      emitSpanFields(Out, Copy.Call);
      for (auto [Key, Span] : {std::pair{"tensor_end", &Copy.TensorEnd},
                               std::pair{"argument", &Copy.Argument},
                               std::pair{"argument_end", &Copy.ArgumentEnd}}) {
        Out << YAML::Key << Key << YAML::Value << YAML::Flow << YAML::BeginMap;
        emitSpanFields(Out, *Span);
        Out << YAML::EndMap;
      }
      Out << YAML::EndMap;
    }
    Out << YAML::EndSeq;
  }
  Out << YAML::EndMap;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

template <typename T>
T get(const YAML::Node &Node, const char *Key, T Default = T()) {
  const YAML::Node Value = Node[Key];
  return Value && !Value.IsNull() ? Value.as<T>() : Default;
}

SourceSpan readSpan(const YAML::Node &Node) {
  return {get<std::string>(Node, "file"), get<unsigned>(Node, "line"),
          get<unsigned>(Node, "column"), get<unsigned>(Node, "offset"),
          get<unsigned>(Node, "length")};
}

BatchSizeSite readBatchSize(const YAML::Node &Node) {
  BatchSizeSite Site;
  Site.Name = get<std::string>(Node, "name");
  Site.Value = get<int64_t>(Node, "value");
  Site.Literal = readSpan(Node);
  Site.Kind = parseBatchSizeKind(get<std::string>(Node, "kind"))
                  .value_or(BatchSizeKind::LiteralArgument);
  std::string Role = get<std::string>(Node, "role");
  Site.Role = Role == "train"  ? BatchSizeRole::Train
              : Role == "eval" ? BatchSizeRole::Eval
                               : BatchSizeRole::Unknown;
  Site.Confidence = get<double>(Node, "confidence");
  Site.Uses = get<unsigned>(Node, "uses", 1);
  Site.InString = get<bool>(Node, "in_string", false);
  Site.ListInitType = get<std::string>(Node, "list_init_type", "");
  Site.ReadFrom = get<std::string>(Node, "read_from", "");
  if (const YAML::Node Dataset = Node["dataset_argument"])
    Site.DatasetArgument = readSpan(Dataset);
  for (const YAML::Node &Shared : Node["shared_dataset_arguments"])
    Site.SharedDatasetArguments.push_back(readSpan(Shared));
  for (const YAML::Node &Edit : Node["override_edits"])
    Site.OverrideEdits.push_back(
        {readSpan(Edit), get<std::string>(Edit, "text")});
  for (const YAML::Node &Step : Node["chain"])
    Site.Chain.push_back(
        {get<std::string>(Step, "step"), get<std::string>(Step, "file"),
         get<unsigned>(Step, "line"), get<unsigned>(Step, "column", 0)});
  return Site;
}

std::vector<CallSite> readCalls(const YAML::Node &Node) {
  std::vector<CallSite> Calls;
  for (const YAML::Node &Call : Node)
    Calls.push_back(
        {get<std::string>(Call, "file"), get<unsigned>(Call, "line"),
         get<unsigned>(Call, "column"), get<unsigned>(Call, "offset"),
         get<unsigned>(Call, "length"), get<std::string>(Call, "optimizer")});
  return Calls;
}

TrainingLoop readLoop(const YAML::Node &Node) {
  TrainingLoop Loop;
  Loop.File = get<std::string>(Node, "file");
  Loop.Line = get<unsigned>(Node, "line");
  Loop.Column = get<unsigned>(Node, "column");
  Loop.Function = get<std::string>(Node, "function");
  Loop.BodyOffset = get<unsigned>(Node, "body_offset");
  Loop.BodyLength = get<unsigned>(Node, "body_length");
  Loop.BodyIsCompound = get<bool>(Node, "body_is_compound", true);
  Loop.LoopOffset = get<unsigned>(Node, "loop_offset", 0);
  Loop.LoopLength = get<unsigned>(Node, "loop_length", 0);
  for (const YAML::Node &Opt : Node["optimizers"]) {
    OptimizerSite Site;
    Site.Name = get<std::string>(Opt, "name");
    Site.Type = get<std::string>(Opt, "type");
    Site.File = get<std::string>(Opt, "file");
    Site.Line = get<unsigned>(Opt, "line");
    Site.DeclarationEnd = get<unsigned>(Opt, "declaration_end");
    if (const YAML::Node After = Opt["after_declaration"])
      Site.AfterDeclaration = readSpan(After);
    Site.Indent = get<std::string>(Opt, "indent", "");
    Site.ThroughPointer = get<bool>(Opt, "through_pointer", false);
    if (const YAML::Node Rate = Opt["learning_rate"]) {
      Site.LearningRate = readSpan(Rate);
      Site.LearningRateText = get<std::string>(Rate, "text");
    }
    Loop.Optimizers.push_back(std::move(Site));
  }
  Loop.ZeroGradCalls = readCalls(Node["zero_grad_calls"]);
  Loop.BackwardCalls = readCalls(Node["backward_calls"]);
  Loop.StepCalls = readCalls(Node["step_calls"]);
  for (const YAML::Node &Shape : Node["batch_shapes"]) {
    BatchShape Read;
    Read.Call = {get<std::string>(Shape, "file"), get<unsigned>(Shape, "line"),
                 get<unsigned>(Shape, "column"), get<unsigned>(Shape, "offset"),
                 get<unsigned>(Shape, "length")};
    Read.Text = get<std::string>(Shape, "text");
    Read.Variable = get<std::string>(Shape, "variable");
    Loop.BatchShapes.push_back(std::move(Read));
  }
  for (const YAML::Node &Setup : Node["setup_statements"])
    Loop.SetupStatements.push_back(
        {{get<std::string>(Setup, "file"), get<unsigned>(Setup, "line"),
          get<unsigned>(Setup, "column"), get<unsigned>(Setup, "offset"),
          get<unsigned>(Setup, "length")},
         get<std::string>(Setup, "text")});
  for (const YAML::Node &Sync : Node["host_syncs"])
    Loop.HostSyncs.push_back({readSpan(Sync), get<std::string>(Sync, "kind"),
                              get<std::string>(Sync, "text")});
  for (const YAML::Node &Copy : Node["device_copies"]) {
    DeviceCopySite Read{readSpan(Copy), readSpan(Copy["tensor_end"]),
                        readSpan(Copy["argument"]),
                        readSpan(Copy["argument_end"]),
                        get<std::string>(Copy, "text")};
    Loop.DeviceCopies.push_back(std::move(Read));
  }
  return Loop;
}

} // namespace

std::string programModelToYAML(const ProgramModel &Model) {
  YAML::Emitter Out;
  emitProgramModel(Out, Model);
  return std::string(Out.c_str()) + "\n";
}

void emitProgramModel(YAML::Emitter &Out, const ProgramModel &Model) {
  Out.SetDoublePrecision(4);
  Out << YAML::BeginMap;
  Out << YAML::Key << "schema_version" << YAML::Value
      << ProgramModel::SchemaVersion;
  Out << YAML::Key << "sources" << YAML::Value << YAML::BeginSeq;
  for (const std::string &Source : Model.Sources)
    Out << Source;
  Out << YAML::EndSeq;
  Out << YAML::Key << "batch_size" << YAML::Value;
  if (Model.BatchSize)
    emitBatchSize(Out, *Model.BatchSize);
  else
    Out << YAML::Null;
  if (Model.RuntimeBatchSize) {
    Out << YAML::Key << "runtime_batch_size" << YAML::Value;
    emitBatchSize(Out, *Model.RuntimeBatchSize);
  }
  Out << YAML::Key << "other_batch_sizes" << YAML::Value << YAML::BeginSeq;
  for (const BatchSizeSite &Site : Model.OtherBatchSizes)
    emitBatchSize(Out, Site);
  Out << YAML::EndSeq;
  Out << YAML::Key << "modules" << YAML::Value << YAML::BeginSeq;
  for (const ModuleSite &M : Model.Modules) {
    Out << YAML::BeginMap;
    Out << YAML::Key << "name" << YAML::Value << M.Name;
    Out << YAML::Key << "type" << YAML::Value << M.Type;
    Out << YAML::Key << "options" << YAML::Value << M.Options;
    if (!M.Parent.empty())
      Out << YAML::Key << "parent" << YAML::Value << M.Parent;
    Out << YAML::Key << "file" << YAML::Value << M.File;
    Out << YAML::Key << "line" << YAML::Value << M.Line;
    Out << YAML::Key << "column" << YAML::Value << M.Column;
    Out << YAML::Key << "registered_at" << YAML::Value;
    if (M.RegisteredAt.empty())
      Out << YAML::Null;
    else
      Out << M.RegisteredAt;
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq;
  Out << YAML::Key << "module_calls" << YAML::Value << YAML::BeginSeq;
  for (const ModuleCall &Call : Model.ModuleCalls) {
    Out << YAML::Flow << YAML::BeginMap;
    Out << YAML::Key << "name" << YAML::Value << Call.Name;
    Out << YAML::Key << "file" << YAML::Value << Call.File;
    Out << YAML::Key << "line" << YAML::Value << Call.Line;
    Out << YAML::Key << "column" << YAML::Value << Call.Column;
    Out << YAML::Key << "offset" << YAML::Value << Call.Offset;
    Out << YAML::Key << "length" << YAML::Value << Call.Length;
    Out << YAML::Key << "in_macro" << YAML::Value << Call.InMacro;
    Out << YAML::Key << "uses_binding" << YAML::Value << Call.UsesBinding;
    Out << YAML::Key << "callee" << YAML::Value << Call.Callee;
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq;
  Out << YAML::Key << "training_loop" << YAML::Value;
  if (Model.TrainingLoops.empty())
    Out << YAML::Null;
  else
    emitLoop(Out, Model.TrainingLoops.front());
  Out << YAML::Key << "training_loops" << YAML::Value << YAML::BeginSeq;
  for (const TrainingLoop &Loop : Model.TrainingLoops)
    emitLoop(Out, Loop);
  Out << YAML::EndSeq;
  Out << YAML::Key << "save_calls" << YAML::Value << YAML::BeginSeq;
  for (const SourceSpan &Save : Model.SaveCalls) {
    Out << YAML::Flow << YAML::BeginMap;
    emitSpanFields(Out, Save);
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq;
  Out << YAML::Key << "thread_settings" << YAML::Value << YAML::BeginMap;
  Out << YAML::Key << "calls" << YAML::Value << YAML::BeginSeq;
  for (const SourceSpan &Call : Model.Threads.Calls) {
    Out << YAML::Flow << YAML::BeginMap;
    emitSpanFields(Out, Call);
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq;
  Out << YAML::Key << "main_start" << YAML::Value;
  if (Model.Threads.MainStart) {
    Out << YAML::Flow << YAML::BeginMap;
    emitSpanFields(Out, *Model.Threads.MainStart);
    Out << YAML::EndMap;
  } else {
    Out << YAML::Null;
  }
  Out << YAML::Key << "main_indent" << YAML::Value << YAML::DoubleQuoted
      << Model.Threads.MainIndent;
  if (Model.Threads.IncludeAt) {
    Out << YAML::Key << "include_at" << YAML::Value << YAML::Flow
        << YAML::BeginMap;
    emitSpanFields(Out, *Model.Threads.IncludeAt);
    Out << YAML::EndMap;
  }
  Out << YAML::Key << "main_includes" << YAML::Value << YAML::Flow
      << Model.Threads.MainIncludes;
  Out << YAML::EndMap;
  Out << YAML::Key << "data_loaders" << YAML::Value << YAML::BeginSeq;
  auto Span = [&](const char *Key, const SourceSpan &At) {
    Out << YAML::Key << Key << YAML::Value << YAML::Flow << YAML::BeginMap;
    emitSpanFields(Out, At);
    Out << YAML::EndMap;
  };
  for (const DataLoaderSite &Loader : Model.Loaders) {
    Out << YAML::BeginMap;
    Span("call", Loader.Call);
    Span("dataset", Loader.Dataset);
    Span("options", Loader.Options);
    Out << YAML::Key << "options_is_count" << YAML::Value
        << Loader.OptionsIsCount;
    if (Loader.Workers) {
      Span("workers", *Loader.Workers);
      Out << YAML::Key << "workers_value" << YAML::Value
          << Loader.WorkersValue;
    }
    if (!Loader.WorkersInsertAt.File.empty())
      Span("workers_insert_at", Loader.WorkersInsertAt);
    Out << YAML::Key << "training" << YAML::Value << Loader.Training;
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq;
  Out << YAML::Key << "evaluation_loops" << YAML::Value << YAML::BeginSeq;
  for (const EvaluationLoop &Loop : Model.EvaluationLoops) {
    Out << YAML::BeginMap;
    Out << YAML::Key << "file" << YAML::Value << Loop.File;
    Out << YAML::Key << "line" << YAML::Value << Loop.Line;
    Out << YAML::Key << "column" << YAML::Value << Loop.Column;
    Out << YAML::Key << "function" << YAML::Value << Loop.Function;
    Span("body_start", Loop.BodyStart);
    Out << YAML::Key << "indent" << YAML::Value << YAML::DoubleQuoted
        << Loop.Indent;
    Out << YAML::Key << "guarded" << YAML::Value << Loop.Guarded;
    Out << YAML::Key << "guard_name" << YAML::Value << Loop.GuardName;
    if (!Loop.Braces) {
      Out << YAML::Key << "braces" << YAML::Value << false;
      Span("header_end", Loop.HeaderEnd);
      Span("body_end", Loop.BodyEnd);
      Out << YAML::Key << "loop_indent" << YAML::Value << YAML::DoubleQuoted
          << Loop.LoopIndent;
    }
    Out << YAML::EndMap;
  }
  Out << YAML::EndSeq;
  Out << YAML::Key << "files" << YAML::Value << YAML::BeginSeq;
  for (const std::string &File : Model.Files)
    Out << File;
  Out << YAML::EndSeq;
  if (!Model.FileSha256.empty()) {
    Out << YAML::Key << "file_sha256" << YAML::Value << YAML::BeginMap;
    for (const auto &[File, Digest] : Model.FileSha256)
      Out << YAML::Key << File << YAML::Value << Digest;
    Out << YAML::EndMap;
  }
  Out << YAML::Key << "warnings" << YAML::Value << YAML::BeginSeq;
  for (const std::string &Warning : Model.Warnings)
    Out << Warning;
  Out << YAML::EndSeq;
  Out << YAML::EndMap;
}

std::optional<ProgramModel> programModelFromYAML(const std::string &Text,
                                                 std::string &Error) {
  // Bounded like a file: no aliases, a limited count and depth of nodes.
  auto Root = parseYamlInput(Text, "(text)", "program model",
                             ProgramModelLimits);
  if (!Root) {
    Error = llvm::toString(Root.takeError());
    return std::nullopt;
  }
  return programModelFromNode(*Root, Error);
}

namespace {

/// A C++ name as a fix-it may write it: letters, digits and `_`.
bool isIdentifier(llvm::StringRef Name) {
  return !Name.empty() && !llvm::isDigit(Name.front()) &&
         llvm::all_of(Name,
                      [](char C) { return llvm::isAlnum(C) || C == '_'; });
}

/// What reading cannot see: values a hand-edited or hostile model holds
/// that no front end writes. Empty when every value is possible.
std::string impossibleValue(const ProgramModel &Model) {
  auto CheckSite = [](const BatchSizeSite &Site,
                      const std::string &Key) -> std::string {
    if (Site.Value < 1)
      return Key + ".value is " + std::to_string(Site.Value) +
             "; a batch size must be at least 1";
    if (!(Site.Confidence >= 0 && Site.Confidence <= 1))
      return Key + ".confidence is " + std::to_string(Site.Confidence) +
             "; it must be from 0 to 1";
    return "";
  };
  if (Model.BatchSize)
    if (std::string Problem = CheckSite(*Model.BatchSize, "batch_size");
        !Problem.empty())
      return Problem;
  // A size read at run time has no literal to change: it is never the
  // training batch size a run overrides.
  auto IsRuntime = [](const BatchSizeSite &Site) {
    return Site.Kind == BatchSizeKind::RuntimeRead;
  };
  if ((Model.BatchSize && IsRuntime(*Model.BatchSize)) ||
      llvm::any_of(Model.OtherBatchSizes, IsRuntime))
    return "a batch size of kind 'runtime' is outside runtime_batch_size; "
           "one read at run time has no literal to change";
  if (Model.RuntimeBatchSize && !IsRuntime(*Model.RuntimeBatchSize))
    return "runtime_batch_size.kind is '" +
           std::string(batchSizeKindName(Model.RuntimeBatchSize->Kind)) +
           "'; it must be 'runtime'";
  for (size_t I = 0; I < Model.OtherBatchSizes.size(); ++I)
    if (std::string Problem =
            CheckSite(Model.OtherBatchSizes[I],
                      "other_batch_sizes[" + std::to_string(I) + "]");
        !Problem.empty())
      return Problem;
  // It goes into a fix-it as it is: blanks only, no code.
  if (Model.Threads.MainIndent.find_first_not_of(" \t") != std::string::npos)
    return "thread_settings.main_indent holds more than spaces and tabs";
  for (const TrainingLoop &Loop : Model.TrainingLoops)
    for (const OptimizerSite &Opt : Loop.Optimizers) {
      if (Opt.Indent.find_first_not_of(" \t") != std::string::npos)
        return "the indent of optimizer '" + Opt.Name +
               "' holds more than spaces and tabs";
      if (Opt.AfterDeclaration && !isIdentifier(Opt.Name))
        return "optimizer name '" + Opt.Name + "' is not an identifier";
    }
  // The trial's and the fix-it's edits go inside the call, in this order.
  for (const TrainingLoop &Loop : Model.TrainingLoops)
    for (const DeviceCopySite &Copy : Loop.DeviceCopies)
      if (Copy.TensorEnd.Offset <= Copy.Call.Offset ||
          Copy.TensorEnd.Offset > Copy.Argument.Offset ||
          Copy.ArgumentEnd.Offset >= Copy.Call.Offset + Copy.Call.Length ||
          Copy.TensorEnd.File != Copy.Call.File ||
          Copy.ArgumentEnd.File != Copy.Call.File)
        return "device copy '" + Copy.Text + "' at " + Copy.Call.File + ":" +
               std::to_string(Copy.Call.Line) +
               ": tensor_end, argument and argument_end must lie inside its "
               "call, in that order";
  for (const auto &[File, Digest] : Model.FileSha256)
    if (Digest.size() != 64 ||
        Digest.find_first_not_of("0123456789abcdef") != std::string::npos)
      return "file_sha256 of '" + File + "' is '" + Digest +
             "'; it must be 64 lowercase hex digits (a SHA-256)";
  return "";
}

} // namespace

std::optional<ProgramModel> programModelFromNode(const YAML::Node &Root,
                                                 std::string &Error) {
  try {
    if (!Root.IsMap()) {
      Error = "not a program model: the document is not a mapping";
      return std::nullopt;
    }
    int Version = get<int>(Root, "schema_version", -1);
    if (Version != ProgramModel::SchemaVersion) {
      Error = "unsupported schema_version " + std::to_string(Version) +
              " (this skyline-check reads " +
              std::to_string(ProgramModel::SchemaVersion) + ")";
      return std::nullopt;
    }
    ProgramModel Model;
    for (const YAML::Node &Source : Root["sources"])
      Model.Sources.push_back(Source.as<std::string>());
    if (Root["batch_size"] && !Root["batch_size"].IsNull())
      Model.BatchSize = readBatchSize(Root["batch_size"]);
    if (Root["runtime_batch_size"] && !Root["runtime_batch_size"].IsNull())
      Model.RuntimeBatchSize = readBatchSize(Root["runtime_batch_size"]);
    for (const YAML::Node &Site : Root["other_batch_sizes"])
      Model.OtherBatchSizes.push_back(readBatchSize(Site));
    for (const YAML::Node &M : Root["modules"])
      Model.Modules.push_back(
          {get<std::string>(M, "name"), get<std::string>(M, "type"),
           get<std::string>(M, "options"), get<std::string>(M, "parent"),
           get<std::string>(M, "file"), get<unsigned>(M, "line"),
           get<unsigned>(M, "column"), get<std::string>(M, "registered_at")});
    for (const YAML::Node &C : Root["module_calls"])
      Model.ModuleCalls.push_back(
          {get<std::string>(C, "name"), get<std::string>(C, "file"),
           get<unsigned>(C, "line"), get<unsigned>(C, "column"),
           get<unsigned>(C, "offset"), get<unsigned>(C, "length"),
           get<bool>(C, "in_macro"), get<bool>(C, "uses_binding"),
           get<std::string>(C, "callee")});
    for (const YAML::Node &Loop : Root["training_loops"])
      Model.TrainingLoops.push_back(readLoop(Loop));
    for (const YAML::Node &Save : Root["save_calls"])
      Model.SaveCalls.push_back(readSpan(Save));
    if (const YAML::Node Threads = Root["thread_settings"]) {
      for (const YAML::Node &Call : Threads["calls"])
        Model.Threads.Calls.push_back(readSpan(Call));
      if (const YAML::Node Start = Threads["main_start"]; Start && !Start.IsNull())
        Model.Threads.MainStart = readSpan(Start);
      Model.Threads.MainIndent = get<std::string>(Threads, "main_indent");
      if (const YAML::Node At = Threads["include_at"])
        Model.Threads.IncludeAt = readSpan(At);
      for (const YAML::Node &Header : Threads["main_includes"])
        Model.Threads.MainIncludes.push_back(Header.as<std::string>());
    }
    for (const YAML::Node &L : Root["data_loaders"]) {
      DataLoaderSite Loader;
      Loader.Call = readSpan(L["call"]);
      Loader.Dataset = readSpan(L["dataset"]);
      Loader.Options = readSpan(L["options"]);
      Loader.OptionsIsCount = get<bool>(L, "options_is_count");
      if (const YAML::Node Workers = L["workers"];
          Workers && !Workers.IsNull()) {
        Loader.Workers = readSpan(Workers);
        Loader.WorkersValue = get<int64_t>(L, "workers_value", -1);
      }
      if (const YAML::Node At = L["workers_insert_at"]; At && !At.IsNull())
        Loader.WorkersInsertAt = readSpan(At);
      Loader.Training = get<bool>(L, "training");
      Model.Loaders.push_back(std::move(Loader));
    }
    for (const YAML::Node &L : Root["evaluation_loops"]) {
      EvaluationLoop Loop;
      Loop.File = get<std::string>(L, "file");
      Loop.Line = get<unsigned>(L, "line");
      Loop.Column = get<unsigned>(L, "column");
      Loop.Function = get<std::string>(L, "function");
      Loop.BodyStart = readSpan(L["body_start"]);
      Loop.Indent = get<std::string>(L, "indent");
      Loop.Guarded = get<bool>(L, "guarded");
      Loop.GuardName = get<std::string>(L, "guard_name");
      Loop.Braces = get<bool>(L, "braces", true);
      if (!Loop.Braces) {
        Loop.HeaderEnd = readSpan(L["header_end"]);
        Loop.BodyEnd = readSpan(L["body_end"]);
        Loop.LoopIndent = get<std::string>(L, "loop_indent");
      }
      Model.EvaluationLoops.push_back(std::move(Loop));
    }
    for (const YAML::Node &File : Root["files"])
      Model.Files.push_back(File.as<std::string>());
    for (const auto &Entry : Root["file_sha256"])
      Model.FileSha256[Entry.first.as<std::string>()] =
          Entry.second.as<std::string>();
    for (const YAML::Node &Warning : Root["warnings"])
      Model.Warnings.push_back(Warning.as<std::string>());
    Error = impossibleValue(Model);
    if (!Error.empty())
      return std::nullopt;
    return Model;
  } catch (const std::exception &E) { // YAML::Exception, or out of memory
    Error = E.what();
    return std::nullopt;
  }
}

} // namespace skyline
