//===- SettingsFinder.cpp - Where the program sets its runtime knobs ------===//
//
// What the experiments' fix-its edit: the program's own intra-op thread
// setting (torch::set_num_threads or at::set_num_threads, whose argument a
// fix-it changes), and the start of main, where a setting of its own goes.
//
//===----------------------------------------------------------------------===//

#include "Finders.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "clang/ASTMatchers/ASTMatchers.h"

using namespace clang;

namespace skyline::frontend {

namespace {

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

} // namespace

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
  }
}

} // namespace skyline::frontend
