//===- ModuleFinder.cpp - Module constructions, names and calls -----------===//
//
// A module is anything whose type is a torch::nn::ModuleHolder (Linear,
// TORCH_MODULE(X)) or derives from torch::nn::Module. Its name comes from the
// context of its construction: register_module's string, the member or
// variable it initializes, or its position in an enclosing Sequential.
//
//===----------------------------------------------------------------------===//

#include "Finders.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "llvm/Support/Path.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace skyline::frontend {
namespace {

std::string idOf(const TUContext &TU, SourceLocation Loc) {
  SourceLocation File = TU.SM.getExpansionLoc(Loc);
  return TU.fileOf(File) + "@" + std::to_string(TU.SM.getFileOffset(File));
}

bool isRegisterModule(const CallExpr *Call) {
  const auto *Member = dyn_cast<CXXMemberCallExpr>(Call);
  if (!Member || !Member->getMethodDecl())
    return false;
  const CXXMethodDecl *Method = Member->getMethodDecl();
  return Method->getName() == "register_module" &&
         derivesFrom(Method->getParent(), "torch::nn::Module");
}

std::string stringLiteralValue(const Expr *E) {
  if (const auto *Literal =
          dyn_cast_or_null<StringLiteral>(stripValueWrappers(E)))
    return Literal->getString().str();
  return "";
}

/// Whether a construction merely wraps an existing module or none at all:
/// Linear(nullptr), Linear(std::shared_ptr<LinearImpl>).
bool isEmptyOrWrapping(const CXXConstructExpr *E) {
  if (E->getConstructor()->isCopyOrMoveConstructor())
    return true;
  if (E->getNumArgs() == 0)
    return false;
  QualType ArgType = E->getArg(0)->getType();
  if (ArgType->isNullPtrType())
    return true;
  const CXXRecordDecl *RD = recordOf(ArgType);
  return RD && RD->getQualifiedNameAsString() == "std::shared_ptr";
}

/// The class a ModuleHolder subclass holds (MULTI30KImpl of MULTI30K), or
/// null where T is no holder or the held class is not known.
const CXXRecordDecl *heldClass(QualType T) {
  const CXXRecordDecl *RD = recordOf(T);
  while (RD && RD->hasDefinition()) {
    if (const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(RD);
        Spec && Spec->getQualifiedNameAsString() == "torch::nn::ModuleHolder")
      return Spec->getTemplateArgs().size() == 1 &&
                     Spec->getTemplateArgs()[0].getKind() ==
                         TemplateArgument::Type
                 ? recordOf(Spec->getTemplateArgs()[0].getAsType())
                 : nullptr;
    const CXXRecordDecl *Next = nullptr;
    for (const CXXBaseSpecifier &Base : RD->getDefinition()->bases())
      if (derivesFrom(recordOf(Base.getType()), "torch::nn::ModuleHolder"))
        Next = recordOf(Base.getType());
    RD = Next;
  }
  return nullptr;
}

/// A module the program builds: isModuleLike, less a TORCH_MODULE holder of
/// a class that is not a torch::nn::Module (a dataset's MULTI30K("./data")).
bool isLayer(QualType T) {
  if (!isModuleLike(T))
    return false;
  const CXXRecordDecl *Held = heldClass(T);
  return !Held || !Held->hasDefinition() ||
         derivesFrom(Held, "torch::nn::Module");
}

/// torch::nn::NamedAnyModule: one {"name", module} of a Sequential's list.
bool isNamedChild(QualType T) {
  const CXXRecordDecl *RD = recordOf(T);
  return RD && RD->getQualifiedNameAsString() == "torch::nn::NamedAnyModule";
}

bool isSmartPointer(QualType T) {
  const CXXRecordDecl *RD = recordOf(T);
  if (!RD)
    return false;
  std::string Name = RD->getQualifiedNameAsString();
  return Name == "std::shared_ptr" || Name == "std::unique_ptr";
}

/// What F's own returns give back, not a lambda's: a walk of the body only,
/// since this runs for every call of a function returning a module.
llvm::SmallVector<const Expr *, 4> returnedValues(const FunctionDecl *F) {
  llvm::SmallVector<const Expr *, 4> Values;
  const FunctionDecl *Definition = F->getDefinition();
  if (!Definition || !Definition->getBody())
    return Values;
  llvm::SmallVector<const Stmt *, 32> Work{Definition->getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S || isa<LambdaExpr>(S))
      continue;
    if (const auto *Return = dyn_cast<ReturnStmt>(S))
      if (Return->getRetValue())
        Values.push_back(Return->getRetValue());
    Work.append(S->child_begin(), S->child_end());
  }
  return Values;
}

