//===- BatchSizeFinder.cpp - Where the batch sizes come from --------------===//
//
// Starts from the places a batch size is used (make_data_loader's argument,
// DataLoaderOptions::batch_size, the first dimension of tensors made in the
// training loop, the stride of a loop that batches by hand), traces each back
// to its literal, and tells the training batch size from test and evaluation
// ones by the loop the loader feeds.
//
//===----------------------------------------------------------------------===//

#include "BatchSizeTracer.h"
#include "Finders.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace skyline::frontend {
namespace {

constexpr double LoopConfidence = 0.95;
constexpr double TensorConfidence = 0.9;
constexpr double NameConfidence = 0.6;
constexpr double GuessConfidence = 0.4;

/// A role read from a name: kTestBatchSize, test_loader, eval_batch.
BatchSizeRole roleFromName(llvm::StringRef Name) {
  std::string Lower = Name.lower();
  llvm::StringRef L(Lower);
  for (llvm::StringRef Word : {"test", "eval", "valid", "infer"})
    if (L.contains(Word))
      return BatchSizeRole::Eval;
  if (L.contains("val_") || L.contains("_val") || L.starts_with("kval") ||
      L.ends_with("val"))
    return BatchSizeRole::Eval;
  if (L.contains("train"))
    return BatchSizeRole::Train;
  return BatchSizeRole::Unknown;
}

/// kBatchSize, batch_size, BATCH_SIZE, trainBatchSize, batch_sz.
bool looksLikeBatchSize(llvm::StringRef Name) {
  std::string Flat;
  for (char C : Name.lower())
    if (C != '_')
      Flat += C;
  llvm::StringRef F(Flat);
  return F.contains("batchsize") || F.contains("batchsz");
}

class BatchSizeFinder {
public:
  BatchSizeFinder(const TUContext &TU, const LoopFindings &Loops)
      : TU(TU), Loops(Loops), Tracer(TU) {}

  std::vector<BatchSizeSite> run() {
    findDataLoaders();
    findTensorDimensions();
    findLoopStrides();
    findBatchSizeArguments();
    return std::move(Sites);
  }

private:
  void findDataLoaders() {
    auto MakeLoader =
        callExpr(
            callee(functionDecl(hasName("::torch::data::make_data_loader"))))
            .bind("n");
    for (const CallExpr *Call : TU.findAll<CallExpr>(MakeLoader))
      addLoader(Call, {Call->getArgs(), Call->getNumArgs()});
    // A loader built without make_data_loader (a wrapper of the program's
    // own): std::make_unique<StatelessDataLoader<...>>(ds, sampler, options).
    auto LoaderClass =
        cxxRecordDecl(hasAnyName("::torch::data::StatelessDataLoader",
                                 "::torch::data::StatefulDataLoader"));
    auto MakePointer =
        callExpr(callee(functionDecl(
                     hasAnyName("::std::make_unique", "::std::make_shared"))))
            .bind("n");
    for (const CallExpr *Call : TU.findAll<CallExpr>(MakePointer)) {
      const CXXRecordDecl *Made = recordOf(Call->getType());
      const auto *Spec =
          dyn_cast_or_null<ClassTemplateSpecializationDecl>(Made);
      if (Spec && Spec->getTemplateArgs().size() >= 1 &&
          Spec->getTemplateArgs()[0].getKind() == TemplateArgument::Type &&
          isDataLoaderClass(Spec->getTemplateArgs()[0].getAsType()))
        addLoader(Call, {Call->getArgs(), Call->getNumArgs()});
    }
    for (const auto *Construct : TU.findAll<CXXConstructExpr>(
             cxxConstructExpr(hasType(LoaderClass)).bind("n")))
      addLoader(Construct, {Construct->getArgs(), Construct->getNumArgs()});
  }

