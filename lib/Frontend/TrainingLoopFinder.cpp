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
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

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
  return TU.callsTo(F);
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

/// The optimizer's own type where the declaration names only the base:
/// std::unique_ptr<Optimizer> opt = std::make_unique<Adam>(...).
std::string optimizerType(QualType Declared, const Expr *Init) {
  if (Declared->isPointerType())
    Declared = Declared->getPointeeType();
  std::string Type = moduleTypeName(Declared.getUnqualifiedType());
  if (Type != "torch::optim::Optimizer" || !Init)
    return Type;
  Init = Init->IgnoreImplicit();
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(Init);
      Construct && Construct->getNumArgs() >= 1) // unique_ptr<Optimizer>(...)
    Init = Construct->getArg(0)->IgnoreImplicit();
  if (isa<CallExpr>(Init) || isa<CXXNewExpr>(Init)) {
    QualType Made = Init->getType();
    if (Made->isPointerType())
      Made = Made->getPointeeType();
    if (isOptimizer(Made))
      return moduleTypeName(Made);
  }
  return Type;
}

/// Whether E makes an optimizer, not an empty pointer to one (`{nullptr}`,
/// a default-constructed unique_ptr).
bool buildsOptimizer(const Expr *E) {
  if (!E)
    return false;
  E = E->IgnoreImplicit();
  if (const auto *List = dyn_cast<InitListExpr>(E))
    E = List->getNumInits() == 1 ? List->getInit(0)->IgnoreImplicit() : nullptr;
  if (const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(E);
      Construct && Construct->getNumArgs() == 0)
    return false;
  return E && !isa<CXXNullPtrLiteralExpr, GNUNullExpr, IntegerLiteral,
                   CXXDefaultInitExpr>(E);
}

/// An optimizer kept in a class member (a Trainer's `opt_`): its options are
/// in a constructor's initializer; a run cannot start tracking it after its
/// declaration, so DeclarationEnd stays 0.
OptimizerSite describeOptimizer(const TUContext &TU, const FieldDecl *Field) {
  OptimizerSite Site;
  Site.Name = Field->getNameAsString();
  Site.File = TU.fileOf(Field->getLocation());
  Site.Line = TU.lineOf(Field->getLocation());
  const Expr *Init = Field->getInClassInitializer();
  for (const CXXCtorInitializer *CtorInit : memberInitializers(Field))
    Init = CtorInit->getInit();
  // Made later: opt_ = std::make_unique<Adam>(...), opt_ = new Adam(...).
  if (!buildsOptimizer(Init))
    for (const auto *Assign : TU.findAll<BinaryOperator>(
             binaryOperator(isAssignmentOperator(),
                            hasLHS(memberExpr(member(equalsNode(Field)))))
                 .bind("n")))
      Init = Assign->getRHS();
  if (!buildsOptimizer(Init))
    for (const auto *Assign : TU.findAll<CXXOperatorCallExpr>(
             cxxOperatorCallExpr(
                 hasOverloadedOperatorName("="),
                 hasArgument(0, memberExpr(member(equalsNode(Field)))))
                 .bind("n")))
      Init = Assign->getArg(1);
  Site.Type = optimizerType(Field->getType(), Init);
  findLearningRate(TU, Init, Site);
  return Site;
}

