//===- BatchSizeTracer.cpp - From a use of a value to its literal ---------===//

#include "BatchSizeTracer.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace skyline::frontend {
namespace {

constexpr int MaxDepth = 8;

/// Whether S reads the command line (argv) or the environment (getenv),
/// and what it reads, worded for a note: "argv[1]", "environment variable
/// 'BATCH'" (the first read found).
struct InputSources {
  bool Argv = false;
  bool Env = false;
  std::string What;

  void add(const InputSources &Other) {
    Argv |= Other.Argv;
    Env |= Other.Env;
    if (What.empty())
      What = Other.What;
  }
};

bool isGetenv(const FunctionDecl *F) {
  return F && F->getDeclName().isIdentifier() &&
         (F->getName() == "getenv" || F->getName() == "secure_getenv");
}

InputSources inputSourcesOf(const TUContext &TU, const Stmt *S, int Depth = 0) {
  InputSources Found;
  if (!S || Depth > 4)
    return Found;
  if (const auto *Index = dyn_cast<ArraySubscriptExpr>(S))
    if (const auto *Ref =
            dyn_cast<DeclRefExpr>(Index->getBase()->IgnoreParenImpCasts());
        Ref && isa<ParmVarDecl>(Ref->getDecl()) &&
        Ref->getDecl()->getName() == "argv")
      Found.What = TU.textOf(Index->getSourceRange());
  if (const auto *Call = dyn_cast<CallExpr>(S);
      Call && isGetenv(Call->getDirectCallee()) && Call->getNumArgs() == 1)
    if (const auto *Name =
            dyn_cast<StringLiteral>(Call->getArg(0)->IgnoreParenImpCasts());
        Name && Name->isOrdinary())
      Found.What = "environment variable '" + Name->getString().str() + "'";
  if (const auto *Ref = dyn_cast<DeclRefExpr>(S)) {
    if (const auto *Param = dyn_cast<ParmVarDecl>(Ref->getDecl())) {
      Found.Argv |= Param->getName() == "argv" || Param->getName() == "argc";
      if (Found.Argv && Found.What.empty())
        Found.What = "the command line";
    } else if (const auto *Var = dyn_cast<VarDecl>(Ref->getDecl())) {
      // const char *env = getenv(..)
      Found = inputSourcesOf(TU, Var->getInit(), Depth + 1);
    }
    if (isGetenv(dyn_cast<FunctionDecl>(Ref->getDecl()))) {
      Found.Env = true;
      if (Found.What.empty())
        Found.What = "an environment variable";
    }
  }
  for (const Stmt *Child : S->children())
    Found.add(inputSourcesOf(TU, Child, Depth));
  return Found;
}

bool isNumberParser(llvm::StringRef Name) {
  return llvm::is_contained({"atoi", "atol", "atoll", "stoi", "stol", "stoll",
                             "stoul", "stoull", "strtol", "strtoll", "strtoul",
                             "strtoull"},
                            Name);
}

bool isLiteralKind(BatchSizeKind Kind) {
  return Kind == BatchSizeKind::LiteralArgument;
}

/// The integer type an expression initializes inside braces, when an int64_t
/// would be narrowed to it there (`int batch_size{64}`, `Config{64, 2}` for
/// an int field): the run-time value replacing the literal is an int64_t,
/// and list-initialization does not narrow it implicitly. Empty otherwise.
/// A member's site set where the program sets it (an assignment, an
/// aggregate's initializer), not by its default: a local setting.
std::optional<BatchSizeSite> setWhere(std::optional<BatchSizeSite> Site,
                                      const std::string &Member) {
  if (Site && isLiteralKind(Site->Kind))
    Site->Kind = BatchSizeKind::LocalConstant;
  if (Site && Site->Name.empty())
    Site->Name = Member;
  return Site;
}

/// The initializer of List, or of a list nested in it, that is Written
/// once implicit conversions and parentheses are stripped.
const Expr *convertedInit(const InitListExpr *List, const Expr *Written) {
  for (const Expr *Init : List->inits()) {
    if (!Init)
      continue;
    if (Init->IgnoreParenImpCasts() == Written->IgnoreParenImpCasts())
      return Init;
    if (const auto *Nested = dyn_cast<InitListExpr>(Init->IgnoreImplicit()))
      if (const Expr *Found = convertedInit(Nested, Written))
        return Found;
  }
  return nullptr;
}

std::string listInitType(ASTContext &Ctx, const Expr *Written) {
  const Expr *Converted = Written;
  DynTypedNode Node = DynTypedNode::create(*Written);
  while (true) {
    auto Parents = Ctx.getParents(Node);
    if (Parents.empty())
      return "";
    Node = Parents[0];
    if (const auto *Cast = Node.get<ImplicitCastExpr>()) {
      Converted = Cast;
      continue;
    }
    if (Node.get<ParenExpr>() || Node.get<DesignatedInitExpr>())
      continue;
    break;
  }
  const auto *Var = Node.get<VarDecl>();
  const auto *Field = Node.get<FieldDecl>();
  const auto *List = Node.get<InitListExpr>();
  const auto *Construct = Node.get<CXXConstructExpr>(); // Options{64}
  bool InBraces = List || (Var && Var->getInitStyle() == VarDecl::ListInit) ||
                  (Field && Field->getInClassInitStyle() == ICIS_ListInit) ||
                  (Construct && Construct->isListInitialization());
  if (!InBraces)
    return "";
  // A list's syntactic form holds the expression as written; its semantic
  // form, converted to the member's type (braces elided for an inner
  // aggregate put it in a nested list). A scalar's list (`size_t n{64}`)
  // has the scalar's type itself. Not found: no type is safe to name.
  if (List) {
    const InitListExpr *Semantic =
        List->isSemanticForm() ? List : List->getSemanticForm();
    if (Semantic && Semantic->getType()->isScalarType())
      Converted = Semantic;
    else if (const Expr *Init =
                 Semantic ? convertedInit(Semantic, Written) : nullptr)
      Converted = Init;
    else
      return "";
  }
  QualType Type = Converted->getType().getCanonicalType().getUnqualifiedType();
  if (!Type->isIntegerType() || Type->isBooleanType())
    return "";
  if (Type->isSignedIntegerType() && Ctx.getIntWidth(Type) >= 64)
    return ""; // holds every int64_t
  return Type.getAsString(Ctx.getPrintingPolicy());
}

/// The initializer an aggregate's list gives Field, or null: in the
/// semantic form a base's comes first, an unnamed bit-field has none, and a
/// union's list holds only the member it initializes.
const Expr *memberInit(const InitListExpr *List, const FieldDecl *Field) {
  const InitListExpr *Semantic =
      List->isSemanticForm() ? List : List->getSemanticForm();
  const RecordDecl *Of =
      Semantic ? Semantic->getType()->getAsRecordDecl() : nullptr;
  if (!Of || Of->getCanonicalDecl() != Field->getParent()->getCanonicalDecl())
    return nullptr;
  unsigned Index = 0;
  if (Of->isUnion()) {
    if (Semantic->getInitializedFieldInUnion() != Field)
      return nullptr;
  } else {
    if (const auto *Class = dyn_cast<CXXRecordDecl>(Of))
      Index = Class->getNumBases();
    for (const FieldDecl *Member : Of->fields()) {
      if (Member == Field)
        break;
      Index += !Member->isUnnamedBitField();
    }
  }
  if (Index >= Semantic->getNumInits())
    return nullptr;
  const Expr *Init = Semantic->getInit(Index);
  if (!Init || isa<ImplicitValueInitExpr, CXXDefaultInitExpr>(Init))
    return nullptr;
  return Init;
}

/// The variable a member is read from (`train` of `train.batch_size`), when
/// it is one the front end can see initialized: a local or global object,
/// not a reference or a parameter.
const VarDecl *objectOf(const MemberExpr *Member) {
  if (Member->isArrow())
    return nullptr;
  const auto *Ref =
      dyn_cast<DeclRefExpr>(Member->getBase()->IgnoreParenImpCasts());
  const auto *Var = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  if (!Var || isa<ParmVarDecl>(Var) || Var->getType()->isReferenceType())
    return nullptr;
  return Var;
}

} // namespace

