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

/// Every batch size the translation unit uses, each with its role.
std::vector<BatchSizeSite> findBatchSizes(const TUContext &TU,
                                          const LoopFindings &Loops);

/// Integer variables and fields named like a batch size (batch_size,
/// kBatchSize), each traced to its literal: the guess when no use of a batch
/// size is found (a language model's batch_size feeds only its own code).
std::vector<BatchSizeSite> findBatchSizesByName(const TUContext &TU);

/// The batch size declared by a named variable, field or macro.
std::optional<BatchSizeSite> findNamedBatchSize(const TUContext &TU,
                                                llvm::StringRef Name);

} // namespace skyline::frontend

#endif // SKYLINE_LIB_FRONTEND_FINDERS_H
