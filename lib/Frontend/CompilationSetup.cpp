//===- CompilationSetup.cpp - Finding compile commands --------------------===//

#include "skyline/CompilationSetup.h"
#include "skyline/Config.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/FileSystem.h"

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

llvm::Expected<CompilationSetup>
loadCompilationSetup(llvm::StringRef BuildPath,
                     const std::optional<std::vector<std::string>> &ExtraArgs,
                     llvm::ArrayRef<std::string> Sources) {
  CompilationSetup Setup;
  if (ExtraArgs) {
    Setup.Database = std::make_unique<clang::tooling::FixedCompilationDatabase>(
        ".", *ExtraArgs);
    return std::move(Setup);
  }
  std::string Error;
  std::unique_ptr<clang::tooling::CompilationDatabase> Database;
  if (!BuildPath.empty()) {
    if (!llvm::sys::fs::is_directory(BuildPath))
      return llvm::createStringError(
          std::errc::no_such_file_or_directory,
          "build directory '%s' does not exist; give the directory that holds "
          "compile_commands.json with -p",
          BuildPath.str().c_str());
    // -p names the directory itself; no search above it, unlike a source.
    Database = clang::tooling::CompilationDatabase::loadFromDirectory(BuildPath,
                                                                      Error);
    if (!Database)
      return llvm::createStringError(
          std::errc::invalid_argument,
          "no compile_commands.json in '%s'; configure the build with "
          "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON, or give compiler flags after --",
          BuildPath.str().c_str());
  } else if (!Sources.empty()) {
    Database = clang::tooling::CompilationDatabase::autoDetectFromSource(
        Sources.front(), Error);
  }
  if (Database) {
    Setup.Database =
        clang::tooling::inferMissingCompileCommands(std::move(Database));
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