std::optional<SourceSpan>
BatchSizeTracer::constexprKeyword(const VarDecl *Var) const {
  // The keyword sits between the declaration's start and its name.
  SourceLocation Loc = Var->getBeginLoc(), End = Var->getLocation();
  if (Loc.isMacroID() || End.isMacroID())
    return std::nullopt;
  const LangOptions &Lang = TU.Ctx.getLangOpts();
  while (Loc.isValid() && TU.SM.isBeforeInTranslationUnit(Loc, End)) {
    Token Tok;
    if (Lexer::getRawToken(Loc, Tok, TU.SM, Lang, /*IgnoreWhiteSpace=*/true))
      return std::nullopt;
    if (Tok.is(tok::raw_identifier) && Tok.getRawIdentifier() == "constexpr")
      return TU.tokenSpan(Tok.getLocation());
    Loc = Tok.getEndLoc();
  }
  return std::nullopt;
}

UseStep BatchSizeTracer::step(std::string Description,
                              SourceLocation Loc) const {
  return {std::move(Description), TU.fileOf(Loc), TU.lineOf(Loc),
          TU.columnOf(Loc)};
}

std::optional<BatchSizeSite>
BatchSizeTracer::trace(const Expr *E, std::vector<UseStep> Chain) const {
  return traceAt(E, Chain, 0);
}

