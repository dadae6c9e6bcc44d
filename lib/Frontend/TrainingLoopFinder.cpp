//===- TrainingLoopFinder.cpp - The loop that trains ----------------------===//
//
// A training loop is the innermost loop around an optimizer's step() or a
// tensor's backward(), directly or through the functions it calls (a train()
// called once per epoch, a train_step() called once per batch).
//
//===----------------------------------------------------------------------===//

#include "Finders.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace skyline::frontend {
namespace {

constexpr int MaxCallDepth = 3;

enum class CallKind { ZeroGrad, Backward, Step };

bool isTensorMethod(const CXXMethodDecl *Method) {
  std::string Class = Method->getParent()->getQualifiedNameAsString();
  return llvm::StringRef(Class).starts_with("at::");
}

std::optional<CallKind> classify(const CallExpr *Call) {
  const FunctionDecl *Callee = Call->getDirectCallee();
  if (!Callee)
    return std::nullopt;
  if (const auto *Method = dyn_cast<CXXMethodDecl>(Callee)) {
    llvm::StringRef Name = Method->getName();
    if (Name == "backward" && isTensorMethod(Method))
      return CallKind::Backward;
    bool OnOptimizer =
        derivesFrom(Method->getParent(), "torch::optim::Optimizer");
    if (Name == "step" && OnOptimizer)
      return CallKind::Step;
    if (Name == "zero_grad" &&
        (OnOptimizer || derivesFrom(Method->getParent(), "torch::nn::Module")))
      return CallKind::ZeroGrad;
    return std::nullopt;
  }
  if (Callee->getQualifiedNameAsString() == "torch::autograd::backward")
    return CallKind::Backward;
  return std::nullopt;
}

std::vector<const CallExpr *> callersOf(const TUContext &TU,
                                        const FunctionDecl *F) {
  return TU.findAll<CallExpr>(
      callExpr(callee(functionDecl(equalsNode(F->getCanonicalDecl()))))
          .bind("n"));
}

/// The loop that runs S once per iteration, looking through callers.
const Stmt *loopFor(const TUContext &TU, const Stmt *S, int Depth = 0) {
  if (const Stmt *Loop = TU.enclosingLoop(S))
    return Loop;
  if (Depth >= MaxCallDepth)
    return nullptr;
  const FunctionDecl *F = TU.enclosingFunction(S);
  if (!F)
    return nullptr;
  for (const CallExpr *Caller : callersOf(TU, F))
    if (const Stmt *Loop = loopFor(TU, Caller, Depth + 1))
      return Loop;
  return nullptr;
}

/// The variable an expression names, following a parameter back to the
/// argument of its first caller.
const ValueDecl *originOf(const TUContext &TU, const Expr *E, int Depth = 0) {
  const ValueDecl *D = referencedDecl(E);
  const auto *Param = dyn_cast_or_null<ParmVarDecl>(D);
  if (!Param || Depth >= MaxCallDepth)
    return D;
  const auto *F = dyn_cast<FunctionDecl>(Param->getDeclContext());
  if (!F)
    return D;
  unsigned Index = Param->getFunctionScopeIndex();
  for (const CallExpr *Caller : callersOf(TU, F))
    if (Index < Caller->getNumArgs())
      if (const ValueDecl *Origin =
              originOf(TU, Caller->getArg(Index), Depth + 1))
        return Origin;
  return D;
}

void findLearningRate(const TUContext &TU, const Stmt *S, OptimizerSite &Out) {
  if (!S || Out.LearningRate)
    return;
  auto TakeLiteral = [&](const Expr *Arg) {
    Arg = stripValueWrappers(Arg);
    if (!isa<FloatingLiteral, IntegerLiteral>(Arg))
      return;
    Out.LearningRate = TU.tokenSpan(Arg->getBeginLoc());
    Out.LearningRateText = TU.textOf(Arg->getSourceRange());
  };
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(S)) {
    const CXXRecordDecl *RD = recordOf(Construct->getType());
    if (RD && RD->getName().ends_with("Options") &&
        Construct->getNumArgs() >= 1)
      TakeLiteral(Construct->getArg(0));
  }
  if (const auto *Call = dyn_cast<CXXMemberCallExpr>(S))
    if (Call->getMethodDecl() && Call->getMethodDecl()->getName() == "lr" &&
        Call->getNumArgs() == 1)
      TakeLiteral(Call->getArg(0));
  for (const Stmt *Child : S->children())
    findLearningRate(TU, Child, Out);
}

OptimizerSite describeOptimizer(const TUContext &TU, const VarDecl *Var) {
  OptimizerSite Site;
  Site.Name = Var->getNameAsString();
  Site.Type = moduleTypeName(Var->getType());
  Site.File = TU.fileOf(Var->getLocation());
  Site.Line = TU.lineOf(Var->getLocation());
  findLearningRate(TU, Var->getInit(), Site);
  auto Parents = TU.Ctx.getParents(*Var);
  if (!Parents.empty())
    if (const auto *Declaration = Parents[0].get<DeclStmt>();
        Declaration && !Declaration->getEndLoc().isMacroID()) {
      SourceSpan Semicolon = TU.tokenSpan(Declaration->getEndLoc());
      Site.DeclarationEnd = Semicolon.Offset + Semicolon.Length;
    }
  return Site;
}

const Stmt *loopBody(const Stmt *Loop) {
  if (const auto *For = dyn_cast<ForStmt>(Loop))
    return For->getBody();
  if (const auto *Range = dyn_cast<CXXForRangeStmt>(Loop))
    return Range->getBody();
  if (const auto *While = dyn_cast<WhileStmt>(Loop))
    return While->getBody();
  if (const auto *Do = dyn_cast<DoStmt>(Loop))
    return Do->getBody();
  return nullptr;
}

