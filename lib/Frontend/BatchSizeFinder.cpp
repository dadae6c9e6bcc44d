//===- BatchSizeFinder.cpp - Where the batch sizes come from --------------===//
//
// Starts from the places a batch size is used (make_data_loader's argument,
// DataLoaderOptions::batch_size, the first dimension of tensors made in the
// training loop), traces each back to its literal, and tells the training
// batch size from test and evaluation ones by the loop the loader feeds.
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

class BatchSizeFinder {
public:
  BatchSizeFinder(const TUContext &TU, const LoopFindings &Loops)
      : TU(TU), Loops(Loops), Tracer(TU) {}

  std::vector<BatchSizeSite> run() {
    findDataLoaders();
    findTensorDimensions();
    return std::move(Sites);
  }

private:
  void findDataLoaders() {
    auto MakeLoader = callExpr(callee(functionDecl(hasName("::torch::data::make_data_loader"))))
                          .bind("n");
    for (const CallExpr *Call : TU.findAll<CallExpr>(MakeLoader)) {
      // (dataset, options) or (dataset, sampler, options); a bare number
      // converts to DataLoaderOptions(batch_size).
      for (unsigned I = 1; I < Call->getNumArgs(); ++I) {
        const Expr *Arg = Call->getArg(I);
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
        assignLoaderRole(*Site, Call);
        Sites.push_back(std::move(*Site));
        break;
      }
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
    return RD && RD->getQualifiedNameAsString() == "torch::data::DataLoaderOptions";
  }

  /// DataLoaderOptions(64), DataLoaderOptions().batch_size(64).workers(2), or
  /// a variable holding one.
  std::optional<BatchSizeSite> traceOptions(const Expr *E, std::vector<UseStep> Chain,
                                            int Depth) {
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
      if (Method && Method->getName() == "batch_size" && Call->getNumArgs() == 1) {
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
        Chain.push_back(step("DataLoaderOptions constructor", Construct->getArg(0)));
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
      for (const CXXMemberCallExpr *Setter : Setters)
        if (referencedDecl(Setter->getImplicitObjectArgument()) == Var)
          return traceOptions(Setter, Chain, Depth + 1);
      if (Var->getInit()) {
        Chain.push_back(step("initializer of '" + Var->getNameAsString() + "'",
                             Var->getInit()));
        return traceOptions(Var->getInit(), Chain, Depth + 1);
      }
    }
    return std::nullopt;
  }

  void findTensorDimensions() {
    auto Factory = callExpr(callee(functionDecl(hasAnyName(
                                "::torch::randn", "::torch::rand", "::torch::zeros",
                                "::torch::ones", "::torch::empty", "::torch::full",
                                "::torch::randint", "::at::randn", "::at::rand",
                                "::at::zeros", "::at::ones", "::at::empty",
                                "::at::full", "::at::randint"))))
                       .bind("n");
    for (const CallExpr *Call : TU.findAll<CallExpr>(Factory)) {
      if (!Loops.isTrainingContext(TU, Call))
        continue;
      const Expr *First = firstDimension(Call);
      if (!First)
        continue;
      std::string Callee = Call->getDirectCallee()->getQualifiedNameAsString();
      std::vector<UseStep> Chain{step("first dimension of " + Callee +
                                          " in the training loop",
                                      First)};
      auto Site = Tracer.trace(First, Chain);
      if (!Site)
        continue;
      if (Site->Name.empty())
        Site->Name = Callee;
      Site->Role = BatchSizeRole::Train;
      Site->Confidence = TensorConfidence;
      Sites.push_back(std::move(*Site));
    }
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
  void assignLoaderRole(BatchSizeSite &Site, const CallExpr *MakeLoader) {
    const ValueDecl *Loader = loaderVariable(MakeLoader);
    if (Loader) {
      if (auto Role = roleFromLoops(Loader, 0)) {
        Site.Role = *Role;
        Site.Confidence = LoopConfidence;
        return;
      }
    }
    std::string Names = Site.Name + " " + (Loader ? Loader->getNameAsString() : "") +
                        " " + TU.textOf(MakeLoader->getArg(0)->getSourceRange());
    Site.Role = roleFromName(Names);
    if (Site.Role == BatchSizeRole::Unknown && Loader)
      Site.Role = roleFromName(Loader->getNameAsString());
    Site.Confidence =
        Site.Role == BatchSizeRole::Unknown ? GuessConfidence : NameConfidence;
  }

  /// The variable or member the loader is kept in.
  const ValueDecl *loaderVariable(const CallExpr *MakeLoader) {
    DynTypedNode Node = DynTypedNode::create(*MakeLoader);
    for (int Up = 0; Up < 6; ++Up) {
      auto Parents = TU.Ctx.getParents(Node);
      if (Parents.empty())
        return nullptr;
      Node = Parents[0];
      if (const auto *Var = Node.get<VarDecl>())
        return Var;
      if (const auto *Assign = Node.get<BinaryOperator>();
          Assign && Assign->isAssignmentOp())
        return referencedDecl(Assign->getLHS());
      if (const auto *Assign = Node.get<CXXOperatorCallExpr>();
          Assign && Assign->getOperator() == OO_Equal)
        return referencedDecl(Assign->getArg(0));
      if (!Node.get<Expr>())
        return nullptr;
    }
    return nullptr;
  }

  /// The role of the loops that iterate over the loader variable, following
  /// it into the functions it is passed to.
  std::optional<BatchSizeRole> roleFromLoops(const ValueDecl *Loader, int Depth) {
    if (Depth > 3)
      return std::nullopt;
    std::optional<BatchSizeRole> Role;
    for (const auto *Loop : TU.findAll<CXXForRangeStmt>(cxxForRangeStmt().bind("n"))) {
      if (referencedDecl(Loop->getRangeInit()) != Loader)
        continue;
      if (Loops.TrainingLoopStmts.contains(Loop) || Loops.isTrainingContext(TU, Loop))
        return BatchSizeRole::Train;
      Role = BatchSizeRole::Eval;
    }
    auto Calls = TU.findAll<CallExpr>(callExpr().bind("n"));
    for (const CallExpr *Call : Calls) {
      const FunctionDecl *Callee = Call->getDirectCallee();
      if (!Callee || !TU.isUserCode(Callee->getLocation()))
        continue;
      for (unsigned I = 0; I < Call->getNumArgs() && I < Callee->getNumParams(); ++I) {
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
    if (Named(Field) || Field->getParent()->getNameAsString() + "::" +
                                Field->getNameAsString() == Name)
      if (auto Site = Tracer.traceDecl(Field, Chain))
        return Site;
  return std::nullopt;
}

} // namespace skyline::frontend