  static bool isDataLoaderClass(QualType T) {
    const CXXRecordDecl *RD = recordOf(T);
    if (!RD)
      return false;
    std::string Name = RD->getQualifiedNameAsString();
    return Name == "torch::data::StatelessDataLoader" ||
           Name == "torch::data::StatefulDataLoader";
  }

  /// One loader made from Args: (dataset, options) or (dataset, sampler,
  /// options); a bare number converts to DataLoaderOptions(batch_size).
  void addLoader(const Expr *Loader, llvm::ArrayRef<const Expr *> Args) {
    for (unsigned I = 1; I < Args.size(); ++I) {
      const Expr *Arg = Args[I];
      if (isa<CXXDefaultArgExpr>(Arg))
        continue;
      std::vector<UseStep> Chain{step("batch size of make_data_loader", Arg)};
      std::optional<BatchSizeSite> Site;
      if (const Expr *Bare = bareBatchSize(Arg))
        Site = Tracer.trace(Bare, Chain);
      else if (isLoaderOptions(Arg->getType()))
        Site = traceOptions(Arg, Chain, 0);
      else
        continue;
      if (!Site)
        break;
      if (Site->Name.empty())
        Site->Name = "make_data_loader";
      assignLoaderRole(*Site, Loader, Args[0]);
      if (!Args[0]->getBeginLoc().isMacroID() &&
          !Args[0]->getEndLoc().isMacroID() &&
          !isa<CXXDefaultArgExpr>(Args[0]))
        Site->DatasetArgument = TU.spanOf(Args[0]->getSourceRange());
      Sites.push_back(std::move(*Site));
      break;
    }
  }

  /// The number in make_data_loader(ds, 64), which converts implicitly to
  /// DataLoaderOptions(64); null when the options are written out.
  static const Expr *bareBatchSize(const Expr *Arg) {
    const Expr *Inner = Arg->IgnoreImplicit();
    if (Inner->getType()->isIntegerType())
      return Inner;
    const auto *Construct = dyn_cast<CXXConstructExpr>(Inner);
    if (!Construct || isa<CXXTemporaryObjectExpr>(Construct) ||
        Construct->getNumArgs() < 1 ||
        !Construct->getArg(0)->getType()->isIntegerType())
      return nullptr;
    return Construct->getArg(0);
  }

  static bool isLoaderOptions(QualType T) {
    const CXXRecordDecl *RD = recordOf(T);
    return RD &&
           RD->getQualifiedNameAsString() == "torch::data::DataLoaderOptions";
  }

