//===- WorkDirLock.cpp - One skyline-check per work directory -------------===//

#include "skyline/WorkDirLock.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <string>
#include <sys/file.h>
#include <unistd.h>

namespace skyline {
namespace {

/// "2026-12-02 00:50:12 UTC".
std::string nowInUtc() {
  std::time_t Now = std::time(nullptr);
  std::tm Parts;
  gmtime_r(&Now, &Parts);
  char Text[32];
  std::strftime(Text, sizeof(Text), "%Y-%m-%d %H:%M:%S UTC", &Parts);
  return Text;
}

/// The holder as its lock file records it: "another skyline-check (pid 42,
/// started ...)", or "another process" where the file says nothing (a lock
/// taken with flock(1)).
std::string describeHolder(int Fd) {
  char Buffer[256];
  ssize_t Size = pread(Fd, Buffer, sizeof(Buffer) - 1, 0);
  llvm::StringRef Text(Buffer, Size > 0 ? size_t(Size) : 0);
  std::string Pid, Started;
  for (llvm::StringRef Line : llvm::split(Text, '\n')) {
    if (Line.consume_front("pid "))
      Pid = Line.trim().str();
    else if (Line.consume_front("started "))
      Started = Line.trim().str();
  }
  if (Pid.empty())
    return "another process, which did not record its pid";
  return "another skyline-check (pid " + Pid +
         (Started.empty() ? "" : ", started " + Started) + ")";
}

} // namespace

llvm::Error lockWorkDirectory(llvm::StringRef Dir) {
  // flock() locks belong to an open file: a second open() here would
  // conflict with this process's own lock.
  static llvm::StringSet<> Held;
  if (Held.contains(Dir))
    return llvm::Error::success();
  if (std::error_code EC = llvm::sys::fs::create_directories(Dir))
    return llvm::createStringError(EC,
                                   "cannot create the work directory '%s': %s",
                                   Dir.str().c_str(), EC.message().c_str());
  llvm::SmallString<256> Path(Dir);
  llvm::sys::path::append(Path, ".lock");
  // Close-on-exec: a build or a run that outlived this process must not
  // keep the directory locked.
  int Fd = open(Path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (Fd < 0)
    return llvm::createStringError(
        std::error_code(errno, std::generic_category()),
        "cannot open the work directory's lock file '%s': %s", Path.c_str(),
        std::strerror(errno));
  while (flock(Fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR)
      continue;
    int Error = errno;
    std::string Holder =
        Error == EWOULDBLOCK ? describeHolder(Fd) : std::string();
    close(Fd);
    if (Error != EWOULDBLOCK)
      return llvm::createStringError(
          std::error_code(Error, std::generic_category()),
          "cannot lock the work directory's lock file '%s': %s", Path.c_str(),
          std::strerror(Error));
    return llvm::createStringError(
        std::errc::resource_unavailable_try_again,
        "the work directory '%s' is in use by %s: wait for it to end, or give "
        "this run a work directory of its own with --work-dir=DIR",
        Dir.str().c_str(), Holder.c_str());
  }
  std::string Record = "pid " + std::to_string(getpid()) + "\nstarted " +
                       nowInUtc() + "\n";
  if (ftruncate(Fd, 0) == 0) {
    [[maybe_unused]] ssize_t Written =
        pwrite(Fd, Record.data(), Record.size(), 0);
  }
  // Fd stays open, and the lock held, until this process ends.
  Held.insert(Dir);
  return llvm::Error::success();
}

} // namespace skyline
