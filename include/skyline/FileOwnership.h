//===- FileOwnership.h - Whose files the tool trusts ------------*- C++ -*-===//
//
// What skyline-check links into the user's program (the runtime cache) or
// obeys (a .skyline.yaml found by searching) must be the user's own, as git
// refuses a repository another user owns (CVE-2022-24765): another user
// who can write there could put code into the user's program.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_FILEOWNERSHIP_H
#define SKYLINE_FILEOWNERSHIP_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace skyline {

/// Whether Path (followed through links) is owned by the effective user.
bool ownedByCurrentUser(llvm::StringRef Path);

/// Path is owned by the effective user and writable by no one else; else
/// an error naming it (What: "cache directory", "cached object") and who
/// owns it or may write it.
llvm::Error checkPrivate(llvm::StringRef Path, llvm::StringRef What);

/// Dir, made (mode 0700, with its missing parents) where it is missing,
/// then checked with checkPrivate: a directory the tool keeps code in.
llvm::Error makePrivateDirectory(llvm::StringRef Dir, llvm::StringRef What);

} // namespace skyline

#endif // SKYLINE_FILEOWNERSHIP_H