  /// DataLoaderOptions(64), DataLoaderOptions().batch_size(64).workers(2), or
  /// a variable holding one.
  std::optional<BatchSizeSite>
  traceOptions(const Expr *E, std::vector<UseStep> Chain, int Depth) {
    if (!E || Depth > 4)
      return std::nullopt;
    // Keep DataLoaderOptions(64) a construction: stripValueWrappers would
    // reduce it to its argument.
    E = E->IgnoreImplicit();
    if (const auto *Cast = dyn_cast<CXXFunctionalCastExpr>(E))
      E = Cast->getSubExpr()->IgnoreImplicit();
    if (const auto *Copy = dyn_cast<CXXConstructExpr>(E);
        Copy && Copy->getConstructor()->isCopyOrMoveConstructor())
      return traceOptions(Copy->getArg(0), Chain, Depth + 1);
    if (const auto *Call = dyn_cast<CXXMemberCallExpr>(E)) {
      const CXXMethodDecl *Method = Call->getMethodDecl();
      if (Method && Method->getName() == "batch_size" &&
          Call->getNumArgs() == 1) {
        Chain.push_back(step("DataLoaderOptions::batch_size", Call->getArg(0)));
        auto Site = Tracer.trace(Call->getArg(0), Chain);
        if (Site && Site->Kind == BatchSizeKind::LiteralArgument) {
          Site->Kind = BatchSizeKind::OptionsBuilder;
          Site->Name = "DataLoaderOptions::batch_size";
        }
        return Site;
      }
      return traceOptions(Call->getImplicitObjectArgument(), Chain, Depth + 1);
    }
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
      if (Construct->getNumArgs() >= 1 &&
          Construct->getArg(0)->getType()->isIntegerType() &&
          !isa<CXXDefaultArgExpr>(Construct->getArg(0))) {
        Chain.push_back(
            step("DataLoaderOptions constructor", Construct->getArg(0)));
        auto Site = Tracer.trace(Construct->getArg(0), Chain);
        if (Site && Site->Kind == BatchSizeKind::LiteralArgument) {
          Site->Kind = BatchSizeKind::OptionsBuilder;
          Site->Name = "DataLoaderOptions";
        }
        return Site;
      }
      return std::nullopt;
    }
    if (const auto *Var = dyn_cast_or_null<VarDecl>(referencedDecl(E))) {
      // opts.batch_size(64) on the variable, or its initializer.
      auto Setters = TU.findAll<CXXMemberCallExpr>(
          cxxMemberCallExpr(callee(cxxMethodDecl(hasName("batch_size"))),
                            argumentCountIs(1))
              .bind("n"));
      // The first setter that leads to a literal: another may set a size
      // known only at run time (options.batch_size(dataset.size())).
      for (const CXXMemberCallExpr *Setter : Setters)
        if (referencedDecl(Setter->getImplicitObjectArgument()) == Var)
          if (auto Site = traceOptions(Setter, Chain, Depth + 1))
            return Site;
      if (Var->getInit()) {
        Chain.push_back(step("initializer of '" + Var->getNameAsString() + "'",
                             Var->getInit()));
        return traceOptions(Var->getInit(), Chain, Depth + 1);
      }
    }
    return std::nullopt;
  }

  void findTensorDimensions() {
    auto Factory =
        callExpr(
            callee(functionDecl(hasAnyName(
                "::torch::randn", "::torch::rand", "::torch::zeros",
                "::torch::ones", "::torch::empty", "::torch::full",
                "::torch::randint", "::at::randn", "::at::rand", "::at::zeros",
                "::at::ones", "::at::empty", "::at::full", "::at::randint"))))
            .bind("n");
    for (const CallExpr *Call : TU.findAll<CallExpr>(Factory)) {
      if (!Loops.isTrainingContext(TU, Call))
        continue;
      const Expr *First = firstDimension(Call);
      if (!First)
        continue;
      std::string Callee = Call->getDirectCallee()->getQualifiedNameAsString();
      std::vector<UseStep> Chain{step(
          "first dimension of " + Callee + " in the training loop", First)};
      auto Site = Tracer.trace(First, Chain);
      if (!Site || isOneElementTensor(Call, *Site))
        continue;
      if (Site->Name.empty())
        Site->Name = Callee;
      Site->Role = BatchSizeRole::Train;
      Site->Confidence = TensorConfidence;
      Sites.push_back(std::move(*Site));
    }
  }

  /// A training loop that batches by hand steps through the samples by the
  /// batch size: `for (i = 0; i < n; i += batch_size)` with
  /// `x.slice(0, i, ...)` or `x.narrow(0, i, ...)` in its body, or a stride
  /// named like a batch size. A language model's loop steps through time
  /// by the sequence length (`ids.narrow(1, i, sequence_length)`): no batch
  /// size.
  void findLoopStrides() {
    // In source order: the set's own order changes from run to run.
    std::vector<const Stmt *> InOrder(Loops.TrainingLoopStmts.begin(),
                                      Loops.TrainingLoopStmts.end());
    llvm::sort(InOrder, [&](const Stmt *A, const Stmt *B) {
      return TU.SM.isBeforeInTranslationUnit(A->getBeginLoc(),
                                             B->getBeginLoc());
    });
    for (const Stmt *Loop : InOrder) {
      const auto *For = dyn_cast<ForStmt>(Loop);
      if (!For)
        continue;
      auto [Counter, Stride] = loopStride(For->getInc());
      if (!Stride)
        continue;
      std::vector<UseStep> Chain{step("stride of the training loop", Stride)};
      auto Site = Tracer.trace(Stride, Chain);
      if (!Site || Site->Value <= 1)
        continue;
      if (!slicesRowsFrom(For->getBody(), Counter) &&
          !looksLikeBatchSize(Site->Name))
        continue;
      if (Site->Name.empty())
        Site->Name = "stride";
      Site->Role = BatchSizeRole::Train;
      Site->Confidence = TensorConfidence;
      Sites.push_back(std::move(*Site));
    }
  }