std::optional<BatchSizeSite>
BatchSizeTracer::traceDecl(const ValueDecl *D,
                           std::vector<UseStep> Chain) const {
  if (const auto *Param = dyn_cast<ParmVarDecl>(D))
    return traceParam(Param, Chain, 0);
  if (const auto *Var = dyn_cast<VarDecl>(D))
    return traceVar(Var, Chain, 0);
  if (const auto *Field = dyn_cast<FieldDecl>(D))
    return traceField(Field, Chain, 0);
  return std::nullopt;
}

std::optional<BatchSizeSite>
BatchSizeTracer::literal(const Expr *E, std::vector<UseStep> &Chain) const {
  const auto *Int = dyn_cast<IntegerLiteral>(E);
  if (!Int)
    return std::nullopt;
  BatchSizeSite Site;
  Site.Value = Int->getValue().getSExtValue();
  Site.Literal = TU.tokenSpan(Int->getLocation());
  Site.Kind = BatchSizeKind::LiteralArgument;
  Site.ListInitType = listInitType(TU.Ctx, Int);
  SourceLocation Loc = Int->getLocation();
  if (Loc.isMacroID() && !TU.SM.isMacroArgExpansion(Loc)) {
    Site.Kind = BatchSizeKind::Macro;
    Site.Name =
        Lexer::getImmediateMacroName(Loc, TU.SM, TU.Ctx.getLangOpts()).str();
    Chain.push_back(step("macro '" + Site.Name + "' defined here",
                         TU.SM.getSpellingLoc(Loc)));
  }
  Site.Chain = Chain;
  return Site;
}

std::optional<BatchSizeSite>
BatchSizeTracer::digitsInString(const StringLiteral *S,
                                std::vector<UseStep> &Chain) const {
  if (!S->isOrdinary())
    return std::nullopt;
  llvm::StringRef Text = S->getString();
  long long Value = 0;
  if (Text.empty() || !llvm::all_of(Text, llvm::isDigit) ||
      Text.getAsInteger(10, Value))
    return std::nullopt;
  BatchSizeSite Site;
  Site.Value = Value;
  Site.Literal = TU.tokenSpan(S->getBeginLoc());
  Site.Literal.Offset += 1; // inside the quotes
  Site.Literal.Column += 1;
  Site.Literal.Length = Text.size();
  Site.Kind = BatchSizeKind::CommandLineDefault;
  Site.InString = true;
  Site.Chain = Chain;
  return Site;
}

std::optional<BatchSizeSite>
BatchSizeTracer::traceAt(const Expr *E, std::vector<UseStep> &Chain,
                         int Depth) const {
  if (!E || Depth > MaxDepth)
    return std::nullopt;
  E = stripValueWrappers(E);
  if (const auto *Init = dyn_cast<InitListExpr>(E);
      Init && Init->getNumInits() == 1)
    return traceAt(Init->getInit(0), Chain, Depth + 1);
  if (auto Site = literal(E, Chain))
    return Site;
  if (const auto *Str = dyn_cast<StringLiteral>(E))
    return digitsInString(Str, Chain);
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E)) {
    if (const auto *Param = dyn_cast<ParmVarDecl>(Ref->getDecl()))
      return traceParam(Param, Chain, Depth + 1);
    if (const auto *Var = dyn_cast<VarDecl>(Ref->getDecl()))
      return traceVar(Var, Chain, Depth + 1);
    return std::nullopt;
  }
  if (const auto *Member = dyn_cast<MemberExpr>(E)) {
    if (const auto *Field = dyn_cast<FieldDecl>(Member->getMemberDecl()))
      return traceField(Field, Chain, Depth + 1, objectOf(Member));
    if (const auto *Var = dyn_cast<VarDecl>(Member->getMemberDecl()))
      return traceVar(Var, Chain, Depth + 1);
    return std::nullopt;
  }
  if (const auto *Cond = dyn_cast<ConditionalOperator>(E))
    return traceConditional(Cond->getCond(), Cond->getTrueExpr(),
                            Cond->getFalseExpr(), Chain, Depth);
  if (const auto *Call = dyn_cast<CallExpr>(E))
    return traceCall(Call, Chain, Depth);
  if (const auto *Binary = dyn_cast<BinaryOperator>(E);
      Binary && (Binary->isMultiplicativeOp() || Binary->isAdditiveOp())) {
    Expr::EvalResult Result;
    if (E->getBeginLoc().isMacroID())
      return std::nullopt;
    if (!E->EvaluateAsInt(Result, TU.Ctx)) {
      // total / ranks with ranks known at run time: the literal that scales
      // it is the left operand's.
      Chain.push_back(
          step("scaled as '" + TU.textOf(E->getSourceRange()) + "' here",
               E->getBeginLoc()));
      return traceAt(Binary->getLHS(), Chain, Depth + 1);
    }
    BatchSizeSite Site;
    Site.Value = Result.Val.getInt().getSExtValue();
    Site.Literal = TU.spanOf(E->getSourceRange());
    Site.Kind = BatchSizeKind::Derived;
    Site.ListInitType = listInitType(TU.Ctx, E); // int b{kTotal / 4}
    Chain.push_back(
        step("computed as '" + TU.textOf(E->getSourceRange()) + "' here",
             E->getBeginLoc()));
    Site.Chain = Chain;
    return Site;
  }
  return std::nullopt;
}