/// The local a return gives back (`return layers;`, `return
/// std::move(layers);`), or null.
const VarDecl *returnedLocal(const Expr *E) {
  E = stripValueWrappers(E);
  if (const auto *Call = dyn_cast_or_null<CallExpr>(E);
      Call && Call->getNumArgs() == 1 && Call->getDirectCallee() &&
      Call->getDirectCallee()->getQualifiedNameAsString() == "std::move")
    E = stripValueWrappers(Call->getArg(0));
  const auto *Ref = dyn_cast_or_null<DeclRefExpr>(E);
  const auto *Var = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  return Var && Var->hasLocalStorage() && !isa<ParmVarDecl>(Var) ? Var
                                                                 : nullptr;
}

/// Whether a return gives back a module the function builds: a construction
/// (`return Conv2d(...)`), a factory's call, or a local.
bool returnsNewModule(const Expr *E) {
  while (E) {
    E = E->IgnoreImplicit();
    if (const auto *Cast = dyn_cast<CXXFunctionalCastExpr>(E)) {
      E = Cast->getSubExpr();
      continue;
    }
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
      if (!Construct->getConstructor()->isCopyOrMoveConstructor())
        return true;
      E = Construct->getNumArgs() ? Construct->getArg(0) : nullptr;
      continue;
    }
    if (returnedLocal(E))
      return true;
    if (isa<CallExpr>(E))
      return !isa<CXXOperatorCallExpr>(E);
    return false;
  }
  return false;
}

/// Whether a function's result is a module it builds (conv3x3() returning
/// Conv2d(...), make_layer() returning a local Sequential) rather than one it
/// holds (a getter). Without a visible body, a function returning a module
/// by value is taken for a factory.
bool isModuleFactory(const FunctionDecl *F) {
  QualType Result = F->getReturnType();
  if (Result->isReferenceType() || Result->isPointerType() || !isLayer(Result))
    return false;
  const FunctionDecl *Definition = F->getDefinition();
  if (!Definition || !Definition->getBody())
    return true;
  return llvm::any_of(returnedValues(F), returnsNewModule);
}

/// Whether Var is the module a factory builds and returns (`Sequential
/// layers; ... return layers;`): the factory's calls are its sites. Not in a
/// lambda, whose calls are not followed.
bool isFactoryLocal(const VarDecl *Var) {
  const auto *F = dyn_cast_or_null<FunctionDecl>(Var->getDeclContext());
  if (!F || !Var->hasLocalStorage() || isa<ParmVarDecl>(Var))
    return false;
  if (const auto *Method = dyn_cast<CXXMethodDecl>(F);
      Method && Method->getParent()->isLambda())
    return false;
  if (!isModuleFactory(F))
    return false;
  return llvm::any_of(returnedValues(F), [&](const Expr *E) {
    const VarDecl *Returned = returnedLocal(E);
    return Returned && Returned->getCanonicalDecl() == Var->getCanonicalDecl();
  });
}

std::string argumentsText(const TUContext &TU, ArrayRef<const Expr *> Args) {
  SourceLocation Begin, End;
  for (const Expr *Arg : Args) {
    if (isa<CXXDefaultArgExpr>(Arg) || Arg->getBeginLoc().isInvalid())
      continue;
    if (Begin.isInvalid())
      Begin = Arg->getBeginLoc();
    End = Arg->getEndLoc();
  }
  if (Begin.isInvalid())
    return "";
  return TU.textOf(SourceRange(Begin, End));
}

/// seq->push_back(m), list->push_back(m), dict->insert("name", m): a child
/// added to a container module.
bool isAppend(const CXXMemberCallExpr *Call) {
  const CXXMethodDecl *Method = Call->getMethodDecl();
  if (!Method || !Method->getDeclName().isIdentifier())
    return false;
  return Method->getName() == "push_back" ||
         (Method->getName() == "insert" && Call->getNumArgs() == 2);
}

