//===- Sarif.cpp - Findings as SARIF 2.1.0 --------------------------------===//
//
// Writes the log with llvm::json. Paths are made absolute and normalized before
// they are made relative to the source root, so "./" and ".." in a finding's
// file name reach neither the URIs nor the fingerprints.
//
//===----------------------------------------------------------------------===//

#include "skyline/Sarif.h"

#include "skyline/InputFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace skyline {
namespace {

namespace json = llvm::json;
using llvm::ArrayRef;
using llvm::StringRef;

constexpr const char *SchemaUri =
    "https://json.schemastore.org/sarif-2.1.0.json";
constexpr const char *RootBaseId = "%SRCROOT%";

//===----------------------------------------------------------------------===//
// Paths and URIs
//===----------------------------------------------------------------------===//

std::string absolutePath(StringRef Path) {
  llvm::SmallString<256> Abs(Path.empty() ? StringRef(".") : Path);
  llvm::sys::fs::make_absolute(Abs);
  llvm::sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  std::string Result = llvm::sys::path::convert_to_slash(Abs);
  while (Result.size() > 1 && Result.back() == '/')
    Result.pop_back();
  return Result;
}

// Unreserved characters (RFC 3986) and the separator stay as they are; every
// other byte is escaped, '+' too, which some decoders read as a space.
std::string percentEncode(StringRef Path) {
  std::string Out;
  for (unsigned char C : Path) {
    if (llvm::isAlnum(C) || StringRef("-._~/").contains(C)) {
      Out += C;
      continue;
    }
    Out += '%';
    Out += llvm::hexdigit(C >> 4);
    Out += llvm::hexdigit(C & 15);
  }
  return Out;
}

std::string fileUri(StringRef AbsPath) {
  return "file://" + percentEncode(AbsPath);
}

std::optional<std::string> relativeTo(StringRef Dir, StringRef Path) {
  if (Dir == "/")
    return Path.size() > 1 ? std::optional(Path.drop_front().str())
                           : std::nullopt;
  if (!Path.starts_with(Dir) || Path.size() <= Dir.size() + 1 ||
      Path[Dir.size()] != '/')
    return std::nullopt;
  return Path.drop_front(Dir.size() + 1).str();
}

/// The --source-root, and how the files of the findings are named under it.
class SourceRoot {
public:
  explicit SourceRoot(StringRef Dir) : Root(absolutePath(Dir)) {
    llvm::SmallString<256> Real;
    if (!llvm::sys::fs::real_path(Root, Real))
      RealRoot = llvm::sys::path::convert_to_slash(Real);
  }

  /// The value of %SRCROOT%: a directory's URI ends with a slash.
  std::string uri() const {
    std::string Uri = fileUri(Root);
    if (Uri.back() != '/')
      Uri += '/';
    return Uri;
  }

  /// AbsPath relative to the root; nothing when it is outside.
  std::optional<std::string> relative(StringRef AbsPath) const {
    if (std::optional<std::string> Rel = relativeTo(Root, AbsPath))
      return Rel;
    // A checkout or build directory reached through a symlink.
    llvm::SmallString<256> Real;
    if (RealRoot.empty() || llvm::sys::fs::real_path(AbsPath, Real))
      return std::nullopt;
    return relativeTo(RealRoot, llvm::sys::path::convert_to_slash(Real));
  }

  /// The path a fingerprint hashes: relative when it can be, so that it does
  /// not depend on where the checkout is.
  std::string hashPath(StringRef AbsPath) const {
    return relative(AbsPath).value_or(AbsPath.str());
  }

  json::Object artifactLocation(StringRef AbsPath) const {
    if (std::optional<std::string> Rel = relative(AbsPath))
      return json::Object{{"uri", percentEncode(*Rel)},
                          {"uriBaseId", RootBaseId}};
    return json::Object{{"uri", fileUri(AbsPath)}};
  }

private:
  std::string Root;
  std::string RealRoot; // empty when the root does not exist
};

//===----------------------------------------------------------------------===//
// Source text
//===----------------------------------------------------------------------===//

/// Each source file read once and split into lines.
class SourceFiles {
public:
  /// The text of a 1-based line without its end of line; nothing when the
  /// file cannot be read or has no such line.
  std::optional<StringRef> line(StringRef AbsPath, unsigned Line) {
    const File &F = get(AbsPath);
    if (Line == 0 || Line > F.Lines.size())
      return std::nullopt;
    return F.Lines[Line - 1];
  }

