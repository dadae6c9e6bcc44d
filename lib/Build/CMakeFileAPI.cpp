//===- CMakeFileAPI.cpp - The program's target from CMake ----------------===//
//
// Reads a codemodel-v2 reply: the index names the codemodel, the codemodel
// names one JSON file per target. Source paths in the reply are relative to
// the top source dir, artifacts to the top build dir, and relative link
// fragments to the directory the generator runs the linker in.
//
//===----------------------------------------------------------------------===//

#include "skyline/CMakeFileAPI.h"

#include "skyline/InputFile.h"
#include "skyline/Process.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

namespace skyline {
namespace {

constexpr llvm::StringLiteral ClientName = "client-skyline-check";

llvm::Error fileAPIError(const llvm::Twine &Message) {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument), Message);
}

std::string replyDir(llvm::StringRef BuildDir) {
  return (BuildDir + "/.cmake/api/v1/reply").str();
}

llvm::Expected<llvm::json::Object> readObject(const llvm::Twine &PathTwine) {
  std::string Path = PathTwine.str();
  // Regular and bounded: a reply is CMake's, but the build dir is the user's.
  auto Text = readInputFile(Path, "CMake File API reply", MaxJsonInputBytes);
  if (!Text)
    return Text.takeError();
  auto Value = llvm::json::parse(*Text);
  if (!Value)
    return fileAPIError("malformed " + Path + ": " +
                        llvm::toString(Value.takeError()));
  if (!Value->getAsObject())
    return fileAPIError("malformed " + Path + ": not a JSON object");
  return std::move(*Value->getAsObject());
}

/// A value of the CMakeCache.txt text, whatever its type.
std::string cacheValue(llvm::StringRef Cache, llvm::StringRef Name) {
  for (llvm::StringRef Line : llvm::split(Cache, '\n')) {
    auto [Key, Value] = Line.split('=');
    if (Key.split(':').first == Name)
      return Value.trim().str();
  }
  return "";
}

/// The codemodel-v2 file an index names: our client's answer, the shared
/// query's, or any other client's (the object list holds them all).
std::optional<std::string> answerFile(const llvm::json::Object *Answers) {
  const llvm::json::Object *Answer =
      Answers ? Answers->getObject("codemodel-v2") : nullptr;
  std::optional<llvm::StringRef> File =
      Answer ? Answer->getString("jsonFile") : std::nullopt;
  if (!File)
    return std::nullopt;
  return File->str();
}

/// The codemodel-v2 file an index names: our client's answer, the shared
/// query's, or any other client's (the object list holds them all).
std::optional<std::string> codemodelFile(const llvm::json::Object &Index) {
  if (const llvm::json::Object *Reply = Index.getObject("reply")) {
    if (std::optional<std::string> File =
            answerFile(Reply->getObject(ClientName)))
      return File;
    if (std::optional<std::string> File = answerFile(Reply))
      return File;
  }
  if (const llvm::json::Array *Objects = Index.getArray("objects"))
    for (const llvm::json::Value &Entry : *Objects) {
      const llvm::json::Object *Object = Entry.getAsObject();
      if (!Object || Object->getString("kind") != "codemodel")
        continue;
      const llvm::json::Object *Version = Object->getObject("version");
      if (Version && Version->getInteger("major") == 2)
        if (std::optional<llvm::StringRef> File = Object->getString("jsonFile"))
          return File->str();
    }
  return std::nullopt;
}

/// The newest index file: CMake names them by time, so the greatest name.
std::optional<std::string> latestIndex(llvm::StringRef BuildDir) {
  std::string Latest;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(replyDir(BuildDir), EC), End;
       !EC && It != End; It.increment(EC)) {
    llvm::StringRef Name = llvm::sys::path::filename(It->path());
    if (Name.starts_with("index-") && Name.ends_with(".json") &&
        Name > llvm::sys::path::filename(Latest))
      Latest = It->path();
  }
  if (Latest.empty())
    return std::nullopt;
  return Latest;
}

bool olderThan(llvm::StringRef Path, llvm::StringRef Other) {
  llvm::sys::fs::file_status Status, OtherStatus;
  if (llvm::sys::fs::status(Path, Status) ||
      llvm::sys::fs::status(Other, OtherStatus))
    return false;
  return Status.getLastModificationTime() <
         OtherStatus.getLastModificationTime();
}

/// The codemodel's facts needed to read its targets.
struct Codemodel {
  std::string ReplyDir;
  std::string SourceDir;
  std::string BuildDir;
  std::string Generator;
  std::vector<llvm::json::Object> Targets; // of the first configuration
};

