//===- FixExport.cpp - Fix-its as clang-tidy's YAML -----------------------===//

#include "skyline/FixExport.h"

#include "skyline/FileHash.h"
#include "skyline/Rules.h"

#include "clang/Tooling/Core/Diagnostic.h"
#include "clang/Tooling/DiagnosticsYaml.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

namespace skyline {

Finding makeBatchSizeFix(const BatchSizeSite &Site, int64_t NewValue) {
  Finding F;
  F.Rule = rules::batchSize().Id.str();
  F.Level = DiagLevel::Note;
  F.Message = "set the training batch size '" + Site.Name + "' from " +
              std::to_string(Site.Value) + " to " + std::to_string(NewValue);
  F.At = Site.Literal;
  F.Edits.push_back({Site.Literal, std::to_string(NewValue)});
  return F;
}

bool editsOverlap(const TextEdit &A, const TextEdit &B) {
  if (A.Range.File != B.Range.File)
    return false;
  unsigned AEnd = A.Range.Offset + std::max(A.Range.Length, 1u);
  unsigned BEnd = B.Range.Offset + std::max(B.Range.Length, 1u);
  return A.Range.Offset < BEnd && B.Range.Offset < AEnd;
}

void addRequestedBatchSize(std::vector<Finding> &Findings,
                           const BatchSizeSite &Site, int64_t NewValue) {
  Finding Requested = makeBatchSizeFix(Site, NewValue);
  for (Finding &F : Findings) {
    bool Overlaps = llvm::any_of(F.Edits, [&](const TextEdit &Edit) {
      return editsOverlap(Edit, Requested.Edits.front());
    });
    if (!Overlaps)
      continue;
    F.Edits.clear();
    F.Message += "; its fix-it is left out: --set-batch-size=" +
                 std::to_string(NewValue) + " sets this line";
  }
  Findings.push_back(std::move(Requested));
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
  std::vector<TextEdit> Taken;
  for (const Finding &F : Findings) {
    if (F.Edits.empty() || (F.OptionalFix && !IncludeOptional))
      continue;
    if (llvm::any_of(F.Edits, [&](const TextEdit &Edit) {
          return llvm::any_of(Taken, [&](const TextEdit &Other) {
            return editsOverlap(Edit, Other);
          });
        }))
      continue;
    llvm::append_range(Taken, F.Edits);
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

/// The recorded digest of File: by the path as written, else by the file
/// it names (a report made elsewhere in the same tree, `./train.cpp`).
static const std::string *recordedDigest(const ProgramModel &Program,
                                         llvm::StringRef File) {
  auto It = Program.FileSha256.find(File.str());
  if (It != Program.FileSha256.end())
    return &It->second;
  llvm::sys::fs::UniqueID Wanted, Other;
  if (llvm::sys::fs::getUniqueID(File, Wanted))
    return nullptr;
  for (const auto &[Path, Digest] : Program.FileSha256)
    if (!llvm::sys::fs::getUniqueID(Path, Other) && Other == Wanted)
      return &Digest;
  return nullptr;
}

std::optional<std::string> whyFixesAreStale(llvm::ArrayRef<Finding> Findings,
                                            const ProgramModel &Program) {
  for (const Finding &F : Findings)
    for (const TextEdit &Edit : F.Edits) {
      const std::string &File = Edit.Range.File;
      if (Program.FileSha256.empty())
        return std::string("the report records no SHA-256 of the files it "
                           "describes (an older skyline-check wrote it), so "
                           "its offsets in '") +
               File + "' cannot be checked";
      const std::string *Recorded = recordedDigest(Program, File);
      if (!Recorded)
        return "a fix-it names '" + File +
               "', which is not a file the report describes";
      std::optional<std::string> Now = sha256OfFile(File);
      if (!Now)
        return "'" + File + "' cannot be read as a regular file";
      if (*Now != *Recorded)
        return "'" + File +
               "' changed since the report was made (its SHA-256 is not the "
               "one recorded)";
    }
  return std::nullopt;
}

} // namespace skyline