/// The element type of a standard container (std::vector<Block>), or null.
QualType elementType(const CXXRecordDecl *Container) {
  const auto *Spec =
      dyn_cast_or_null<ClassTemplateSpecializationDecl>(Container);
  if (!Spec || !Spec->isInStdNamespace() ||
      Spec->getTemplateArgs().size() < 1 ||
      Spec->getTemplateArgs()[0].getKind() != TemplateArgument::Type)
    return {};
  return Spec->getTemplateArgs()[0].getAsType();
}

/// A module added to a standard container of modules: layers.push_back(m),
/// layers.emplace_back(...).
bool isAddToLayerContainer(const CXXMemberCallExpr *Call) {
  const CXXMethodDecl *Method = Call->getMethodDecl();
  if (!Method || !Method->getDeclName().isIdentifier() ||
      !llvm::is_contained({"push_back", "emplace_back", "push_front",
                           "emplace_front", "insert", "emplace"},
                          Method->getName()))
    return false;
  QualType Element = elementType(Method->getParent());
  return !Element.isNull() && isLayer(Element);
}

class ConstructionContext {
public:
  ConstructionContext(const TUContext &TU, RawConstruction &Out)
      : TU(TU), Out(Out) {}

  /// Walks up from the construction to what names it.
  void resolve(const Expr *Construction) {
    DynTypedNode Node = DynTypedNode::create(*Construction);
    const Expr *Child = Construction;
    while (Child) {
      auto Parents = TU.Ctx.getParents(Node);
      if (Parents.empty())
        return;
      Node = Parents[0];
      const auto *S = Node.get<Stmt>();
      if (!S) {
        ownerFromDeclaration(Node, Child);
        return;
      }
      Child = stepUp(S, Child);
    }
  }

private:
  /// A declaration ends the walk: the variable or member the construction
  /// initializes names it.
  void ownerFromDeclaration(const DynTypedNode &Node, const Expr *Child) {
    if (const auto *Var = Node.get<VarDecl>()) {
      setOwner(Var);
      return;
    }
    if (const auto *Field = Node.get<FieldDecl>()) { // default member init
      setOwner(Field);
      // A class template's pattern and its instantiations share the
      // initializer: one site, keyed by the member as the implicit one is.
      Out.Id = declKey(TU, Field);
      return;
    }
    if (const auto *Ctor = Node.get<CXXConstructorDecl>())
      ownerFromInitializer(Ctor, Child);
  }

  /// The parent map skips a constructor's initializer: find which one holds
  /// Child.
  void ownerFromInitializer(const CXXConstructorDecl *Ctor, const Expr *Child) {
    for (const CXXCtorInitializer *Init : Ctor->inits()) {
      if (Init->getInit() != Child)
        continue;
      if (!Init->isMemberInitializer()) {
        Out.Skip = true; // a base class's construction
      } else {
        setOwner(Init->getMember());
        if (!Init->isWritten()) // default-constructed: point at the member
          Out.ImplicitMember = Init->getMember();
      }
    }
  }