llvm::Expected<Codemodel> readCodemodel(llvm::StringRef IndexFile) {
  auto Index = readObject(IndexFile);
  if (!Index)
    return Index.takeError();
  Codemodel Model;
  Model.ReplyDir = llvm::sys::path::parent_path(IndexFile).str();
  if (const llvm::json::Object *CMake = Index->getObject("cmake"))
    if (const llvm::json::Object *Generator = CMake->getObject("generator"))
      Model.Generator = Generator->getString("name").value_or("").str();
  std::optional<std::string> File = codemodelFile(*Index);
  if (!File)
    return fileAPIError(IndexFile + " answers no codemodel-v2 query");
  auto Object = readObject(Model.ReplyDir + "/" + *File);
  if (!Object)
    return Object.takeError();
  if (const llvm::json::Object *Paths = Object->getObject("paths")) {
    Model.SourceDir = Paths->getString("source").value_or("").str();
    Model.BuildDir = Paths->getString("build").value_or("").str();
  }
  // A multi-config generator describes each configuration; the first is the
  // default one, the one `cmake --build` builds.
  const llvm::json::Array *Configurations = Object->getArray("configurations");
  if (Model.SourceDir.empty() || Model.BuildDir.empty() || !Configurations ||
      Configurations->empty() || !(*Configurations)[0].getAsObject())
    return fileAPIError("malformed codemodel " + *File +
                        ": no paths or configurations");
  if (const llvm::json::Array *Targets =
          (*Configurations)[0].getAsObject()->getArray("targets"))
    for (const llvm::json::Value &Entry : *Targets) {
      const llvm::json::Object *Target = Entry.getAsObject();
      std::optional<llvm::StringRef> TargetFile =
          Target ? Target->getString("jsonFile") : std::nullopt;
      if (!TargetFile)
        continue;
      auto TargetObject = readObject(Model.ReplyDir + "/" + *TargetFile);
      if (!TargetObject)
        return TargetObject.takeError();
      Model.Targets.push_back(std::move(*TargetObject));
    }
  return Model;
}

/// A path and, where it exists, its real path: symbolic links in either the
/// program's paths or CMake's must not hide a match.
std::set<std::string> pathKeys(llvm::StringRef Path) {
  std::set<std::string> Keys = {Path.str()};
  llvm::SmallString<256> Real;
  if (!llvm::sys::fs::real_path(Path, Real))
    Keys.insert(std::string(Real));
  return Keys;
}

bool isObjectFile(llvm::StringRef Path) {
  llvm::StringRef Extension = llvm::sys::path::extension(Path);
  return Extension == ".o" || Extension == ".obj";
}

void readSources(const llvm::json::Object &Target, const Codemodel &Model,
                 CMakeTarget &Result) {
  const llvm::json::Array *Sources = Target.getArray("sources");
  if (!Sources)
    return;
  for (const llvm::json::Value &Entry : *Sources) {
    const llvm::json::Object *Source = Entry.getAsObject();
    std::optional<llvm::StringRef> Path =
        Source ? Source->getString("path") : std::nullopt;
    if (!Path)
      continue;
    std::string Absolute = absolutePathIn(Model.SourceDir, *Path);
    if (Source->getInteger("compileGroupIndex"))
      Result.Sources.push_back(std::move(Absolute));
    else if (isObjectFile(Absolute))
      Result.Objects.push_back(std::move(Absolute));
  }
}

/// Ninja runs every command in the top build dir; the other generators run
/// the linker in the target's own build dir.
std::string linkDirectory(const llvm::json::Object &Target,
                          const Codemodel &Model) {
  if (llvm::StringRef(Model.Generator).starts_with("Ninja"))
    return Model.BuildDir;
  const llvm::json::Object *Paths = Target.getObject("paths");
  std::optional<llvm::StringRef> Build =
      Paths ? Paths->getString("build") : std::nullopt;
  return absolutePathIn(Model.BuildDir, Build.value_or("."));
}

void readLink(const llvm::json::Object &Target, const Codemodel &Model,
              CMakeTarget &Result) {
  const llvm::json::Object *Link = Target.getObject("link");
  if (!Link)
    return;
  Result.LinkLanguage = Link->getString("language").value_or("").str();
  const llvm::json::Array *Fragments = Link->getArray("commandFragments");
  if (!Fragments)
    return;
  std::string Directory = linkDirectory(Target, Model);
  llvm::BumpPtrAllocator Allocator;
  llvm::StringSaver Saver(Allocator);
  for (const llvm::json::Value &Entry : *Fragments) {
    const llvm::json::Object *Fragment = Entry.getAsObject();
    if (!Fragment)
      continue;
    llvm::StringRef Text = Fragment->getString("fragment").value_or("").trim();
    llvm::StringRef Role = Fragment->getString("role").value_or("");
    if (Text.empty())
      continue;
    if (Role != "libraries") {
      Result.LinkFlags.push_back(Text.str());
      continue;
    }
    // One fragment may be several arguments, quoted for the shell.
    llvm::SmallVector<const char *, 4> Arguments;
    llvm::cl::TokenizeGNUCommandLine(Text, Saver, Arguments);
    for (llvm::StringRef Argument : Arguments)
      Result.LinkLibraries.push_back(Argument.starts_with("-")
                                         ? Argument.str()
                                         : absolutePathIn(Directory, Argument));
  }
}