std::optional<BatchSizeSite>
BatchSizeTracer::traceVar(const VarDecl *Var, std::vector<UseStep> &Chain,
                          int Depth) const {
  if (const VarDecl *Definition = Var->getDefinition())
    Var = Definition;
  if (!TU.isUserCode(Var->getLocation()))
    return std::nullopt;
  std::string Name = Var->isStaticDataMember() ? Var->getQualifiedNameAsString()
                                               : Var->getNameAsString();
  Chain.push_back(
      step((Var->isStaticDataMember() ? "static member '" : "variable '") +
               Name + "' initialised here",
           Var->getLocation()));
  std::optional<BatchSizeSite> Site;
  if (const Expr *Init = Var->getInit())
    Site = traceAt(Init, Chain, Depth + 1);
  if (!Site && RuntimeRead && RuntimeRead->Name.empty())
    RuntimeRead->Name = Name; // int64_t batch_size = atoi(argv[1]);
  if (!Site)
    return std::nullopt;
  if (Var->isConstexpr())
    if (auto Keyword = constexprKeyword(Var))
      Site->OverrideEdits.push_back(
          {*Keyword, Var->isStaticDataMember() ? "inline const" : "const"});
  if (isLiteralKind(Site->Kind))
    Site->Kind = Var->isStaticDataMember() ? BatchSizeKind::StaticMember
                 : Var->hasGlobalStorage() && !Var->isStaticLocal()
                     ? BatchSizeKind::NamespaceConstant
                     : BatchSizeKind::LocalConstant;
  if (Site->Name.empty())
    Site->Name = Name;
  return Site;
}

std::optional<BatchSizeSite>
BatchSizeTracer::traceParam(const ParmVarDecl *Param,
                            std::vector<UseStep> &Chain, int Depth) const {
  const auto *Function = dyn_cast<FunctionDecl>(Param->getDeclContext());
  if (!Function)
    return std::nullopt;
  unsigned Index = Param->getFunctionScopeIndex();
  std::string FunctionName = Function->getQualifiedNameAsString();
  // Calls, and constructions for a constructor's parameter
  // (Trainer trainer(128) for Trainer(int64_t batch_size)).
  std::vector<std::pair<const Expr *, llvm::ArrayRef<const Expr *>>> Callers;
  for (const CallExpr *Call : TU.callsTo(Function))
    Callers.push_back({Call, {Call->getArgs(), Call->getNumArgs()}});
  if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(Function))
    for (const auto *Construct :
         TU.findAll<CXXConstructExpr>(cxxConstructExpr().bind("n")))
      if (Construct->getConstructor()->getCanonicalDecl() ==
          Ctor->getCanonicalDecl())
        Callers.push_back(
            {Construct, {Construct->getArgs(), Construct->getNumArgs()}});
  auto FromDefault = [&]() -> std::optional<BatchSizeSite> {
    // The default may sit on another declaration (the header's).
    const ParmVarDecl *WithDefault = nullptr;
    for (const FunctionDecl *Redecl : Function->redecls())
      if (Index < Redecl->getNumParams() &&
          Redecl->getParamDecl(Index)->hasDefaultArg() &&
          !Redecl->getParamDecl(Index)->hasUninstantiatedDefaultArg())
        WithDefault = Redecl->getParamDecl(Index);
    if (!WithDefault)
      return std::nullopt;
    Chain.push_back(step("default of parameter '" +
                             WithDefault->getNameAsString() + "' of " +
                             FunctionName + "() here",
                         WithDefault->getLocation()));
    auto Site = traceAt(WithDefault->getDefaultArg(), Chain, Depth + 1);
    if (Site && isLiteralKind(Site->Kind))
      Site->Kind = BatchSizeKind::DefaultArgument;
    if (Site && Site->Name.empty())
      Site->Name = WithDefault->getNameAsString();
    return Site;
  };
  for (auto [Caller, Args] : Callers) {
    if (Index >= Args.size())
      continue;
    const Expr *Arg = Args[Index];
    if (isa<CXXDefaultArgExpr>(Arg))
      return FromDefault();
    std::vector<UseStep> Branch = Chain;
    Branch.push_back(step("passed as '" + Param->getNameAsString() + "' to " +
                              FunctionName + "() here",
                          Arg->getBeginLoc()));
    if (auto Site = traceAt(Arg, Branch, Depth + 1)) {
      if (Site->Name.empty())
        Site->Name = Param->getNameAsString();
      Chain = Branch;
      return Site;
    }
  }
  return FromDefault();
}

