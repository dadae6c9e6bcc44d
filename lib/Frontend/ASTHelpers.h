//===- ASTHelpers.h - Shared AST queries of the front end -------*- C++ -*-===//
//
// Source positions, parents, and the LibTorch type tests (is this a module,
// a module holder, an optimizer?) that every finder uses.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_LIB_FRONTEND_ASTHELPERS_H
#define SKYLINE_LIB_FRONTEND_ASTHELPERS_H

#include "skyline/ProgramModel.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include <optional>
#include <string>
#include <vector>

namespace skyline::frontend {

/// The AST of one translation unit with the queries the finders share.
class TUContext {
public:
  explicit TUContext(clang::ASTContext &Ctx)
      : Ctx(Ctx), SM(Ctx.getSourceManager()) {}

  clang::ASTContext &Ctx;
  const clang::SourceManager &SM;

  /// Absolute, normalized path of the file holding Loc's expansion.
  std::string fileOf(clang::SourceLocation Loc) const;
  unsigned lineOf(clang::SourceLocation Loc) const;
  unsigned columnOf(clang::SourceLocation Loc) const;
  std::string where(clang::SourceLocation Loc) const; // file:line

  /// The file range of R (macro arguments resolved to their spelling).
  SourceSpan spanOf(clang::SourceRange R) const;
  /// The span of the single token spelled at Loc (through macros).
  SourceSpan tokenSpan(clang::SourceLocation Loc) const;
  std::string textOf(clang::SourceRange R) const;

  /// The program's own code: not a system header, not a builtin.
  bool isUserCode(clang::SourceLocation Loc) const;

  /// The first non-implicit parent of S (skips casts, temporaries, cleanups).
  const clang::Stmt *semanticParent(const clang::Stmt *S) const;
  clang::DynTypedNodeList parents(const clang::Stmt &S) const {
    return Ctx.getParents(S);
  }
  /// The innermost for/while/do loop around S inside its function, or null.
  const clang::Stmt *enclosingLoop(const clang::Stmt *S) const;
  const clang::FunctionDecl *enclosingFunction(const clang::Stmt *S) const;
  /// The calls of F through any of its declarations: a call names the
  /// declaration in scope, a prototype or the definition. A call in code
  /// with errors that clang left unresolved (an argument it could not
  /// type) counts for each overload it names.
  std::vector<const clang::CallExpr *>
  callsTo(const clang::FunctionDecl *F) const;

  /// Runs Matcher over the program's own code (the traversal scope) and
  /// returns the nodes bound to "n".
  template <typename NodeT, typename MatcherT>
  std::vector<const NodeT *> findAll(const MatcherT &Matcher) const {
    std::vector<const NodeT *> Result;
    for (const auto &Bound : clang::ast_matchers::match(Matcher, Ctx))
      if (const auto *Node = Bound.template getNodeAs<NodeT>("n"))
        if (isUserCode(Node->getBeginLoc()))
          Result.push_back(Node);
    return Result;
  }
};

/// Path made absolute, with `.` and `..` removed: how the model names files.
std::string normalizedPath(llvm::StringRef Path);

/// Strips parens, implicit casts, temporaries and conversions that keep the
/// value (SymInt(b), static_cast<int64_t>(b)).
const clang::Expr *stripValueWrappers(const clang::Expr *E);

const clang::CXXRecordDecl *recordOf(clang::QualType T);
bool derivesFrom(const clang::CXXRecordDecl *RD, llvm::StringRef QualifiedName);
/// torch::nn::Linear and every other ModuleHolder<...>.
bool isModuleHolder(clang::QualType T);
/// A class derived from torch::nn::Module (NetImpl, Net without TORCH_MODULE).
bool isModuleClass(clang::QualType T);
/// A holder, a module class, or a smart pointer to a module class.
bool isModuleLike(clang::QualType T);
/// An optimizer, a smart or raw pointer to one.
bool isOptimizer(clang::QualType T);
/// The type's name as a user reads it: torch::nn::Linear, ResidualBlock.
std::string moduleTypeName(clang::QualType T);

/// A stable key for a variable or field across translation units: the file
/// and offset of its declaration.
std::string declKey(const TUContext &TU, const clang::Decl *D);

/// The written initializers of Field in its class's constructors, read from
/// each constructor's definition (an out-of-line one included, where the
/// translation unit has it).
std::vector<const clang::CXXCtorInitializer *>
memberInitializers(const clang::FieldDecl *Field);

/// The VarDecl or FieldDecl an expression names (through -> and *), or null.
const clang::ValueDecl *referencedDecl(const clang::Expr *E);

/// Whether evaluating E once more, before the call, changes nothing: names,
/// `this`, member accesses, dereferences and subscripts by a name or a
/// literal (`fc`, `net.fc`, `*model`, `layers[i]`), no calls but the
/// operators ->, * and [] of holders, smart pointers and containers.
bool isSideEffectFree(const clang::Expr *E);

/// E's text, for an instrumented copy to evaluate it again (a called
/// layer's weights, a member optimizer to track); "" where that is not
/// harmless, E comes from a macro, or its text spans lines (a rewrite never
/// adds a line, so line numbers stay the original's).
std::string repeatableText(const TUContext &TU, const clang::Expr *E);

/// The whitespace before Loc on its line; none where text comes first.
std::optional<std::string> lineIndent(const TUContext &TU,
                                      clang::SourceLocation Loc);

/// S as written, on one line (runs of blanks made one), cut at 60
/// characters: how a report quotes a statement or a call.
std::string oneLineText(const TUContext &TU, const clang::Stmt *S);

/// Whether S names a structured binding, which a lambda cannot capture
/// before C++20: the instrumented copy wraps no such expression in one.
bool namesBinding(const clang::Stmt *S);

} // namespace skyline::frontend

#endif // SKYLINE_LIB_FRONTEND_ASTHELPERS_H