  /// One step of the walk through the statement S above Child: the
  /// expression the walk goes on from, or null where S ends it (having
  /// said what it could of the name).
  const Expr *stepUp(const Stmt *S, const Expr *Child) {
    if (const auto *Call = dyn_cast<CallExpr>(S);
        Call && isRegisterModule(Call)) {
      if (Call->getNumArgs() >= 2) {
        Out.RegisteredName = stringLiteralValue(Call->getArg(0));
        Out.RegisteredAt = TU.where(Call->getBeginLoc());
      }
      return Call; // the result may still be assigned to a member
    }
    if (isa<ReturnStmt>(S)) {
      noteFactoryReturn(S);
      return nullptr;
    }
    if (const auto *Named = dyn_cast<CXXConstructExpr>(S);
        Named && isNamedChild(Named->getType()) && Named->getNumArgs() >= 1) {
      // Sequential({{"conv", Conv2d(...)}}): the child's own name.
      Out.ChildName = stringLiteralValue(Named->getArg(0));
      return Named;
    }
    if (const auto *List = dyn_cast<InitListExpr>(S)) {
      notePlaceInList(List, Child);
      return List;
    }
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(S)) {
      if (isEmptyOrWrapping(Construct) ||
          isSmartPointer(Construct->getType())) // copies, shared_ptr(new)
        return Construct;
      if (isModuleHolder(Construct->getType())) // a Sequential's child
        noteSequentialParent(Construct, Child);
      return nullptr;
    }
    if (const auto *Push = dyn_cast<CXXMemberCallExpr>(S);
        Push && isAppend(Push) &&
        isModuleLike(Push->getImplicitObjectArgument()->getType())) {
      noteAppendedChild(Push);
      return nullptr;
    }
    if (const auto *Add = dyn_cast<CXXMemberCallExpr>(S);
        Add && isAddToLayerContainer(Add)) {
      // extra.push_back(Linear(...)) into a std::vector<Linear>: named after
      // the container (its registration's name is computed, if any).
      if (const ValueDecl *Container =
              referencedDecl(Add->getImplicitObjectArgument()))
        Out.OwnerName = Container->getNameAsString();
      return nullptr;
    }
    if (const auto *Assign = dyn_cast<BinaryOperator>(S);
        Assign && Assign->isAssignmentOp()) {
      setOwner(referencedDecl(Assign->getLHS()));
      return nullptr;
    }
    if (const auto *Assign = dyn_cast<CXXOperatorCallExpr>(S);
        Assign && Assign->getOperator() == OO_Equal) {
      setOwner(referencedDecl(Assign->getArg(0)));
      return nullptr;
    }
    if (isa<Expr>(S) && !isa<CallExpr>(S) && !isa<CXXConstructExpr>(S))
      return cast<Expr>(S); // casts, temporaries, parens
    return nullptr;
  }

  /// Built by a factory: its calls are the sites.
  void noteFactoryReturn(const Stmt *Return) {
    const auto *F =
        dyn_cast_or_null<CXXMethodDecl>(TU.enclosingFunction(Return));
    Out.Returned = !(F && F->getParent()->isLambda()) &&
                   TU.enclosingFunction(Return) &&
                   isModuleFactory(TU.enclosingFunction(Return));
  }

  /// Child's place in a braced list: its name where the list is a pair
  /// {"conv", Conv2d(...)}, else its index among named children.
  void notePlaceInList(const InitListExpr *List, const Expr *Child) {
    std::optional<unsigned> Index;
    for (unsigned I = 0; I < List->getNumInits(); ++I)
      if (List->getInit(I)->IgnoreImplicit() == Child->IgnoreImplicit())
        Index = I;
    // The pair {"conv", Conv2d(...)} as written (the parent map may
    // show it rather than its NamedAnyModule construction).
    std::string Name;
    if (Index == 1u && List->getNumInits() == 2 && Out.ChildName.empty())
      Name = stringLiteralValue(List->getInit(0));
    if (!Name.empty())
      Out.ChildName = Name;
    else if (Index)
      ListIndex = *Index;
  }

  /// Child is an argument of a Sequential's construction: its parent and
  /// its place there.
  void noteSequentialParent(const CXXConstructExpr *Sequential,
                            const Expr *Child) {
    Out.ParentRef = idOf(TU, Sequential->getBeginLoc());
    Out.ChildIndex = argIndex(Sequential->arguments(), Child);
    if (!Out.ChildName.empty() && ListIndex >= 0)
      Out.ChildIndex = ListIndex;
  }

  /// Appended to a Sequential (seq->push_back(...)), or to the module
  /// itself where it derives from one.
  void noteAppendedChild(const CXXMemberCallExpr *Push) {
    const Expr *Object = stripValueWrappers(Push->getImplicitObjectArgument());
    if (Push->getNumArgs() == 2) // push_back("conv", Conv2d(...))
      Out.ChildName = stringLiteralValue(Push->getArg(0));
    if (const ValueDecl *Seq = referencedDecl(Object)) {
      Out.ParentRef = declKey(TU, Seq);
      Out.AppendedChild = true;
    } else if (isa<CXXThisExpr>(Object)) {
      // struct NetImpl : SequentialImpl { NetImpl() { push_back(...); } }:
      // the children of the module itself, named 0, 1, ... as in PyTorch.
      Out.ParentRef = ThisParentPrefix.str() +
                      Push->getMethodDecl()->getParent()->getNameAsString();
      if (const auto *Method =
              dyn_cast_or_null<CXXMethodDecl>(TU.enclosingFunction(Push)))
        Out.ParentRef = ThisParentPrefix.str() +
                        Method->getParent()->getQualifiedNameAsString();
      Out.AppendedChild = true;
    }
  }

  static int argIndex(CXXConstructExpr::const_arg_range Args,
                      const Expr *Child) {
    int Index = 0;
    for (const Expr *Arg : Args) {
      if (Arg == Child ||
          stripValueWrappers(Arg) == stripValueWrappers(Child) ||
          Arg->getSourceRange() == Child->getSourceRange())
        return Index;
      ++Index;
    }
    return -1;
  }

  void setOwner(const ValueDecl *D) {
    if (!D)
      return;
    Out.OwnerKey = declKey(TU, D);
    Out.OwnerName = D->getNameAsString();
    if (const auto *Var = dyn_cast<VarDecl>(D); Var && isFactoryLocal(Var))
      Out.Returned = true;
  }

  const TUContext &TU;
  RawConstruction &Out;
  int ListIndex = -1; // the child's place in a braced list of named ones
};