std::optional<BatchSizeSite>
BatchSizeTracer::traceField(const FieldDecl *Field, std::vector<UseStep> &Chain,
                            int Depth, const VarDecl *Object) const {
  if (!TU.isUserCode(Field->getLocation()))
    return std::nullopt;
  std::string Name =
      Field->getParent()->getNameAsString() + "::" + Field->getNameAsString();
  auto Named = [&](std::optional<BatchSizeSite> Site) {
    if (Site && isLiteralKind(Site->Kind))
      Site->Kind = BatchSizeKind::FieldDefault;
    if (Site && Site->Name.empty())
      Site->Name = Name;
    return Site;
  };
  // `opts.batch_size = 16;` in the program overrides the member's default.
  auto Assignments = TU.findAll<BinaryOperator>(
      binaryOperator(isAssignmentOperator(),
                     hasLHS(memberExpr(member(equalsNode(Field)))))
          .bind("n"));
  for (const BinaryOperator *Assign : Assignments) {
    std::vector<UseStep> Branch = Chain;
    Branch.push_back(
        step("member '" + Name + "' assigned here", Assign->getBeginLoc()));
    if (auto Site =
            setWhere(traceAt(Assign->getRHS(), Branch, Depth + 1), Name)) {
      Chain = Branch;
      return Site;
    }
  }
  // Config cfg{64, 2} or Config cfg{.batch_size = 64}: an aggregate's
  // initializer sets the member before any default.
  if (auto Site = traceAggregateInit(Field, Name, Object, Chain, Depth))
    return Site;
  if (Field->hasInClassInitializer()) {
    Chain.push_back(
        step("default of member '" + Name + "' here", Field->getLocation()));
    return Named(traceAt(Field->getInClassInitializer(), Chain, Depth + 1));
  }
  // Set in a constructor's initializer list: Trainer(int bs = 32) : bs_(bs).
  for (const CXXCtorInitializer *Init : memberInitializers(Field)) {
    std::vector<UseStep> Branch = Chain;
    Branch.push_back(step("member '" + Name + "' initialised here",
                          Init->getSourceLocation()));
    size_t Steps = Branch.size();
    auto Site = traceAt(Init->getInit(), Branch, Depth + 1);
    if (!Site)
      continue;
    // A literal in the initializer is the member's default; one that came
    // through a parameter (`Options(64)` for `: bs_(size)`) is the caller's.
    if (Site->Chain.size() > Steps && Site->Name.empty())
      Site->Name = Name;
    else if (Site->Chain.size() <= Steps)
      Site = Named(std::move(Site));
    Chain = Branch;
    return Site;
  }
  return std::nullopt;
}

std::optional<BatchSizeSite> BatchSizeTracer::traceAggregateInit(
    const FieldDecl *Field, const std::string &Name, const VarDecl *Object,
    std::vector<UseStep> &Chain, int Depth) const {
  auto FromList =
      [&](const InitListExpr *List) -> std::optional<BatchSizeSite> {
    const Expr *Init = memberInit(List, Field);
    if (!Init || !TU.isUserCode(List->getBeginLoc()))
      return std::nullopt;
    std::vector<UseStep> Branch = Chain;
    Branch.push_back(step("member '" + Name + "' initialised in braces here",
                          Init->getBeginLoc()));
    auto Site = setWhere(traceAt(Init, Branch, Depth + 1), Name);
    if (Site)
      Chain = Branch;
    return Site;
  };
  // The object the member is read from decides: its own list, or none.
  if (Object) {
    const Expr *Init = Object->getInit();
    const auto *List =
        Init ? dyn_cast<InitListExpr>(Init->IgnoreImplicit()) : nullptr;
    return List ? FromList(List) : std::nullopt;
  }
  for (const InitListExpr *List :
       TU.findAll<InitListExpr>(initListExpr().bind("n")))
    if (auto Site = FromList(List))
      return Site;
  return std::nullopt;
}

