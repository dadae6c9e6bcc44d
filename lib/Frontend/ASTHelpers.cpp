//===- ASTHelpers.cpp - Shared AST queries of the front end ---------------===//

#include "ASTHelpers.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace clang;

namespace skyline::frontend {

std::string TUContext::fileOf(SourceLocation Loc) const {
  FileID FID = SM.getFileID(SM.getFileLoc(Loc));
  OptionalFileEntryRef Entry = SM.getFileEntryRefForID(FID);
  return Entry ? normalizedPath(Entry->getName()) : "<unknown>";
}

std::string normalizedPath(llvm::StringRef Path) {
  llvm::SmallString<256> Result(Path);
  llvm::sys::fs::make_absolute(Result);
  llvm::sys::path::remove_dots(Result, /*remove_dot_dot=*/true);
  return std::string(Result);
}

unsigned TUContext::lineOf(SourceLocation Loc) const {
  return SM.getExpansionLineNumber(Loc);
}

unsigned TUContext::columnOf(SourceLocation Loc) const {
  return SM.getExpansionColumnNumber(Loc);
}

std::string TUContext::where(SourceLocation Loc) const {
  return fileOf(Loc) + ":" + std::to_string(lineOf(Loc));
}

SourceSpan TUContext::spanOf(SourceRange R) const {
  CharSourceRange Range = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(R), SM, Ctx.getLangOpts());
  if (Range.isInvalid()) // spans a macro boundary: take the expansion
    Range = CharSourceRange::getCharRange(
        SM.getExpansionLoc(R.getBegin()),
        Lexer::getLocForEndOfToken(SM.getExpansionLoc(R.getEnd()), 0, SM,
                                   Ctx.getLangOpts()));
  SourceSpan Span;
  Span.File = fileOf(Range.getBegin());
  Span.Line = SM.getSpellingLineNumber(Range.getBegin());
  Span.Column = SM.getSpellingColumnNumber(Range.getBegin());
  Span.Offset = SM.getFileOffset(Range.getBegin());
  Span.Length = SM.getFileOffset(Range.getEnd()) - Span.Offset;
  return Span;
}

SourceSpan TUContext::tokenSpan(SourceLocation Loc) const {
  SourceLocation Spelling = SM.getSpellingLoc(Loc);
  SourceSpan Span;
  Span.File = fileOf(Spelling);
  Span.Line = SM.getSpellingLineNumber(Spelling);
  Span.Column = SM.getSpellingColumnNumber(Spelling);
  Span.Offset = SM.getFileOffset(Spelling);
  Span.Length = Lexer::MeasureTokenLength(Spelling, SM, Ctx.getLangOpts());
  return Span;
}

std::string TUContext::textOf(SourceRange R) const {
  CharSourceRange Range = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(R), SM, Ctx.getLangOpts());
  if (Range.isInvalid())
    return "";
  return Lexer::getSourceText(Range, SM, Ctx.getLangOpts()).str();
}

bool TUContext::isUserCode(SourceLocation Loc) const {
  if (Loc.isInvalid())
    return false;
  SourceLocation File = SM.getExpansionLoc(Loc);
  return !SM.isInSystemHeader(File) &&
         SM.getFileEntryRefForID(SM.getFileID(File));
}

static bool isTransparent(const Stmt *S) {
  return isa<ImplicitCastExpr, MaterializeTemporaryExpr, ExprWithCleanups,
             CXXBindTemporaryExpr, ParenExpr, CXXFunctionalCastExpr, FullExpr>(
             S) ||
         (isa<CXXConstructExpr>(S) && !isa<CXXTemporaryObjectExpr>(S) &&
          cast<CXXConstructExpr>(S)
              ->getConstructor()
              ->isCopyOrMoveConstructor());
}