CallSite callSite(const TUContext &TU, const CallExpr *Call) {
  SourceSpan Span = TU.spanOf(Call->getSourceRange());
  return {TU.fileOf(Call->getBeginLoc()), TU.lineOf(Call->getBeginLoc()),
          TU.columnOf(Call->getBeginLoc()), Span.Offset, Span.Length};
}

std::string functionName(const TUContext &TU, const Stmt *S) {
  const FunctionDecl *F = TU.enclosingFunction(S);
  return F ? F->getQualifiedNameAsString() : "";
}

void collectTrainingFunctions(const TUContext &TU, const Stmt *Root,
                              LoopFindings &Out, int Depth) {
  if (Depth > MaxCallDepth)
    return;
  for (const CallExpr *Call : TU.findAll<CallExpr>(
           callExpr(hasAncestor(stmt(equalsNode(Root)))).bind("n"))) {
    const FunctionDecl *Callee = Call->getDirectCallee();
    if (!Callee || !Callee->hasBody() || !TU.isUserCode(Callee->getLocation()))
      continue;
    const FunctionDecl *Definition = Callee->getDefinition();
    if (!Definition || !Out.TrainingFunctions.insert(Definition).second)
      continue;
    collectTrainingFunctions(TU, Definition->getBody(), Out, Depth + 1);
  }
}

} // namespace

bool LoopFindings::isTrainingContext(const TUContext &TU, const Stmt *S) const {
  for (const Stmt *Loop = TU.enclosingLoop(S); Loop;
       Loop = TU.enclosingLoop(Loop))
    if (TrainingLoopStmts.contains(Loop))
      return true;
  const FunctionDecl *F = TU.enclosingFunction(S);
  return F && F->getDefinition() &&
         TrainingFunctions.contains(F->getDefinition());
}

LoopFindings findTrainingLoops(const TUContext &TU) {
  LoopFindings Out;
  llvm::DenseMap<const Stmt *, size_t> LoopIndex;
  std::vector<std::pair<const CallExpr *, CallKind>> Calls;
  for (const CallExpr *Call : TU.findAll<CallExpr>(callExpr().bind("n")))
    if (auto Kind = classify(Call))
      Calls.push_back({Call, *Kind});

  // Loops with a step() or backward() are training loops; zero_grad() alone
  // does not make one.
  for (auto [Call, Kind] : Calls) {
    if (Kind == CallKind::ZeroGrad)
      continue;
    const Stmt *Loop = loopFor(TU, Call);
    if (!Loop || LoopIndex.count(Loop))
      continue;
    LoopIndex[Loop] = Out.Loops.size();
    Out.TrainingLoopStmts.insert(Loop);
    TrainingLoop L;
    L.File = TU.fileOf(Loop->getBeginLoc());
    L.Line = TU.lineOf(Loop->getBeginLoc());
    L.Column = TU.columnOf(Loop->getBeginLoc());
    L.Function = functionName(TU, Loop);
    if (const Stmt *Body = loopBody(Loop)) {
      SourceSpan Span = TU.spanOf(Body->getSourceRange());
      L.BodyOffset = Span.Offset;
      L.BodyLength = Span.Length;
      L.BodyIsCompound = isa<CompoundStmt>(Body);
      if (!isa<CompoundStmt>(Body)) // `for (...) step(x);`: through the `;`
        if (auto Semi = Lexer::findNextToken(Body->getEndLoc(), TU.SM,
                                             TU.Ctx.getLangOpts());
            Semi && Semi->is(tok::semi))
          L.BodyLength =
              TU.SM.getFileOffset(TU.SM.getExpansionLoc(Semi->getLocation())) +
              1 - Span.Offset;
    }
    Out.Loops.push_back(std::move(L));
  }

  llvm::DenseMap<const Stmt *, llvm::SmallPtrSet<const ValueDecl *, 2>> Stepped;
  for (auto [Call, Kind] : Calls) {
    const Stmt *Loop = loopFor(TU, Call);
    auto It = LoopIndex.find(Loop);
    if (It == LoopIndex.end())
      continue;
    TrainingLoop &L = Out.Loops[It->second];
    CallSite Site = callSite(TU, Call);
    switch (Kind) {
    case CallKind::ZeroGrad:
      L.ZeroGradCalls.push_back(Site);
      break;
    case CallKind::Backward:
      L.BackwardCalls.push_back(Site);
      break;
    case CallKind::Step:
      L.StepCalls.push_back(Site);
      if (const ValueDecl *Opt = originOf(
              TU, cast<CXXMemberCallExpr>(Call)->getImplicitObjectArgument()))
        Stepped[Loop].insert(Opt);
      break;
    }
  }

  std::vector<const VarDecl *> Optimizers;
  for (const VarDecl *Var : TU.findAll<VarDecl>(varDecl().bind("n")))
    if (!isa<ParmVarDecl>(Var) && isOptimizer(Var->getType()))
      Optimizers.push_back(Var);
  for (auto [Loop, Index] : LoopIndex) {
    TrainingLoop &L = Out.Loops[Index];
    const auto &Used = Stepped[Loop];
    for (const VarDecl *Var : Optimizers)
      if (Used.empty() || Used.contains(Var))
        L.Optimizers.push_back(describeOptimizer(TU, Var));
    collectTrainingFunctions(TU, Loop, Out, 0);
  }
  return Out;
}

} // namespace skyline::frontend
