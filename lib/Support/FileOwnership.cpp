//===- FileOwnership.cpp - Whose files the tool trusts --------------------===//

#include "skyline/FileOwnership.h"

#include "llvm/Support/FileSystem.h"

#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace skyline {

bool ownedByCurrentUser(llvm::StringRef Path) {
  struct stat Status;
  return ::stat(Path.str().c_str(), &Status) == 0 &&
         Status.st_uid == ::geteuid();
}

llvm::Error checkPrivate(llvm::StringRef Path, llvm::StringRef What) {
  struct stat Status;
  if (::stat(Path.str().c_str(), &Status) != 0)
    return llvm::createStringError(
        std::error_code(errno, std::generic_category()), "%s '%s': %s",
        What.str().c_str(), Path.str().c_str(), std::strerror(errno));
  if (Status.st_uid != ::geteuid())
    return llvm::createStringError(
        std::errc::permission_denied,
        "%s '%s' is owned by uid %u, not by you (uid %u): another user could "
        "put code in it",
        What.str().c_str(), Path.str().c_str(), unsigned(Status.st_uid),
        unsigned(::geteuid()));
  if (Status.st_mode & (S_IWGRP | S_IWOTH))
    return llvm::createStringError(
        std::errc::permission_denied,
        "%s '%s' is writable by %s: another user could put code in it",
        What.str().c_str(), Path.str().c_str(),
        (Status.st_mode & S_IWOTH) ? "everyone" : "its group");
  return llvm::Error::success();
}

llvm::Error makePrivateDirectory(llvm::StringRef Dir, llvm::StringRef What) {
  if (!llvm::sys::fs::exists(Dir))
    if (std::error_code EC = llvm::sys::fs::create_directories(
            Dir, /*IgnoreExisting=*/true, llvm::sys::fs::perms::owner_all))
      return llvm::createStringError(EC, "cannot create %s '%s': %s",
                                     What.str().c_str(), Dir.str().c_str(),
                                     EC.message().c_str());
  if (!llvm::sys::fs::is_directory(Dir))
    return llvm::createStringError(std::errc::not_a_directory,
                                   "%s '%s' is not a directory",
                                   What.str().c_str(), Dir.str().c_str());
  return checkPrivate(Dir, What);
}

} // namespace skyline
