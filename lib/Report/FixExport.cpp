//===- FixExport.cpp - Fix-its as clang-tidy's YAML -----------------------===//

#include "skyline/FixExport.h"

#include "clang/Tooling/Core/Diagnostic.h"
#include "clang/Tooling/DiagnosticsYaml.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

namespace skyline {

Finding makeBatchSizeFix(const BatchSizeSite &Site, int64_t NewValue) {
  Finding F;
  F.Rule = "skyline-batch-size";
  F.Level = DiagLevel::Note;
  F.Message = "set the training batch size '" + Site.Name + "' from " +
              std::to_string(Site.Value) + " to " + std::to_string(NewValue);
  F.At = Site.Literal;
  F.Edits.push_back({Site.Literal, std::to_string(NewValue)});
  return F;
}

// A top-level diagnostic in clang-tidy's file is a warning or an error; our
// notes with a fix-it (a requested batch size, a scaled rate) go as warnings.
static clang::tooling::Diagnostic::Level toolingLevel(DiagLevel Level) {
  return Level == DiagLevel::Error ? clang::tooling::Diagnostic::Error
                                   : clang::tooling::Diagnostic::Warning;
}

std::string fixesToYAML(llvm::StringRef MainSourceFile,
                        llvm::ArrayRef<Finding> Findings,
                        bool IncludeOptional) {
  clang::tooling::TranslationUnitDiagnostics TU;
  TU.MainSourceFile = MainSourceFile.str();
  for (const Finding &F : Findings) {
    if (F.Edits.empty() || (F.OptionalFix && !IncludeOptional))
      continue;
    clang::tooling::DiagnosticMessage Message;
    Message.Message = F.Message;
    Message.FilePath = F.At.File;
    Message.FileOffset = F.At.Offset;
    for (const TextEdit &Edit : F.Edits) {
      clang::tooling::Replacement R(Edit.Range.File, Edit.Range.Offset,
                                    Edit.Range.Length, Edit.Text);
      llvm::consumeError(Message.Fix[R.getFilePath()].add(R));
    }
    TU.Diagnostics.emplace_back(
        F.Rule, Message,
        llvm::SmallVector<clang::tooling::DiagnosticMessage, 1>(),
        toolingLevel(F.Level), "");
  }
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  llvm::yaml::Output YAML(OS);
  YAML << TU;
  return OS.str();
}

static std::string directoryOf(llvm::StringRef Path) {
  llvm::SmallString<256> Dir(Path);
  llvm::sys::path::remove_filename(Dir);
  return Dir.empty() ? "." : std::string(Dir);
}

llvm::Error checkOutputDirectory(llvm::StringRef Path, llvm::StringRef Option) {
  std::string Dir = directoryOf(Path);
  std::string What = Option.empty() ? "" : Option.str() + " ";
  if (!llvm::sys::fs::is_directory(Dir))
    return llvm::createStringError(
        std::errc::no_such_file_or_directory,
        "cannot write %s'%s': directory '%s' does not exist", What.c_str(),
        Path.str().c_str(), Dir.c_str());
  if (llvm::sys::fs::access(Dir, llvm::sys::fs::AccessMode::Write))
    return llvm::createStringError(
        std::errc::permission_denied,
        "cannot write %s'%s': directory '%s' is not writable", What.c_str(),
        Path.str().c_str(), Dir.c_str());
  return llvm::Error::success();
}

llvm::Error writeFileAtomically(llvm::StringRef Path, llvm::StringRef Text) {
  if (llvm::Error E = checkOutputDirectory(Path))
    return E;
  std::string Dir = directoryOf(Path);
  llvm::SmallString<256> Temp;
  int FD = -1;
  if (std::error_code EC = llvm::sys::fs::createUniqueFile(
          Dir + "/.skyline-%%%%%%.tmp", FD, Temp))
    return llvm::createStringError(EC, "cannot write '%s': %s",
                                   Path.str().c_str(), EC.message().c_str());
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Text;
    OS.close();
    if (OS.has_error()) {
      llvm::sys::fs::remove(Temp);
      return llvm::createStringError(OS.error(), "cannot write '%s': %s",
                                     Path.str().c_str(),
                                     OS.error().message().c_str());
    }
  }
  if (std::error_code EC = llvm::sys::fs::rename(Temp, Path)) {
    llvm::sys::fs::remove(Temp);
    return llvm::createStringError(EC, "cannot write '%s': %s",
                                   Path.str().c_str(), EC.message().c_str());
  }
  return llvm::Error::success();
}

} // namespace skyline