OptimizerSite describeOptimizer(const TUContext &TU, const VarDecl *Var) {
  OptimizerSite Site;
  Site.Name = Var->getNameAsString();
  Site.Type = optimizerType(Var->getType(), Var->getInit());
  Site.File = TU.fileOf(Var->getLocation());
  Site.Line = TU.lineOf(Var->getLocation());
  Site.ThroughPointer =
      !derivesFrom(recordOf(Var->getType().getNonReferenceType()),
                   "torch::optim::Optimizer");
  findLearningRate(TU, Var->getInit(), Site);
  auto Parents = TU.Ctx.getParents(*Var);
  if (!Parents.empty())
    if (const auto *Declaration = Parents[0].get<DeclStmt>();
        Declaration && !Declaration->getEndLoc().isMacroID()) {
      SourceSpan Semicolon = TU.tokenSpan(Declaration->getEndLoc());
      Site.DeclarationEnd = Semicolon.Offset + Semicolon.Length;
      SourceSpan After = Semicolon;
      After.Offset += Semicolon.Length;
      After.Column += Semicolon.Length;
      After.Length = 0;
      // A statement after it on a line of its own needs the declaration to
      // start its line, and the optimizer made there (not a null holder
      // assigned later).
      std::optional<std::string> Indent =
          lineIndent(TU, Declaration->getBeginLoc());
      if (Indent && buildsOptimizer(Var->getInit())) {
        Site.AfterDeclaration = After;
        Site.Indent = *Indent;
      }
    }
  return Site;
}

} // namespace

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

