//===- InputFile.h - Reading files the user or CI hands in ------*- C++ -*-===//
//
// Every file skyline-check reads from outside (a report, a baseline, a
// .skyline.yaml, a program model, a run's result file, a compile database, a
// CMake File API reply) goes through here: it must be a regular file (a
// directory, FIFO, device or socket is refused from its status alone, so a
// FIFO never blocks the read), no larger than its kind's limit, and YAML is
// read without aliases and within a node count and a nesting depth, so a
// small hostile file cannot grow into gigabytes. Every failure is an
// llvm::Error that names the file; nothing throws.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_INPUTFILE_H
#define SKYLINE_INPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace YAML {
class Node;
} // namespace YAML

namespace skyline {

/// What a YAML input may hold.
struct YamlLimits {
  uint64_t MaxBytes = 0;
  uint64_t MaxNodes = 0; // scalars, sequences and mappings, keys included
  unsigned MaxDepth = 0; // sequences and mappings inside one another
};

/// A report or baseline: the runs with their layers and the program model.
/// A large program's report is a few MiB and some 10^5 nodes; 10^6 nodes
/// take yaml-cpp about 0.5 GiB and 3 s to build, the most this allows.
inline constexpr YamlLimits ReportLimits{uint64_t(64) << 20, 1000000, 64};
/// .skyline.yaml: option names and values.
inline constexpr YamlLimits ConfigLimits{uint64_t(1) << 20, 10000, 8};
/// A run's result file (the runtime writes it) and a program model.
inline constexpr YamlLimits RunResultLimits{uint64_t(64) << 20, 1000000, 16};
inline constexpr YamlLimits ProgramModelLimits = ReportLimits;
/// A source file a report or model names, read for a snippet or a fix.
inline constexpr uint64_t MaxSourceBytes = uint64_t(64) << 20;
/// A compile_commands.json or a File API reply: large builds write tens of
/// MiB of commands.
inline constexpr uint64_t MaxJsonInputBytes = uint64_t(512) << 20;

/// Checks that Path is a regular file of at most MaxBytes, from its status
/// alone (nothing is opened). What names the file's role in messages
/// ("report", "config file"): "cannot read report 'r.yaml': it is a
/// directory, not a file".
llvm::Error checkInputFile(llvm::StringRef Path, llvm::StringRef What,
                           uint64_t MaxBytes);

/// The text of Path once checkInputFile passes.
llvm::Expected<std::string>
readInputFile(llvm::StringRef Path, llvm::StringRef What, uint64_t MaxBytes);

/// A source file that a report or program model names (for a snippet, a
/// line's text): nullptr unless it is a regular file within MaxBytes that
/// reads; a report can name any path, and a FIFO would block, a device
/// never end.
std::unique_ptr<llvm::MemoryBuffer>
readSourceBuffer(llvm::StringRef Path, uint64_t MaxBytes = MaxSourceBytes);

/// Text as YAML within Limits (MaxBytes is not checked here): the first
/// document, or an error naming Path that says what is refused (an alias,
/// too many nodes, too deep, not YAML).
llvm::Expected<YAML::Node> parseYamlInput(const std::string &Text,
                                          llvm::StringRef Path,
                                          llvm::StringRef What,
                                          const YamlLimits &Limits);

/// readInputFile, then parseYamlInput.
llvm::Expected<YAML::Node> loadYamlInput(llvm::StringRef Path,
                                         llvm::StringRef What,
                                         const YamlLimits &Limits);

} // namespace skyline

#endif // SKYLINE_INPUTFILE_H
