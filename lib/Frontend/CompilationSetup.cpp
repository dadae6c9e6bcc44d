//===- CompilationSetup.cpp - Finding compile commands --------------------===//

#include "skyline/CompilationSetup.h"
#include "skyline/CompileCommandSanitizer.h"
#include "skyline/Config.h"
#include "skyline/InputFile.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace skyline {

std::vector<std::string> fallbackCompileFlags() {
  std::vector<std::string> Flags = {"-x", "c++", "-std=c++17"};
  llvm::SmallVector<llvm::StringRef, 4> Dirs;
  llvm::StringRef(SKYLINE_TORCH_INCLUDE_DIRS).split(Dirs, ';', -1, false);
  for (llvm::StringRef Dir : Dirs) {
    Flags.push_back("-isystem");
    Flags.push_back(Dir.str());
  }
  return Flags;
}

namespace {

llvm::Error setupError(const llvm::Twine &Message) {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument), Message);
}

/// Why DIR/compile_commands.json did not load, in the JSON loader's own
/// words: it is empty or corrupt, not missing.
llvm::Error corruptDatabase(llvm::StringRef Dir) {
  llvm::SmallString<256> Path(Dir);
  llvm::sys::path::append(Path, "compile_commands.json");
  std::string Why;
  uint64_t Size = 0;
  if (!llvm::sys::fs::file_size(Path, Size) && Size == 0)
    Why = "it is empty";
  else if (!clang::tooling::JSONCompilationDatabase::loadFromFile(
               Path, Why, clang::tooling::JSONCommandLineSyntax::AutoDetect))
    Why = "it is not a JSON list of compile commands (" +
          llvm::StringRef(Why).trim().rtrim('.').str() + ")";
  else
    Why = "it lists no compile commands";
  return setupError("cannot use compile_commands.json '" + Path + "': " + Why +
                    "; configure the build again with "
                    "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON, or give compiler "
                    "flags after --");
}

/// -p at a file: often compile_commands.json itself, whose directory is
/// what -p takes.
llvm::Error notADirectory(llvm::StringRef BuildPath) {
  std::string Hint;
  if (llvm::sys::path::filename(BuildPath) == "compile_commands.json") {
    llvm::StringRef Parent = llvm::sys::path::parent_path(BuildPath);
    Hint = " (-p " + (Parent.empty() ? std::string(".") : Parent.str()) + ")";
  }
  return setupError("-p '" + BuildPath +
                    "' is a file, not a directory; give the directory that "
                    "holds compile_commands.json" +
                    Hint);
}

bool hasFile(llvm::StringRef Dir, llvm::StringRef Name) {
  llvm::SmallString<256> Path(Dir);
  llvm::sys::path::append(Path, Name);
  return llvm::sys::fs::exists(Path);
}

/// Whether Dir holds a database clang's loader would read.
bool holdsDatabase(llvm::StringRef Dir) {
  return hasFile(Dir, "compile_commands.json") ||
         hasFile(Dir, "compile_flags.txt");
}

/// The database in Dir: its files must be regular and of a bounded size
/// (clang's loader would block on a FIFO), and one that does not load is
/// corrupt, not missing.
llvm::Expected<std::unique_ptr<clang::tooling::CompilationDatabase>>
loadDatabaseIn(llvm::StringRef Dir) {
  for (const char *Name : {"compile_commands.json", "compile_flags.txt"}) {
    llvm::SmallString<256> Path(Dir);
    llvm::sys::path::append(Path, Name);
    if (llvm::sys::fs::exists(Path))
      if (llvm::Error E =
              checkInputFile(Path, "compile database", MaxJsonInputBytes))
        return std::move(E);
  }
  // Loaded as clang's plugins load it, but without expanding response
  // files: an @file is the sanitizer's to read or refuse (it may name a FIFO
  // or a file outside the repository).
  std::string Error;
  std::unique_ptr<clang::tooling::CompilationDatabase> Database;
  llvm::SmallString<256> Json(Dir);
  llvm::sys::path::append(Json, "compile_commands.json");
  if (llvm::sys::fs::exists(Json)) {
    if (auto Loaded = clang::tooling::JSONCompilationDatabase::loadFromFile(
            Json, Error, clang::tooling::JSONCommandLineSyntax::AutoDetect))
      Database = clang::tooling::inferTargetAndDriverMode(std::move(Loaded));
  } else {
    llvm::SmallString<256> Flags(Dir);
    llvm::sys::path::append(Flags, "compile_flags.txt");
    Database =
        clang::tooling::FixedCompilationDatabase::loadFromFile(Flags, Error);
  }
  if (!Database)
    return corruptDatabase(Dir);
  // An empty list loads, and then every source is "skipped".
  if (Database->getAllFiles().empty() && !hasFile(Dir, "compile_flags.txt"))
    return corruptDatabase(Dir);
  return std::move(Database);
}

