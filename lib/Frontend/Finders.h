//===- Finders.h - The per-translation-unit finders -------------*- C++ -*-===//
//
// Each finder walks one translation unit's own code and returns raw records;
// Frontend.cpp merges them across translation units (a header is seen by
// every file that includes it) and resolves names program-wide.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_LIB_FRONTEND_FINDERS_H
#define SKYLINE_LIB_FRONTEND_FINDERS_H

#include "ASTHelpers.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace skyline::frontend {

/// ParentRef of a child that a module appends to itself (push_back in the
/// constructor of a class derived from SequentialImpl), followed by the class.
inline constexpr llvm::StringLiteral ThisParentPrefix = "this:";

/// A module construction before names are resolved program-wide.
struct RawConstruction {
  std::string Id;       // file@offset of the construction, or of its member
  std::string ExprId;   // file@offset of the construction itself
  std::string OwnerKey; // declKey of the variable or member it initializes
  std::string OwnerName;
  std::string RegisteredName;
  std::string RegisteredAt;
  std::string ParentRef; // Id or OwnerKey of the enclosing Sequential
  int ChildIndex = -1;
  std::string ChildName;      // {"conv", Conv2d(...)} in a Sequential's list
  bool AppendedChild = false; // push_back: index counts after the ctor args
  bool Skip = false;          // a base-class construction
  bool Returned = false;      // returned by a factory: its calls are the sites
  const clang::FieldDecl *ImplicitMember =
      nullptr; // default-constructed member
  unsigned NumArgs = 0;
  ModuleSite Site; // Type, Options, File, Line, Column filled
};

/// register_module("name", member) naming a module built elsewhere.
struct RawRegistration {
  std::string OwnerKey;
  std::string Name;
  std::string At;
  /// The module as registered, for one built where the front end cannot
  /// see (a copy of a parameter): Type, File, Line, Column filled.
  ModuleSite Site;
};

struct RawModuleCall {
  std::string CalleeKey;
  std::string FallbackName;
  ModuleCall Call;
};

struct ModuleFindings {
  std::vector<RawConstruction> Constructions;
  std::vector<RawRegistration> Registrations;
  std::vector<RawModuleCall> Calls;
  /// The program's module classes with a constructor defined here, and
  /// those whose constructors are only declared here (file:line of the
  /// class): the layers the latter register are seen only where they are
  /// defined.
  std::set<std::string> ClassesDefined;
  std::map<std::string, std::string> ClassesDeclaredOnly;
};

ModuleFindings findModules(const TUContext &TU);

/// The training loops of one translation unit, and what a batch-size finder
/// needs to know about them.
struct LoopFindings {
  std::vector<TrainingLoop> Loops;
  llvm::DenseSet<const clang::Stmt *> TrainingLoopStmts;
  /// Every loop with a backward or step call in it, directly or through calls.
  bool isTrainingContext(const TUContext &TU, const clang::Stmt *S) const;
  /// Functions called (transitively) from a training loop body.
  llvm::DenseSet<const clang::FunctionDecl *> TrainingFunctions;
};

LoopFindings findTrainingLoops(const TUContext &TU);

/// The host syncs and copies to a device in the body of LoopStmt, Loop's
/// statement (TrainingLoop::HostSyncs, DeviceCopies), its instantiations'
/// where it is in a function template.
void findHostTransfers(const TUContext &TU, const clang::Stmt *LoopStmt,
                       TrainingLoop &Loop);

/// The body of a for, range-for, while or do loop; null for anything else.
const clang::Stmt *loopBody(const clang::Stmt *Loop);
/// The module class a holder wraps: NetImpl of `TORCH_MODULE(Net)`.
const clang::CXXRecordDecl *heldModule(clang::QualType Holder);
/// The user's functions that S calls, each once, to a depth of 3: direct
/// callees with a body and, for a module called through its holder
/// (`model(x)`), the module's forward().
void collectCalledFunctions(const TUContext &TU, const clang::Stmt *S,
                            int Depth,
                            llvm::SetVector<const clang::FunctionDecl *> &Out);
/// A tensor's backward() or an optimizer's step(): what trains.
bool trainsModel(const clang::CallExpr *Call);