namespace {

/// The loop statement's bytes, so the instrumenter can put a mark before it
/// inside braces of its own: from the keyword through the body (L's body
/// span, its `;` included) or, for a do-while, through the `;` after the
/// condition. Left 0 when any part comes from a macro: a brace there could
/// land inside the macro's text.
void markableLoopExtent(const TUContext &TU, const Stmt *Loop,
                        TrainingLoop &L) {
  if (Loop->getBeginLoc().isMacroID() || Loop->getEndLoc().isMacroID() ||
      loopBody(Loop)->getBeginLoc().isMacroID())
    return;
  SourceSpan Keyword = TU.tokenSpan(Loop->getBeginLoc());
  if (Keyword.File != L.File || Keyword.Offset > L.BodyOffset)
    return;
  unsigned End = L.BodyOffset + L.BodyLength;
  if (isa<DoStmt>(Loop)) {
    auto Semi =
        Lexer::findNextToken(Loop->getEndLoc(), TU.SM, TU.Ctx.getLangOpts());
    if (!Semi || !Semi->is(tok::semi) || Semi->getLocation().isMacroID())
      return;
    End = TU.SM.getFileOffset(Semi->getLocation()) + 1;
  }
  L.LoopOffset = Keyword.Offset;
  L.LoopLength = End - Keyword.Offset;
}

/// The calls of F, or of any instantiation of the template F is (or is an
/// instantiation of): a train() template called with a loader's type.
std::vector<const CallExpr *> callsOf(const TUContext &TU,
                                      const FunctionDecl *F) {
  auto PatternOf = [](const FunctionDecl *D) {
    const FunctionDecl *Pattern = D->getTemplateInstantiationPattern();
    return (Pattern ? Pattern : D)->getCanonicalDecl();
  };
  const FunctionDecl *Wanted = PatternOf(F);
  std::vector<const CallExpr *> Out;
  for (const CallExpr *Call : TU.findAll<CallExpr>(callExpr().bind("n")))
    if (const FunctionDecl *Callee = Call->getDirectCallee();
        Callee && PatternOf(Callee) == Wanted)
      Out.push_back(Call);
  return Out;
}

/// The statements that run before Loop in its function: at each compound
/// statement from the loop out to the function's body (a lambda's body is
/// a function's), the children before the one that holds the loop; and, as
/// far as MaxCallDepth callers up, those before each call of the function
/// (MNIST's dataset made in main() for a train() that holds the loop).
/// What they allocate is made before training; the report names them by
/// line. Labels, empty statements and statements in or from a macro are
/// left out: a mark in front of them could land inside the macro's text.
std::vector<SetupStatement> setupStatements(const TUContext &TU,
                                            const Stmt *Loop, int Depth = 0) {
  std::vector<SetupStatement> Out;
  if (Depth < MaxCallDepth)
    if (const FunctionDecl *F = TU.enclosingFunction(Loop))
      for (const CallExpr *Caller : callsOf(TU, F))
        for (SetupStatement &Before : setupStatements(TU, Caller, Depth + 1))
          // A caller of several instantiations is seen once for each.
          if (llvm::none_of(Out, [&](const SetupStatement &Seen) {
                return Seen.At.File == Before.At.File &&
                       Seen.At.Offset == Before.At.Offset;
              }))
            Out.push_back(std::move(Before));
  std::string LoopFile = TU.fileOf(Loop->getBeginLoc());
  std::vector<SetupStatement> Own;
  const Stmt *Child = Loop;
  for (int Level = 0; Child && Level < 64; ++Level) {
    auto Parents = TU.Ctx.getParents(*Child);
    const Stmt *Parent = Parents.empty() ? nullptr : Parents[0].get<Stmt>();
    if (!Parent || isa<LambdaExpr>(Parent))
      break;
    if (const auto *Block = dyn_cast<CompoundStmt>(Parent)) {
      std::vector<SetupStatement> Level;
      for (const Stmt *S : Block->body()) {
        if (S == Child)
          break;
        if (isa<NullStmt, LabelStmt, SwitchCase>(S) ||
            S->getBeginLoc().isMacroID() || S->getEndLoc().isMacroID() ||
            TU.fileOf(S->getBeginLoc()) != LoopFile)
          continue;
        SetupStatement Setup;
        Setup.At = TU.spanOf(S->getSourceRange());
        // An expression statement's range stops short of its `;`.
        Setup.Text = oneLineText(TU, S) + (isa<Expr>(S) ? ";" : "");
        if (Setup.Text.size() > 60)
          Setup.Text = Setup.Text.substr(0, 57) + "...";
        Level.push_back(std::move(Setup));
      }
      // Outer levels run first: keep source order.
      Own.insert(Own.begin(), Level.begin(), Level.end());
    }
    Child = Parent;
  }
  Out.insert(Out.end(), Own.begin(), Own.end());
  return Out;
}

CallSite callSite(const TUContext &TU, const CallExpr *Call) {
  SourceSpan Span = TU.spanOf(Call->getSourceRange());
  return {TU.fileOf(Call->getBeginLoc()), TU.lineOf(Call->getBeginLoc()),
          TU.columnOf(Call->getBeginLoc()), Span.Offset, Span.Length};
}

/// Whether Call makes or reshapes a tensor to a shape its arguments give:
/// Tensor::view/reshape/expand/resize_, torch::ones/zeros/full/empty (a
/// target or a label, compared with a batch's output). Random noise of the
/// batch size (a GAN's) is left out: on its own it fails at no batch.
bool shapesATensor(const CallExpr *Call) {
  const FunctionDecl *Callee = Call->getDirectCallee();
  if (!Callee || !Callee->getIdentifier())
    return false;
  llvm::StringRef Name = Callee->getName();
  if (const auto *Method = dyn_cast<CXXMethodDecl>(Callee))
    return isTensorMethod(Method) &&
           llvm::is_contained({"view", "reshape", "expand", "resize_"}, Name);
  std::string Qualified = Callee->getQualifiedNameAsString();
  llvm::StringRef Namespace(Qualified);
  return (Namespace.starts_with("torch::") || Namespace.starts_with("at::")) &&
         llvm::is_contained({"ones", "zeros", "full", "empty"}, Name);
}

/// The variables named inside E (its dimensions, for a shape argument).
void namedVariables(const Stmt *S,
                    llvm::SmallVectorImpl<const ValueDecl *> &Out) {
  if (!S)
    return;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(S)) {
    if (const auto *Var = dyn_cast<VarDecl>(Ref->getDecl()))
      Out.push_back(Var);
  } else if (const auto *Member = dyn_cast<MemberExpr>(S)) {
    if (const auto *Field = dyn_cast<FieldDecl>(Member->getMemberDecl()))
      Out.push_back(Field);
  }
  for (const Stmt *Child : S->children())
    namedVariables(Child, Out);
}