const Stmt *TUContext::semanticParent(const Stmt *S) const {
  const Stmt *Current = S;
  while (true) {
    auto Parents = Ctx.getParents(*Current);
    if (Parents.empty())
      return nullptr;
    const Stmt *Parent = Parents[0].get<Stmt>();
    if (!Parent || !isTransparent(Parent))
      return Parent;
    Current = Parent;
  }
}

/// The first ancestor of S for which Visit returns true, or a null node
/// when Visit stops the walk (returns std::nullopt) or the root is reached.
template <typename VisitorT>
static DynTypedNode findAncestor(ASTContext &Ctx, const Stmt *S,
                                 VisitorT Visit) {
  DynTypedNode Node = DynTypedNode::create(*S);
  while (true) {
    auto Parents = Ctx.getParents(Node);
    if (Parents.empty())
      return {};
    Node = Parents[0];
    std::optional<bool> Found = Visit(Node);
    if (!Found)
      return {};
    if (*Found)
      return Node;
  }
}

const Stmt *TUContext::enclosingLoop(const Stmt *S) const {
  return findAncestor(
             Ctx, S,
             [](const DynTypedNode &Node) -> std::optional<bool> {
               if (Node.get<FunctionDecl>() || Node.get<LambdaExpr>())
                 return std::nullopt; // loops outside the function do not count
               const Stmt *P = Node.get<Stmt>();
               return P && isa<ForStmt, CXXForRangeStmt, WhileStmt, DoStmt>(P);
             })
      .get<Stmt>();
}

std::vector<const CallExpr *> TUContext::callsTo(const FunctionDecl *F) const {
  using namespace clang::ast_matchers;
  const FunctionDecl *Canonical = F->getCanonicalDecl();
  std::vector<const CallExpr *> Calls;
  auto Names = [&](const OverloadExpr *Overloads) {
    return Overloads &&
           llvm::any_of(Overloads->decls(), [&](const NamedDecl *D) {
             const auto *F = dyn_cast<FunctionDecl>(D->getUnderlyingDecl());
             return F && F->getCanonicalDecl() == Canonical;
           });
  };
  for (const CallExpr *Call : findAll<CallExpr>(callExpr().bind("n"))) {
    if (const FunctionDecl *Callee = Call->getDirectCallee())
      if (Callee->getCanonicalDecl() == Canonical)
        Calls.push_back(Call);
    if (!Call->getDirectCallee() && Call->containsErrors() &&
        Names(dyn_cast<OverloadExpr>(Call->getCallee()->IgnoreImplicit())))
      Calls.push_back(Call);
  }
  return Calls;
}

const FunctionDecl *TUContext::enclosingFunction(const Stmt *S) const {
  return findAncestor(Ctx, S,
                      [](const DynTypedNode &Node) -> std::optional<bool> {
                        return Node.get<FunctionDecl>() != nullptr;
                      })
      .get<FunctionDecl>();
}

const Expr *stripValueWrappers(const Expr *E) {
  while (E) {
    const Expr *Next = E->IgnoreParenImpCasts();
    if (const auto *Cleanups = dyn_cast<ExprWithCleanups>(Next))
      Next = Cleanups->getSubExpr();
    else if (const auto *Temp = dyn_cast<MaterializeTemporaryExpr>(Next))
      Next = Temp->getSubExpr();
    else if (const auto *Bind = dyn_cast<CXXBindTemporaryExpr>(Next))
      Next = Bind->getSubExpr();
    else if (const auto *Cast = dyn_cast<ExplicitCastExpr>(Next))
      Next = Cast->getSubExpr();
    else if (const auto *Construct = dyn_cast<CXXConstructExpr>(Next);
             Construct && Construct->getNumArgs() >= 1 &&
             !isa<CXXTemporaryObjectExpr>(Construct) &&
             llvm::all_of(
                 llvm::drop_begin(Construct->arguments()),
                 [](const Expr *Arg) { return isa<CXXDefaultArgExpr>(Arg); }))
      Next = Construct->getArg(0); // c10::SymInt(b), std::string("x"), copies
    if (Next == E)
      return E;
    E = Next;
  }
  return E;
}

