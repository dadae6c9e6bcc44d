//===- FrontendCache.cpp - The front end's answer kept between runs -------===//

#include "skyline/FrontendCache.h"

#include "skyline/Config.h"
#include "skyline/FileHash.h"
#include "skyline/InputFile.h"
#include "skyline/OutputFiles.h"
#include "skyline/ProgramModelYAML.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <yaml-cpp/yaml.h>

namespace skyline {
namespace {

/// A file's size and modification time in nanoseconds; none when it is gone.
std::optional<std::pair<uint64_t, int64_t>> sizeAndTime(llvm::StringRef Path) {
  llvm::sys::fs::file_status Status;
  if (llvm::sys::fs::status(Path, Status) ||
      !llvm::sys::fs::is_regular_file(Status))
    return std::nullopt;
  return std::make_pair(
      Status.getSize(),
      int64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                  Status.getLastModificationTime().time_since_epoch())
                  .count()));
}

/// The executable that parses (Executable, else this one), by size and
/// time: a rebuilt skyline-check of the same version may analyze
/// differently.
std::string executableIdentity(llvm::StringRef Executable) {
  static int Anchor;
  std::string Self =
      Executable.empty()
          ? llvm::sys::fs::getMainExecutable("skyline-check", &Anchor)
          : Executable.str();
  auto Stamp = sizeAndTime(Self);
  if (!Stamp)
    return Self;
  return Self + " " + std::to_string(Stamp->first) + " " +
         std::to_string(Stamp->second);
}

bool programFilesUnchanged(const ProgramModel &Model) {
  if (Model.Files.empty() || Model.FileSha256.size() != Model.Files.size())
    return false;
  for (const auto &[File, Digest] : Model.FileSha256) {
    std::optional<std::string> Now = sha256OfFile(File);
    if (!Now || *Now != Digest)
      return false;
  }
  return true;
}

bool systemFilesUnchanged(const YAML::Node &Files) {
  if (!Files.IsSequence())
    return false;
  for (const YAML::Node &File : Files) {
    if (!File.IsSequence() || File.size() != 3)
      return false;
    auto Stamp = sizeAndTime(File[0].as<std::string>());
    if (!Stamp || Stamp->first != File[1].as<uint64_t>() ||
        Stamp->second != File[2].as<int64_t>())
      return false;
  }
  return true;
}

} // namespace

std::string frontendCacheKey(const clang::tooling::CompilationDatabase &DB,
                             llvm::ArrayRef<std::string> Sources,
                             const FrontendOptions &Options,
                             llvm::StringRef Executable) {
  CacheKey Key;
  auto Add = [&](llvm::StringRef Name, llvm::StringRef Value) {
    Key.add(Name, Value);
  };
  Add("version", SKYLINE_VERSION);
  Add("executable", executableIdentity(Executable));
  Add("batch size variable", Options.BatchSizeVar);
  for (const std::string &Given : Sources) {
    // One key however the source was named (skyline-check from the shell,
    // skyline-lsp from the editor's URI).
    llvm::SmallString<256> Source(Given);
    llvm::sys::fs::make_absolute(Source);
    llvm::sys::path::remove_dots(Source, true);
    Add("source", Source);
    for (const clang::tooling::CompileCommand &Command :
         DB.getCompileCommands(Source)) {
      Add("directory", Command.Directory);
      Add("command", llvm::join(Command.CommandLine, "\n"));
    }
  }
  return Key.hex();
}

std::optional<ProgramModel> readCachedProgram(llvm::StringRef Path,
                                              llvm::StringRef Key) {
  if (!llvm::sys::fs::exists(Path))
    return std::nullopt;
  auto Root = loadYamlInput(Path, "front-end cache", ProgramModelLimits);
  if (!Root) {
    llvm::consumeError(Root.takeError());
    return std::nullopt;
  }
  try {
    if (!(*Root)["key"] || (*Root)["key"].as<std::string>() != Key ||
        !systemFilesUnchanged((*Root)["system_files"]))
      return std::nullopt;
    std::string Error;
    std::optional<ProgramModel> Model =
        programModelFromNode((*Root)["program"], Error);
    if (!Model || !programFilesUnchanged(*Model))
      return std::nullopt;
    return Model;
  } catch (const YAML::Exception &) {
    return std::nullopt; // a damaged cache is a miss
  }
}

llvm::Error writeCachedProgram(llvm::StringRef Path, llvm::StringRef Key,
                               const ProgramModel &Model,
                               llvm::ArrayRef<std::string> SystemFiles) {
  YAML::Emitter Out;
  Out << YAML::BeginMap << YAML::Key << "key" << YAML::Value << Key.str();
  Out << YAML::Key << "system_files" << YAML::Value << YAML::BeginSeq;
  for (const std::string &File : SystemFiles) {
    auto Stamp = sizeAndTime(File);
    if (!Stamp)
      continue; // gone already: nothing to compare
    Out << YAML::Flow << YAML::BeginSeq << File << Stamp->first << Stamp->second
        << YAML::EndSeq;
  }
  Out << YAML::EndSeq << YAML::Key << "program" << YAML::Value;
  emitProgramModel(Out, Model);
  Out << YAML::EndMap;
  return writeFileAtomically(Path, std::string(Out.c_str()) + "\n");
}

} // namespace skyline