std::optional<BatchSizeSite> BatchSizeTracer::traceConfigFallback(
    const CallExpr *Call, std::vector<UseStep> &Chain, int Depth) const {
  // yaml-cpp node["batch_size"].as<int>(64), toml++ and std::optional
  // value_or(64), nlohmann json config.value("batch_size", 64): the
  // literal is what the program uses where its configuration has no value.
  const auto *Member = dyn_cast<CXXMemberCallExpr>(Call);
  const FunctionDecl *Callee = Call->getDirectCallee();
  if (!Member || !Callee || !Callee->getDeclName().isIdentifier())
    return std::nullopt;
  llvm::StringRef Name = Callee->getName();
  const Expr *Fallback = nullptr;
  std::string Key;
  auto StringOf = [](const Expr *E) -> std::string {
    if (const auto *S = dyn_cast_or_null<StringLiteral>(stripValueWrappers(E)))
      return S->isOrdinary() ? S->getString().str() : "";
    return "";
  };
  // Whose method it is: a name alone would take a user's own as(2).
  const CXXRecordDecl *Class = Member->getRecordDecl();
  std::string ClassName = Class ? Class->getQualifiedNameAsString() : "";
  llvm::StringRef Of(ClassName);
  if (Name == "as" && Call->getNumArgs() == 1 && Of.starts_with("YAML::")) {
    Fallback = Call->getArg(0);
    if (const auto *Index = dyn_cast<CXXOperatorCallExpr>(
            stripValueWrappers(Member->getImplicitObjectArgument()));
        Index && Index->getOperator() == OO_Subscript &&
        Index->getNumArgs() == 2)
      Key = StringOf(Index->getArg(1));
  } else if (Name == "value_or" && Call->getNumArgs() == 1) {
    Fallback = Call->getArg(0); // std::optional, toml++, boost::optional
  } else if (Name == "value" && Call->getNumArgs() == 2 &&
             Of.contains_insensitive("json")) {
    Key = StringOf(Call->getArg(0));
    if (!Key.empty())
      Fallback = Call->getArg(1);
  }
  if (!Fallback || isa<CXXDefaultArgExpr>(Fallback))
    return std::nullopt;
  std::vector<UseStep> Branch = Chain;
  Branch.push_back(step("fallback of " + Name.str() + "(" +
                            (Key.empty() ? "" : "'" + Key + "', ") +
                            "...) here, where the configuration has no value",
                        Call->getBeginLoc()));
  auto Site = traceAt(Fallback, Branch, Depth + 1);
  if (!Site)
    return std::nullopt;
  Chain = Branch;
  if (isLiteralKind(Site->Kind))
    Site->Kind = BatchSizeKind::ConfigDefault;
  if (Site->Name.empty() && !Key.empty())
    Site->Name = Key;
  return Site;
}

std::optional<BatchSizeSite> BatchSizeTracer::traceConditional(
    const Expr *Cond, const Expr *True, const Expr *False,
    std::vector<UseStep> &Chain, int Depth) const {
  std::vector<UseStep> FalseChain = Chain, TrueChain = Chain;
  auto FromFalse = traceAt(False, FalseChain, Depth + 1);
  auto FromTrue =
      FromFalse ? std::nullopt : traceAt(True, TrueChain, Depth + 1);
  auto &Site = FromFalse ? FromFalse : FromTrue;
  if (!Site)
    return std::nullopt;
  Chain = FromFalse ? FalseChain : TrueChain;
  InputSources Inputs = inputSourcesOf(TU, Cond);
  InputSources Other = inputSourcesOf(TU, FromFalse ? True : False);
  if (Inputs.Env || Other.Env)
    Site->Kind = BatchSizeKind::EnvironmentDefault;
  else if (Inputs.Argv || Other.Argv)
    Site->Kind = BatchSizeKind::CommandLineDefault;
  return Site;
}