const CXXRecordDecl *recordOf(QualType T) {
  if (T.isNull())
    return nullptr;
  T = T.getNonReferenceType();
  if (const auto *RD = T->getAsCXXRecordDecl())
    return RD->hasDefinition() ? RD->getDefinition() : RD;
  return nullptr;
}

bool derivesFrom(const CXXRecordDecl *RD, llvm::StringRef QualifiedName) {
  if (!RD)
    return false;
  if (RD->getQualifiedNameAsString() == QualifiedName)
    return true;
  if (!RD->hasDefinition())
    return false;
  for (const CXXBaseSpecifier &Base : RD->getDefinition()->bases())
    if (derivesFrom(recordOf(Base.getType()), QualifiedName))
      return true;
  return false;
}

bool isModuleHolder(QualType T) {
  return derivesFrom(recordOf(T), "torch::nn::ModuleHolder");
}

bool isModuleClass(QualType T) {
  return derivesFrom(recordOf(T), "torch::nn::Module");
}

static QualType pointee(QualType T) {
  const CXXRecordDecl *RD = recordOf(T);
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(RD);
  if (!Spec)
    return {};
  std::string Name = Spec->getQualifiedNameAsString();
  if (Name != "std::shared_ptr" && Name != "std::unique_ptr")
    return {};
  return Spec->getTemplateArgs()[0].getAsType();
}

bool isModuleLike(QualType T) {
  if (isModuleHolder(T) || isModuleClass(T))
    return true;
  QualType Pointee = pointee(T);
  if (Pointee.isNull() && T->isPointerType())
    Pointee = T->getPointeeType();
  return !Pointee.isNull() && isModuleClass(Pointee);
}

bool isOptimizer(QualType T) {
  if (derivesFrom(recordOf(T), "torch::optim::Optimizer"))
    return true;
  if (T->isPointerType()) // Adam *opt_ = new Adam(...)
    return derivesFrom(recordOf(T->getPointeeType()),
                       "torch::optim::Optimizer");
  QualType Pointee = pointee(T);
  return !Pointee.isNull() &&
         derivesFrom(recordOf(Pointee), "torch::optim::Optimizer");
}

std::string moduleTypeName(QualType T) {
  if (QualType Pointee = pointee(T); !Pointee.isNull())
    T = Pointee;
  if (const CXXRecordDecl *RD = recordOf(T))
    if (!isa<ClassTemplateSpecializationDecl>(RD))
      return RD->getQualifiedNameAsString();
  PrintingPolicy Policy{LangOptions()};
  Policy.SuppressTagKeyword = true;
  return T.getNonReferenceType().getUnqualifiedType().getAsString(Policy);
}

std::string declKey(const TUContext &TU, const Decl *D) {
  SourceLocation Loc = TU.SM.getExpansionLoc(D->getLocation());
  return TU.fileOf(Loc) + "@" + std::to_string(TU.SM.getFileOffset(Loc));
}

std::vector<const CXXCtorInitializer *>
memberInitializers(const FieldDecl *Field) {
  std::vector<const CXXCtorInitializer *> Result;
  const auto *Record = dyn_cast<CXXRecordDecl>(Field->getParent());
  if (!Record)
    return Result;
  for (const CXXConstructorDecl *Ctor : Record->ctors()) {
    const FunctionDecl *Definition = Ctor->getDefinition();
    const auto *Defined = dyn_cast_or_null<CXXConstructorDecl>(Definition);
    for (const CXXCtorInitializer *Init : (Defined ? Defined : Ctor)->inits())
      if (Init->isWritten() && Init->getMember() == Field)
        Result.push_back(Init);
  }
  return Result;
}

