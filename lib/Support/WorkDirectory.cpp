//===- WorkDirectory.cpp - A directory skyline-check may write in ---------===//

#include "skyline/WorkDirectory.h"

#include "skyline/OutputFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace skyline {
namespace {

namespace fs = llvm::sys::fs;

std::string inDir(llvm::StringRef Dir, llvm::StringRef Name) {
  llvm::SmallString<256> Path(Dir);
  llvm::sys::path::append(Path, Name);
  return std::string(Path);
}

/// The first entry of Dir that is not the work directory's lock (which
/// lockWorkDirectory may have made), or an empty string when it has none.
std::string firstEntry(llvm::StringRef Dir) {
  std::error_code EC;
  for (fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    llvm::StringRef Name = llvm::sys::path::filename(It->path());
    if (Name != ".lock")
      return Name.str();
  }
  return "";
}

llvm::Error mark(llvm::StringRef Dir) {
  return writeFileAtomically(
      inDir(Dir, WorkDirectoryMarker),
      "skyline-check's work directory: the instrumented copy, its build and "
      "the run files. Safe to delete.\n");
}

} // namespace

llvm::Error claimWorkDirectory(llvm::StringRef Dir) {
  fs::file_status Status;
  if (fs::status(Dir, Status)) {
    if (std::error_code EC = fs::create_directories(Dir))
      return llvm::createStringError(
          EC, "cannot create the work directory '%s': %s", Dir.str().c_str(),
          EC.message().c_str());
    return mark(Dir);
  }
  if (Status.type() != fs::file_type::directory_file)
    return llvm::createStringError(
        std::errc::not_a_directory,
        "the work directory '%s' is not a directory; give --work-dir a new "
        "or empty directory",
        Dir.str().c_str());
  if (fs::exists(inDir(Dir, WorkDirectoryMarker)))
    return llvm::Error::success();
  std::string Entry = firstEntry(Dir);
  // scopes.yaml: a work directory of a skyline-check from before the marker.
  if (Entry.empty() || fs::exists(inDir(Dir, "scopes.yaml")))
    return mark(Dir);
  return llvm::createStringError(
      std::errc::file_exists,
      "the work directory '%s' holds files that skyline-check did not make "
      "(such as '%s'): it writes src/, build/ and runs/ there and would "
      "replace them; give --work-dir a new or empty directory",
      Dir.str().c_str(), Entry.c_str());
}

} // namespace skyline
