//===- BatchSizeFinder.cpp - Where the batch sizes come from --------------===//
//
// Starts from the places a batch size is used (make_data_loader's argument,
// DataLoaderOptions::batch_size, the first dimension of tensors made in the
// training loop, the stride or the batch index of a loop that batches by
// hand), traces each back to its literal, and tells the training batch size
// from test and evaluation ones by the loops the loader's batches reach.
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

  BatchSizeFindings run() {
    findDataLoaders();
    findTensorDimensions();
    findLoopStrides();
    findBatchIndexSlices();
    findBatchSizeArguments();
    findCallsIntoOtherSources();
    return std::move(Found);
  }

private:
  /// Keeps Site, used at Use: the function that runs the use decides
  /// whether it counts.
  void add(BatchSizeSite Site, const Stmt *Use) {
    FoundBatchSize F;
    F.Site = std::move(Site);
    if (const FunctionDecl *In = TU.enclosingFunction(Use)) {
      F.UsedIn = functionKey(In);
      F.UsedInName = In->getQualifiedNameAsString();
    }
    Found.Sites.push_back(std::move(F));
  }

  void findDataLoaders() {
    auto MakeLoader =
        callExpr(
            callee(functionDecl(hasName("::torch::data::make_data_loader"))))
            .bind("n");
    for (const CallExpr *Call : TU.findAll<CallExpr>(MakeLoader))
      addLoader(Call, {Call->getArgs(), Call->getNumArgs()},
                "make_data_loader()");
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
        addLoader(Call, {Call->getArgs(), Call->getNumArgs()},
                  "the data loader");
    }
    for (const auto *Construct : TU.findAll<CXXConstructExpr>(
             cxxConstructExpr(hasType(LoaderClass)).bind("n")))
      addLoader(Construct, {Construct->getArgs(), Construct->getNumArgs()},
                "the data loader");
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
  void addLoader(const Expr *Loader, llvm::ArrayRef<const Expr *> Args,
                 llvm::StringRef Made) {
    for (unsigned I = 1; I < Args.size(); ++I) {
      const Expr *Arg = Args[I];
      if (isa<CXXDefaultArgExpr>(Arg))
        continue;
      std::vector<UseStep> Chain{
          step("given to " + Made.str() + " as the batch size here", Arg)};
      std::optional<BatchSizeSite> Site;
      Tracer.takeRuntimeRead(); // an earlier trace's
      if (const Expr *Bare = bareBatchSize(Arg))
        Site = Tracer.trace(Bare, Chain);
      else if (isLoaderOptions(Arg->getType()))
        Site = traceOptions(Arg, Chain, 0);
      else
        continue;
      if (!Site)
        Site = Tracer.takeRuntimeRead();
      if (!Site)
        break;
      if (Site->Name.empty())
        Site->Name = "make_data_loader";
      assignLoaderRole(*Site, Loader, Args[0]);
      if (!Args[0]->getBeginLoc().isMacroID() &&
          !Args[0]->getEndLoc().isMacroID() && !isa<CXXDefaultArgExpr>(Args[0]))
        Site->DatasetArgument = TU.spanOf(Args[0]->getSourceRange());
      add(std::move(*Site), Loader);
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
        Chain.push_back(step("set by DataLoaderOptions::batch_size() here",
                             Call->getArg(0)));
        auto Site = Tracer.trace(Call->getArg(0), Chain);
        if (Site && Site->Kind == BatchSizeKind::LiteralArgument &&
            Site->Chain.size() == Chain.size()) {
          Site->Kind = BatchSizeKind::OptionsBuilder;
          Site->Name = "DataLoaderOptions::batch_size";
        }
        return Site;
      }
      return traceOptions(Call->getImplicitObjectArgument(), Chain, Depth + 1);
    }
    if (const auto *Move = dyn_cast<CallExpr>(E);
        Move && Move->getNumArgs() == 1 && Move->getDirectCallee() &&
        Move->getDirectCallee()->getQualifiedNameAsString() == "std::move")
      return traceOptions(Move->getArg(0), Chain, Depth + 1);
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
      if (Construct->getNumArgs() >= 1 &&
          Construct->getArg(0)->getType()->isIntegerType() &&
          !isa<CXXDefaultArgExpr>(Construct->getArg(0))) {
        Chain.push_back(
            step("given to DataLoaderOptions() here", Construct->getArg(0)));
        auto Site = Tracer.trace(Construct->getArg(0), Chain);
        if (Site && Site->Kind == BatchSizeKind::LiteralArgument &&
            Site->Chain.size() == Chain.size()) {
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
        Chain.push_back(step("stored in '" + Var->getNameAsString() + "' here",
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
      const Expr *First = firstDimension(Call);
      if (!First)
        continue;
      std::string Callee = Call->getDirectCallee()->getQualifiedNameAsString();
      if (!Loops.isTrainingContext(TU, Call)) {
        addDimensionParameter(First, Callee);
        continue;
      }
      std::vector<UseStep> Chain{
          step("first dimension of " + Callee + "() in the training loop here",
               First)};
      Tracer.takeRuntimeRead(); // an earlier trace's
      auto Site = Tracer.trace(First, Chain);
      if (!Site)
        Site = Tracer.takeRuntimeRead();
      if (!Site || isOneElementTensor(Call, *Site))
        continue;
      if (Site->Name.empty())
        Site->Name = Callee;
      Site->Role = BatchSizeRole::Train;
      Site->Confidence = TensorConfidence;
      add(std::move(*Site), Call);
    }
  }

  /// A tensor outside any training loop of this source whose first
  /// dimension is a parameter of its function: a training loop in another
  /// source may call the function with the batch size.
  void addDimensionParameter(const Expr *First, llvm::StringRef Callee) {
    const auto *Ref = dyn_cast<DeclRefExpr>(stripValueWrappers(First));
    const auto *Param = Ref ? dyn_cast<ParmVarDecl>(Ref->getDecl()) : nullptr;
    const auto *Function =
        Param ? dyn_cast<FunctionDecl>(Param->getDeclContext()) : nullptr;
    if (!Function || !Param->getType()->isIntegerType())
      return;
    Found.DimensionParameters.push_back(
        {functionKey(Function), Param->getFunctionScopeIndex(),
         step("first dimension of " + Callee.str() + "() here", First)});
  }

  /// The training loop's calls of the program's functions that another
  /// source defines (`utils::generate_xy(n_batch, ...)`): each integer
  /// argument is a batch size if that source makes a tensor's first
  /// dimension of the parameter.
  void findCallsIntoOtherSources() {
    for (const CallExpr *Call : TU.findAll<CallExpr>(callExpr().bind("n"))) {
      const FunctionDecl *Callee = Call->getDirectCallee();
      if (!Callee || Callee->isDefined() ||
          !TU.isUserCode(Callee->getLocation()) ||
          !Loops.isTrainingContext(TU, Call))
        continue;
      for (unsigned I = 0; I < Call->getNumArgs() && I < Callee->getNumParams();
           ++I) {
        const Expr *Arg = Call->getArg(I);
        if (isa<CXXDefaultArgExpr>(Arg) || !Arg->getType()->isIntegerType())
          continue;
        std::string Param = Callee->getParamDecl(I)->getNameAsString();
        std::vector<UseStep> Chain{step("passed as '" + Param + "' to " +
                                            Callee->getQualifiedNameAsString() +
                                            "() here",
                                        Arg)};
        auto Site = Tracer.trace(Arg, Chain);
        if (!Site)
          continue;
        if (Site->Name.empty())
          Site->Name = Param;
        Site->Role = BatchSizeRole::Train;
        Site->Confidence = TensorConfidence;
        add(std::move(*Site), Call);
        Found.Sites.back().Callee = functionKey(Callee);
        Found.Sites.back().ParamIndex = I;
      }
    }
  }

  /// A training loop that batches by hand steps through the samples by the
  /// batch size: `for (i = 0; i < n; i += batch_size)` with
  /// `x.slice(0, i, ...)` or `x.narrow(0, i, ...)` in its body, or a stride
  /// named like a batch size. A language model's loop steps through time
  /// by the sequence length (`ids.narrow(1, i, sequence_length)`): no batch
  /// size.
  void findLoopStrides() {
    for (const Stmt *Loop : trainingLoopsInOrder()) {
      auto [Counter, Stride, Body] = strideOf(Loop);
      if (!Stride)
        continue;
      std::vector<UseStep> Chain{
          step("stride of the training loop here", Stride)};
      auto Site = Tracer.trace(Stride, Chain);
      if (!Site || Site->Value <= 1)
        continue;
      if (!slicesRowsFrom(Body, Counter) && !looksLikeBatchSize(Site->Name))
        continue;
      if (Site->Name.empty())
        Site->Name = "stride";
      Site->Role = BatchSizeRole::Train;
      Site->Confidence = TensorConfidence;
      add(std::move(*Site), Loop);
    }
  }

  struct Stride {
    const ValueDecl *Counter = nullptr;
    const Expr *By = nullptr;
    const Stmt *Body = nullptr;
  };

  /// What a loop steps its counter by: a for loop's increment, or the last
  /// statement of a while loop's body that adds to a variable its
  /// condition reads (`while (k < size) { ...; k += batch_size; }`).
  static Stride strideOf(const Stmt *Loop) {
    if (const auto *For = dyn_cast<ForStmt>(Loop)) {
      auto [Counter, By] = loopStride(For->getInc());
      return {Counter, By, For->getBody()};
    }
    const auto *While = dyn_cast<WhileStmt>(Loop);
    const auto *Body =
        While ? dyn_cast<CompoundStmt>(While->getBody()) : nullptr;
    if (!Body || Body->body_empty())
      return {};
    auto [Counter, By] = loopStride(dyn_cast<Expr>(Body->body_back()));
    if (!Counter || !refersTo(While->getCond(), Counter))
      return {};
    return {Counter, By, Body};
  }

  /// A training loop that counts batches and slices each by hand:
  /// `x.slice(0, batch_size * b, batch_size * (b + 1))`, a start of
  /// `(step * batch_size) % n`, directly or through a local
  /// (`int i_min = batch_size * b;`), with b the loop's counter; or
  /// `narrow(0, start, batch_size)` with a start that the counter moves.
  void findBatchIndexSlices() {
    for (const Stmt *Loop : trainingLoopsInOrder()) {
      llvm::SmallVector<const ValueDecl *, 2> Counters;
      const Stmt *Body = nullptr;
      if (const auto *For = dyn_cast<ForStmt>(Loop)) {
        if (const auto *Init = dyn_cast_or_null<DeclStmt>(For->getInit()))
          for (const Decl *D : Init->decls())
            if (const auto *Var = dyn_cast<VarDecl>(D))
              Counters.push_back(Var);
        Body = For->getBody();
      } else if (const auto *Range = dyn_cast<CXXForRangeStmt>(Loop)) {
        Counters.push_back(Range->getLoopVariable());
        Body = Range->getBody();
      }
      for (const ValueDecl *Counter : Counters)
        if (Counter->getType()->isIntegerType() &&
            addBatchIndexSlice(Body, Counter, Loop))
          break;
    }
  }

  /// The batch size of the first slice in S that one tells: the factor of
  /// Counter in its start, or the length of a narrow() that Counter moves.
  bool addBatchIndexSlice(const Stmt *S, const ValueDecl *Counter,
                          const Stmt *Loop) {
    std::optional<BatchSizeSite> Site;
    forEachRowSlice(S, [&](const CXXMemberCallExpr *Call) {
      if (Site)
        return;
      const Expr *Start = Call->getArg(1);
      std::string From = TU.textOf(Start->getSourceRange());
      std::string Method = Call->getMethodDecl()->getNameAsString();
      std::string Batch = "'" + Counter->getNameAsString() + "'";
      // The rows taken, where they are written: narrow()'s length, the
      // `start + n` end of a slice(); else the factor of the counter.
      const Expr *Length = nullptr;
      if (Call->getNumArgs() >= 3 && movesWith(Start, Counter, 0))
        Length = Method == "narrow" ? Call->getArg(2)
                                    : addedTo(Call->getArg(2), Start);
      if (Length) {
        std::vector<UseStep> Chain{step("rows " + Method + "() takes from '" +
                                            From + "', which " + Batch +
                                            " moves, in the training loop here",
                                        Length)};
        Site = Tracer.trace(Length, Chain);
      } else if (const Expr *Factor = batchFactor(Start, Counter, 0)) {
        std::vector<UseStep> Chain{
            step("batch " + Batch + " sliced from row '" + From + "' by " +
                     Method + "() in the training loop here",
                 Start)};
        Site = Tracer.trace(Factor, Chain);
      }
      if (Site && Site->Value <= 1)
        Site.reset();
      if (Site && Site->Name.empty())
        Site->Name = Method;
    });
    if (!Site)
      return false;
    Site->Role = BatchSizeRole::Train;
    Site->Confidence = TensorConfidence;
    add(std::move(*Site), Loop);
    return true;
  }

  /// Calls Visit with each `slice(0, start, ...)` or `narrow(0, start, ...)`
  /// in S.
  template <typename VisitT>
  void forEachRowSlice(const Stmt *S, VisitT &&Visit) const {
    if (!S)
      return;
    if (const auto *Call = dyn_cast<CXXMemberCallExpr>(S)) {
      const CXXMethodDecl *Method = Call->getMethodDecl();
      Expr::EvalResult Dimension;
      if (Method && Method->getIdentifier() &&
          llvm::is_contained({"slice", "narrow"}, Method->getName()) &&
          Call->getNumArgs() >= 2 &&
          Call->getArg(0)->EvaluateAsInt(Dimension, TU.Ctx) &&
          Dimension.Val.getInt() == 0)
        Visit(Call);
    }
    for (const Stmt *Child : S->children())
      forEachRowSlice(Child, Visit);
  }

  /// The other factor of `factor * counter` (either order) in E, through
  /// sums, remainders and a local that holds them; null otherwise.
  static const Expr *batchFactor(const Expr *E, const ValueDecl *Counter,
                                 int Depth) {
    E = stripValueWrappers(E);
    if (const VarDecl *Var = localHolder(E, Counter)) {
      return Depth < 2 ? batchFactor(Var->getInit(), Counter, Depth + 1)
                       : nullptr;
    }
    const auto *Binary = dyn_cast<BinaryOperator>(E);
    if (!Binary)
      return nullptr;
    const Expr *L = Binary->getLHS(), *R = Binary->getRHS();
    if (Binary->getOpcode() == BO_Mul) {
      if (isCounter(L, Counter) && !refersTo(R, Counter))
        return R;
      if (isCounter(R, Counter) && !refersTo(L, Counter))
        return L;
      return nullptr;
    }
    if (!llvm::is_contained({BO_Add, BO_Sub, BO_Rem}, Binary->getOpcode()))
      return nullptr;
    if (const Expr *Factor = batchFactor(L, Counter, Depth))
      return Factor;
    return batchFactor(R, Counter, Depth);
  }

  /// X of an End written `Start + X` or `X + Start`; null otherwise.
  static const Expr *addedTo(const Expr *End, const Expr *Start) {
    const auto *Sum = dyn_cast<BinaryOperator>(stripValueWrappers(End));
    if (!Sum || Sum->getOpcode() != BO_Add)
      return nullptr;
    const ValueDecl *From = referencedDecl(Start);
    if (!From)
      return nullptr;
    if (referencedDecl(Sum->getLHS()) == From)
      return Sum->getRHS();
    if (referencedDecl(Sum->getRHS()) == From)
      return Sum->getLHS();
    return nullptr;
  }

  /// Whether E changes with Counter, directly or through a local.
  static bool movesWith(const Expr *E, const ValueDecl *Counter, int Depth) {
    if (!E)
      return false;
    if (refersTo(E, Counter))
      return true;
    if (const VarDecl *Var = localHolder(stripValueWrappers(E), Counter))
      return Depth < 2 && movesWith(Var->getInit(), Counter, Depth + 1);
    return false;
  }

  /// The local E names that holds a value computed in the function (not
  /// the counter, nor a parameter).
  static const VarDecl *localHolder(const Expr *E, const ValueDecl *Counter) {
    const auto *Ref = dyn_cast<DeclRefExpr>(E);
    const auto *Var = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
    if (!Var || Var == Counter || isa<ParmVarDecl>(Var) ||
        !Var->hasLocalStorage() || !Var->getInit())
      return nullptr;
    return Var;
  }

  static bool isCounter(const Expr *E, const ValueDecl *Counter) {
    const auto *Ref = dyn_cast<DeclRefExpr>(stripValueWrappers(E));
    return Ref && Ref->getDecl() == Counter;
  }

  /// The training loops, in source order: the set's own order changes from
  /// run to run.
  std::vector<const Stmt *> trainingLoopsInOrder() const {
    std::vector<const Stmt *> InOrder(Loops.TrainingLoopStmts.begin(),
                                      Loops.TrainingLoopStmts.end());
    llvm::sort(InOrder, [&](const Stmt *A, const Stmt *B) {
      return TU.SM.isBeforeInTranslationUnit(A->getBeginLoc(),
                                             B->getBeginLoc());
    });
    return InOrder;
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
        std::vector<UseStep> Chain{
            step("passed as '" + Param->getNameAsString() + "' to " +
                     Callee->getQualifiedNameAsString() + "() here",
                 Args[I])};
        auto Site = Tracer.trace(Args[I], Chain);
        if (!Site)
          continue;
        if (Site->Name.empty())
          Site->Name = Param->getNameAsString();
        assignLoaderRole(*Site, Call, Args[I]);
        add(std::move(*Site), Call);
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
    for (const ValueDecl *Loader : Loaders) {
      Visited.clear();
      if (auto LoopRole = roleFromLoops(Loader, 0);
          LoopRole && Role != BatchSizeRole::Train)
        Role = LoopRole;
    }
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
        for (const CallExpr *Caller : TU.callsTo(F))
          loaderVariables(Caller, Out, Depth + 1);
        return;
      } else if (Node.get<Expr>())
        continue;
      if (Found)
        Out.push_back(Found);
      return;
    }
  }

  /// The role of the loops that take the loader's batches: a loop over it
  /// or over what it yields (`loader.batches()`), a loop whose condition
  /// reads it, a loop that indexes it (`batches[i]`); followed into the
  /// variables made from it (`auto b = to_device(loader.batches())`) and
  /// the functions it is passed to. Train as soon as one such loop trains;
  /// Eval when only other loops take them.
  std::optional<BatchSizeRole> roleFromLoops(const ValueDecl *Loader,
                                             int Depth) {
    if (Depth > 4 || !Visited.insert(Loader).second)
      return std::nullopt;
    std::optional<BatchSizeRole> Role;
    auto Took = [&](const Stmt *Loop) {
      if (trains(Loop))
        return true;
      Role = BatchSizeRole::Eval;
      return false;
    };
    const AllLoops &All = allLoops();
    for (const CXXForRangeStmt *Loop : All.RangeFors)
      if (refersTo(Loop->getRangeInit(), Loader) && Took(Loop))
        return BatchSizeRole::Train;
    // A loader of the program's own, `while (loader(batch))`, or a tensor
    // sliced per iteration, `for (i = 0; i < ids.size(1); ...)`: a training
    // loop whose condition reads it says train; another says nothing (an
    // iterator walked by hand is no evaluation).
    for (const Stmt *Loop : All.Others)
      if (refersTo(loopCondition(Loop), Loader) && trains(Loop))
        return BatchSizeRole::Train;
    for (const Expr *Subscript : All.Subscripts)
      if (referencedDecl(subscriptBase(Subscript)) == Loader)
        if (const Stmt *Loop = TU.enclosingLoop(Subscript); Loop && Took(Loop))
          return BatchSizeRole::Train;
    auto Follow = [&](const ValueDecl *To) {
      auto Inner = roleFromLoops(To, Depth + 1);
      if (Inner && (!Role || *Inner == BatchSizeRole::Train))
        Role = Inner;
      return Inner == BatchSizeRole::Train;
    };
    for (const VarDecl *Made : All.Derived)
      if (Made != Loader && refersTo(Made->getInit(), Loader) && Follow(Made))
        return BatchSizeRole::Train;
    for (const CallExpr *Call : All.Calls) {
      const FunctionDecl *Callee = Call->getDirectCallee();
      const FunctionDecl *Definition =
          Callee ? Callee->getDefinition() : nullptr;
      if (!Definition || !TU.isUserCode(Definition->getLocation()))
        continue;
      for (unsigned I = 0;
           I < Call->getNumArgs() && I < Definition->getNumParams(); ++I) {
        const Expr *Arg = Call->getArg(I);
        bool Passed = referencedDecl(Arg) == Loader ||
                      (!isArithmetic(Arg->getType()) && refersTo(Arg, Loader));
        if (Passed && Follow(Definition->getParamDecl(I)))
          return BatchSizeRole::Train;
      }
    }
    return Role;
  }

  /// Whether Loop trains: a training loop itself, or a loop around one in
  /// the same function (a loader's loop that accumulates gradients over
  /// micro-batches). An evaluation loop inside a training loop does not.
  bool trains(const Stmt *Loop) const {
    if (Loops.TrainingLoopStmts.contains(Loop))
      return true;
    for (const Stmt *Training : Loops.TrainingLoopStmts)
      for (const Stmt *Outer = TU.enclosingLoop(Training); Outer;
           Outer = TU.enclosingLoop(Outer))
        if (Outer == Loop)
          return true;
    return false;
  }

  static bool isArithmetic(QualType T) {
    T = T.getNonReferenceType();
    return T->isArithmeticType() || T->isEnumeralType();
  }

  static const Expr *loopCondition(const Stmt *Loop) {
    if (const auto *For = dyn_cast<ForStmt>(Loop))
      return For->getCond();
    if (const auto *While = dyn_cast<WhileStmt>(Loop))
      return While->getCond();
    return cast<DoStmt>(Loop)->getCond();
  }

  static const Expr *subscriptBase(const Expr *Subscript) {
    if (const auto *Array = dyn_cast<ArraySubscriptExpr>(Subscript))
      return Array->getBase();
    return cast<CXXOperatorCallExpr>(Subscript)->getArg(0);
  }

  /// What roleFromLoops looks through, gathered once a translation unit.
  struct AllLoops {
    std::vector<const CXXForRangeStmt *> RangeFors;
    std::vector<const Stmt *> Others; // for, while, do
    std::vector<const Expr *> Subscripts;
    std::vector<const VarDecl *> Derived; // locals of a class type, made
    std::vector<const CallExpr *> Calls;
  };

  const AllLoops &allLoops() {
    if (Gathered)
      return *Gathered;
    Gathered.emplace();
    Gathered->RangeFors =
        TU.findAll<CXXForRangeStmt>(cxxForRangeStmt().bind("n"));
    Gathered->Others = TU.findAll<Stmt>(
        stmt(anyOf(forStmt(), whileStmt(), doStmt())).bind("n"));
    for (const Expr *E : TU.findAll<Expr>(
             expr(anyOf(arraySubscriptExpr(),
                        cxxOperatorCallExpr(hasOverloadedOperatorName("[]"))))
                 .bind("n")))
      Gathered->Subscripts.push_back(E);
    for (const VarDecl *Var : TU.findAll<VarDecl>(varDecl().bind("n")))
      if (Var->hasLocalStorage() && !isa<ParmVarDecl>(Var) && Var->getInit() &&
          !isArithmetic(Var->getType()))
        Gathered->Derived.push_back(Var);
    Gathered->Calls = TU.findAll<CallExpr>(callExpr().bind("n"));
    return *Gathered;
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
            TU.lineOf(At->getBeginLoc()), TU.columnOf(At->getBeginLoc())};
  }

  const TUContext &TU;
  const LoopFindings &Loops;
  BatchSizeTracer Tracer;
  BatchSizeFindings Found;
  std::optional<AllLoops> Gathered;
  /// The loader variables roleFromLoops has followed for the current site.
  llvm::DenseSet<const ValueDecl *> Visited;
};

