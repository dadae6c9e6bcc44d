//===- SettingsFinder.cpp - Where the program sets its runtime knobs ------===//
//
// What the experiments' fix-its edit: the program's own intra-op thread
// setting (torch::set_num_threads or at::set_num_threads, whose argument a
// fix-it changes), the start of main, where a setting of its own goes, and
// each data loader's options, where `.workers(N)` goes.
//
//===----------------------------------------------------------------------===//

#include "Finders.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

using namespace clang;

namespace skyline::frontend {

namespace {

/// What a line's #include names, as written (`<ATen/autocast_mode.h>`);
/// none where the line is no #include.
std::optional<llvm::StringRef> includedBy(llvm::StringRef Line) {
  llvm::StringRef Directive = Line.ltrim(" \t");
  if (!Directive.consume_front("#"))
    return std::nullopt;
  Directive = Directive.ltrim(" \t");
  if (!Directive.consume_front("include"))
    return std::nullopt;
  return Directive.trim(" \t\r");
}

/// The headers main's file includes, and where one more #include goes:
/// the start of the line after the last #include before main's body (a
/// line scan of the file as written, as a reader sees it).
void findIncludes(const TUContext &TU, SourceLocation MainBody,
                  llvm::StringRef File, ThreadSettings &Out) {
  FileID Main = TU.SM.getFileID(MainBody);
  llvm::StringRef Text = TU.SM.getBufferData(Main);
  unsigned BodyOffset = TU.SM.getFileOffset(MainBody);
  size_t LineStart = 0;
  for (unsigned Line = 1; LineStart < Text.size(); ++Line) {
    size_t End = Text.find('\n', LineStart);
    if (End == llvm::StringRef::npos)
      break; // a last line without its newline is left alone
    std::optional<llvm::StringRef> Header =
        includedBy(Text.slice(LineStart, End));
    if (Header && Header->size() > 2 &&
        (Header->front() == '<' || Header->front() == '"'))
      Out.MainIncludes.push_back(
          Header->drop_front()
              .take_until([](char C) { return C == '>' || C == '"'; })
              .str());
    if (Header && LineStart < BodyOffset) {
      SourceSpan At;
      At.File = File.str();
      At.Line = Line + 1;
      At.Column = 1;
      At.Offset = unsigned(End + 1);
      Out.IncludeAt = At;
    }
    LineStart = End + 1;
  }
}

/// The blanks before the first statement of Body on its line, where that
/// line holds nothing else before it; "  " otherwise.
std::string indentOf(const TUContext &TU, const CompoundStmt *Body) {
  if (Body->body_empty())
    return "  ";
  SourceLocation First = Body->body_front()->getBeginLoc();
  if (First.isMacroID() ||
      TU.SM.getFileID(First) != TU.SM.getFileID(Body->getLBracLoc()) ||
      TU.lineOf(First) == TU.lineOf(Body->getLBracLoc()))
    return "  ";
  bool Invalid = false;
  const char *Text = TU.SM.getCharacterData(First, &Invalid);
  unsigned Column = TU.columnOf(First);
  if (Invalid || Column < 2)
    return "  ";
  llvm::StringRef Before(Text - (Column - 1), Column - 1);
  if (Before.find_first_not_of(" \t") != llvm::StringRef::npos)
    return "  ";
  return Before.str();
}

bool isLoaderOptions(QualType T) {
  const CXXRecordDecl *RD = recordOf(T);
  return RD &&
         RD->getQualifiedNameAsString() == "torch::data::DataLoaderOptions";
}

bool inMacro(const Expr *E) {
  return E->getBeginLoc().isMacroID() || E->getEndLoc().isMacroID();
}

/// Reads the workers(N) setter off an options expression: in its chain
/// (`DataLoaderOptions().batch_size(64).workers(2)`), else on the variable
/// it names (`options.workers(2)` anywhere in this translation unit, or the
/// variable's initializer).
class WorkersReader {
public:
  WorkersReader(const TUContext &TU, DataLoaderSite &Site)
      : TU(TU), Site(Site) {}

