//===- ProgramModelYAML.h - ProgramModel to and from YAML -------*- C++ -*-===//
//
// The schema is documented in docs/program-model.md; it carries
// schema_version so later stages can refuse a model they cannot read.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_PROGRAMMODELYAML_H
#define SKYLINE_PROGRAMMODELYAML_H

#include "skyline/ProgramModel.h"

#include <optional>
#include <string>

namespace YAML {
class Emitter;
class Node;
} // namespace YAML

namespace skyline {

std::string programModelToYAML(const ProgramModel &Model);

/// The same, as a value inside a larger document (the run report).
void emitProgramModel(YAML::Emitter &Out, const ProgramModel &Model);

/// Reads what programModelToYAML wrote; on failure returns nullopt and
/// describes the problem in Error.
std::optional<ProgramModel> programModelFromYAML(const std::string &Text,
                                                 std::string &Error);

/// The same from a node of a larger document.
std::optional<ProgramModel> programModelFromNode(const YAML::Node &Root,
                                                 std::string &Error);

} // namespace skyline

#endif // SKYLINE_PROGRAMMODELYAML_H
