//===- HostTransferFinder.cpp - What crosses to and from the device -------===//
//
// In a training loop's body: reads of a tensor on the host (item(), cpu(),
// to() a CPU device, a tensor written to a stream), each of which waits for
// the device's queue to drain before it copies, and copies of a tensor to a
// device with a device as their only argument, which block and, from a CPU
// tensor, copy out of pageable memory. The first are timed in every run;
// the second are what the pinned memory experiment changes.
//
//===----------------------------------------------------------------------===//

#include "Finders.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Lex/Lexer.h"

#include <set>

using namespace clang;

namespace skyline::frontend {
namespace {

/// A method of at::Tensor or at::TensorBase (item<T>() is the base's).
bool isTensorClassMethod(const CXXMethodDecl *Method) {
  return Method &&
         llvm::StringRef(Method->getParent()->getQualifiedNameAsString())
             .starts_with("at::Tensor");
}

bool isTensorType(QualType T) {
  const CXXRecordDecl *Record = recordOf(T.getNonReferenceType());
  return Record && (Record->getQualifiedNameAsString() == "at::Tensor" ||
                    derivesFrom(Record, "at::Tensor"));
}

/// The name of the class or enum T is, qualified; "" for anything else.
std::string tagName(QualType T) {
  const TagDecl *Tag = T.getNonReferenceType()->getAsTagDecl();
  return Tag ? Tag->getQualifiedNameAsString() : "";
}

/// A device as written: a c10::Device or a c10::DeviceType, before any
/// conversion to the TensorOptions to() takes.
bool isDevice(const Expr *Written) {
  std::string Name = tagName(Written->getType());
  return Name == "c10::Device" || Name == "c10::DeviceType";
}

/// The argument as the source spells it, through implicit conversions.
const Expr *asWritten(const Expr *E) {
  return E->IgnoreUnlessSpelledInSource();
}

/// A device the source names as the CPU: kCPU, c10::DeviceType::CPU,
/// torch::Device(torch::kCPU), torch::Device("cpu").
bool namesCpu(const Expr *E) {
  E = asWritten(E);
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E)) {
    const ValueDecl *D = Ref->getDecl();
    if (isa<EnumConstantDecl>(D))
      return D->getName() == "CPU";
    return D->getName() == "kCPU";
  }
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(E))
    return Construct->getNumArgs() >= 1 && namesCpu(Construct->getArg(0));
  if (const auto *Text = dyn_cast<StringLiteral>(E))
    return Text->getString() == "cpu";
  return false;
}

/// The arguments the call writes (a default one is not).
llvm::SmallVector<const Expr *, 2> writtenArguments(const CallExpr *Call) {
  llvm::SmallVector<const Expr *, 2> Written;
  for (const Expr *Arg : Call->arguments())
    if (!isa<CXXDefaultArgExpr>(Arg))
      Written.push_back(Arg);
  return Written;
}

/// The kind of host sync E is (HostSyncSite::Kind); none: not one.
std::optional<llvm::StringRef> hostSyncKind(const Expr *E) {
  if (const auto *Member = dyn_cast<CXXMemberCallExpr>(E)) {
    const CXXMethodDecl *Method = Member->getMethodDecl();
    if (!isTensorClassMethod(Method) || !Method->getIdentifier())
      return std::nullopt;
    llvm::StringRef Name = Method->getName();
    if (Name == "item")
      return llvm::StringRef("item");
    if (Name == "cpu")
      return llvm::StringRef("cpu");
    auto Written = writtenArguments(Member);
    if (Name == "to" && !Written.empty() && namesCpu(Written.front()))
      return llvm::StringRef("to-cpu");
    return std::nullopt;
  }
  // LibTorch's operator<<(std::ostream &, const Tensor &), whatever stream
  // it is given (std::cout, a std::ostringstream).
  if (const auto *Operator = dyn_cast<CXXOperatorCallExpr>(E);
      Operator && Operator->getOperator() == OO_LessLess &&
      Operator->getNumArgs() == 2 &&
      isTensorType(Operator->getArg(1)->getType()))
    if (const FunctionDecl *Callee = Operator->getDirectCallee();
        Callee && Callee->getNumParams() == 2 &&
        llvm::StringRef(tagName(Callee->getParamDecl(0)->getType()))
            .starts_with("std::basic_ostream"))
      return llvm::StringRef("print");
  return std::nullopt;
}

/// `tensor.to(device)`: one written argument, a device that is not named
/// as the CPU, on a tensor (not through a pointer).
const Expr *copiedToDevice(const Expr *E) {
  const auto *Member = dyn_cast<CXXMemberCallExpr>(E);
  if (!Member || !isTensorClassMethod(Member->getMethodDecl()) ||
      !Member->getMethodDecl()->getIdentifier() ||
      Member->getMethodDecl()->getName() != "to")
    return nullptr;
  const auto *Callee = dyn_cast<MemberExpr>(Member->getCallee());
  auto Written = writtenArguments(Member);
  if (!Callee || Callee->isArrow() || Written.size() != 1 ||
      !isDevice(asWritten(Written.front())) || namesCpu(Written.front()))
    return nullptr;
  return Written.front();
}

bool fromMacro(const Stmt *S) {
  return S->getBeginLoc().isMacroID() || S->getEndLoc().isMacroID();
}