  void read(const Expr *E, int Depth = 0) {
    using namespace clang::ast_matchers;
    if (!E || Depth > 4 || Site.Workers)
      return;
    E = E->IgnoreImplicit();
    if (const auto *Cast = dyn_cast<CXXFunctionalCastExpr>(E))
      E = Cast->getSubExpr()->IgnoreImplicit();
    if (const auto *Copy = dyn_cast<CXXConstructExpr>(E);
        Copy && Copy->getConstructor()->isCopyOrMoveConstructor())
      return read(Copy->getArg(0), Depth + 1);
    if (const auto *Call = dyn_cast<CXXMemberCallExpr>(E)) {
      const CXXMethodDecl *Method = Call->getMethodDecl();
      if (Method && Method->getName() == "workers" &&
          Call->getNumArgs() == 1)
        return setter(Call->getArg(0));
      return read(Call->getImplicitObjectArgument(), Depth + 1);
    }
    if (const auto *Move = dyn_cast<CallExpr>(E);
        Move && Move->getNumArgs() == 1 && Move->getDirectCallee() &&
        Move->getDirectCallee()->getQualifiedNameAsString() == "std::move")
      return read(Move->getArg(0), Depth + 1);
    const ValueDecl *Held = referencedDecl(E);
    if (!Held)
      return;
    auto Setters = TU.findAll<CXXMemberCallExpr>(
        cxxMemberCallExpr(callee(cxxMethodDecl(hasName("workers"))),
                          argumentCountIs(1))
            .bind("n"));
    for (const CXXMemberCallExpr *Setter : Setters)
      if (referencedDecl(Setter->getImplicitObjectArgument()) == Held &&
          isLoaderOptions(Setter->getImplicitObjectArgument()->getType()))
        return setter(Setter->getArg(0));
    if (const auto *Var = dyn_cast<VarDecl>(Held); Var && Var->getInit())
      read(Var->getInit(), Depth + 1);
  }

private:
  void setter(const Expr *Count) {
    if (inMacro(Count))
      return;
    Site.Workers = TU.spanOf(Count->getSourceRange());
    Expr::EvalResult Value;
    Site.WorkersValue =
        !Count->isValueDependent() && Count->EvaluateAsInt(Value, TU.Ctx)
            ? Value.Val.getInt().getExtValue()
            : -1;
  }

