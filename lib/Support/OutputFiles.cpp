//===- OutputFiles.cpp - Writing outputs without harming anything ---------===//

#include "skyline/OutputFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <optional>

namespace skyline {
namespace {

namespace fs = llvm::sys::fs;

std::string directoryOf(llvm::StringRef Path) {
  llvm::SmallString<256> Dir(Path);
  llvm::sys::path::remove_filename(Dir);
  return Dir.empty() ? "." : std::string(Dir);
}

std::string quoted(const OutputPath &Output) {
  return (Output.Option.empty() ? "" : Output.Option + " ") + "'" +
         Output.Path + "'";
}

llvm::Error cannotWrite(const OutputPath &Output, const llvm::Twine &Why) {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument),
      "cannot write " + quoted(Output) + ": " + Why);
}

const char *kindOf(fs::file_type Type) {
  switch (Type) {
  case fs::file_type::directory_file:
    return "a directory";
  case fs::file_type::character_file:
    return "a character device";
  case fs::file_type::block_file:
    return "a block device";
  case fs::file_type::fifo_file:
    return "a FIFO";
  case fs::file_type::socket_file:
    return "a socket";
  case fs::file_type::symlink_file:
    return "a symbolic link";
  default:
    return "not a regular file";
  }
}

/// Only a regular file or a new path is written: rename() over a device
/// node replaces the node (as root, the system's), and over a symbolic link
/// replaces the link, not what it names.
llvm::Error checkWritableKind(const OutputPath &Output) {
  llvm::StringRef Name = llvm::sys::path::filename(Output.Path);
  if (Name.empty() || Name == "." || Name == ".." ||
      llvm::sys::path::is_separator(Output.Path.back()))
    return cannotWrite(Output, "it names a directory; name a file");
  fs::file_status Status;
  if (fs::status(Output.Path, Status, /*Follow=*/false))
    return llvm::Error::success(); // a new path
  fs::file_type Type = Status.type();
  if (Type == fs::file_type::regular_file)
    return llvm::Error::success();
  std::string Hint = Type == fs::file_type::directory_file
                         ? "; name a file in it"
                     : Type == fs::file_type::symlink_file
                         ? "; name the file it points to, or a new path"
                         : "; skyline-check writes only regular files or new "
                           "paths";
  return cannotWrite(Output, llvm::Twine("it is ") + kindOf(Type) + Hint);
}

/// The path with its directory's symbolic links and `..` resolved: two
/// spellings of one path compare equal. None when the directory is missing.
std::optional<std::string> resolvedPath(llvm::StringRef Path) {
  llvm::SmallString<256> Dir;
  if (fs::real_path(directoryOf(Path), Dir))
    return std::nullopt;
  llvm::sys::path::append(Dir, llvm::sys::path::filename(Path));
  return std::string(Dir);
}

/// The file a path names, following symbolic links, when it exists.
std::optional<fs::UniqueID> identityOf(llvm::StringRef Path) {
  fs::UniqueID ID;
  if (fs::getUniqueID(Path, ID))
    return std::nullopt;
  return ID;
}

bool sameFile(llvm::StringRef A, llvm::StringRef B) {
  std::optional<fs::UniqueID> IdA = identityOf(A), IdB = identityOf(B);
  if (IdA && IdB)
    return *IdA == *IdB;
  std::optional<std::string> PathA = resolvedPath(A), PathB = resolvedPath(B);
  return PathA && PathB && *PathA == *PathB;
}

/// SIGXFSZ is ignored while outputs are written, so a file size limit
/// (ulimit -f) is a write error to report rather than a killed process.
class FileSizeSignalIgnored {
public:
  FileSizeSignalIgnored() {
    struct sigaction Ignore = {};
    Ignore.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &Ignore, &Previous);
  }
  ~FileSizeSignalIgnored() { sigaction(SIGXFSZ, &Previous, nullptr); }
  FileSizeSignalIgnored(const FileSizeSignalIgnored &) = delete;
  FileSizeSignalIgnored &operator=(const FileSizeSignalIgnored &) = delete;

private:
  struct sigaction Previous;
};

/// Writes Text to a new temporary file beside Output; its path in Temp.
llvm::Error writeTemporary(const OutputPath &Output, llvm::StringRef Text,
                           llvm::SmallVectorImpl<char> &Temp) {
  int FD = -1;
  if (std::error_code EC = fs::createUniqueFile(
          directoryOf(Output.Path) + "/.skyline-%%%%%%.tmp", FD, Temp))
    return cannotWrite(Output, EC.message());
  llvm::StringRef TempPath(Temp.data(), Temp.size());
  llvm::sys::RemoveFileOnSignal(TempPath);
  llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
  OS << Text;
  OS.close();
  if (!OS.has_error())
    return llvm::Error::success();
  std::error_code EC = OS.error();
  OS.clear_error();
  fs::remove(TempPath);
  llvm::sys::DontRemoveFileOnSignal(TempPath);
  return cannotWrite(Output, EC.message());
}

} // namespace

