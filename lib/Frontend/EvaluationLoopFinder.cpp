//===- EvaluationLoopFinder.cpp - Loops that run the model untrained ------===//
//
// An evaluation loop is the innermost loop whose body calls a module's
// forward, directly or through the functions it calls, and reaches no
// backward() or step(): a test or validation pass, or inference. A loop
// inside a training loop, or in a function a training loop calls, is part of
// training (an RNN unrolled over time). The guard goes after the body's
// `{`; a body without braces (one statement) gets braces around it, in
// the fix-it and in the instrumented copy.
//
//===----------------------------------------------------------------------===//

#include "Finders.h"

#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"

#include <functional>
#include <regex>

using namespace clang;
using namespace clang::ast_matchers;

namespace skyline::frontend {
namespace {

constexpr int MaxCallerDepth = 3;

/// A call of a module's forward: `model->forward(x)`, `net.forward(x)`, or
/// a holder called as `model(x)`.
bool callsModel(const CallExpr *Call) {
  if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call)) {
    const CXXMethodDecl *Method = Member->getMethodDecl();
    return Method && Method->getIdentifier() &&
           Method->getName() == "forward" &&
           derivesFrom(Method->getParent(), "torch::nn::Module");
  }
  if (const auto *Apply = dyn_cast<CXXOperatorCallExpr>(Call))
    return Apply->getOperator() == OO_Call && Apply->getNumArgs() >= 1 &&
           isModuleHolder(Apply->getArg(0)->getType());
  return false;
}

template <typename Predicate>
bool containsCall(const Stmt *S, const Predicate &Takes) {
  if (!S)
    return false;
  if (const auto *Call = dyn_cast<CallExpr>(S); Call && Takes(Call))
    return true;
  return llvm::any_of(S->children(), [&](const Stmt *Child) {
    return containsCall(Child, Takes);
  });
}

/// Whether S, or a function it calls, holds a call Takes accepts.
template <typename Predicate>
bool reaches(const TUContext &TU, const Stmt *S, const Predicate &Takes) {
  if (containsCall(S, Takes))
    return true;
  llvm::SetVector<const FunctionDecl *> Called;
  collectCalledFunctions(TU, S, 0, Called);
  return llvm::any_of(Called, [&](const FunctionDecl *F) {
    return containsCall(F->getBody(), Takes);
  });
}

/// A call that needs autograd's graph: one that trains, torch::autograd::
/// grad (a saliency map, an adversarial input) or requires_grad_(): a loop
/// that makes one must not run under a guard.
bool needsGradients(const CallExpr *Call) {
  if (trainsModel(Call))
    return true;
  const FunctionDecl *Callee = Call->getDirectCallee();
  if (!Callee || !Callee->getIdentifier())
    return false;
  llvm::StringRef Name = Callee->getName();
  if (Name == "requires_grad_")
    return true;
  return Name == "grad" && llvm::StringRef(Callee->getQualifiedNameAsString())
                               .contains("autograd");
}

/// A backward() or step() after Loop in its function, outside every
/// training loop: what the loop computed may be kept for it (a loss summed
/// over the loop, then backward()).
bool trainsAfter(const TUContext &TU, const LoopFindings &Loops,
                 const Stmt *Loop) {
  const FunctionDecl *F = TU.enclosingFunction(Loop);
  if (!F || !F->getBody())
    return false;
  SourceLocation End = TU.SM.getExpansionLoc(Loop->getEndLoc());
  bool Found = false;
  std::function<void(const Stmt *)> Walk = [&](const Stmt *S) {
    if (!S || Found)
      return;
    if (const auto *Call = dyn_cast<CallExpr>(S);
        Call && trainsModel(Call) &&
        TU.SM.isBeforeInTranslationUnit(
            End, TU.SM.getExpansionLoc(Call->getBeginLoc())) &&
        !Loops.isTrainingContext(TU, Call))
      Found = true;
    for (const Stmt *Child : S->children())
      Walk(Child);
  };
  Walk(F->getBody());
  return Found;
}

/// torch::NoGradGuard (c10's), c10::InferenceMode, c10::AutoGradMode: while
/// one lives, autograd records nothing (AutoGradMode(true) is rare enough
/// that any counts: where unsure, the experiment stays quiet).
bool isGuardType(QualType T) {
  const CXXRecordDecl *RD = recordOf(T);
  if (!RD || !RD->getIdentifier())
    return false;
  llvm::StringRef Name = RD->getName();
  std::string Qualified = RD->getQualifiedNameAsString();
  bool Torch = llvm::StringRef(Qualified).starts_with("c10::") ||
               llvm::StringRef(Qualified).starts_with("at::") ||
               llvm::StringRef(Qualified).starts_with("torch::");
  return Torch && (Name == "NoGradGuard" || Name == "InferenceMode" ||
                   Name == "AutoGradMode");
}

