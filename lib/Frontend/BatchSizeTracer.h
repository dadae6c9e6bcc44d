//===- BatchSizeTracer.h - From a use of a value to its literal -*- C++ -*-===//
//
// Follows an integer expression back through variables, parameters (to the
// caller's argument or the default), members, macros, ternaries on argv or
// getenv, and command-line option defaults, to the literal that sets it.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_LIB_FRONTEND_BATCHSIZETRACER_H
#define SKYLINE_LIB_FRONTEND_BATCHSIZETRACER_H

#include "ASTHelpers.h"

#include <optional>
#include <string>
#include <vector>

namespace skyline::frontend {

/// A command-line option's default (cxxopts, Boost.Program_options): its
/// names and the literal.
struct OptionDefault {
  std::vector<std::string> Keys; // "b", "batch-size"
  BatchSizeSite Site;
};

/// A site whose option default is declared in another translation unit: no
/// literal yet, only the option's name.
inline bool isPendingOption(const BatchSizeSite &Site) {
  return Site.Kind == BatchSizeKind::CommandLineDefault &&
         Site.Literal.File.empty();
}

class BatchSizeTracer {
public:
  /// Every option default of the translation unit.
  std::vector<OptionDefault> optionDefaults() const;

  explicit BatchSizeTracer(const TUContext &TU) : TU(TU) {}

  /// The literal behind E; Chain holds the steps taken so far.
  std::optional<BatchSizeSite> trace(const clang::Expr *E,
                                     std::vector<UseStep> Chain) const;
  /// The literal that initializes a variable or field.
  std::optional<BatchSizeSite> traceDecl(const clang::ValueDecl *D,
                                         std::vector<UseStep> Chain) const;
  /// Where a trace since the last call found no literal but a value the
  /// program reads at run time (atoi(argv[1]), a getenv'd string parsed, a
  /// configuration key with no fallback): that read, Kind RuntimeRead; the
  /// first one found, cleared by the call. A literal always wins over it.
  std::optional<BatchSizeSite> takeRuntimeRead() const;

private:
  std::optional<BatchSizeSite>
  traceAt(const clang::Expr *E, std::vector<UseStep> &Chain, int Depth) const;
  std::optional<BatchSizeSite> traceVar(const clang::VarDecl *Var,
                                        std::vector<UseStep> &Chain,
                                        int Depth) const;
  std::optional<BatchSizeSite> traceParam(const clang::ParmVarDecl *Param,
                                          std::vector<UseStep> &Chain,
                                          int Depth) const;
  /// Object: the variable the member is read from, when known; its own
  /// initializer, not another object's, sets the member.
  std::optional<BatchSizeSite>
  traceField(const clang::FieldDecl *Field, std::vector<UseStep> &Chain,
             int Depth, const clang::VarDecl *Object = nullptr) const;
  std::optional<BatchSizeSite> traceConfigFallback(const clang::CallExpr *Call,
                                                   std::vector<UseStep> &Chain,
                                                   int Depth) const;
  std::optional<BatchSizeSite> traceAggregateInit(const clang::FieldDecl *Field,
                                                  const std::string &Name,
                                                  const clang::VarDecl *Object,
                                                  std::vector<UseStep> &Chain,
                                                  int Depth) const;
  std::optional<BatchSizeSite> traceConditional(const clang::Expr *Cond,
                                                const clang::Expr *True,
                                                const clang::Expr *False,
                                                std::vector<UseStep> &Chain,
                                                int Depth) const;
  std::optional<BatchSizeSite> traceCall(const clang::CallExpr *Call,
                                         std::vector<UseStep> &Chain,
                                         int Depth) const;
  /// What a function of the program's own returns, as one call reads it.
  std::optional<BatchSizeSite> traceReturns(const clang::CallExpr *Call,
                                            std::vector<UseStep> &Chain,
                                            int Depth) const;
  std::optional<BatchSizeSite>
  traceOptionDefault(llvm::StringRef Key, std::vector<UseStep> &Chain) const;
  std::optional<BatchSizeSite> literal(const clang::Expr *E,
                                       std::vector<UseStep> &Chain) const;
  std::optional<BatchSizeSite>
  digitsInString(const clang::StringLiteral *S,
                 std::vector<UseStep> &Chain) const;
  UseStep step(std::string Description, clang::SourceLocation Loc) const;
  /// Keeps Read, the expression reading ReadFrom at run time, as the
  /// runtime read unless one is kept already.
  void keepRuntimeRead(const clang::Expr *Read, std::string ReadFrom,
                       const std::vector<UseStep> &Chain) const;
  std::optional<SourceSpan> constexprKeyword(const clang::VarDecl *Var) const;

  const TUContext &TU;
  mutable std::optional<BatchSizeSite> RuntimeRead;
};

} // namespace skyline::frontend

#endif // SKYLINE_LIB_FRONTEND_BATCHSIZETRACER_H