  /// The loop's variable and what `i += s` or `i = i + s` adds to it;
  /// nulls for `++i` and anything else.
  static std::pair<const ValueDecl *, const Expr *>
  loopStride(const Expr *Inc) {
    if (!Inc)
      return {};
    Inc = Inc->IgnoreParenImpCasts();
    if (const auto *Compound = dyn_cast<CompoundAssignOperator>(Inc)) {
      if (Compound->getOpcode() != BO_AddAssign)
        return {};
      return {referencedDecl(Compound->getLHS()), Compound->getRHS()};
    }
    const auto *Assign = dyn_cast<BinaryOperator>(Inc);
    if (!Assign || Assign->getOpcode() != BO_Assign)
      return {};
    const auto *Sum =
        dyn_cast<BinaryOperator>(Assign->getRHS()->IgnoreParenImpCasts());
    const ValueDecl *Counter = referencedDecl(Assign->getLHS());
    if (!Sum || Sum->getOpcode() != BO_Add || !Counter)
      return {};
    if (referencedDecl(Sum->getLHS()) == Counter)
      return {Counter, Sum->getRHS()};
    if (referencedDecl(Sum->getRHS()) == Counter)
      return {Counter, Sum->getLHS()};
    return {};
  }

  /// Whether S takes rows from Counter on: `x.slice(0, i, ...)`,
  /// `x.narrow(0, i, ...)`.
  bool slicesRowsFrom(const Stmt *S, const ValueDecl *Counter) const {
    if (!S || !Counter)
      return false;
    if (const auto *Call = dyn_cast<CXXMemberCallExpr>(S)) {
      const CXXMethodDecl *Method = Call->getMethodDecl();
      Expr::EvalResult Dimension;
      if (Method && Method->getIdentifier() &&
          llvm::is_contained({"slice", "narrow"}, Method->getName()) &&
          Call->getNumArgs() >= 2 &&
          Call->getArg(0)->EvaluateAsInt(Dimension, TU.Ctx) &&
          Dimension.Val.getInt() == 0 &&
          referencedDecl(Call->getArg(1)) == Counter)
        return true;
    }
    return llvm::any_of(S->children(), [&](const Stmt *Child) {
      return slicesRowsFrom(Child, Counter);
    });
  }

  /// Arguments to a parameter named like a batch size of the program's own
  /// functions and classes: a loader class of its own
  /// (`Loader(dataset, /*batch_size_=*/64)`), a corpus split into batches.
  /// The role comes from the loops over what the call makes.
  void findBatchSizeArguments() {
    auto Visit = [&](const Expr *Call, const FunctionDecl *Callee,
                     llvm::ArrayRef<const Expr *> Args) {
      if (!Callee || !TU.isUserCode(Callee->getLocation()))
        return;
      for (unsigned I = 0; I < Args.size() && I < Callee->getNumParams(); ++I) {
        const ParmVarDecl *Param = Callee->getParamDecl(I);
        if (!Param->getType()->isIntegerType() ||
            !looksLikeBatchSize(Param->getName()) ||
            isa<CXXDefaultArgExpr>(Args[I]))
          continue;
        std::vector<UseStep> Chain{step("argument '" +
                                            Param->getNameAsString() + "' of " +
                                            Callee->getQualifiedNameAsString(),
                                        Args[I])};
        auto Site = Tracer.trace(Args[I], Chain);
        if (!Site)
          continue;
        if (Site->Name.empty())
          Site->Name = Param->getNameAsString();
        assignLoaderRole(*Site, Call, Args[I]);
        Sites.push_back(std::move(*Site));
      }
    };
    for (const CallExpr *Call : TU.findAll<CallExpr>(callExpr().bind("n")))
      Visit(Call, Call->getDirectCallee(),
            {Call->getArgs(), Call->getNumArgs()});
    for (const auto *Construct :
         TU.findAll<CXXConstructExpr>(cxxConstructExpr().bind("n")))
      Visit(Construct, Construct->getConstructor(),
            {Construct->getArgs(), Construct->getNumArgs()});
  }