RawConstruction describe(const TUContext &TU, const Expr *E, QualType Type,
                         ArrayRef<const Expr *> Args) {
  RawConstruction Raw;
  Raw.Id = idOf(TU, E->getBeginLoc());
  Raw.ExprId = Raw.Id;
  Raw.NumArgs = Args.size();
  Raw.Site.Type = moduleTypeName(Type);
  Raw.Site.Options = argumentsText(TU, Args);
  Raw.Site.File = TU.fileOf(E->getBeginLoc());
  Raw.Site.Line = TU.lineOf(E->getBeginLoc());
  Raw.Site.Column = TU.columnOf(E->getBeginLoc());
  ConstructionContext(TU, Raw).resolve(E);
  if (const FieldDecl *Member = Raw.ImplicitMember) {
    // Every constructor builds it the same way: one site, at the member.
    Raw.Id = declKey(TU, Member);
    Raw.Site.File = TU.fileOf(Member->getLocation());
    Raw.Site.Line = TU.lineOf(Member->getLocation());
    Raw.Site.Column = TU.columnOf(Member->getLocation());
  }
  return Raw;
}

/// blocks.emplace_back(in, out) into a std::vector<Block>: the container
/// builds the module from its options; nothing in the program's code names
/// its type at the call.
void findEmplacedConstructions(const TUContext &TU, ModuleFindings &Out) {
  auto Emplace =
      cxxMemberCallExpr(
          callee(cxxMethodDecl(hasAnyName("emplace_back", "emplace"))))
          .bind("n");
  for (const auto *Call : TU.findAll<CXXMemberCallExpr>(Emplace)) {
    QualType Element = elementType(Call->getMethodDecl()->getParent());
    if (Element.isNull() || !isLayer(Element))
      continue;
    llvm::SmallVector<const Expr *, 4> Args(Call->arguments());
    // A module written out (emplace_back(Block(...))) or copied is found as
    // such; emplace_back(nullptr) builds nothing.
    if (Args.size() == 1 && (isModuleLike(Args[0]->getType()) ||
                             Args[0]->getType()->isNullPtrType()))
      continue;
    RawConstruction Raw = describe(TU, Call, Element, Args);
    if (Raw.OwnerName.empty())
      if (const ValueDecl *Container =
              referencedDecl(Call->getImplicitObjectArgument()))
        Raw.OwnerName = Container->getNameAsString();
    Out.Constructions.push_back(std::move(Raw));
  }
}

/// The children of a module a factory builds in a local and returns (a
/// make_layer's `layers->push_back(Block(...))`): the local is no site (the
/// factory's calls are), so they are named after it here, `layers.0`, as
/// the merger would name a Sequential's children.
void nameChildrenOfFactoryLocals(std::vector<RawConstruction> &Built,
                                 const std::vector<RawConstruction> &Locals) {
  std::map<std::string, const RawConstruction *> ByRef;
  for (const RawConstruction &Local : Locals) {
    ByRef.emplace(Local.OwnerKey, &Local);
    ByRef.emplace(Local.ExprId, &Local);
  }
  // A class template's factory is seen in its pattern and each
  // instantiation: count each child once, in the order of the source.
  std::vector<RawConstruction *> Children;
  std::set<std::string> Seen;
  for (RawConstruction &C : Built)
    if (!C.ParentRef.empty() && ByRef.count(C.ParentRef) &&
        Seen.insert(C.Id).second)
      Children.push_back(&C);
  llvm::stable_sort(
      Children, [](const RawConstruction *A, const RawConstruction *B) {
        return std::tie(A->Site.File, A->Site.Line, A->Site.Column) <
               std::tie(B->Site.File, B->Site.Line, B->Site.Column);
      });
  std::map<const RawConstruction *, int> Appended;
  std::map<std::string, std::string> NameById;
  for (RawConstruction *C : Children) {
    const RawConstruction *Local = ByRef[C->ParentRef];
    int Index = C->ChildIndex;
    if (C->AppendedChild)
      Index = Local->NumArgs + Appended[Local]++;
    NameById[C->Id] =
        Local->OwnerName + "." +
        (C->ChildName.empty() ? std::to_string(Index) : C->ChildName);
  }
  for (RawConstruction &C : Built)
    if (auto It = NameById.find(C.Id); It != NameById.end()) {
      C.OwnerName = It->second;
      C.OwnerKey.clear(); // named by its place, not by a variable
      C.ParentRef.clear();
      C.AppendedChild = false;
    }
}