  /// Bytes [Offset, Offset + Length); nothing when out of range or unread.
  std::optional<StringRef> bytes(StringRef AbsPath, unsigned Offset,
                                 unsigned Length) {
    const File &F = get(AbsPath);
    if (!F.Buffer)
      return std::nullopt;
    StringRef Text = F.Buffer->getBuffer();
    if (Offset > Text.size() || Length > Text.size() - Offset)
      return std::nullopt;
    return Text.substr(Offset, Length);
  }

private:
  struct File {
    std::unique_ptr<llvm::MemoryBuffer> Buffer;
    std::vector<StringRef> Lines;
  };

  const File &get(StringRef AbsPath) {
    auto [It, Inserted] = Files.try_emplace(AbsPath);
    File &F = It->second;
    if (!Inserted)
      return F;
    // A saved report can name any path: regular files only, bounded.
    auto Buffer = readSourceBuffer(AbsPath);
    if (!Buffer)
      return F;
    F.Buffer = std::move(Buffer);
    for (StringRef Rest = F.Buffer->getBuffer(); !Rest.empty();) {
      auto [Line, Next] = Rest.split('\n');
      F.Lines.push_back(Line.rtrim('\r'));
      Rest = Next;
    }
    return F;
  }

  llvm::StringMap<File> Files;
};

/// Clang's byte column as a UTF-16 column, the columnKind GitHub assumes.
/// Bytes past the known line text count one each.
unsigned utf16Column(std::optional<StringRef> LineText, unsigned ByteColumn) {
  if (!LineText || ByteColumn == 0)
    return ByteColumn;
  unsigned Prefix = ByteColumn - 1;
  StringRef Known = LineText->take_front(Prefix);
  unsigned Units = Prefix - Known.size();
  for (unsigned char C : Known) {
    if ((C & 0xC0) == 0x80)
      continue;                 // a continuation byte
    Units += C >= 0xF0 ? 2 : 1; // four-byte sequences are surrogate pairs
  }
  return Units + 1;
}

/// The result's region, end exclusive, on the span's line. An empty span
/// still covers one character, so that viewers can show it.
std::optional<json::Object> resultRegion(const SourceSpan &At,
                                         std::optional<StringRef> LineText) {
  if (At.Line == 0)
    return std::nullopt;
  json::Object Region{{"startLine", At.Line}, {"endLine", At.Line}};
  if (At.Column == 0)
    return Region;
  unsigned End = At.Column + std::max(At.Length, 1u);
  Region["startColumn"] = utf16Column(LineText, At.Column);
  Region["endColumn"] = utf16Column(LineText, End);
  return Region;
}

/// primaryLocationLineHash values: a hash of what the line says, not where it
/// is, so that a result keeps its identity when code above it moves. ":N"
/// tells identical lines apart, counted in output order as GitHub does.
class LineHashes {
public:
  std::string next(StringRef Rule, StringRef Path,
                   std::optional<StringRef> LineText, unsigned Line) {
    std::string Key;
    Key += Rule;
    Key += '\0';
    Key += Path;
    Key += '\0';
    if (LineText)
      Key += LineText->trim();
    else
      Key += "line " + std::to_string(Line);
    std::string Hash = llvm::utohexstr(llvm::xxh3_64bits(Key),
                                       /*LowerCase=*/true, /*Width=*/16);
    unsigned N = ++Seen[Hash];
    return Hash + ":" + std::to_string(N);
  }

private:
  llvm::StringMap<unsigned> Seen;
};

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

StringRef precisionName(RulePrecision Precision) {
  return Precision == RulePrecision::High ? "high" : "medium";
}

// GitHub's problem.severity says "recommendation" where SARIF says "note".
StringRef problemSeverity(StringRef Level) {
  return Level == "note" ? StringRef("recommendation") : Level;
}

std::string camelCase(StringRef Id) {
  llvm::SmallVector<StringRef, 4> Words;
  Id.split(Words, '-', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  std::string Name;
  for (StringRef Word : Words) {
    Name += llvm::toUpper(Word.front());
    Name += Word.drop_front();
  }
  return Name;
}

json::Object rule(const RuleInfo &Rule) {
  StringRef Level = diagLevelName(Rule.DefaultLevel);
  std::string Text = (Rule.FullDescription + "\n\nSee " + Rule.DocsPage +
                      " in the skyline-check sources.")
                         .str();
  std::string Markdown =
      ("**" + Rule.ShortDescription + ".**\n\n" + Rule.FullDescription +
       "\n\nSee `" + Rule.DocsPage + "` in the skyline-check sources.")
          .str();
  return json::Object{
      {"id", Rule.Id.str()},
      {"name", camelCase(Rule.Id)},
      {"shortDescription", json::Object{{"text", Rule.ShortDescription.str()}}},
      {"fullDescription", json::Object{{"text", Rule.FullDescription.str()}}},
      {"help", json::Object{{"text", Text}, {"markdown", Markdown}}},
      {"defaultConfiguration", json::Object{{"level", Level.str()}}},
      {"properties",
       json::Object{{"tags", json::Array{"performance"}},
                    {"precision", precisionName(Rule.Precision).str()},
                    {"problem.severity", problemSeverity(Level).str()}}},
  };
}

std::optional<unsigned> ruleIndex(StringRef Id) {
  const RuleInfo *Rule = findRule(Id);
  if (!Rule)
    return std::nullopt;
  return static_cast<unsigned>(Rule - ruleCatalog().data());
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

StringRef resultLevel(DiagLevel Level) {
  switch (Level) {
  case DiagLevel::Note:
  case DiagLevel::Remark:
    return "note";
  case DiagLevel::Warning:
    return "warning";
  case DiagLevel::Error:
    return "error";
  }
  llvm_unreachable("unknown DiagLevel");
}

// Messages and fix-its quote the user's code, which need not be UTF-8.
json::Value text(StringRef S) {
  return json::isUTF8(S) ? json::Value(S.str()) : json::Value(json::fixUTF8(S));
}

class SarifWriter {
public:
  explicit SarifWriter(const SarifOptions &Options)
      : Options(Options),
        Root(Options.SourceRoot.empty() ? defaultSourceRoot("")
                                        : Options.SourceRoot) {}

  json::Value log(ArrayRef<Finding> Findings) {
    return json::Object{{"$schema", SchemaUri},
                        {"version", "2.1.0"},
                        {"runs", json::Array{run(Findings)}}};
  }

private:
  json::Object run(ArrayRef<Finding> Findings);
  json::Object result(const Finding &F);
  std::optional<json::Object> fix(const Finding &F);
  json::Object replacement(StringRef AbsPath, const SourceSpan &Range,
                           StringRef Inserted);

  const SarifOptions &Options;
  SourceRoot Root;
  SourceFiles Sources;
  LineHashes Hashes;
};

json::Object SarifWriter::run(ArrayRef<Finding> Findings) {
  json::Array Rules;
  for (const RuleInfo &Rule : ruleCatalog())
    Rules.push_back(rule(Rule));
  json::Object Driver{{"name", "skyline-check"}, {"rules", std::move(Rules)}};
  if (!Options.ToolVersion.empty())
    Driver["version"] = Options.ToolVersion;

  json::Array Results;
  for (const Finding &F : Findings)
    Results.push_back(result(F));

  json::Object Run{
      {"tool", json::Object{{"driver", std::move(Driver)}}},
      {"originalUriBaseIds",
       json::Object{{RootBaseId, json::Object{{"uri", Root.uri()}}}}},
      {"columnKind", "utf16CodeUnits"},
      {"results", std::move(Results)},
  };
  if (!Options.AutomationId.empty())
    Run["automationDetails"] = json::Object{{"id", Options.AutomationId}};
  return Run;
}

json::Object SarifWriter::result(const Finding &F) {
  json::Object Result{{"ruleId", F.Rule},
                      {"level", resultLevel(F.Level).str()},
                      {"message", json::Object{{"text", text(F.Message)}}}};
  if (std::optional<unsigned> Index = ruleIndex(F.Rule))
    Result["ruleIndex"] = *Index;

  std::string HashPath;
  std::optional<StringRef> LineText;
  if (!F.At.File.empty()) {
    std::string AbsPath = absolutePath(F.At.File);
    HashPath = Root.hashPath(AbsPath);
    LineText = Sources.line(AbsPath, F.At.Line);
    json::Object Physical{{"artifactLocation", Root.artifactLocation(AbsPath)}};
    if (std::optional<json::Object> Region = resultRegion(F.At, LineText))
      Physical["region"] = std::move(*Region);
    Result["locations"] =
        json::Array{json::Object{{"physicalLocation", std::move(Physical)}}};
  }
  Result["partialFingerprints"] =
      json::Object{{"primaryLocationLineHash",
                    Hashes.next(F.Rule, HashPath, LineText, F.At.Line)}};

  if (std::optional<json::Object> Fix = fix(F))
    Result["fixes"] = json::Array{std::move(*Fix)};
  // The only thing SARIF has no place for: --export-fixes leaves this fix
  // out unless asked.
  json::Object Properties;
  if (F.OptionalFix)
    Properties["optionalFix"] = true;
  for (const auto &[Name, Value] : F.Figures)
    if (std::isfinite(Value)) // JSON has no infinity: an unbounded end
      Properties[Name] = Value;
  if (!Properties.empty())
    Result["properties"] = std::move(Properties);
  return Result;
}

std::optional<json::Object> SarifWriter::fix(const Finding &F) {
  // One artifactChange per file, in the order the edits first name it.
  std::vector<std::pair<std::string, json::Array>> Changes;
  for (const TextEdit &Edit : F.Edits) {
    StringRef File = Edit.Range.File.empty() ? F.At.File : Edit.Range.File;
    if (File.empty())
      continue; // no file to change
    std::string AbsPath = absolutePath(File);
    auto It = llvm::find_if(
        Changes, [&](const auto &Change) { return Change.first == AbsPath; });
    if (It == Changes.end())
      It = Changes.insert(It, {AbsPath, json::Array()});
    It->second.push_back(replacement(AbsPath, Edit.Range, Edit.Text));
  }
  if (Changes.empty())
    return std::nullopt;

  json::Array ArtifactChanges;
  for (auto &[AbsPath, Replacements] : Changes)
    ArtifactChanges.push_back(
        json::Object{{"artifactLocation", Root.artifactLocation(AbsPath)},
                     {"replacements", std::move(Replacements)}});
  return json::Object{{"description", json::Object{{"text", text(F.Message)}}},
                      {"artifactChanges", std::move(ArtifactChanges)}};
}

json::Object SarifWriter::replacement(StringRef AbsPath,
                                      const SourceSpan &Range,
                                      StringRef Inserted) {
  json::Object Deleted{{"byteOffset", Range.Offset},
                       {"byteLength", Range.Length}};
  // Lines and columns too, for viewers that ignore byte offsets; not when the
  // deleted text spans lines, where one line's columns would contradict them.
  std::optional<StringRef> Old =
      Sources.bytes(AbsPath, Range.Offset, Range.Length);
  bool SpansLines = Old && Old->contains('\n');
  if (Range.Line != 0 && Range.Column != 0 && !SpansLines) {
    std::optional<StringRef> LineText = Sources.line(AbsPath, Range.Line);
    Deleted["startLine"] = Range.Line;
    Deleted["startColumn"] = utf16Column(LineText, Range.Column);
    Deleted["endColumn"] = utf16Column(LineText, Range.Column + Range.Length);
  }
  return json::Object{
      {"deletedRegion", std::move(Deleted)},
      {"insertedContent", json::Object{{"text", text(Inserted)}}}};
}

} // namespace

std::string findingsToSarif(ArrayRef<Finding> Findings,
                            const SarifOptions &Options) {
  json::Value Log = SarifWriter(Options).log(Findings);
  return llvm::formatv("{0:2}", Log).str() + "\n";
}

std::string defaultSourceRoot(StringRef Dir) {
  std::string Start = absolutePath(Dir);
  StringRef Current = Start;
  while (!Current.empty()) {
    llvm::SmallString<256> Git(Current);
    llvm::sys::path::append(Git, ".git");
    // A directory in a checkout, a file in a worktree or submodule.
    if (llvm::sys::fs::exists(Git))
      return Current.str();
    StringRef Parent = llvm::sys::path::parent_path(Current);
    if (Parent == Current)
      break;
    Current = Parent;
  }
  return Start;
}

} // namespace skyline
