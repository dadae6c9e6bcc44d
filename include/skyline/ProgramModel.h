//===- ProgramModel.h - What the front end knows about a program -*- C++
//-*-===//
//
// Plain data passed from the Frontend to every later stage: where the batch
// size is declared, where layers are built and called, and where the training
// loop is. It serializes to YAML (ProgramModelYAML.h), so stages can run apart.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_PROGRAMMODEL_H
#define SKYLINE_PROGRAMMODEL_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace skyline {

/// A range of source text. Offsets are 0-based bytes, lines and columns
/// 1-based, as clang reports them.
struct SourceSpan {
  std::string File;
  unsigned Line = 0;
  unsigned Column = 0;
  unsigned Offset = 0;
  unsigned Length = 0;
};

/// Replace Range by Text.
struct TextEdit {
  SourceSpan Range;
  std::string Text;
};

/// How the batch-size literal is written in the program.
enum class BatchSizeKind {
  NamespaceConstant,  // const int64_t kBatchSize = 64; at namespace scope
  LocalConstant,      // a local variable in a function
  StaticMember,       // static constexpr member of a class
  FieldDefault,       // struct Options { size_t batch_size = 8; };
  DefaultArgument,    // void train(int64_t batch_size = 32)
  LiteralArgument,    // make_data_loader(std::move(ds), 64)
  OptionsBuilder,     // DataLoaderOptions().batch_size(64) with a literal
  CommandLineDefault, // argc > 1 ? atoi(argv[1]) : 64, cxxopts default_value
  EnvironmentDefault, // getenv("BATCH") ? atoi(...) : 64
  ConfigDefault,      // config["batch_size"].as<int>(64): a config's fallback
  Macro,              // #define BATCH_SIZE 64
  Derived,            // computed from other values: total / ranks
  RuntimeRead,        // atoi(argv[1]), getenv(..), config["b"].as<int>():
                      // read at run time, no default in the source
};

const char *batchSizeKindName(BatchSizeKind Kind);
std::optional<BatchSizeKind> parseBatchSizeKind(const std::string &Name);

/// What a batch size is used for.
enum class BatchSizeRole { Train, Eval, Unknown };
const char *batchSizeRoleName(BatchSizeRole Role);

/// One step from a use of the batch size back to its declaration, worded as
/// a note at File:Line:Column ("passed as 'batch_size' to train() here").
struct UseStep {
  std::string Description;
  std::string File;
  unsigned Line = 0;
  unsigned Column = 0; // 0: none known (a step named on the command line)
};

/// A batch size resolved to the literal that should change.
struct BatchSizeSite {
  std::string Name; // variable, field, macro or option name; or the callee
  int64_t Value = 0;
  BatchSizeKind Kind = BatchSizeKind::LiteralArgument;
  BatchSizeRole Role = BatchSizeRole::Unknown;
  double Confidence = 0; // 0..1: how sure the front end is of the role
  unsigned Uses = 1;     // how many uses lead to this literal
  SourceSpan Literal;    // the text to replace to change the batch size
  bool InString = false; // the digits of a string literal ("32" of cxxopts)
  /// The integer type the literal initializes inside braces when an int64_t
  /// would be narrowed to it ("int" for `int batch_size{64}`); the runs'
  /// value is cast to it. Empty: none needed.
  std::string ListInitType;
  /// Other edits a run-time override needs: each `constexpr` on the way
  /// becomes `const` (`inline const` for a static member).
  std::vector<TextEdit> OverrideEdits;
  std::vector<UseStep> Chain; // from the use (first) to the declaration (last)
  /// What a RuntimeRead site reads ("argv[1]", "environment variable
  /// 'BATCH'", "configuration key 'batch_size'"); Literal is the expression
  /// that reads it, and Value is 0. Empty for every other kind.
  std::string ReadFrom;
  /// The dataset argument of the loader this batch size is given to
  /// (`std::move(train_dataset)` of make_data_loader): the runs wrap it to
  /// learn the dataset's size. None: not a loader's, or inside a macro.
  std::optional<SourceSpan> DatasetArgument;
  /// The dataset arguments of the other loaders given the same literal (an
  /// evaluation loader): where the loops shape tensors by the batch size,
  /// a suggestion must divide their datasets too.
  std::vector<SourceSpan> SharedDatasetArguments;
};

