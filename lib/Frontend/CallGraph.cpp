//===- CallGraph.cpp - Which functions the program runs -------------------===//
//
// Each translation unit's references from one function to another, keyed by
// USR so that a call in main.cpp joins the definition in train.cpp. Only
// free functions are ever judged not to run: a member function may be
// called by LibTorch (a dataset's get()), through a base class or as a
// functor, which no reference in the program's own code shows.
//
//===----------------------------------------------------------------------===//

#include "Finders.h"

#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Index/USRGeneration.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace skyline::frontend {
namespace {

/// Free functions and static members: what no object's use can call.
bool isFreeFunction(const FunctionDecl *F) {
  if (const auto *Method = dyn_cast<CXXMethodDecl>(F))
    return Method->isStatic();
  return true;
}

/// Every function S names: called, or taken by address to be called later
/// (`std::thread(train)`); each candidate of a call not yet resolved in a
/// template.
void namedFunctions(const Stmt *S, std::set<std::string> &Out) {
  if (!S)
    return;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(S)) {
    if (const auto *F = dyn_cast<FunctionDecl>(Ref->getDecl()))
      Out.insert(functionKey(F));
  } else if (const auto *Member = dyn_cast<MemberExpr>(S)) {
    if (const auto *F = dyn_cast<FunctionDecl>(Member->getMemberDecl()))
      Out.insert(functionKey(F));
  } else if (const auto *Lookup = dyn_cast<OverloadExpr>(S)) {
    for (const NamedDecl *D : Lookup->decls())
      if (const auto *F = dyn_cast<FunctionDecl>(D->getUnderlyingDecl()))
        Out.insert(functionKey(F));
      else if (const auto *T =
                   dyn_cast<FunctionTemplateDecl>(D->getUnderlyingDecl()))
        Out.insert(functionKey(T->getTemplatedDecl()));
  }
  for (const Stmt *Child : S->children())
    namedFunctions(Child, Out);
}

} // namespace

std::string functionKey(const FunctionDecl *F) {
  if (const FunctionDecl *Pattern = F->getTemplateInstantiationPattern())
    F = Pattern;
  F = F->getCanonicalDecl();
  llvm::SmallString<128> USR;
  if (index::generateUSRForDecl(F, USR))
    return F->getQualifiedNameAsString();
  return std::string(USR);
}

CallGraph findCalls(const TUContext &TU) {
  CallGraph Graph;
  for (const FunctionDecl *F :
       TU.findAll<FunctionDecl>(functionDecl(isDefinition()).bind("n"))) {
    if (!F->hasBody())
      continue;
    std::string Key = functionKey(F);
    if (F->isMain())
      Graph.HasMain = true;
    if (F->isMain() || !isFreeFunction(F))
      Graph.Roots.insert(Key);
    else
      Graph.FreeFunctions[Key] = F->getQualifiedNameAsString();
    namedFunctions(F->getBody(), Graph.References[Key]);
    if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(F))
      for (const CXXCtorInitializer *Init : Ctor->inits())
        namedFunctions(Init->getInit(), Graph.References[Key]);
  }
  // A global's initializer runs before main: what it names runs too.
  std::set<std::string> Named;
  for (const VarDecl *Var :
       TU.findAll<VarDecl>(varDecl(hasGlobalStorage()).bind("n")))
    if (!Var->isStaticLocal())
      namedFunctions(Var->getInit(), Named);
  Graph.Roots.insert(Named.begin(), Named.end());
  return Graph;
}

void CallGraph::add(const CallGraph &Other) {
  for (const auto &[Key, Callees] : Other.References)
    References[Key].insert(Callees.begin(), Callees.end());
  Roots.insert(Other.Roots.begin(), Other.Roots.end());
  FreeFunctions.insert(Other.FreeFunctions.begin(), Other.FreeFunctions.end());
  HasMain |= Other.HasMain;
  Reached.reset();
}

bool CallGraph::reaches(llvm::StringRef Key) const {
  if (!HasMain || Key.empty() || !FreeFunctions.count(Key.str()))
    return true;
  if (!Reached) {
    Reached.emplace();
    std::vector<std::string> Work(Roots.begin(), Roots.end());
    while (!Work.empty()) {
      std::string Next = std::move(Work.back());
      Work.pop_back();
      if (!Reached->insert(Next).second)
        continue;
      if (auto It = References.find(Next); It != References.end())
        Work.insert(Work.end(), It->second.begin(), It->second.end());
    }
  }
  return Reached->count(Key.str()) > 0;
}

} // namespace skyline::frontend