/// The loops that evaluate the model (ProgramModel::EvaluationLoops) in
/// this translation unit: outside every training context of Loops.
void findEvaluationLoops(const TUContext &TU, const LoopFindings &Loops,
                         std::vector<EvaluationLoop> &Out);

struct OptionDefault; // BatchSizeTracer.h

/// Which of the program's functions refer to which (a call, or a function
/// named to be called later), by USR so that the sources' graphs join. A
/// free function that main never reaches does not run: the batch sizes it
/// uses are no answer.
struct CallGraph {
  std::map<std::string, std::set<std::string>> References;
  /// Reached without a reference the graph follows: main, every member
  /// function (an object's methods run through LibTorch, a base class or a
  /// functor), what a global's initializer names.
  std::set<std::string> Roots;
  /// Free functions (and static members) defined in the sources: the only
  /// ones the graph can tell are never reached.
  std::map<std::string, std::string> FreeFunctions; // USR -> qualified name
  bool HasMain = false;

  void add(const CallGraph &Other);
  /// Whether the function keyed Key runs, as far as the graph tells: true
  /// for anything but a free function no root reaches, and for everything
  /// when no source defines main.
  bool reaches(llvm::StringRef Key) const;

private:
  mutable std::optional<std::set<std::string>> Reached;
};

/// The key CallGraph knows a function by: its USR, a template's pattern's.
std::string functionKey(const clang::FunctionDecl *F);
CallGraph findCalls(const TUContext &TU);

/// A batch size found in one translation unit, with what the program-wide
/// choice weighs it by.
struct FoundBatchSize {
  BatchSizeSite Site;
  /// The function the use is in (functionKey; empty at namespace scope),
  /// and its name for a note.
  std::string UsedIn;
  std::string UsedInName;
  /// A size given to a function defined in another source
  /// (`generate_xy(n_batch, ...)`): it counts where that source makes the
  /// parameter a tensor's first dimension (a DimensionParameter).
  std::string Callee;
  unsigned ParamIndex = 0;
};

/// A function's parameter that it makes a tensor's first dimension of
/// (`torch::rand({n_batch, n_dim})` in `generate_xy(n_batch, n_dim)`), for
/// a training loop in another source that calls it.
struct DimensionParameter {
  std::string Function; // functionKey
  unsigned Index = 0;
  UseStep At;
};

/// The first step of a ByName candidate's chain.
inline constexpr llvm::StringLiteral NamedOnly =
    "named like a batch size, no use found";

/// What one translation unit tells of the batch sizes.
struct BatchSizeFindings {
  std::vector<FoundBatchSize> Sites;
  /// Integer variables and fields named like a batch size, each traced to
  /// its literal: candidates only, listed where no use decides.
  std::vector<BatchSizeSite> ByName;
  std::vector<DimensionParameter> DimensionParameters;
  CallGraph Calls;
};

/// Every batch size the translation unit uses, each with its role.
BatchSizeFindings findBatchSizes(const TUContext &TU,
                                 const LoopFindings &Loops);

/// The program's training batch size, where the uses decide it: a loader
/// whose batches reach backward() or step(), a tensor made or a loop
/// stride in the training loop, in code main reaches; else none, with a
/// warning that lists the candidates and why each was not taken. The other
/// sizes go to OtherBatchSizes. Named: the one --batch-size-var names.
void mergeBatchSizes(std::vector<BatchSizeFindings> &Found,
                     const std::vector<OptionDefault> &Defaults,
                     std::optional<BatchSizeSite> Named, bool NamedByUser,
                     ProgramModel &Model);

/// The program's intra-op thread settings and the start of main
/// (ProgramModel::Threads), as far as this translation unit holds them.
void findThreadSettings(const TUContext &TU, ThreadSettings &Out);

/// The program's data loaders and their options (ProgramModel::Loaders),
/// as far as this translation unit holds them.
void findDataLoaders(const TUContext &TU, std::vector<DataLoaderSite> &Out);

/// The batch size declared by a named variable, field or macro.
std::optional<BatchSizeSite> findNamedBatchSize(const TUContext &TU,
                                                llvm::StringRef Name);

} // namespace skyline::frontend

#endif // SKYLINE_LIB_FRONTEND_FINDERS_H
