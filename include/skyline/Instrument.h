//===- Instrument.h - The rewritten copy of the program ---------*- C++ -*-===//
//
// The second stage: a mirror of the program's own files in a work directory,
// rewritten by insertions (which compose, so nested calls are fine): the
// batch-size override, iteration boundaries, a scope around each module call
// (naming the called module where the front end could capture it, so the run
// counts the layer's weights) and torch::save made a no-op. The user's files
// are only read. Insertions never add a line, so the copy's line numbers are
// the original's.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_INSTRUMENT_H
#define SKYLINE_INSTRUMENT_H

#include "skyline/Measurement.h"
#include "skyline/ProgramModel.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace skyline {

/// A change to one file: remove Length bytes at Offset, insert Text there.
struct Insertion {
  unsigned Offset = 0;
  unsigned Length = 0;
  std::string Text;
  /// Among insertions at the same offset, lower goes first: call suffixes
  /// close inner calls first, call prefixes open outer calls first.
  long Order = 0;
};

/// Applies the insertions to Text; fails on overlapping replacements.
llvm::Expected<std::string> applyInsertions(llvm::StringRef Text,
                                            std::vector<Insertion> Insertions);

struct InstrumentedProgram {
  std::string SourceRoot; // the deepest directory holding all program files
  std::string MirrorRoot; // WorkDir/src
  std::map<std::string, std::string> MirrorOf; // original path -> mirror path
  std::vector<std::string> Sources;            // the mirrored translation units
  std::vector<ScopeEntry> Scopes;
  /// The statements before the training loop, marked so the runs attribute
  /// what each allocates.
  std::vector<SetupEntry> SetupStatements;
  /// The training loops' host syncs, each timed by the runs.
  std::vector<HostSyncEntry> HostSyncs;
  std::vector<std::string> Notes; // what the rewrite could not do, or skipped
  unsigned FilesWritten = 0;      // changed since the last run (the cache)
};

/// The insertions that instrument each file of Model, by original path;
/// the statements before the loop get ids in Setup, and the host syncs in
/// Syncs, where they are given.
std::map<std::string, std::vector<Insertion>>
planInsertions(const ProgramModel &Model, std::vector<ScopeEntry> &Scopes,
               std::vector<std::string> &Notes,
               std::vector<SetupEntry> *Setup = nullptr,
               std::vector<HostSyncEntry> *Syncs = nullptr);

/// Writes the mirror under WorkDir/src (a file only when its text changed)
/// and WorkDir/scopes.yaml (the scopes, the setup statements and the host
/// syncs).
llvm::Expected<InstrumentedProgram> instrumentProgram(const ProgramModel &Model,
                                                      llvm::StringRef WorkDir);

} // namespace skyline

#endif // SKYLINE_INSTRUMENT_H
