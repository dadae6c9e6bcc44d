//===- WorkDirectory.h - A directory skyline-check may write in -*- C++ -*-===//
//
// The dynamic phase writes the instrumented copy, its CMake project, its
// build and the run files under the work directory, with fixed names (src/,
// build/, runs/): given the user's own project directory, those would land
// on the user's sources and build. So the tool writes only in a work
// directory that it made (marked by a file) or that is new or empty.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_WORKDIRECTORY_H
#define SKYLINE_WORKDIRECTORY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace skyline {

/// The file that marks a directory as a skyline-check work directory.
constexpr const char *WorkDirectoryMarker = ".skyline-work";

/// Makes Dir a work directory: creates it (and its parents) when missing
/// and marks it; accepts one already marked, or made by an earlier
/// skyline-check (it holds scopes.yaml); refuses anything else that is not
/// empty, naming it and what to do.
llvm::Error claimWorkDirectory(llvm::StringRef Dir);

} // namespace skyline

#endif // SKYLINE_WORKDIRECTORY_H