/// Every call in Loop that shapes a tensor with a variable among its
/// dimensions, one entry a variable; the caller keeps the batch size's.
void collectShapes(const TUContext &TU, const Stmt *S,
                   std::vector<BatchShape> &Out) {
  if (!S)
    return;
  if (const auto *Call = dyn_cast<CallExpr>(S); Call && shapesATensor(Call)) {
    llvm::SmallVector<const ValueDecl *, 4> Named;
    for (const Expr *Arg : Call->arguments())
      namedVariables(Arg, Named);
    std::string Text =
        llvm::join(llvm::split(TU.textOf(Call->getSourceRange()), '\n'), " ");
    Text.erase(std::unique(Text.begin(), Text.end(),
                           [](char A, char B) { return A == ' ' && B == ' '; }),
               Text.end());
    if (Text.size() > 60)
      Text = Text.substr(0, 57) + "...";
    for (const ValueDecl *Var : Named) {
      BatchShape Shape;
      Shape.Call = callSite(TU, Call);
      Shape.Text = Text;
      Shape.Variable = Var->getNameAsString();
      Shape.VariableFile = TU.fileOf(Var->getLocation());
      Shape.VariableLine = TU.lineOf(Var->getLocation());
      Out.push_back(std::move(Shape));
    }
  }
  for (const Stmt *Child : S->children())
    collectShapes(TU, Child, Out);
}

/// The optimizer of `X.step()` or `X->step()` as an expression of its own
/// type (`X`, `*X`), where X can be evaluated again; else empty.
std::string optimizerAtStep(const TUContext &TU,
                            const CXXMemberCallExpr *Step) {
  const auto *Callee = dyn_cast<MemberExpr>(Step->getCallee()->IgnoreParens());
  if (!Callee || Callee->isImplicitAccess())
    return "";
  const Expr *Object = Callee->getBase();
  // A smart pointer's `second->step()`: the base is its operator->() call,
  // whose text takes in the arrow; `*second` is the optimizer.
  if (const auto *Arrow =
          dyn_cast<CXXOperatorCallExpr>(Object->IgnoreParenImpCasts());
      Arrow && Arrow->getOperator() == OO_Arrow && Arrow->getNumArgs() == 1)
    Object = Arrow->getArg(0);
  std::string Text = repeatableText(TU, Object);
  if (Text.empty())
    return "";
  return Callee->isArrow() ? "*" + Text : Text;
}

} // namespace

/// The module class a holder wraps: NetImpl of `TORCH_MODULE(Net)`.
const CXXRecordDecl *heldModule(QualType Holder) {
  const CXXRecordDecl *RD = recordOf(Holder);
  if (!RD || !RD->hasDefinition())
    return nullptr;
  if (const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(RD);
      Spec && Spec->getQualifiedNameAsString() == "torch::nn::ModuleHolder")
    return recordOf(Spec->getTemplateArgs()[0].getAsType());
  for (const CXXBaseSpecifier &Base : RD->getDefinition()->bases())
    if (const CXXRecordDecl *Held = heldModule(Base.getType()))
      return Held;
  return nullptr;
}

/// The user's functions that S calls, each once: direct callees with a
/// body and, for a module called through its holder (`model(x)`, whose
/// operator() is LibTorch's), the module's forward(); to MaxCallDepth.
void collectCalledFunctions(const TUContext &TU, const Stmt *S, int Depth,
                            llvm::SetVector<const FunctionDecl *> &Out) {
  if (!S || Depth > MaxCallDepth)
    return;
  auto Follow = [&](const FunctionDecl *F) {
    const FunctionDecl *Definition = F ? F->getDefinition() : nullptr;
    if (Definition && Definition->hasBody() &&
        TU.isUserCode(Definition->getLocation()) && Out.insert(Definition))
      collectCalledFunctions(TU, Definition->getBody(), Depth + 1, Out);
  };
  if (const auto *Call = dyn_cast<CallExpr>(S)) {
    Follow(Call->getDirectCallee());
    if (const auto *Apply = dyn_cast<CXXOperatorCallExpr>(Call);
        Apply && Apply->getOperator() == OO_Call && Apply->getNumArgs() >= 1 &&
        isModuleHolder(Apply->getArg(0)->getType()))
      if (const CXXRecordDecl *Held = heldModule(Apply->getArg(0)->getType()))
        for (const CXXMethodDecl *Method : Held->methods())
          if (Method->getIdentifier() && Method->getName() == "forward")
            Follow(Method);
  }
  for (const Stmt *Child : S->children())
    collectCalledFunctions(TU, Child, Depth, Out);
}