/// Integer variables and fields named like a batch size (batch_size,
/// kBatchSize), each traced to its literal: the candidates listed when no
/// use decides (a language model's batch_size feeds only its own code).
std::vector<BatchSizeSite> findBatchSizesByName(const TUContext &TU) {
  BatchSizeTracer Tracer(TU);
  std::vector<BatchSizeSite> Sites;
  auto Add = [&](const ValueDecl *D, std::string Name) {
    if (!D->getType()->isIntegerType() || !looksLikeBatchSize(D->getName()))
      return;
    std::vector<UseStep> Chain{{NamedOnly.str(), TU.fileOf(D->getLocation()),
                                TU.lineOf(D->getLocation()),
                                TU.columnOf(D->getLocation())}};
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

} // namespace

BatchSizeFindings findBatchSizes(const TUContext &TU,
                                 const LoopFindings &Loops) {
  BatchSizeFindings Found = BatchSizeFinder(TU, Loops).run();
  // A declaration's own name settles what the uses left open, and a test
  // constant used by the training loader stays a training size.
  for (FoundBatchSize &F : Found.Sites)
    if (F.Site.Role == BatchSizeRole::Unknown) {
      F.Site.Role = roleFromName(F.Site.Name);
      if (F.Site.Role != BatchSizeRole::Unknown)
        F.Site.Confidence = NameConfidence;
    }
  Found.ByName = findBatchSizesByName(TU);
  Found.Calls = findCalls(TU);
  return Found;
}

std::optional<BatchSizeSite> findNamedBatchSize(const TUContext &TU,
                                                llvm::StringRef Name) {
  BatchSizeTracer Tracer(TU);
  std::vector<UseStep> Chain{{"named by --batch-size-var", "", 0, 0}};
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
