//===- WorkDirLock.h - One skyline-check per work directory -----*- C++ -*-===//
//
// Two instances measuring into one work directory would rebuild the same
// program under each other and mix their run files and budgets: the second
// refuses, naming the first.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_WORKDIRLOCK_H
#define SKYLINE_WORKDIRLOCK_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace skyline {

/// Creates Dir if needed and takes an exclusive flock() on Dir/.lock, held
/// until this process ends (the kernel drops it then, even after SIGKILL, so
/// a stale file never blocks); the file then says who holds it (its pid and
/// when it took it). Taking it again in the same process succeeds. An error
/// naming the holder and what to do when another process holds it.
llvm::Error lockWorkDirectory(llvm::StringRef Dir);

} // namespace skyline

#endif // SKYLINE_WORKDIRLOCK_H