void findConstructions(const TUContext &TU, ModuleFindings &Out) {
  std::vector<RawConstruction> FactoryLocals;
  auto Keep = [&](RawConstruction Raw) {
    if (Raw.Skip)
      return;
    if (!Raw.Returned)
      Out.Constructions.push_back(std::move(Raw));
    else if (!Raw.OwnerKey.empty())
      FactoryLocals.push_back(std::move(Raw));
  };
  for (const auto *E :
       TU.findAll<CXXConstructExpr>(cxxConstructExpr().bind("n"))) {
    // An empty shared_ptr<NetImpl> member builds nothing; `new NetImpl`
    // inside one is the construction.
    if (!isLayer(E->getType()) || isEmptyOrWrapping(E) ||
        isSmartPointer(E->getType()))
      continue;
    llvm::SmallVector<const Expr *, 4> Args(E->arguments());
    Keep(describe(TU, E, E->getType(), Args));
  }
  // conv1(conv3x3(in, out)): each call of a factory is a construction, named
  // by what it initializes; the one in the factory's return (or the local
  // it returns) is not.
  for (const auto *Call : TU.findAll<CallExpr>(callExpr().bind("n"))) {
    const FunctionDecl *Callee = Call->getDirectCallee();
    if (isa<CXXOperatorCallExpr>(Call) || !Callee ||
        !TU.isUserCode(Callee->getLocation()) || !isModuleFactory(Callee))
      continue;
    RawConstruction Raw = describe(TU, Call, Call->getType(), {});
    Raw.Site.Options = TU.textOf(Call->getSourceRange());
    Keep(std::move(Raw));
  }
  auto MakeShared =
      callExpr(callee(functionDecl(hasName("::std::make_shared")))).bind("n");
  for (const auto *Call : TU.findAll<CallExpr>(MakeShared)) {
    if (!isLayer(Call->getType()))
      continue;
    llvm::SmallVector<const Expr *, 4> Args(Call->arguments());
    Keep(describe(TU, Call, Call->getType(), Args));
  }
  findEmplacedConstructions(TU, Out);
  nameChildrenOfFactoryLocals(Out.Constructions, FactoryLocals);
}

void findRegistrations(const TUContext &TU, ModuleFindings &Out) {
  auto Register =
      cxxMemberCallExpr(callee(cxxMethodDecl(hasName("register_module"))))
          .bind("n");
  for (const auto *Call : TU.findAll<CXXMemberCallExpr>(Register)) {
    if (!isRegisterModule(Call) || Call->getNumArgs() < 2)
      continue;
    // register_module("drop", Dropout(p)) names the module it builds, found
    // as a construction; p (through the holder's conversion) is no module.
    const ValueDecl *Target = referencedDecl(Call->getArg(1));
    if (!Target || !isLayer(Target->getType()))
      continue;
    RawRegistration Registration{declKey(TU, Target),
                                 stringLiteralValue(Call->getArg(0)),
                                 TU.where(Call->getBeginLoc()),
                                 {}};
    Registration.Site.Type = moduleTypeName(Target->getType());
    // Where it gets its value: a member's initializer (downsampler(down)),
    // else the registration itself.
    SourceLocation At = Call->getBeginLoc();
    if (const auto *Field = dyn_cast<FieldDecl>(Target))
      for (const CXXCtorInitializer *Init : memberInitializers(Field))
        if (TU.isUserCode(Init->getSourceLocation())) {
          At = Init->getSourceLocation();
          Registration.Site.Options =
              TU.textOf(Init->getInit()->getSourceRange());
        }
    Registration.Site.File = TU.fileOf(At);
    Registration.Site.Line = TU.lineOf(At);
    Registration.Site.Column = TU.columnOf(At);
    Out.Registrations.push_back(std::move(Registration));
  }
}