std::optional<BatchSizeSite>
BatchSizeTracer::traceCall(const CallExpr *Call, std::vector<UseStep> &Chain,
                           int Depth) const {
  const FunctionDecl *Callee = Call->getDirectCallee();
  if (!Callee)
    return std::nullopt;
  llvm::StringRef Name = Callee->getName();
  if (Callee->getDeclName().isIdentifier() && isNumberParser(Name) &&
      Call->getNumArgs() >= 1) {
    auto Site = traceAt(Call->getArg(0), Chain, Depth + 1);
    if (Site && isLiteralKind(Site->Kind))
      Site->Kind = BatchSizeKind::CommandLineDefault;
    if (!Site)
      if (std::string From = inputSourcesOf(TU, Call->getArg(0)).What;
          !From.empty())
        keepRuntimeRead(Call, From, Chain);
    return Site;
  }
  if (auto Site = traceConfigFallback(Call, Chain, Depth))
    return Site;
  // cxxopts: result["batch-size"].as<int>()
  if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call);
      Member && Callee->getDeclName().isIdentifier() && Name == "as") {
    const auto *Index = dyn_cast<CXXOperatorCallExpr>(
        stripValueWrappers(Member->getImplicitObjectArgument()));
    const CXXRecordDecl *Class = Member->getRecordDecl();
    bool FromYaml = Class && llvm::StringRef(Class->getQualifiedNameAsString())
                                 .starts_with("YAML::");
    const StringLiteral *Key = nullptr;
    if (Index && Index->getOperator() == OO_Subscript &&
        Index->getNumArgs() == 2)
      Key = dyn_cast<StringLiteral>(stripValueWrappers(Index->getArg(1)));
    if (!Key)
      return std::nullopt;
    if (FromYaml) {
      // config["batch_size"].as<int>(): no fallback in the source.
      keepRuntimeRead(
          Call, "configuration key '" + Key->getString().str() + "'", Chain);
      return std::nullopt;
    }
    Chain.push_back(step("read from command-line option '" +
                             Key->getString().str() + "' here",
                         Call->getBeginLoc()));
    return traceOptionDefault(Key->getString(), Chain);
  }
  return traceReturns(Call, Chain, Depth);
}

namespace {

/// Whether E reads a parameter of F other than argc and argv: what it
/// returns then depends on the caller's arguments, which one call's trace
/// does not follow.
bool usesCallersArgument(const Stmt *E, const FunctionDecl *F) {
  if (!E)
    return false;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E))
    if (const auto *Param = dyn_cast<ParmVarDecl>(Ref->getDecl());
        Param && Param->getDeclContext() == F && Param->getName() != "argc" &&
        Param->getName() != "argv")
      return true;
  return llvm::any_of(E->children(), [&](const Stmt *Child) {
    return usesCallersArgument(Child, F);
  });
}

} // namespace

std::optional<BatchSizeSite>
BatchSizeTracer::traceReturns(const CallExpr *Call, std::vector<UseStep> &Chain,
                              int Depth) const {
  // A function of the program's own: a getter (int64_t batch_size() {
  // return 64; }), or a reader of the command line or the environment
  // (readBatchSize(argc, argv)) whose returns are one default and reads.
  const FunctionDecl *Definition = Call->getDirectCallee()->getDefinition();
  if (!Definition || !TU.isUserCode(Definition->getLocation()) ||
      !Definition->getBody())
    return std::nullopt;
  auto Returns = TU.findAll<ReturnStmt>(
      returnStmt(hasAncestor(functionDecl(equalsNode(Definition)))).bind("n"));
  if (Returns.empty() || llvm::any_of(Returns, [&](const ReturnStmt *R) {
        return !R->getRetValue() ||
               usesCallersArgument(R->getRetValue(), Definition);
      }))
    return std::nullopt;
  std::string Returned =
      "returned by " + Definition->getQualifiedNameAsString() + "() here";
  if (Returns.size() == 1) {
    Chain.push_back(step(Returned, Returns[0]->getBeginLoc()));
    return traceAt(Returns[0]->getRetValue(), Chain, Depth + 1);
  }
  std::optional<BatchSizeSite> Default;
  std::vector<UseStep> DefaultChain;
  InputSources Reads;
  for (const ReturnStmt *R : Returns) {
    std::vector<UseStep> Steps = Chain;
    Steps.push_back(step(Returned, R->getBeginLoc()));
    InputSources Read = inputSourcesOf(TU, R->getRetValue());
    if (auto Site = traceAt(R->getRetValue(), Steps, Depth + 1)) {
      if (Default)
        return std::nullopt; // two defaults: which one runs is the input's
      Default = std::move(Site);
      DefaultChain = std::move(Steps);
    } else if (!Read.What.empty()) {
      Reads.add(Read);
    } else {
      return std::nullopt; // a return neither a default nor a read
    }
  }
  if (!Default) {
    keepRuntimeRead(Call, Reads.What, Chain);
    return std::nullopt;
  }
  Default->Kind = Reads.Env ? BatchSizeKind::EnvironmentDefault
                            : BatchSizeKind::CommandLineDefault;
  Chain = std::move(DefaultChain);
  return Default;
}