void readDependencies(const llvm::json::Object &Target, const Codemodel &Model,
                      CMakeTarget &Result) {
  const llvm::json::Array *Dependencies = Target.getArray("dependencies");
  if (!Dependencies)
    return;
  for (const llvm::json::Value &Entry : *Dependencies) {
    const llvm::json::Object *Dependency = Entry.getAsObject();
    std::optional<llvm::StringRef> Id =
        Dependency ? Dependency->getString("id") : std::nullopt;
    const llvm::json::Object *Other = nullptr;
    for (const llvm::json::Object &Candidate : Model.Targets)
      if (Id && Candidate.getString("id") == *Id)
        Other = &Candidate;
    if (!Other)
      continue;
    CMakeDependency Library;
    Library.Name = Other->getString("name").value_or("").str();
    Library.Type = Other->getString("type").value_or("").str();
    if (const llvm::json::Array *Artifacts = Other->getArray("artifacts"))
      for (const llvm::json::Value &Artifact : *Artifacts)
        if (const llvm::json::Object *A = Artifact.getAsObject())
          if (std::optional<llvm::StringRef> Path = A->getString("path"))
            Library.Artifacts.push_back(absolutePathIn(Model.BuildDir, *Path));
    Result.Dependencies.push_back(std::move(Library));
  }
}

/// What choosing the target needs; its link items are read for the chosen one.
CMakeTarget readNameAndSources(const llvm::json::Object &Target,
                               const Codemodel &Model) {
  CMakeTarget Result;
  Result.Name = Target.getString("name").value_or("").str();
  Result.Type = Target.getString("type").value_or("").str();
  readSources(Target, Model, Result);
  return Result;
}

/// The program's sources, matched by path or by real path.
class SourceMatcher {
public:
  explicit SourceMatcher(llvm::ArrayRef<std::string> Sources) {
    for (const std::string &Source : Sources) {
      llvm::SmallString<256> Path(Source);
      llvm::sys::fs::make_absolute(Path);
      llvm::sys::path::remove_dots(Path, true);
      Keys.push_back(pathKeys(Path));
      Names.insert(llvm::sys::path::filename(Path).str());
    }
  }

  /// Whether Source is one of the program's sources.
  bool holds(const std::string &Source) const { return count({Source}) != 0; }

  /// How many of the program's sources a target's sources hold.
  unsigned count(const std::vector<std::string> &Compiled) const {
    std::vector<bool> Found(Keys.size());
    for (const std::string &Source : Compiled) {
      // Real paths cost system calls: only for a file of the same name.
      if (!Names.count(llvm::sys::path::filename(Source).str()))
        continue;
      for (const std::string &Key : pathKeys(Source))
        for (size_t I = 0; I < Keys.size(); ++I)
          Found[I] = Found[I] || Keys[I].count(Key) != 0;
    }
    return llvm::count(Found, true);
  }

private:
  std::vector<std::set<std::string>> Keys;
  std::set<std::string> Names;
};

llvm::Error reconfigure(llvm::StringRef BuildDir, llvm::StringRef LogPath,
                        llvm::raw_ostream &Progress) {
  auto Cache = readInputFile((BuildDir + "/CMakeCache.txt").str(),
                             "CMake cache", MaxJsonInputBytes);
  if (!Cache)
    return Cache.takeError();
  std::string Home = cacheValue(*Cache, "CMAKE_HOME_DIRECTORY");
  if (Home.empty())
    return fileAPIError(BuildDir +
                        "/CMakeCache.txt names no CMAKE_HOME_DIRECTORY");
  // The cmake that made the build dir reads its cache best.
  std::string CMake = cacheValue(*Cache, "CMAKE_COMMAND");
  if (CMake.empty() || !llvm::sys::fs::can_execute(CMake))
    CMake = "cmake";
  Progress << "skyline-check: re-configuring " << BuildDir
           << " to get the program's link line from the CMake File API\n";
  ProcessResult Result = runProcess({CMake, "-S", Home, "-B", BuildDir.str()},
                                    "", {}, LogPath, 600);
  if (Result.ExitCode != 0)
    return fileAPIError("re-configuring " + BuildDir +
                        " failed (log: " + LogPath + ")");
  return llvm::Error::success();
}

} // namespace