/// Whether S calls a module: its time is the layer's, not a sync's.
bool callsModule(const Stmt *S) {
  if (!S)
    return false;
  if (const auto *Operator = dyn_cast<CXXOperatorCallExpr>(S);
      Operator && Operator->getOperator() == OO_Call &&
      Operator->getNumArgs() >= 1 &&
      isModuleLike(Operator->getArg(0)->getType()))
    return true;
  if (const auto *Member = dyn_cast<CXXMemberCallExpr>(S))
    if (const CXXMethodDecl *Method = Member->getMethodDecl();
        Method && Method->getIdentifier() && Method->getName() == "forward" &&
        derivesFrom(Method->getParent(), "torch::nn::Module"))
      return true;
  return llvm::any_of(S->children(),
                      [](const Stmt *Child) { return callsModule(Child); });
}

class TransferCollector {
public:
  TransferCollector(const TUContext &TU, TrainingLoop &Loop)
      : TU(TU), Loop(Loop) {}

  void visit(const Stmt *S) {
    if (!S || isa<LambdaExpr>(S)) // a lambda's body runs when it is called
      return;
    if (const auto *E = dyn_cast<Expr>(S)) {
      if (std::optional<llvm::StringRef> Kind = hostSyncKind(E)) {
        // The outermost only: what it holds is in its time already.
        if (!fromMacro(E) && !namesBinding(E) && !callsModule(E))
          addHostSync(E, *Kind);
        return;
      }
      if (const Expr *Device = copiedToDevice(E); Device && !fromMacro(E))
        addDeviceCopy(cast<CXXMemberCallExpr>(E), Device);
    }
    for (const Stmt *Child : S->children())
      visit(Child);
  }

private:
  /// A place of Length 0 just past E's last token.
  SourceSpan endOf(const Expr *E) const {
    SourceSpan Whole = TU.spanOf(E->getSourceRange());
    SourceLocation End = Lexer::getLocForEndOfToken(
        TU.SM.getFileLoc(E->getEndLoc()), 0, TU.SM, TU.Ctx.getLangOpts());
    SourceSpan At;
    At.File = Whole.File;
    At.Offset = Whole.Offset + Whole.Length;
    At.Line = TU.SM.getSpellingLineNumber(End);
    At.Column = TU.SM.getSpellingColumnNumber(End);
    return At;
  }

  /// Whether a site at Span was seen (in the pattern or an instantiation).
  bool seen(const SourceSpan &Span) {
    return !Seen.insert({Span.File, Span.Offset}).second;
  }

  void addHostSync(const Expr *E, llvm::StringRef Kind) {
    SourceSpan At = TU.spanOf(E->getSourceRange());
    if (!seen(At))
      Loop.HostSyncs.push_back({At, Kind.str(), oneLineText(TU, E)});
  }

  void addDeviceCopy(const CXXMemberCallExpr *Call, const Expr *Device) {
    const Expr *Object = Call->getImplicitObjectArgument();
    DeviceCopySite Copy;
    Copy.Call = TU.spanOf(Call->getSourceRange());
    Copy.TensorEnd = endOf(Object);
    Copy.Argument = TU.spanOf(Device->getSourceRange());
    Copy.ArgumentEnd = endOf(Device);
    Copy.Text = oneLineText(TU, Call);
    if (Copy.TensorEnd.Offset <= Copy.Call.Offset ||
        Copy.Argument.Offset < Copy.TensorEnd.Offset ||
        Copy.ArgumentEnd.Offset >= Copy.Call.Offset + Copy.Call.Length ||
        seen(Copy.Call))
      return;
    Loop.DeviceCopies.push_back(std::move(Copy));
  }

  const TUContext &TU;
  TrainingLoop &Loop;
  std::set<std::pair<std::string, unsigned>> Seen;
};

/// The statement in Root of Wanted's class that begins where it does: the
/// same loop in an instantiation of the template Wanted is in.
const Stmt *sameStatement(const Stmt *Root, const Stmt *Wanted) {
  if (!Root)
    return nullptr;
  if (Root->getStmtClass() == Wanted->getStmtClass() &&
      Root->getBeginLoc() == Wanted->getBeginLoc())
    return Root;
  for (const Stmt *Child : Root->children())
    if (const Stmt *Found = sameStatement(Child, Wanted))
      return Found;
  return nullptr;
}

/// The bodies of LoopStmt in the instantiations of the function template it
/// is in (a train() template over its loader's type): in the pattern a
/// batch's tensors have dependent types, and only an instantiation says
/// that `batch.data.to(device)` is a tensor's to().
std::vector<const Stmt *> instantiatedBodies(const TUContext &TU,
                                             const Stmt *LoopStmt) {
  std::vector<const Stmt *> Bodies;
  const FunctionDecl *F = TU.enclosingFunction(LoopStmt);
  const FunctionTemplateDecl *Template =
      F ? F->getDescribedFunctionTemplate() : nullptr;
  if (!Template)
    return Bodies;
  for (const FunctionDecl *Instance : Template->specializations())
    if (const Stmt *Same = sameStatement(Instance->getBody(), LoopStmt))
      if (const Stmt *Body = loopBody(Same))
        Bodies.push_back(Body);
  return Bodies;
}

} // namespace

void findHostTransfers(const TUContext &TU, const Stmt *LoopStmt,
                       TrainingLoop &Loop) {
  TransferCollector Collector(TU, Loop);
  Collector.visit(loopBody(LoopStmt));
  for (const Stmt *Body : instantiatedBodies(TU, LoopStmt))
    Collector.visit(Body);
  llvm::stable_sort(Loop.HostSyncs,
                    [](const HostSyncSite &A, const HostSyncSite &B) {
                      return A.At.Offset < B.At.Offset;
                    });
  llvm::stable_sort(Loop.DeviceCopies,
                    [](const DeviceCopySite &A, const DeviceCopySite &B) {
                      return A.Call.Offset < B.Call.Offset;
                    });
}

} // namespace skyline::frontend