namespace {

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

using ClassifiedCall = std::pair<const CallExpr *, CallKind>;
using LoopIndices = llvm::DenseMap<const Stmt *, size_t>;
using SteppedOptimizers =
    llvm::DenseMap<const Stmt *, llvm::SmallPtrSet<const ValueDecl *, 2>>;

/// The translation unit's zero_grad(), backward() and step() calls, in the
/// order the matcher finds them.
std::vector<ClassifiedCall> trainingCalls(const TUContext &TU) {
  std::vector<ClassifiedCall> Calls;
  for (const CallExpr *Call : TU.findAll<CallExpr>(callExpr().bind("n")))
    if (auto Kind = classify(Call))
      Calls.push_back({Call, *Kind});
  return Calls;
}

/// The span of Loop's body; a body without braces (`for (...) step(x);`)
/// through its `;`.
void addBodyExtent(const TUContext &TU, const Stmt *Body, TrainingLoop &L) {
  SourceSpan Span = TU.spanOf(Body->getSourceRange());
  L.BodyOffset = Span.Offset;
  L.BodyLength = Span.Length;
  L.BodyIsCompound = isa<CompoundStmt>(Body);
  if (!isa<CompoundStmt>(Body))
    if (auto Semi = Lexer::findNextToken(Body->getEndLoc(), TU.SM,
                                         TU.Ctx.getLangOpts());
        Semi && Semi->is(tok::semi))
      L.BodyLength =
          TU.SM.getFileOffset(TU.SM.getExpansionLoc(Semi->getLocation())) + 1 -
          Span.Offset;
}

/// The tensors Loop shapes by a variable, and those the functions it calls
/// shape: what runs once a batch in them (a forward() that views its input
/// as {kBatchSize, -1}) fails on a short batch too.
std::vector<BatchShape> batchShapes(const TUContext &TU, const Stmt *Loop) {
  std::vector<BatchShape> Shapes;
  collectShapes(TU, Loop, Shapes);
  llvm::SetVector<const FunctionDecl *> Called;
  collectCalledFunctions(TU, Loop, 0, Called);
  std::vector<BatchShape> InCalled;
  for (const FunctionDecl *F : Called)
    collectShapes(TU, F->getBody(), InCalled);
  // A template's instantiations share their calls' text.
  for (BatchShape &Shape : InCalled)
    if (llvm::none_of(Shapes, [&](const BatchShape &S) {
          return S.Call.File == Shape.Call.File &&
                 S.Call.Offset == Shape.Call.Offset &&
                 S.Variable == Shape.Variable;
        }))
      Shapes.push_back(std::move(Shape));
  return Shapes;
}

/// A training loop as the report and the instrumenter see it: where it
/// is, its body, what runs before it and the tensors it shapes by a
/// variable; its calls and optimizers come after.
TrainingLoop describeLoop(const TUContext &TU, const Stmt *Loop) {
  TrainingLoop L;
  L.File = TU.fileOf(Loop->getBeginLoc());
  L.Line = TU.lineOf(Loop->getBeginLoc());
  L.Column = TU.columnOf(Loop->getBeginLoc());
  L.Function = functionName(TU, Loop);
  if (const Stmt *Body = loopBody(Loop)) {
    addBodyExtent(TU, Body, L);
    markableLoopExtent(TU, Loop, L);
    findHostTransfers(TU, Loop, L);
  }
  L.SetupStatements = setupStatements(TU, Loop);
  L.BatchShapes = batchShapes(TU, Loop);
  return L;
}

/// Each call's site in the training loop it runs in (a call in no training
/// loop is left out); returns the optimizers each loop steps, where the
/// step's object could be followed to one.
SteppedOptimizers addCalls(const TUContext &TU,
                           llvm::ArrayRef<ClassifiedCall> Calls,
                           const LoopIndices &LoopIndex,
                           std::vector<TrainingLoop> &Loops) {
  SteppedOptimizers Stepped;
  for (auto [Call, Kind] : Calls) {
    const Stmt *Loop = loopFor(TU, Call);
    auto It = LoopIndex.find(Loop);
    if (It == LoopIndex.end())
      continue;
    TrainingLoop &L = Loops[It->second];
    CallSite Site = callSite(TU, Call);
    switch (Kind) {
    case CallKind::ZeroGrad:
      L.ZeroGradCalls.push_back(Site);
      break;
    case CallKind::Backward:
      L.BackwardCalls.push_back(Site);
      break;
    case CallKind::Step: {
      const auto *Member = cast<CXXMemberCallExpr>(Call);
      const ValueDecl *Opt = originOf(TU, Member->getImplicitObjectArgument());
      if (Opt)
        Stepped[Loop].insert(Opt);
      if (!Opt || isa<FieldDecl>(Opt))
        Site.Optimizer = optimizerAtStep(TU, Member);
      L.StepCalls.push_back(Site);
      break;
    }
    }
  }
  return Stepped;
}

/// Every optimizer the translation unit declares: variables (not
/// parameters) and members.
std::vector<const ValueDecl *> optimizersOf(const TUContext &TU) {
  std::vector<const ValueDecl *> Optimizers;
  for (const VarDecl *Var : TU.findAll<VarDecl>(varDecl().bind("n")))
    if (!isa<ParmVarDecl>(Var) && isOptimizer(Var->getType()))
      Optimizers.push_back(Var);
  for (const FieldDecl *Field : TU.findAll<FieldDecl>(fieldDecl().bind("n")))
    if (isOptimizer(Field->getType()))
      Optimizers.push_back(Field);
  return Optimizers;
}

/// L's optimizers: those its steps were followed to, or, where none was,
/// every one declared.
void addOptimizers(const TUContext &TU,
                   llvm::ArrayRef<const ValueDecl *> Optimizers,
                   const llvm::SmallPtrSet<const ValueDecl *, 2> &Used,
                   TrainingLoop &L) {
  for (const ValueDecl *D : Optimizers) {
    if (!Used.empty() && !Used.contains(D))
      continue;
    // A class template's member is seen once per instantiation.
    OptimizerSite Site = isa<FieldDecl>(D)
                             ? describeOptimizer(TU, cast<FieldDecl>(D))
                             : describeOptimizer(TU, cast<VarDecl>(D));
    if (llvm::none_of(L.Optimizers, [&](const OptimizerSite &O) {
          return O.File == Site.File && O.Line == Site.Line &&
                 O.Name == Site.Name;
        }))
      L.Optimizers.push_back(std::move(Site));
  }
}

} // namespace

bool trainsModel(const CallExpr *Call) {
  std::optional<CallKind> Kind = classify(Call);
  return Kind && *Kind != CallKind::ZeroGrad;
}

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
  LoopIndices LoopIndex;
  std::vector<ClassifiedCall> Calls = trainingCalls(TU);
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
    Out.Loops.push_back(describeLoop(TU, Loop));
  }
  SteppedOptimizers Stepped = addCalls(TU, Calls, LoopIndex, Out.Loops);
  std::vector<const ValueDecl *> Optimizers = optimizersOf(TU);
  for (auto [Loop, Index] : LoopIndex) {
    addOptimizers(TU, Optimizers, Stepped[Loop], Out.Loops[Index]);
    collectTrainingFunctions(TU, Loop, Out, 0);
  }
  return Out;
}

} // namespace skyline::frontend