/// A place where a layer (a torch::nn module) is constructed.
struct ModuleSite {
  std::string Name;    // registered name, else variable/member, `parent.i`
  std::string Type;    // torch::nn::Linear, ResidualBlock, ...
  std::string Options; // constructor arguments as written
  std::string Parent;  // enclosing Sequential's name, if any
  std::string File;
  unsigned Line = 0; // construction site
  unsigned Column = 0;
  std::string RegisteredAt; // file:line of register_module, or empty
};

/// A call of a module's forward: conv1->forward(x), conv1(x), seq->forward(x).
struct ModuleCall {
  std::string Name; // the called module's name, as in ModuleSite::Name
  std::string File;
  unsigned Line = 0;
  unsigned Column = 0;
  unsigned Offset = 0; // of the whole call expression
  unsigned Length = 0;
  bool InMacro = false; // from a macro expansion: cannot be rewritten
  /// Its arguments name a structured binding, which a C++17 lambda cannot
  /// capture: it cannot be wrapped in a scope either.
  bool UsesBinding = false;
  /// The called module's expression as written (`fc1` of `fc1->forward(x)`),
  /// when evaluating it once more is harmless (names and member accesses,
  /// no calls); empty otherwise. The runtime reads the layer's weights
  /// through it.
  std::string Callee;
};

struct OptimizerSite {
  std::string Name;
  std::string Type; // torch::optim::Adam
  std::string File;
  unsigned Line = 0;
  /// Just past the `;` of its declaration: where a run starts tracking it.
  unsigned DeclarationEnd = 0;
  /// The learning-rate literal when the options name one (SGDOptions(0.01)).
  std::optional<SourceSpan> LearningRate;
  std::string LearningRateText;
  /// Just past the `;` of a local declaration, for a statement written
  /// after it at Indent (the whitespace before the declaration, where it
  /// starts its line).
  std::optional<SourceSpan> AfterDeclaration;
  std::string Indent;
  /// Held through a pointer (`std::unique_ptr<Optimizer>`, `Adam *`): used
  /// as `name->`.
  bool ThroughPointer = false;
};

struct CallSite {
  std::string File;
  unsigned Line = 0;
  unsigned Column = 0;
  unsigned Offset = 0; // of the whole call expression
  unsigned Length = 0;
  /// A step() of an optimizer kept in a class member (`opt_.step()`,
  /// `optimizer->step()`): the optimizer as an expression of its own type
  /// (`opt_`, `*optimizer`), for the runs to track it at the call, since no
  /// statement follows its declaration. Empty otherwise.
  std::string Optimizer;
};

/// A call in the training loop that gives a tensor the batch size as a
/// dimension (`x.view({batch_size, -1})`, `torch::ones({batch_size, 1})`):
/// a batch smaller than the size, an epoch's last, fails there.
struct BatchShape {
  CallSite Call;
  std::string Text; // the call as written, on one line, cut at 60 characters
  /// The variable (or field) used as a dimension and where it is declared;
  /// the front end keeps only the training batch size's.
  std::string Variable;
  std::string VariableFile;
  unsigned VariableLine = 0;
};

/// A statement that runs before the training loop, in the function that
/// holds the loop: what it allocates and still holds at the peak (a dataset
/// read into memory, the model) is shown by its line in the report.
struct SetupStatement {
  SourceSpan At;    // the whole statement (Length: through its `;`)
  std::string Text; // as written, on one line, cut at 60 characters
};