  /// torch::zeros({1}): a loss accumulator or a scalar, never a batch of one.
  static bool isOneElementTensor(const CallExpr *Call,
                                 const BatchSizeSite &Site) {
    if (Site.Value != 1 || Site.Kind != BatchSizeKind::LiteralArgument)
      return false;
    for (const Expr *Arg : Call->arguments()) {
      const Expr *E = stripValueWrappers(Arg);
      if (const auto *List = dyn_cast<CXXStdInitializerListExpr>(E))
        E = stripValueWrappers(List->getSubExpr());
      if (const auto *Init = dyn_cast<InitListExpr>(E))
        return Init->getNumInits() == 1;
    }
    return false;
  }

  /// The first element of the size list: randn({b, 10}), randint(0, 10, {b}).
  static const Expr *firstDimension(const CallExpr *Call) {
    for (const Expr *Arg : Call->arguments()) {
      const Expr *E = stripValueWrappers(Arg);
      if (const auto *List = dyn_cast<CXXStdInitializerListExpr>(E))
        E = stripValueWrappers(List->getSubExpr());
      if (const auto *Init = dyn_cast<InitListExpr>(E))
        return Init->getNumInits() >= 1 ? Init->getInit(0) : nullptr;
    }
    return nullptr;
  }

  /// Train when the loader feeds a training loop, Eval when it feeds another
  /// loop, else a guess from the names involved.
  void assignLoaderRole(BatchSizeSite &Site, const Expr *MakeLoader,
                        const Expr *Dataset) {
    llvm::SmallVector<const ValueDecl *, 2> Loaders;
    loaderVariables(MakeLoader, Loaders, 0);
    std::optional<BatchSizeRole> Role;
    for (const ValueDecl *Loader : Loaders)
      if (auto LoopRole = roleFromLoops(Loader, 0);
          LoopRole && Role != BatchSizeRole::Train)
        Role = LoopRole;
    if (Role) {
      Site.Role = *Role;
      Site.Confidence = LoopConfidence;
      return;
    }
    const ValueDecl *Loader = Loaders.empty() ? nullptr : Loaders.front();
    std::string Names = Site.Name + " " +
                        (Loader ? Loader->getNameAsString() : "") + " " +
                        TU.textOf(Dataset->getSourceRange());
    Site.Role = roleFromName(Names);
    if (Site.Role == BatchSizeRole::Unknown && Loader)
      Site.Role = roleFromName(Loader->getNameAsString());
    Site.Confidence =
        Site.Role == BatchSizeRole::Unknown ? GuessConfidence : NameConfidence;
  }