bool declaresGuard(const Stmt *S) {
  const auto *Declaration = dyn_cast<DeclStmt>(S);
  return Declaration && llvm::any_of(Declaration->decls(), [](const Decl *D) {
           const auto *Var = dyn_cast<VarDecl>(D);
           return Var && isGuardType(Var->getType());
         });
}

const Stmt *parentStmt(const TUContext &TU, const Stmt *S) {
  auto Parents = TU.parents(*S);
  return Parents.empty() ? nullptr : Parents[0].get<Stmt>();
}

/// Whether a guard is in scope at S: declared before it in a block around
/// it in its function, or at every call of that function (to a depth of 3).
bool guardedAt(const TUContext &TU, const Stmt *S, int Depth = 0) {
  const Stmt *Child = S;
  for (const Stmt *Parent = parentStmt(TU, S); Parent;
       Child = Parent, Parent = parentStmt(TU, Parent))
    if (const auto *Block = dyn_cast<CompoundStmt>(Parent))
      for (const Stmt *Before : Block->body()) {
        if (Before == Child)
          break;
        if (declaresGuard(Before))
          return true;
      }
  const FunctionDecl *F = TU.enclosingFunction(S);
  if (!F || Depth >= MaxCallerDepth)
    return false;
  std::vector<const CallExpr *> Callers = TU.callsTo(F);
  return !Callers.empty() && llvm::all_of(Callers, [&](const CallExpr *Call) {
    return guardedAt(TU, Call, Depth + 1);
  });
}

bool isMemberOfModule(const FunctionDecl *F) {
  const auto *Method = dyn_cast_or_null<CXXMethodDecl>(F);
  return Method && derivesFrom(Method->getParent(), "torch::nn::Module");
}

/// Whether Inner is a loop inside Outer's body, or in a function Outer
/// calls.
bool runsInside(const TUContext &TU, const Stmt *Inner, const Stmt *Outer) {
  for (const Stmt *Loop = TU.enclosingLoop(Inner); Loop;
       Loop = TU.enclosingLoop(Loop))
    if (Loop == Outer)
      return true;
  const FunctionDecl *F = TU.enclosingFunction(Inner);
  if (!F || !F->getDefinition())
    return false;
  llvm::SetVector<const FunctionDecl *> Called;
  collectCalledFunctions(TU, loopBody(Outer), 0, Called);
  return Called.contains(F->getDefinition());
}

/// The whitespace before the body's first statement on its line; the
/// loop's own and two spaces where the body is empty or shares a line.
std::string indentOf(const TUContext &TU, const Stmt *Loop, const Stmt *Body) {
  const Stmt *First = Body;
  if (const auto *Block = dyn_cast<CompoundStmt>(Body))
    First = Block->body_empty() ? nullptr : Block->body_front();
  if (First)
    if (std::optional<std::string> Indent =
            lineIndent(TU, First->getBeginLoc()))
      return *Indent;
  return lineIndent(TU, Loop->getBeginLoc()).value_or("") + "  ";
}

/// The `)` that ends a for, range-for or while loop's header; invalid for
/// a do loop, whose body comes first.
SourceLocation headerEnd(const Stmt *Loop) {
  if (const auto *For = dyn_cast<ForStmt>(Loop))
    return For->getRParenLoc();
  if (const auto *Range = dyn_cast<CXXForRangeStmt>(Loop))
    return Range->getRParenLoc();
  if (const auto *While = dyn_cast<WhileStmt>(Loop))
    return While->getRParenLoc();
  return SourceLocation();
}

/// Just past the token at Loc (Length 0).
SourceSpan pastToken(const TUContext &TU, SourceLocation Loc) {
  SourceSpan Span = TU.tokenSpan(Loc);
  Span.Offset += Span.Length;
  Span.Column += Span.Length;
  Span.Length = 0;
  return Span;
}