/// A call in a training loop's body that makes the host wait for the
/// device and copies to it: a tensor's item() or cpu(), its to() a CPU
/// device written as such (torch::kCPU), or a tensor written to a stream.
/// The instrumented copy times each (skyline::rt::host_sync), so the report
/// says what share of an iteration they take.
struct HostSyncSite {
  SourceSpan At;    // the whole expression (a stream's: through the tensor)
  std::string Kind; // item, cpu, to-cpu, print
  std::string Text; // as written, on one line, cut at 60 characters
};

/// A tensor copied to a device in a training loop's body with a device as
/// its only argument (`data.to(device)`): blocking, from pageable memory
/// where the tensor is on the CPU. What the pinned memory experiment's trial
/// changes (skyline::rt::to_device) and its fix-it edits.
struct DeviceCopySite {
  SourceSpan Call; // the whole call
  /// Just past the tensor (Length 0), where `.pin_memory()` goes; the
  /// device argument; just past it (Length 0), where `, true` goes.
  SourceSpan TensorEnd, Argument, ArgumentEnd;
  std::string Text; // the call as written, on one line, cut at 60 characters
};

/// The loop one pass of which is one training iteration.
struct TrainingLoop {
  std::string File;
  unsigned Line = 0;
  unsigned Column = 0;
  /// The loop body's bytes in File; a body without braces gets them added.
  unsigned BodyOffset = 0;
  unsigned BodyLength = 0;
  bool BodyIsCompound = true;
  /// The whole loop statement's bytes in File (`for` through the body, or a
  /// do-while's `;`): the runs mark each start of the loop, an epoch's, so
  /// the iteration across it is left out of the time. 0: not marked (a loop
  /// inside a macro).
  unsigned LoopOffset = 0;
  unsigned LoopLength = 0;
  std::string Function; // enclosing function
  std::vector<OptimizerSite> Optimizers;
  std::vector<CallSite> ZeroGradCalls;
  std::vector<CallSite> BackwardCalls;
  std::vector<CallSite> StepCalls;
  /// Where the loop shapes tensors by the training batch size: the
  /// program needs every batch whole.
  std::vector<BatchShape> BatchShapes;
  /// The statements before the loop in its function, each compound
  /// statement's on the way out from the loop to the function's body, in
  /// source order; none from a macro.
  std::vector<SetupStatement> SetupStatements;
  /// In the body (not in the functions it calls), in source order; none
  /// from a macro or naming a structured binding (a lambda cannot capture
  /// one), and none holding a module call (its time is the layer's).
  std::vector<HostSyncSite> HostSyncs;
  std::vector<DeviceCopySite> DeviceCopies;
};

/// Where the program sets its intra-op thread count, and where a setting of
/// its own would go (and the #include it needs): what the threads, cuDNN
/// and autocast experiments' fix-its edit.
struct ThreadSettings {
  /// The argument of each torch::set_num_threads or at::set_num_threads
  /// call (none inside a macro).
  std::vector<SourceSpan> Calls;
  /// Just past the `{` of main's body (Length 0); none: no source here
  /// defines main.
  std::optional<SourceSpan> MainStart;
  /// The indentation of main's first statement ("  " where it has none).
  std::string MainIndent;
  /// The start of the line after the last #include before main in its file
  /// (Length 0), where a fix-it's own #include goes; none: no #include
  /// precedes main there.
  std::optional<SourceSpan> IncludeAt;
  /// What main's file includes, as written between <> or "" (in order).
  std::vector<std::string> MainIncludes;
};