llvm::Error checkOutputDirectory(llvm::StringRef Path, llvm::StringRef Option) {
  std::string Dir = directoryOf(Path);
  std::string What = Option.empty() ? "" : Option.str() + " ";
  if (!fs::is_directory(Dir))
    return llvm::createStringError(
        std::errc::no_such_file_or_directory,
        "cannot write %s'%s': directory '%s' does not exist", What.c_str(),
        Path.str().c_str(), Dir.c_str());
  if (fs::access(Dir, fs::AccessMode::Write))
    return llvm::createStringError(
        std::errc::permission_denied,
        "cannot write %s'%s': directory '%s' is not writable", What.c_str(),
        Path.str().c_str(), Dir.c_str());
  return llvm::Error::success();
}

llvm::Error checkOutputPaths(llvm::ArrayRef<OutputPath> Outputs,
                             llvm::ArrayRef<InputPath> Inputs) {
  for (size_t I = 0; I < Outputs.size(); ++I) {
    const OutputPath &Output = Outputs[I];
    if (Output.Path.empty())
      return cannotWrite(Output, "the path is empty");
    if (llvm::Error E = checkOutputDirectory(Output.Path, Output.Option))
      return E;
    if (llvm::Error E = checkWritableKind(Output))
      return E;
    for (const InputPath &Input : Inputs)
      if (!Input.Path.empty() && sameFile(Output.Path, Input.Path))
        return cannotWrite(Output, "it is the " + Input.What + " '" +
                                       Input.Path +
                                       "' that this run reads; outputs never "
                                       "replace an input: name another file");
    for (size_t J = 0; J < I; ++J)
      if (sameFile(Output.Path, Outputs[J].Path))
        return cannotWrite(Output, quoted(Outputs[J]) +
                                       " names the same file; give each "
                                       "output its own path");
  }
  return llvm::Error::success();
}

void OutputTransaction::add(OutputPath Output, std::string Text) {
  Files.push_back({std::move(Output), std::move(Text)});
}

llvm::Error OutputTransaction::commit() {
  FileSizeSignalIgnored Scope;
  std::vector<llvm::SmallString<256>> Temps(Files.size());
  auto RemoveTemps = [&](size_t From) {
    for (size_t I = From; I < Temps.size(); ++I)
      if (!Temps[I].empty()) {
        fs::remove(Temps[I]);
        llvm::sys::DontRemoveFileOnSignal(Temps[I]);
      }
  };
  // Everything is written before anything is replaced: a full disk or a
  // path that changed kind since the start leaves every output as it was.
  for (size_t I = 0; I < Files.size(); ++I) {
    llvm::Error E =
        checkOutputDirectory(Files[I].Output.Path, Files[I].Output.Option);
    if (!E)
      E = checkWritableKind(Files[I].Output);
    if (!E)
      E = writeTemporary(Files[I].Output, Files[I].Text, Temps[I]);
    if (E) {
      RemoveTemps(0);
      return E;
    }
  }
  // What a rename replaces is kept under a second name until every rename
  // has succeeded, so a failure part way puts the earlier files back.
  std::vector<llvm::SmallString<256>> Backups(Files.size());
  for (size_t I = 0; I < Files.size(); ++I) {
    if (!fs::is_regular_file(Files[I].Output.Path))
      continue;
    fs::createUniquePath(directoryOf(Files[I].Output.Path) +
                             "/.skyline-%%%%%%.bak",
                         Backups[I], /*MakeAbsolute=*/false);
    if (fs::create_hard_link(Files[I].Output.Path, Backups[I]))
      Backups[I].clear();
  }
  for (size_t I = 0; I < Files.size(); ++I) {
    std::error_code EC = fs::rename(Temps[I], Files[I].Output.Path);
    if (!EC) {
      llvm::sys::DontRemoveFileOnSignal(Temps[I]);
      Temps[I].clear();
      continue;
    }
    for (size_t J = 0; J < I; ++J) {
      if (Backups[J].empty())
        fs::remove(Files[J].Output.Path);
      else if (!fs::rename(Backups[J], Files[J].Output.Path))
        Backups[J].clear();
    }
    RemoveTemps(I);
    for (const auto &Backup : Backups)
      if (!Backup.empty())
        fs::remove(Backup);
    return cannotWrite(Files[I].Output, EC.message());
  }
  for (const auto &Backup : Backups)
    if (!Backup.empty())
      fs::remove(Backup);
  Files.clear();
  return llvm::Error::success();
}

llvm::Error writeFileAtomically(llvm::StringRef Path, llvm::StringRef Text) {
  OutputTransaction One;
  One.add({"", Path.str()}, Text.str());
  return One.commit();
}

} // namespace skyline