/// The nearest directory at or above the first source's that holds a
/// database, as clang-tidy searches; empty when none does.
std::string findDatabaseAbove(llvm::StringRef Source) {
  llvm::SmallString<256> Dir(Source);
  llvm::sys::fs::make_absolute(Dir);
  llvm::sys::path::remove_dots(Dir, /*remove_dot_dot=*/true);
  for (llvm::StringRef D = llvm::sys::path::parent_path(Dir); !D.empty();
       D = llvm::sys::path::parent_path(D))
    if (holdsDatabase(D))
      return D.str();
  return "";
}

/// The directory holding Path's repository (its nearest ancestor with a
/// .git), else Path's own directory.
std::string repositoryOf(llvm::StringRef Path) {
  llvm::SmallString<256> Dir(Path);
  llvm::sys::fs::make_absolute(Dir);
  llvm::sys::path::remove_dots(Dir, /*remove_dot_dot=*/true);
  llvm::StringRef Own = llvm::sys::path::parent_path(Dir);
  for (llvm::StringRef D = Own; !D.empty(); D = llvm::sys::path::parent_path(D))
    if (hasFile(D, ".git"))
      return D.str();
  return Own.str();
}

/// Database with every command sanitized; the notes of the sources' own
/// commands are taken now, so the caller says them before the parse.
void sanitize(CompilationSetup &Setup,
              std::unique_ptr<clang::tooling::CompilationDatabase> Database,
              std::string Origin, std::string DatabaseDir,
              llvm::ArrayRef<std::string> Sources) {
  SanitizerOptions Options;
  if (!DatabaseDir.empty())
    Options.TrustedRoots.push_back(DatabaseDir);
  for (const std::string &Source : Sources)
    Options.TrustedRoots.push_back(repositoryOf(Source));
  auto Safe = std::make_unique<SanitizedCompilationDatabase>(
      std::move(Database), std::move(Origin), std::move(Options));
  for (const std::string &Source : Sources) {
    llvm::SmallString<256> Absolute(Source);
    llvm::sys::fs::make_absolute(Absolute);
    (void)Safe->getCompileCommands(Absolute);
  }
  Setup.Notes = Safe->takeNotes();
  Setup.Database = std::move(Safe);
}

} // namespace

llvm::Expected<CompilationSetup>
loadCompilationSetup(llvm::StringRef BuildPath,
                     const std::optional<std::vector<std::string>> &ExtraArgs,
                     llvm::ArrayRef<std::string> Sources) {
  CompilationSetup Setup;
  if (ExtraArgs) {
    sanitize(Setup,
             std::make_unique<clang::tooling::FixedCompilationDatabase>(
                 ".", *ExtraArgs),
             "the flags after --", "", Sources);
    return std::move(Setup);
  }
  std::string DatabaseDir;
  if (!BuildPath.empty()) {
    llvm::sys::fs::file_status Status;
    if (llvm::sys::fs::status(BuildPath, Status))
      return llvm::createStringError(
          std::errc::no_such_file_or_directory,
          "build directory '%s' does not exist; give the directory that holds "
          "compile_commands.json with -p",
          BuildPath.str().c_str());
    if (Status.type() != llvm::sys::fs::file_type::directory_file)
      return notADirectory(BuildPath);
    // -p names the directory itself; no search above it, unlike a source.
    if (!holdsDatabase(BuildPath))
      return llvm::createStringError(
          std::errc::invalid_argument,
          "no compile_commands.json in '%s'; configure the build with "
          "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON, or give compiler flags after --",
          BuildPath.str().c_str());
    DatabaseDir = BuildPath.str();
  } else if (!Sources.empty()) {
    DatabaseDir = findDatabaseAbove(Sources.front());
  }
  if (!DatabaseDir.empty()) {
    auto Loaded = loadDatabaseIn(DatabaseDir);
    if (!Loaded)
      return Loaded.takeError();
    std::string Origin =
        (hasFile(DatabaseDir, "compile_commands.json") ? "compile_commands.json"
                                                       : "compile_flags.txt") +
        std::string(" in '") + DatabaseDir + "'";
    sanitize(Setup,
             clang::tooling::inferMissingCompileCommands(std::move(*Loaded)),
             std::move(Origin), DatabaseDir, Sources);
    return std::move(Setup);
  }
  Setup.Database = std::make_unique<clang::tooling::FixedCompilationDatabase>(
      ".", fallbackCompileFlags());
  Setup.Warnings.push_back(
      "no compilation database found for " +
      (Sources.empty() ? std::string("the sources")
                       : "'" + Sources.front() + "'") +
      "; using C++17 and the LibTorch headers skyline-check was built with "
      "(give -p BUILD_DIR or flags after -- to use the program's own)");
  return std::move(Setup);
}

} // namespace skyline