/// A data loader the program makes (make_data_loader, or a loader class
/// constructed): what the loader workers experiment's trial wraps and its
/// fix-it edits.
struct DataLoaderSite {
  SourceSpan Call;    // the loader's construction, for the place of a finding
  SourceSpan Dataset; // its dataset argument as written
  /// Its options argument as written: a batch size (make_data_loader(ds,
  /// 64)) when OptionsIsCount, else a DataLoaderOptions expression.
  SourceSpan Options;
  bool OptionsIsCount = false;
  /// The argument of the workers(N) setter on the options, where there is
  /// one (in their chain, on the variable they name, or in its
  /// initializer); WorkersValue is it where it is a literal, else -1.
  std::optional<SourceSpan> Workers;
  int64_t WorkersValue = 0;
  /// Where `.workers(N)` goes when no setter is there (Length 0): past the
  /// initializer of the variable the options name, or past the options.
  SourceSpan WorkersInsertAt;
  /// The loader the training batch size is given to (its dataset argument
  /// is the batch size's), or the program's only loader.
  bool Training = false;
};

/// A loop that runs the model without training it (an evaluation or test
/// loop): the innermost loop whose body calls a module's forward, directly
/// or through the functions it calls, and reaches no backward() or step().
/// What the no-grad evaluation experiment's trial times and its fix-it
/// edits.
struct EvaluationLoop {
  std::string File;
  unsigned Line = 0;
  unsigned Column = 0;
  std::string Function; // enclosing function
  /// Just past the `{` of its body (Length 0): where a guard goes, for the
  /// fix-it and for the instrumented copy. A body without braces
  /// (`for (...) total += f(x);`): where its statement starts.
  SourceSpan BodyStart;
  /// The indentation of the body's first statement.
  std::string Indent;
  /// A body without braces: just past the header's `)` (where the fix-it
  /// opens a brace), just past the statement's `;` (where it closes it),
  /// and the loop's own indentation (the closing brace's).
  bool Braces = true;
  SourceSpan HeaderEnd, BodyEnd;
  std::string LoopIndent;
  /// A torch::NoGradGuard, c10::InferenceMode or AutoGradMode is in scope
  /// (in the body, before the loop in its function, or before every call of
  /// that function): autograd records nothing there already.
  bool Guarded = false;
  /// A name for the guard the fix-it declares that the function does not
  /// use already ("no_grad").
  std::string GuardName;
};

struct ProgramModel {
  static constexpr int SchemaVersion = 1;
  std::vector<std::string> Sources;
  std::optional<BatchSizeSite> BatchSize; // the training batch size
  /// Where BatchSize is none because the program reads its training batch
  /// size at run time with no default in the source: that read (Kind
  /// RuntimeRead). The runs measure the program at its own size.
  std::optional<BatchSizeSite> RuntimeBatchSize;
  std::vector<BatchSizeSite> OtherBatchSizes;
  std::vector<ModuleSite> Modules;
  std::vector<ModuleCall> ModuleCalls;
  std::vector<TrainingLoop> TrainingLoops;
  /// The callee (`torch::save`) of every checkpoint save, made a no-op in runs.
  std::vector<SourceSpan> SaveCalls;
  ThreadSettings Threads;
  /// Every loader whose options are written outside a macro.
  std::vector<DataLoaderSite> Loaders;
  /// The loops with a compound body, outside a macro, that evaluate the
  /// model, in the order the sources hold them.
  std::vector<EvaluationLoop> EvaluationLoops;
  /// Every file of the program's own (sources and headers, no system ones).
  std::vector<std::string> Files;
  /// Each of Files and its SHA-256 when it was analyzed: a saved report's
  /// offsets hold only for the text they were found in.
  std::map<std::string, std::string> FileSha256;
  std::vector<std::string> Warnings;
};

/// Every file path Model holds (sources, sites, calls, loops, the files and
/// their digests' keys, a module's "file:line" registration) replaced by
/// Map's answer; empty paths are left empty. One walk, so that a path added
/// to the model is shown and resolved alike everywhere.
/// Model's evaluation loops that no guard covers: where the no-grad
/// evaluation experiment's trial and fix-it go.
std::vector<const EvaluationLoop *>
unguardedEvaluationLoops(const ProgramModel &Model);

void rewritePaths(ProgramModel &Model,
                  llvm::function_ref<std::string(llvm::StringRef)> Map);

} // namespace skyline

#endif // SKYLINE_PROGRAMMODEL_H