void BatchSizeTracer::keepRuntimeRead(const Expr *Read, std::string ReadFrom,
                                      const std::vector<UseStep> &Chain) const {
  if (RuntimeRead || Read->getBeginLoc().isMacroID() ||
      Read->getEndLoc().isMacroID())
    return;
  BatchSizeSite Site;
  Site.Kind = BatchSizeKind::RuntimeRead;
  Site.Literal = TU.spanOf(Read->getSourceRange());
  Site.Chain = Chain;
  Site.Chain.push_back(step("read at run time from " + ReadFrom +
                                " here, with no default in the source",
                            Read->getBeginLoc()));
  Site.ReadFrom = std::move(ReadFrom);
  RuntimeRead = std::move(Site);
}

std::optional<BatchSizeSite> BatchSizeTracer::takeRuntimeRead() const {
  std::optional<BatchSizeSite> Read = std::move(RuntimeRead);
  RuntimeRead.reset();
  return Read;
}

std::vector<OptionDefault> BatchSizeTracer::optionDefaults() const {
  std::vector<OptionDefault> Result;
  auto Defaults = TU.findAll<CXXMemberCallExpr>(
      cxxMemberCallExpr(callee(cxxMethodDecl(hasName("default_value"))))
          .bind("n"));
  for (const CXXMemberCallExpr *Default : Defaults) {
    if (Default->getNumArgs() < 1)
      continue;
    // Up to the adder call: ("b,batch-size", "help",
    // value<int>()->default_value("32")) of cxxopts, or ("batch_size",
    // po::value<size_t>()->default_value(64), "help") of Boost.
    DynTypedNode Node = DynTypedNode::create(*Default);
    const CXXOperatorCallExpr *Adder = nullptr;
    for (int Up = 0; Up < 8 && !Adder; ++Up) {
      auto Parents = TU.Ctx.getParents(Node);
      if (Parents.empty())
        break;
      Node = Parents[0];
      if (const auto *Op = Node.get<CXXOperatorCallExpr>();
          Op && Op->getOperator() == OO_Call && Op->getNumArgs() >= 2)
        Adder = Op;
    }
    if (!Adder)
      continue;
    const auto *Names =
        dyn_cast<StringLiteral>(stripValueWrappers(Adder->getArg(1)));
    if (!Names)
      continue;
    OptionDefault Option;
    llvm::SmallVector<llvm::StringRef, 2> Parts;
    Names->getString().split(Parts, ',');
    for (llvm::StringRef Part : Parts)
      Option.Keys.push_back(Part.trim().str());
    const Expr *Value = stripValueWrappers(Default->getArg(0));
    std::vector<UseStep> Chain{step("default of command-line option '" +
                                        Names->getString().str() + "' here",
                                    Value->getBeginLoc())};
    std::optional<BatchSizeSite> Site;
    if (const auto *String = dyn_cast<StringLiteral>(Value))
      Site = digitsInString(String, Chain);
    else if ((Site = literal(Value, Chain)))
      Site->Kind = BatchSizeKind::CommandLineDefault;
    if (!Site)
      continue;
    Option.Site = std::move(*Site);
    Result.push_back(std::move(Option));
  }
  return Result;
}

std::optional<BatchSizeSite>
BatchSizeTracer::traceOptionDefault(llvm::StringRef Key,
                                    std::vector<UseStep> &Chain) const {
  for (OptionDefault &Option : optionDefaults()) {
    if (!llvm::is_contained(Option.Keys, Key))
      continue;
    Chain.insert(Chain.end(), Option.Site.Chain.begin(),
                 Option.Site.Chain.end());
    Option.Site.Chain = Chain;
    Option.Site.Name = Key.str();
    return Option.Site;
  }
  // Declared in another source (options parsed in main.cpp, read in
  // train.cpp): the merge fills it in from the program's option defaults.
  BatchSizeSite Pending;
  Pending.Name = Key.str();
  Pending.Kind = BatchSizeKind::CommandLineDefault;
  Pending.Chain = Chain;
  return Pending;
}

} // namespace skyline::frontend