const ValueDecl *referencedDecl(const Expr *E) {
  E = stripValueWrappers(E);
  if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(E))
    if ((Op->getOperator() == OO_Arrow || Op->getOperator() == OO_Star) &&
        Op->getNumArgs() >= 1)
      return referencedDecl(Op->getArg(0));
  if (const auto *Unary = dyn_cast_or_null<UnaryOperator>(E))
    if (Unary->getOpcode() == UO_Deref || Unary->getOpcode() == UO_AddrOf)
      return referencedDecl(Unary->getSubExpr());
  if (const auto *Ref = dyn_cast_or_null<DeclRefExpr>(E))
    return dyn_cast<VarDecl>(Ref->getDecl());
  if (const auto *Member = dyn_cast_or_null<MemberExpr>(E))
    return dyn_cast<ValueDecl>(Member->getMemberDecl());
  return nullptr;
}

bool isSideEffectFree(const Expr *E) {
  E = E->IgnoreParenImpCasts();
  if (isa<CXXThisExpr, IntegerLiteral>(E))
    return true;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E))
    return isa<VarDecl>(Ref->getDecl());
  if (const auto *Member = dyn_cast<MemberExpr>(E))
    return isa<FieldDecl>(Member->getMemberDecl()) &&
           isSideEffectFree(Member->getBase());
  if (const auto *Unary = dyn_cast<UnaryOperator>(E))
    return Unary->getOpcode() == UO_Deref &&
           isSideEffectFree(Unary->getSubExpr());
  if (const auto *Subscript = dyn_cast<ArraySubscriptExpr>(E))
    return isSideEffectFree(Subscript->getBase()) &&
           isSideEffectFree(Subscript->getIdx());
  const auto *Operator = dyn_cast<CXXOperatorCallExpr>(E);
  if (!Operator)
    return false;
  OverloadedOperatorKind Kind = Operator->getOperator();
  if (Kind != OO_Arrow && Kind != OO_Star && Kind != OO_Subscript)
    return false;
  if (Kind == OO_Star && Operator->getNumArgs() != 1)
    return false; // a multiplication
  return llvm::all_of(Operator->arguments(),
                      [](const Expr *Arg) { return isSideEffectFree(Arg); });
}

std::string repeatableText(const TUContext &TU, const Expr *Object) {
  if (Object->getBeginLoc().isMacroID() || Object->getEndLoc().isMacroID() ||
      !isSideEffectFree(Object))
    return "";
  std::string Text = TU.textOf(Object->getSourceRange());
  // The rewrite never adds a line, so line numbers stay the original's.
  return Text.find('\n') == std::string::npos ? Text : "";
}

/// The whitespace before Loc on its line; none where text comes first.
std::optional<std::string> lineIndent(const TUContext &TU,
                                      clang::SourceLocation Loc) {
  Loc = TU.SM.getExpansionLoc(Loc);
  llvm::StringRef Buffer = TU.SM.getBufferData(TU.SM.getFileID(Loc));
  unsigned Offset = TU.SM.getFileOffset(Loc);
  unsigned Start = Offset;
  while (Start > 0 && Buffer[Start - 1] != '\n')
    --Start;
  llvm::StringRef Before = Buffer.slice(Start, Offset);
  if (Before.find_first_not_of(" \t") != llvm::StringRef::npos)
    return std::nullopt;
  return Before.str();
}

std::string oneLineText(const TUContext &TU, const Stmt *S) {
  std::string Text =
      llvm::join(llvm::split(TU.textOf(S->getSourceRange()), '\n'), " ");
  std::replace(Text.begin(), Text.end(), '\t', ' ');
  Text.erase(std::unique(Text.begin(), Text.end(),
                         [](char A, char B) { return A == ' ' && B == ' '; }),
             Text.end());
  if (Text.size() > 60)
    Text = Text.substr(0, 57) + "...";
  return Text;
}

bool namesBinding(const Stmt *S) {
  if (const auto *Ref = dyn_cast_or_null<DeclRefExpr>(S);
      Ref && isa<BindingDecl>(Ref->getDecl()))
    return true;
  return S && llvm::any_of(S->children(),
                           [](const Stmt *C) { return namesBinding(C); });
}

} // namespace skyline::frontend
