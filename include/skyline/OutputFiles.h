//===- OutputFiles.h - Writing outputs without harming anything -*- C++ -*-===//
//
// Every file skyline-check writes goes through here. The user's files are
// only ever changed by fix-its they apply, so an output path is checked
// before any work against everything the run reads and against the other
// outputs; only regular files or new paths are written; and the outputs of
// a run are written together or not at all.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_OUTPUTFILES_H
#define SKYLINE_OUTPUTFILES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace skyline {

/// A file the run reads, and what it is to the user ("source", "--baseline").
struct InputPath {
  std::string What;
  std::string Path;
};

/// A file the run is asked to write, and the option that asked ("--sarif").
struct OutputPath {
  std::string Option;
  std::string Path;
};

/// Fails, naming the option, unless every output can be written and harms
/// nothing: its directory exists and is writable; the path is new or a
/// regular file (never a directory, device, FIFO or socket, also not through
/// a symbolic link); it is none of Inputs, by identity (hard links, symbolic
/// links and `..` included) or by path; and no other output has its path.
llvm::Error checkOutputPaths(llvm::ArrayRef<OutputPath> Outputs,
                             llvm::ArrayRef<InputPath> Inputs);

/// Fails, naming Option (`--sarif`) when given, unless Path's directory
/// exists and is writable: checked before long work, not after it.
llvm::Error checkOutputDirectory(llvm::StringRef Path,
                                 llvm::StringRef Option = "");

/// Several outputs written all or none: each is written to a temporary file
/// beside it, and only when every one is complete are they renamed into
/// place; a rename that fails puts back what the earlier ones replaced.
class OutputTransaction {
public:
  void add(OutputPath Output, std::string Text);
  /// Writes everything, or nothing and says which output failed and why
  /// (a full disk, a file size limit, a path that became a directory).
  llvm::Error commit();

private:
  struct Pending {
    OutputPath Output;
    std::string Text;
  };
  std::vector<Pending> Files;
};

/// One output, through a temporary file, so a failed write leaves no
/// partial file behind.
llvm::Error writeFileAtomically(llvm::StringRef Path, llvm::StringRef Text);

} // namespace skyline

#endif // SKYLINE_OUTPUTFILES_H