  /// The variables or members the loader is kept in; a loader returned by
  /// a function of the program's own is kept where that function is called.
  void loaderVariables(const Expr *MakeLoader,
                       llvm::SmallVectorImpl<const ValueDecl *> &Out,
                       int Depth) {
    DynTypedNode Node = DynTypedNode::create(*MakeLoader);
    for (int Up = 0; Up < 12; ++Up) {
      auto Parents = TU.Ctx.getParents(Node);
      if (Parents.empty())
        return;
      const Expr *Child = Node.get<Expr>();
      Node = Parents[0];
      const ValueDecl *Found = nullptr;
      if (const auto *Var = Node.get<VarDecl>())
        Found = Var;
      else if (const auto *Init = Node.get<CXXCtorInitializer>())
        Found = Init->getMember();
      else if (const auto *Ctor = Node.get<CXXConstructorDecl>()) {
        // A member initializer, train_loader_(make_data_loader(...)), where
        // the parent map shows the constructor rather than the initializer.
        for (const CXXCtorInitializer *Init : Ctor->inits())
          if (Child && Init->isMemberInitializer() && Init->getInit() == Child)
            Found = Init->getMember();
      } else if (const auto *Assign = Node.get<BinaryOperator>();
                 Assign && Assign->isAssignmentOp())
        Found = referencedDecl(Assign->getLHS());
      else if (const auto *Assign = Node.get<CXXOperatorCallExpr>();
               Assign && Assign->getOperator() == OO_Equal)
        Found = referencedDecl(Assign->getArg(0));
      else if (const auto *Return = Node.get<ReturnStmt>()) {
        const FunctionDecl *F = TU.enclosingFunction(Return);
        if (!F || Depth >= 3)
          return;
        auto Callers = TU.findAll<CallExpr>(
            callExpr(callee(functionDecl(equalsNode(F->getCanonicalDecl()))))
                .bind("n"));
        for (const CallExpr *Caller : Callers)
          loaderVariables(Caller, Out, Depth + 1);
        return;
      } else if (Node.get<Expr>())
        continue;
      if (Found)
        Out.push_back(Found);
      return;
    }
  }

  /// The role of the loops that iterate over the loader variable, following
  /// it into the functions it is passed to.
  std::optional<BatchSizeRole> roleFromLoops(const ValueDecl *Loader,
                                             int Depth) {
    if (Depth > 3)
      return std::nullopt;
    std::optional<BatchSizeRole> Role;
    for (const auto *Loop :
         TU.findAll<CXXForRangeStmt>(cxxForRangeStmt().bind("n"))) {
      if (referencedDecl(Loop->getRangeInit()) != Loader)
        continue;
      if (Loops.TrainingLoopStmts.contains(Loop) ||
          Loops.isTrainingContext(TU, Loop))
        return BatchSizeRole::Train;
      Role = BatchSizeRole::Eval;
    }
    // A loader of the program's own, `while (loader(batch))`, or a tensor
    // sliced per iteration, `for (i = 0; i < ids.size(1); ...)`: a training
    // loop whose condition reads it says train; another says nothing (an
    // iterator walked by hand is no evaluation).
    for (const Stmt *Loop : TU.findAll<Stmt>(
             stmt(anyOf(forStmt(), whileStmt(), doStmt())).bind("n"))) {
      const Expr *Cond = nullptr;
      if (const auto *For = dyn_cast<ForStmt>(Loop))
        Cond = For->getCond();
      else if (const auto *While = dyn_cast<WhileStmt>(Loop))
        Cond = While->getCond();
      else
        Cond = cast<DoStmt>(Loop)->getCond();
      if (Cond && refersTo(Cond, Loader) &&
          (Loops.TrainingLoopStmts.contains(Loop) ||
           Loops.isTrainingContext(TU, Loop)))
        return BatchSizeRole::Train;
    }
    auto Calls = TU.findAll<CallExpr>(callExpr().bind("n"));
    for (const CallExpr *Call : Calls) {
      const FunctionDecl *Callee = Call->getDirectCallee();
      if (!Callee || !TU.isUserCode(Callee->getLocation()))
        continue;
      for (unsigned I = 0; I < Call->getNumArgs() && I < Callee->getNumParams();
           ++I) {
        if (referencedDecl(Call->getArg(I)) != Loader)
          continue;
        const FunctionDecl *Definition = Callee->getDefinition();
        if (!Definition || I >= Definition->getNumParams())
          continue;
        auto Inner = roleFromLoops(Definition->getParamDecl(I), Depth + 1);
        if (Inner == BatchSizeRole::Train)
          return Inner;
        if (Inner)
          Role = Inner;
      }
    }
    return Role;
  }