  const TUContext &TU;
  DataLoaderSite &Site;
};

/// Where `.workers(N)` reads best: past the initializer of the local
/// variable the options name, where it is written `auto o = <chain>;`,
/// else past the options argument itself.
SourceSpan workersInsertAt(const TUContext &TU, const Expr *Options) {
  SourceSpan Arg = TU.spanOf(Options->getSourceRange());
  SourceSpan At = Arg;
  At.Offset += Arg.Length;
  At.Column += Arg.Length; // the argument is on one line where it matters
  At.Length = 0;
  const auto *Var = dyn_cast_or_null<VarDecl>(referencedDecl(Options));
  if (!Var || !Var->hasLocalStorage() || !Var->getInit() ||
      Var->getInitStyle() != VarDecl::CInit || inMacro(Var->getInit()) ||
      !isLoaderOptions(Var->getType()))
    return At;
  SourceSpan Init = TU.spanOf(Var->getInit()->getSourceRange());
  if (Init.File != Arg.File && !Init.File.empty())
    return At;
  Init.Offset += Init.Length;
  Init.Column += Init.Length;
  Init.Length = 0;
  return Init;
}

/// One loader made from Args: (dataset, options) or (dataset, sampler,
/// options); a number converts to DataLoaderOptions(batch_size).
void addLoader(const TUContext &TU, const Expr *Loader,
               llvm::ArrayRef<const Expr *> Args,
               std::vector<DataLoaderSite> &Out) {
  if (Args.size() < 2 || inMacro(Loader) || inMacro(Args[0]) ||
      isa<CXXDefaultArgExpr>(Args[0]))
    return;
  for (unsigned I = 1; I < Args.size(); ++I) {
    const Expr *Arg = Args[I];
    if (isa<CXXDefaultArgExpr>(Arg) || inMacro(Arg))
      continue;
    // A number converts to DataLoaderOptions(number) implicitly.
    const Expr *Written = Arg->IgnoreImplicit();
    if (const auto *Convert = dyn_cast<CXXConstructExpr>(Written);
        Convert && !isa<CXXTemporaryObjectExpr>(Convert) &&
        Convert->getNumArgs() == 1 &&
        Convert->getArg(0)->getType()->isIntegerType() &&
        !Convert->getConstructor()->isCopyOrMoveConstructor())
      Written = Convert->getArg(0);
    bool Count = Written->getType()->isIntegerType();
    if (!Count && !isLoaderOptions(Arg->getType()))
      continue;
    // DataLoaderOptions(64) passed by value: the construction as written.
    DataLoaderSite Site;
    Site.Call = TU.tokenSpan(Loader->getBeginLoc());
    Site.Dataset = TU.spanOf(Args[0]->getSourceRange());
    Site.Options = TU.spanOf(Arg->getSourceRange());
    Site.OptionsIsCount = Count;
    if (!Count) {
      WorkersReader(TU, Site).read(Arg);
      Site.WorkersInsertAt = workersInsertAt(TU, Arg);
    }
    Out.push_back(std::move(Site));
    return;
  }
}

} // namespace

void findDataLoaders(const TUContext &TU, std::vector<DataLoaderSite> &Out) {
  using namespace clang::ast_matchers;
  auto MakeLoader =
      callExpr(callee(functionDecl(hasName("::torch::data::make_data_loader"))))
          .bind("n");
  for (const CallExpr *Call : TU.findAll<CallExpr>(MakeLoader))
    addLoader(TU, Call, {Call->getArgs(), Call->getNumArgs()}, Out);
  auto LoaderClass = cxxRecordDecl(hasAnyName(
      "::torch::data::StatelessDataLoader", "::torch::data::StatefulDataLoader"));
  for (const auto *Construct : TU.findAll<CXXConstructExpr>(
           cxxConstructExpr(hasType(LoaderClass)).bind("n")))
    addLoader(TU, Construct, {Construct->getArgs(), Construct->getNumArgs()},
              Out);
}

void findThreadSettings(const TUContext &TU, ThreadSettings &Out) {
  using namespace clang::ast_matchers;
  auto SetThreads =
      callExpr(callee(functionDecl(hasAnyName("::at::set_num_threads",
                                              "::torch::set_num_threads"))),
               argumentCountIs(1))
          .bind("n");
  for (const CallExpr *Call : TU.findAll<CallExpr>(SetThreads)) {
    const Expr *Argument = Call->getArg(0);
    if (Argument->getBeginLoc().isMacroID() ||
        Argument->getEndLoc().isMacroID())
      continue; // an edit inside a macro changes every use of it
    Out.Calls.push_back(TU.spanOf(Argument->getSourceRange()));
  }
  auto Main = functionDecl(isMain(), isDefinition()).bind("n");
  for (const FunctionDecl *F : TU.findAll<FunctionDecl>(Main)) {
    const auto *Body = dyn_cast_or_null<CompoundStmt>(F->getBody());
    if (!Body || Body->getLBracLoc().isMacroID())
      continue;
    SourceSpan Start = TU.tokenSpan(Body->getLBracLoc());
    Start.Offset += 1; // just past the brace
    Start.Column += 1;
    Start.Length = 0;
    Out.MainStart = Start;
    Out.MainIndent = indentOf(TU, Body);
    findIncludes(TU, Body->getLBracLoc(), Start.File, Out);
  }
}

} // namespace skyline::frontend