std::string absolutePathIn(llvm::StringRef Directory, llvm::StringRef Path) {
  llvm::SmallString<256> Result(Path);
  if (!llvm::sys::path::is_absolute(Result)) {
    Result = Directory;
    llvm::sys::path::append(Result, Path);
  }
  llvm::sys::path::remove_dots(Result, true);
  return std::string(Result);
}

std::string codemodelQueryPath(llvm::StringRef BuildDir) {
  return (BuildDir + "/.cmake/api/v1/query/" + ClientName + "/codemodel-v2")
      .str();
}

llvm::Error writeCodemodelQuery(llvm::StringRef BuildDir) {
  std::string Query = codemodelQueryPath(BuildDir);
  if (llvm::sys::fs::exists(Query))
    return llvm::Error::success();
  if (std::error_code EC = llvm::sys::fs::create_directories(
          llvm::sys::path::parent_path(Query)))
    return fileAPIError("cannot write the File API query in " + BuildDir +
                        ": " + EC.message());
  std::error_code EC;
  llvm::raw_fd_ostream Out(Query, EC);
  if (EC)
    return fileAPIError("cannot write " + Query + ": " + EC.message());
  return llvm::Error::success();
}

std::optional<std::string> freshCodemodelReply(llvm::StringRef BuildDir) {
  std::optional<std::string> Index = latestIndex(BuildDir);
  if (!Index || olderThan(*Index, (BuildDir + "/CMakeCache.txt").str()))
    return std::nullopt;
  auto Object = readObject(*Index);
  if (!Object) {
    llvm::consumeError(Object.takeError());
    return std::nullopt;
  }
  if (!codemodelFile(*Object))
    return std::nullopt;
  return Index;
}

llvm::Expected<CMakeTarget>
readTargetWithSource(llvm::StringRef IndexFile,
                     llvm::ArrayRef<std::string> Sources) {
  auto Model = readCodemodel(IndexFile);
  if (!Model)
    return Model.takeError();
  SourceMatcher Program(Sources);
  // An executable ahead of a library that compiles the same file, then the
  // target that compiles most of the program.
  const llvm::json::Object *BestObject = nullptr;
  CMakeTarget Best;
  std::pair<bool, unsigned> BestRank;
  for (const llvm::json::Object &Object : Model->Targets) {
    CMakeTarget Target = readNameAndSources(Object, *Model);
    std::pair<bool, unsigned> Rank(Target.Type == "EXECUTABLE",
                                   Program.count(Target.Sources));
    if (Rank.second != 0 && (!BestObject || Rank > BestRank)) {
      Best = std::move(Target);
      BestObject = &Object;
      BestRank = Rank;
    }
  }
  std::string First = Sources.empty() ? "" : Sources.front();
  if (!BestObject)
    return fileAPIError("no target of " + Model->BuildDir + " compiles " +
                        First);
  if (Best.Type != "EXECUTABLE")
    return fileAPIError("no executable target compiles " + First +
                        ", only the " + Best.Type + " '" + Best.Name + "'");
  readLink(*BestObject, *Model, Best);
  readDependencies(*BestObject, *Model, Best);
  return Best;
}

std::vector<std::string> otherSources(const CMakeTarget &Target,
                                      llvm::ArrayRef<std::string> Given) {
  static const llvm::StringRef CXXExtensions[] = {".cpp", ".cc", ".cxx", ".c++",
                                                  ".C"};
  SourceMatcher Program(Given);
  std::vector<std::string> Others;
  for (const std::string &Source : Target.Sources) {
    bool IsCXX =
        llvm::is_contained(CXXExtensions, llvm::sys::path::extension(Source));
    if (IsCXX && !Program.holds(Source) && !llvm::is_contained(Others, Source))
      Others.push_back(Source);
  }
  return Others;
}

llvm::Expected<CMakeTarget> loadCMakeTarget(llvm::StringRef BuildDir,
                                            llvm::ArrayRef<std::string> Sources,
                                            llvm::StringRef LogPath,
                                            llvm::raw_ostream &Progress) {
  if (!llvm::sys::fs::exists(BuildDir + "/CMakeCache.txt"))
    return fileAPIError(BuildDir +
                        " has no CMakeCache.txt: not a CMake build dir");
  if (llvm::Error E = writeCodemodelQuery(BuildDir))
    return std::move(E);
  std::optional<std::string> Index = freshCodemodelReply(BuildDir);
  if (!Index) {
    if (llvm::Error E = reconfigure(BuildDir, LogPath, Progress))
      return std::move(E);
    Index = freshCodemodelReply(BuildDir);
  }
  if (!Index)
    return fileAPIError("CMake wrote no codemodel-v2 reply in " + BuildDir +
                        " (the File API needs CMake 3.14 or newer)");
  return readTargetWithSource(*Index, Sources);
}

} // namespace skyline
