//===- ProgramModel.cpp - Names of the model's enumerations ---------------===//

#include "skyline/ProgramModel.h"

#include <array>
#include <utility>

namespace skyline {
namespace {

constexpr std::array<std::pair<BatchSizeKind, const char *>, 12> KindNames{{
    {BatchSizeKind::NamespaceConstant, "namespace-constant"},
    {BatchSizeKind::LocalConstant, "local-constant"},
    {BatchSizeKind::StaticMember, "static-member"},
    {BatchSizeKind::FieldDefault, "field-default"},
    {BatchSizeKind::DefaultArgument, "default-argument"},
    {BatchSizeKind::LiteralArgument, "literal-argument"},
    {BatchSizeKind::OptionsBuilder, "options-builder"},
    {BatchSizeKind::CommandLineDefault, "command-line-default"},
    {BatchSizeKind::EnvironmentDefault, "environment-default"},
    {BatchSizeKind::ConfigDefault, "config-default"},
    {BatchSizeKind::Macro, "macro"},
    {BatchSizeKind::Derived, "derived"},
}};

} // namespace

const char *batchSizeKindName(BatchSizeKind Kind) {
  for (const auto &[K, Name] : KindNames)
    if (K == Kind)
      return Name;
  return "unknown";
}

std::optional<BatchSizeKind> parseBatchSizeKind(const std::string &Name) {
  for (const auto &[K, KName] : KindNames)
    if (Name == KName)
      return K;
  return std::nullopt;
}

const char *batchSizeRoleName(BatchSizeRole Role) {
  switch (Role) {
  case BatchSizeRole::Train:
    return "train";
  case BatchSizeRole::Eval:
    return "eval";
  case BatchSizeRole::Unknown:
    return "unknown";
  }
  return "unknown";
}

} // namespace skyline