/// A body without braces, outside a macro, that ends with its own `;` (an
/// expression or a declaration, not a nested if or loop), in the header's
/// file: the fix-it can put braces around it.
std::optional<SourceLocation> bracelessBodyEnd(const TUContext &TU,
                                               const Stmt *Loop,
                                               const Stmt *Body) {
  SourceLocation Header = headerEnd(Loop);
  if (Header.isInvalid() || Header.isMacroID() ||
      Body->getBeginLoc().isMacroID() || Body->getEndLoc().isMacroID() ||
      !(isa<Expr>(Body) || isa<DeclStmt>(Body)))
    return std::nullopt;
  if (isa<DeclStmt>(Body))
    return Body->getEndLoc(); // its range ends at the `;`
  std::optional<Token> Semi = Lexer::findNextToken(Body->getEndLoc(), TU.SM,
                                                   TU.Ctx.getLangOpts());
  if (!Semi || !Semi->is(tok::semi) || Semi->getLocation().isMacroID())
    return std::nullopt;
  return Semi->getLocation();
}

/// "no_grad", unless the function names that already.
std::string guardName(const TUContext &TU, const Stmt *Loop) {
  const FunctionDecl *F = TU.enclosingFunction(Loop);
  std::string Text =
      F && F->getBody() ? TU.textOf(F->getBody()->getSourceRange()) : "";
  for (const char *Name : {"no_grad", "no_grad_guard", "skyline_no_grad"})
    if (!std::regex_search(Text, std::regex(std::string("\\b") + Name + "\\b")))
      return Name;
  return "skyline_no_grad_guard";
}

EvaluationLoop describe(const TUContext &TU, const Stmt *Loop,
                        const Stmt *Body) {
  EvaluationLoop L;
  L.File = TU.fileOf(Loop->getBeginLoc());
  L.Line = TU.lineOf(Loop->getBeginLoc());
  L.Column = TU.columnOf(Loop->getBeginLoc());
  if (const FunctionDecl *F = TU.enclosingFunction(Loop))
    L.Function = F->getQualifiedNameAsString();
  L.Indent = indentOf(TU, Loop, Body);
  L.GuardName = guardName(TU, Loop);
  if (const auto *Block = dyn_cast<CompoundStmt>(Body)) {
    L.BodyStart = pastToken(TU, Block->getLBracLoc());
    L.Guarded =
        llvm::any_of(Block->body(), declaresGuard) || guardedAt(TU, Loop);
    return L;
  }
  L.Braces = false;
  L.BodyStart = TU.tokenSpan(TU.SM.getExpansionLoc(Body->getBeginLoc()));
  L.BodyStart.Length = 0;
  L.HeaderEnd = pastToken(TU, headerEnd(Loop));
  L.BodyEnd = pastToken(TU, *bracelessBodyEnd(TU, Loop, Body));
  L.LoopIndent = lineIndent(TU, Loop->getBeginLoc()).value_or("");
  L.Guarded = guardedAt(TU, Loop);
  return L;
}

} // namespace

void findEvaluationLoops(const TUContext &TU, const LoopFindings &Loops,
                         std::vector<EvaluationLoop> &Out) {
  std::vector<std::pair<const Stmt *, const Stmt *>> Candidates;
  for (const Stmt *Loop : TU.findAll<Stmt>(
           stmt(anyOf(forStmt(), cxxForRangeStmt(), whileStmt(), doStmt()))
               .bind("n"))) {
    const Stmt *Body = loopBody(Loop);
    const auto *Block = dyn_cast_or_null<CompoundStmt>(Body);
    bool Editable = Block ? !Block->getLBracLoc().isMacroID()
                          : Body && bracelessBodyEnd(TU, Loop, Body);
    if (!Body || !Editable || Loop->getBeginLoc().isMacroID() ||
        Loops.TrainingLoopStmts.contains(Loop) ||
        Loops.isTrainingContext(TU, Loop) ||
        isMemberOfModule(TU.enclosingFunction(Loop)))
      continue;
    if (!reaches(TU, Body, callsModel) || reaches(TU, Body, needsGradients) ||
        trainsAfter(TU, Loops, Loop))
      continue;
    Candidates.push_back({Loop, Body});
  }
  // The innermost: an epoch loop around a test() call is not one.
  for (auto [Loop, Body] : Candidates) {
    bool HoldsAnother = llvm::any_of(Candidates, [&, Loop = Loop](auto Other) {
      return Other.first != Loop && runsInside(TU, Other.first, Loop);
    });
    if (!HoldsAnother)
      Out.push_back(describe(TU, Loop, Body));
  }
}

} // namespace skyline::frontend