  static bool refersTo(const Stmt *S, const ValueDecl *D) {
    if (!S)
      return false;
    if (const auto *Ref = dyn_cast<DeclRefExpr>(S); Ref && Ref->getDecl() == D)
      return true;
    if (const auto *Member = dyn_cast<MemberExpr>(S);
        Member && Member->getMemberDecl() == D)
      return true;
    return llvm::any_of(S->children(),
                        [&](const Stmt *Child) { return refersTo(Child, D); });
  }

  UseStep step(std::string Description, const Expr *At) const {
    return {std::move(Description), TU.fileOf(At->getBeginLoc()),
            TU.lineOf(At->getBeginLoc())};
  }

  const TUContext &TU;
  const LoopFindings &Loops;
  BatchSizeTracer Tracer;
  std::vector<BatchSizeSite> Sites;
};

} // namespace

std::vector<BatchSizeSite> findBatchSizes(const TUContext &TU,
                                          const LoopFindings &Loops) {
  std::vector<BatchSizeSite> Sites = BatchSizeFinder(TU, Loops).run();
  // A declaration's own name settles what the uses left open, and a test
  // constant used by the training loader stays a training size.
  for (BatchSizeSite &Site : Sites)
    if (Site.Role == BatchSizeRole::Unknown) {
      Site.Role = roleFromName(Site.Name);
      if (Site.Role != BatchSizeRole::Unknown)
        Site.Confidence = NameConfidence;
    }
  return Sites;
}

std::vector<BatchSizeSite> findBatchSizesByName(const TUContext &TU) {
  BatchSizeTracer Tracer(TU);
  std::vector<BatchSizeSite> Sites;
  auto Add = [&](const ValueDecl *D, std::string Name) {
    if (!D->getType()->isIntegerType() || !looksLikeBatchSize(D->getName()))
      return;
    std::vector<UseStep> Chain{{"named like a batch size, no use found",
                                TU.fileOf(D->getLocation()),
                                TU.lineOf(D->getLocation())}};
    if (auto Site = Tracer.traceDecl(D, Chain)) {
      if (Site->Name.empty())
        Site->Name = std::move(Name);
      Site->Role = roleFromName(Site->Name);
      Site->Confidence = GuessConfidence;
      Sites.push_back(std::move(*Site));
    }
  };
  for (const VarDecl *Var : TU.findAll<VarDecl>(varDecl().bind("n")))
    if (!isa<ParmVarDecl>(Var))
      Add(Var, Var->getNameAsString());
  for (const FieldDecl *Field : TU.findAll<FieldDecl>(fieldDecl().bind("n")))
    Add(Field, Field->getParent()->getNameAsString() +
                   "::" + Field->getNameAsString());
  return Sites;
}

std::optional<BatchSizeSite> findNamedBatchSize(const TUContext &TU,
                                                llvm::StringRef Name) {
  BatchSizeTracer Tracer(TU);
  std::vector<UseStep> Chain{{"named by --batch-size-var", "", 0}};
  auto Named = [&](const NamedDecl *D) {
    return D->getName() == Name || D->getQualifiedNameAsString() == Name;
  };
  for (const VarDecl *Var : TU.findAll<VarDecl>(varDecl().bind("n")))
    if (Named(Var))
      if (auto Site = Tracer.traceDecl(Var, Chain))
        return Site;
  for (const FieldDecl *Field : TU.findAll<FieldDecl>(fieldDecl().bind("n")))
    if (Named(Field) || Field->getParent()->getNameAsString() +
                                "::" + Field->getNameAsString() ==
                            Name)
      if (auto Site = Tracer.traceDecl(Field, Chain))
        return Site;
  return std::nullopt;
}

} // namespace skyline::frontend