void addCall(const TUContext &TU, const Expr *Call, const Expr *Object,
             ModuleFindings &Out) {
  RawModuleCall Raw;
  if (const ValueDecl *Callee = referencedDecl(Object)) {
    Raw.CalleeKey = declKey(TU, Callee);
    Raw.FallbackName = Callee->getNameAsString();
  } else {
    Raw.FallbackName = TU.textOf(Object->getSourceRange());
  }
  SourceSpan Span = TU.spanOf(Call->getSourceRange());
  Raw.Call.File = Span.File;
  Raw.Call.Line = TU.lineOf(Call->getBeginLoc());
  Raw.Call.Column = TU.columnOf(Call->getBeginLoc());
  Raw.Call.Offset = Span.Offset;
  Raw.Call.Length = Span.Length;
  Raw.Call.InMacro = Call->getBeginLoc().isMacroID();
  Raw.Call.UsesBinding = namesBinding(Call);
  Raw.Call.Callee = repeatableText(TU, Object);
  Out.Calls.push_back(std::move(Raw));
}

void findCalls(const TUContext &TU, ModuleFindings &Out) {
  auto Forward =
      cxxMemberCallExpr(callee(cxxMethodDecl(hasName("forward")))).bind("n");
  for (const auto *Call : TU.findAll<CXXMemberCallExpr>(Forward)) {
    const Expr *Object = Call->getImplicitObjectArgument();
    // A module's forward calling another overload of its own (`return
    // forward(x, initHidden())`) is part of its own call, not another
    // module's.
    if (isa<CXXThisExpr>(Object->IgnoreParenImpCasts()))
      continue;
    QualType Type = Object->getType();
    if (Type->isPointerType())
      Type = Type->getPointeeType();
    if (!isModuleLike(Type))
      continue;
    if (const auto *Arrow =
            dyn_cast<CXXOperatorCallExpr>(stripValueWrappers(Object)))
      Object = Arrow->getArg(0); // conv1->forward: name conv1, not its Impl
    addCall(TU, Call, Object, Out);
  }
  auto Apply = cxxOperatorCallExpr(hasOverloadedOperatorName("()")).bind("n");
  for (const auto *Call : TU.findAll<CXXOperatorCallExpr>(Apply))
    if (Call->getNumArgs() >= 1 && isModuleHolder(Call->getArg(0)->getType()))
      addCall(TU, Call, Call->getArg(0), Out);
}

/// The program's module classes by whether a constructor of theirs is
/// defined in this source: one defined in a source not analyzed (a class
/// of a library target) registers layers no one sees.
void findModuleClasses(const TUContext &TU, ModuleFindings &Out) {
  for (const auto *Class :
       TU.findAll<CXXRecordDecl>(cxxRecordDecl(isDefinition()).bind("n"))) {
    if (!TU.isUserCode(Class->getLocation()) ||
        !derivesFrom(Class, "torch::nn::Module"))
      continue;
    bool Declared = false;
    bool Defined = false;
    for (const CXXConstructorDecl *Constructor : Class->ctors()) {
      if (Constructor->isImplicit())
        continue;
      Declared = true;
      Defined |= Constructor->hasBody();
    }
    std::string Name = Class->getQualifiedNameAsString();
    if (Defined)
      Out.ClassesDefined.insert(Name);
    else if (Declared)
      Out.ClassesDeclaredOnly.emplace(
          Name,
          llvm::sys::path::filename(TU.fileOf(Class->getLocation())).str() +
              ":" + std::to_string(TU.lineOf(Class->getLocation())));
  }
}

} // namespace

ModuleFindings findModules(const TUContext &TU) {
  ModuleFindings Out;
  findConstructions(TU, Out);
  findRegistrations(TU, Out);
  findCalls(TU, Out);
  findModuleClasses(TU, Out);
  return Out;
}

} // namespace skyline::frontend
