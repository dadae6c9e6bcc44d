//===- Build.cpp - Building the instrumented program ----------------------===//

#include "skyline/Build.h"

#include "skyline/CMakeFileAPI.h"
#include "skyline/Config.h"
#include "skyline/OutputFiles.h"
#include "skyline/Process.h"
#include "skyline/RuntimeCache.h"

#include "clang/Driver/Options.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Option/Arg.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Option/OptTable.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <set>

namespace skyline {
namespace {

void addUnique(std::vector<std::string> &To, const std::string &Value) {
  if (std::find(To.begin(), To.end(), Value) == To.end())
    To.push_back(Value);
}

/// CMake's quoting for a string in the generated CMakeLists.txt.
std::string quoted(llvm::StringRef Text) {
  std::string Out = "\"";
  for (char C : Text) {
    if (C == '"' || C == '\\' || C == '$')
      Out += '\\';
    Out += C;
  }
  return Out + "\"";
}

std::string list(const std::vector<std::string> &Items) {
  std::string Out;
  for (const std::string &Item : Items)
    Out += "\n  " + quoted(Item);
  return Out;
}

std::string readFile(llvm::StringRef Path) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  return Buffer ? (*Buffer)->getBuffer().str() : "";
}

/// Compiler output with the mirror's paths turned back into the user's.
std::string mapToOriginal(std::string Text,
                          const InstrumentedProgram &Program) {
  std::string From = Program.MirrorRoot,
              To = Program.SourceRoot == "/" ? "" : Program.SourceRoot;
  for (size_t At = Text.find(From); At != std::string::npos;
       At = Text.find(From, At + To.size()))
    Text.replace(At, From.size(), To);
  return Text;
}

/// A compiler or linker line worth showing: the linker says "undefined
/// reference" and "cannot find" without an "error:".
bool isDiagnostic(llvm::StringRef Line) {
  return Line.contains("error:") || Line.contains("note:") ||
         Line.contains("undefined reference") || Line.contains("cannot find");
}

/// How the instrumented program links: the user's target's own link items
/// when the CMake File API gives them, else LibTorch and --link-arg alone.
struct ProgramLink {
  std::string Target;                 // the user's target; empty: no File API
  std::vector<std::string> Objects;   // object files linked as sources
  std::vector<std::string> Flags;     // shell fragments, before the objects
  std::vector<std::string> Libraries; // after the objects, in the user's order
  bool LinkTorch = true;              // false: Libraries carry LibTorch already
};

/// The user's files the mirrored translation units were made from.
std::vector<std::string> originalSources(const InstrumentedProgram &Program) {
  std::vector<std::string> Originals;
  for (const std::string &Mirror : Program.Sources)
    for (const auto &[Original, MirrorOfOriginal] : Program.MirrorOf)
      if (MirrorOfOriginal == Mirror)
        Originals.push_back(Original);
  return Originals;
}

/// Linking LibTorch twice can break the link (a static LibTorch is linked
/// whole-archive), so the target's own LibTorch items replace ours.
bool carriesLibTorch(const std::vector<std::string> &Libraries) {
  return llvm::any_of(Libraries, [](llvm::StringRef Item) {
    llvm::StringRef Name = Item.substr(Item.find_last_of("/,") + 1);
    return Name == "-ltorch" || Name == "-ltorch_cpu" ||
           Name.starts_with("libtorch.") || Name.starts_with("libtorch_cpu.");
  });
}

/// The project's libraries are linked from the user's build dir: one not
/// built yet would fail the link with a less helpful message.
llvm::Error checkBuilt(const CMakeTarget &Target, llvm::StringRef BuildPath) {
  for (const CMakeDependency &Library : Target.Dependencies) {
    if (Library.Type != "STATIC_LIBRARY" && Library.Type != "SHARED_LIBRARY")
      continue;
    for (const std::string &Artifact : Library.Artifacts)
      if (!llvm::sys::fs::exists(Artifact))
        return llvm::createStringError(
            std::errc::no_such_file_or_directory,
            "the program links '%s' of %s, which is not built yet (no %s): "
            "build it first (cmake --build %s --target %s)",
            Library.Name.c_str(), BuildPath.str().c_str(), Artifact.c_str(),
            BuildPath.str().c_str(), Library.Name.c_str());
  }
  for (const std::string &Object : Target.Objects)
    if (!llvm::sys::fs::exists(Object))
      return llvm::createStringError(std::errc::no_such_file_or_directory,
                                     "the program links %s, which is not built "
                                     "yet: build %s first (cmake --build %s)",
                                     Object.c_str(), BuildPath.str().c_str(),
                                     BuildPath.str().c_str());
  return llvm::Error::success();
}

/// Notes on what the target does that the instrumented program does not.
void noteDifferences(const CMakeTarget &Target,
                     const std::vector<std::string> &Originals,
                     llvm::raw_ostream &Progress) {
  if (Target.LinkLanguage != "CXX" && Target.LinkLanguage != "C")
    Progress << "skyline-check: note: target '" << Target.Name << "' links as "
             << Target.LinkLanguage
             << "; the instrumented program links its items as C++\n";
  std::vector<std::string> Missing;
  for (const std::string &Source : Target.Sources)
    if (!llvm::is_contained(Originals, Source))
      Missing.push_back(llvm::sys::path::filename(Source).str());
  if (Missing.empty())
    return;
  Progress << "skyline-check: note: target '" << Target.Name
           << "' also compiles "
           << llvm::join(llvm::ArrayRef(Missing).take_front(3), ", ")
           << (Missing.size() > 3 ? ", ..." : "")
           << ", not given on the command line: the instrumented program has "
              "only the given sources\n";
}

/// The link part of the generated CMakeLists.txt.
void writeLink(llvm::raw_ostream &Out, const ProgramLink &Link,
               const std::vector<std::string> &LinkArgs) {
  // One SHELL: option keeps the flags as they are: CMake de-duplicates
  // separate options, which would break pairs like "-Xlinker -z -Xlinker now".
  if (!Link.Flags.empty())
    Out << "target_link_options(skyline_instrumented PRIVATE "
        << quoted("SHELL:" + llvm::join(Link.Flags, " ")) << ")\n";
  // The target's items link LibTorch; the runtime still compiles against it.
  if (!Link.LinkTorch)
    Out << "target_include_directories(skyline_instrumented SYSTEM PRIVATE "
           "${TORCH_INCLUDE_DIRS})\n"
        << "if(TORCH_CXX_FLAGS)\n"
        << "  target_compile_options(skyline_instrumented PRIVATE "
           "${TORCH_CXX_FLAGS})\n"
        << "endif()\n";
  Out << "target_link_libraries(skyline_instrumented" << list(Link.Libraries);
  if (Link.LinkTorch)
    Out << "\n  \"${TORCH_LIBRARIES}\"";
  Out << list(LinkArgs) << ")\n";
}

/// The user's target, or why the File API cannot say.
llvm::Expected<CMakeTarget>
userTarget(const BuildOptions &Options,
           const std::vector<std::string> &Originals,
           llvm::raw_ostream &Progress) {
  if (Options.Target)
    return *Options.Target;
  if (!Options.NoTargetReason.empty())
    return llvm::createStringError(std::errc::invalid_argument, "%s",
                                   Options.NoTargetReason.c_str());
  if (Options.BuildPath.empty())
    return llvm::createStringError(std::errc::invalid_argument,
                                   "no build dir given (-p)");
  return loadCMakeTarget(Options.BuildPath, Originals,
                         Options.WorkDir + "/fileapi.log", Progress);
}

/// The user's target's link items, or LibTorch alone with a note saying why.
llvm::Expected<ProgramLink> programLink(const InstrumentedProgram &Program,
                                        const BuildOptions &Options,
                                        llvm::raw_ostream &Progress) {
  ProgramLink Link;
  std::vector<std::string> Originals = originalSources(Program);
  auto Target = userTarget(Options, Originals, Progress);
  if (!Target) {
    Progress << "skyline-check: note: linking LibTorch and --link-arg only: "
             << llvm::toString(Target.takeError()) << "\n";
    return Link;
  }
  if (llvm::Error E = checkBuilt(*Target, Options.BuildPath))
    return std::move(E);
  noteDifferences(*Target, Originals, Progress);
  Link.Target = Target->Name;
  Link.Objects = Target->Objects;
  Link.Flags = Target->LinkFlags;
  Link.Libraries = Target->LinkLibraries;
  Link.LinkTorch = !carriesLibTorch(Link.Libraries);
  return Link;
}

/// Arg as a POSIX shell's word (CMake passes COMPILE_FLAGS to one).
std::string shellWord(llvm::StringRef Arg) {
  if (!Arg.empty() && Arg.find_first_of(" \t\"'\\$`") == llvm::StringRef::npos)
    return Arg.str();
  std::string Word = "'";
  for (char C : Arg)
    Word += C == '\'' ? std::string("'\\''") : std::string(1, C);
  return Word + "'";
}

/// The options of a source's own (sanitized) compile command that the
/// generated target does not give itself (its include paths, definitions
/// and standard): forced includes, warnings, features, ... in the user's
/// order, as words. A forced include of the program's own is the mirror's
/// copy.
std::vector<std::string> sourceOptions(const clang::tooling::CompileCommand &C,
                                       const InstrumentedProgram &Program) {
  namespace opts = clang::driver::options;
  const std::vector<std::string> &Args = C.CommandLine;
  std::vector<const char *> Argv;
  for (size_t I = 1; I < Args.size(); ++I)
    Argv.push_back(Args[I].c_str());
  unsigned MissingIndex = 0, MissingCount = 0;
  llvm::opt::InputArgList Parsed = clang::driver::getDriverOptTable().ParseArgs(
      Argv, MissingIndex, MissingCount,
      llvm::opt::Visibility(opts::ClangOption));
  std::vector<const llvm::opt::Arg *> Options(Parsed.begin(), Parsed.end());
  std::vector<std::string> Kept;
  for (size_t I = 0; I < Options.size(); ++I) {
    const llvm::opt::Arg &A = *Options[I];
    const llvm::opt::Option &O = A.getOption();
    llvm::StringRef Name = O.getName();
    // The target gives these (or the build must not take them): the
    // source and what follows "--", -c, include paths and definitions,
    // the standard (CXX_STANDARD), what libTooling added for its parse
    // (--driver-mode, --target, --no-default-config), and warnings as
    // errors, which the instrumentation's own code is not the user's to
    // fail on.
    if (O.matches(opts::OPT_INPUT) || O.matches(opts::OPT__DASH_DASH) ||
        O.matches(opts::OPT_c) || O.matches(opts::OPT_I) ||
        O.matches(opts::OPT_isystem) || O.matches(opts::OPT_D) ||
        O.matches(opts::OPT_std_EQ) || O.matches(opts::OPT_o) ||
        O.matches(opts::OPT_driver_mode) || O.matches(opts::OPT_target) ||
        Name == "no-default-config" ||
        llvm::StringRef(Args[1 + A.getIndex()]).starts_with("-Werror") ||
        O.matches(opts::OPT_UNKNOWN))
      continue;
    size_t End =
        I + 1 < Options.size() ? Options[I + 1]->getIndex() : Argv.size();
    std::vector<std::string> Span(Args.begin() + 1 + A.getIndex(),
                                  Args.begin() + 1 + End);
    // Paths are the command's directory's; the program's own files are the
    // mirror's.
    if ((O.matches(opts::OPT_include) || O.matches(opts::OPT_imacros) ||
         O.matches(opts::OPT_iquote) || O.matches(opts::OPT_idirafter)) &&
        A.getNumValues() == 1) {
      // Looked for from the command's directory first, then along the
      // include path (where "fstream" is found): made absolute only where
      // it is there.
      std::string Path = A.getValue();
      std::string Here = absolutePathIn(C.Directory, Path);
      if (llvm::sys::fs::exists(Here) || Program.MirrorOf.count(Here))
        Path = Here;
      auto Mirror = Program.MirrorOf.find(Path);
      if (Mirror != Program.MirrorOf.end())
        Path = Mirror->second;
      Span = {"-" + Name.rtrim('=').str(), Path};
    }
    llvm::append_range(Kept, Span);
  }
  return Kept;
}

} // namespace

ProjectFlags projectFlags(const clang::tooling::CompilationDatabase &DB,
                          const ProgramModel &Model,
                          const InstrumentedProgram &Program) {
  ProjectFlags Flags;
  for (const std::string &Source : Model.Sources)
    for (const clang::tooling::CompileCommand &Command :
         DB.getCompileCommands(Source)) {
      auto Mirror = Program.MirrorOf.find(Source);
      if (Mirror != Program.MirrorOf.end() &&
          !Flags.SourceOptions.count(Mirror->second))
        Flags.SourceOptions[Mirror->second] = sourceOptions(Command, Program);
      const auto &Args = Command.CommandLine;
      for (size_t I = 1; I < Args.size(); ++I) {
        llvm::StringRef Arg = Args[I];
        auto Value = [&](llvm::StringRef Flag) -> std::string {
          if (Arg == Flag && I + 1 < Args.size())
            return Args[++I];
          return Arg.drop_front(Flag.size()).str();
        };
        if (Arg.starts_with("-I")) {
          std::string Dir = absolutePathIn(Command.Directory, Value("-I"));
          llvm::StringRef DirRef(Dir);
          if (Program.SourceRoot != "/" &&
              (DirRef == Program.SourceRoot ||
               DirRef.starts_with(Program.SourceRoot + "/")))
            addUnique(Flags.MirrorIncludes,
                      Program.MirrorRoot +
                          DirRef.drop_front(Program.SourceRoot.size()).str());
          addUnique(Flags.Includes, Dir);
        } else if (Arg.starts_with("-isystem")) {
          addUnique(Flags.SystemIncludes,
                    absolutePathIn(Command.Directory, Value("-isystem")));
        } else if (Arg.starts_with("-D")) {
          addUnique(Flags.Definitions, Value("-D"));
        } else if (Arg.starts_with("-std=")) {
          llvm::StringRef Std = Arg.drop_front(5);
          for (llvm::StringRef Prefix : {"gnu++", "c++"})
            if (Std.consume_front(Prefix))
              Flags.Standard = Std.str();
        }
      }
    }
  // The program's own directories first, so no original header is read.
  for (const auto &[Original, Mirror] : Program.MirrorOf) {
    (void)Original;
    addUnique(Flags.MirrorIncludes, llvm::sys::path::parent_path(Mirror).str());
  }
  return Flags;
}

llvm::Expected<std::string> findTorchDir(llvm::StringRef Explicit,
                                         llvm::StringRef BuildPath) {
  auto Usable = [](llvm::StringRef Dir) {
    return llvm::sys::fs::exists(Dir + "/TorchConfig.cmake");
  };
  if (!Explicit.empty()) {
    if (Usable(Explicit))
      return Explicit.str();
    return llvm::createStringError(
        std::errc::no_such_file_or_directory,
        "--torch-dir '%s' holds no TorchConfig.cmake", Explicit.str().c_str());
  }
  if (!BuildPath.empty()) {
    std::string Cache = readFile((BuildPath + "/CMakeCache.txt").str());
    for (llvm::StringRef Line : llvm::split(Cache, '\n'))
      if (Line.consume_front("Torch_DIR:PATH=") && Usable(Line.trim()))
        return Line.trim().str();
  }
  if (Usable(SKYLINE_TORCH_DIR))
    return std::string(SKYLINE_TORCH_DIR);
  return llvm::createStringError(std::errc::no_such_file_or_directory,
                                 "no LibTorch found: the build directory's "
                                 "CMakeCache.txt names no Torch_DIR and "
                                 "skyline-check was built without one; give "
                                 "--torch-dir=DIR/share/cmake/Torch");
}

namespace {

/// The generated CMakeLists.txt, with the link it was written for.
llvm::Expected<std::pair<std::string, ProgramLink>>
projectText(const InstrumentedProgram &Program, const ProjectFlags &Flags,
            const BuildOptions &Options, llvm::raw_ostream &Progress) {
  auto Link = programLink(Program, Options, Progress);
  if (!Link)
    return Link.takeError();

  std::vector<std::string> Sources = Program.Sources;
  if (!Options.RuntimeObjects.empty())
    llvm::append_range(Sources, Options.RuntimeObjects);
  else
    for (const char *Runtime : runtimeSources())
      Sources.push_back(std::string(SKYLINE_RUNTIME_SOURCE_DIR) + "/" +
                        Runtime);
  llvm::append_range(Sources, Link->Objects);
  std::string Project;
  llvm::raw_string_ostream Out(Project);
  Out << "# Generated by skyline-check: the instrumented copy of the program.\n"
      << "cmake_minimum_required(VERSION 3.18)\nproject(skyline_instrumented "
         "CXX)\n";
  // Linking like the user's target, the project needs only LibTorch's
  // headers and flags, which the runtime's cache entry kept.
  if (!Link->LinkTorch && !Options.TorchSettings.empty())
    Out << "include(" << quoted(Options.TorchSettings) << ")\n";
  else
    Out << "find_package(Torch REQUIRED)\n";
  Out << "add_executable(skyline_instrumented" << list(Sources) << ")\n"
      << "target_include_directories(skyline_instrumented BEFORE PRIVATE"
      << list(Flags.MirrorIncludes) << ")\n"
      << "target_include_directories(skyline_instrumented PRIVATE "
      << quoted(SKYLINE_INCLUDE_DIR) << list(Flags.Includes) << ")\n";
  if (!Flags.SystemIncludes.empty())
    Out << "target_include_directories(skyline_instrumented SYSTEM PRIVATE"
        << list(Flags.SystemIncludes) << ")\n";
  if (!Flags.Definitions.empty())
    Out << "target_compile_definitions(skyline_instrumented PRIVATE"
        << list(Flags.Definitions) << ")\n";
  // Each source as its own command compiles it (a forced -include, a
  // feature flag), after what the target gives.
  // COMPILE_FLAGS, a command line's words: CMake would take a pair such as
  // "-include fstream" apart in COMPILE_OPTIONS (de-duplicated, no SHELL:).
  for (const auto &[Source, Options] : Flags.SourceOptions) {
    if (Options.empty())
      continue;
    std::string Words;
    for (const std::string &Option : Options)
      Words += (Words.empty() ? "" : " ") + shellWord(Option);
    Out << "set_source_files_properties(" << quoted(Source)
        << " PROPERTIES COMPILE_FLAGS " << quoted(Words) << ")\n";
  }
  // No precompiled header of LibTorch: building one and loading it in
  // every source cost more than it saves in a cold build (utils/bench-build,
  // docs/performance.md). utils/bench-build swaps this line for one.
  Out << "target_compile_options(skyline_instrumented PRIVATE -include "
         "skyline/runtime/Runtime.h)\n";
  writeLink(Out, *Link, Options.LinkArgs);
  // The runtime's CUDA side (c10/cuda) only against a LibTorch with CUDA;
  // CUPTI is opened with dlopen at run time.
  Out << "if(TORCH_CUDA_LIBRARIES)\n"
      << "  target_compile_definitions(skyline_instrumented PRIVATE "
         "SKYLINE_WITH_CUDA)\n"
      << "endif()\n"
      << "target_link_libraries(skyline_instrumented ${CMAKE_DL_LIBS})\n";
  Out << "set_target_properties(skyline_instrumented PROPERTIES CXX_STANDARD "
      << Flags.Standard << ")\n";
  return std::make_pair(std::move(Project), std::move(*Link));
}

/// The runtime's objects and Torch settings from the cache; none (the
/// runtime then compiles with the program, as it did before the cache)
/// where there is no cache or it cannot be used, with a note saying why.
CachedRuntime cachedRuntime(llvm::StringRef TorchDir, double &Seconds,
                            llvm::raw_ostream &Progress) {
  std::string Root = runtimeCacheRoot();
  if (Root.empty())
    return {};
  auto Runtime = prepareRuntime(TorchDir, Root, Progress);
  if (!Runtime) {
    Progress << "skyline-check: note: compiling the runtime with the program: "
             << llvm::toString(Runtime.takeError()) << "\n";
    return {};
  }
  Seconds += Runtime->Seconds;
  return std::move(*Runtime);
}

} // namespace

llvm::Expected<std::string> generateProject(const InstrumentedProgram &Program,
                                            const ProjectFlags &Flags,
                                            const BuildOptions &Options,
                                            llvm::raw_ostream &Progress) {
  auto Generated = projectText(Program, Flags, Options, Progress);
  if (!Generated)
    return Generated.takeError();
  return std::move(Generated->first);
}

/// buildProgram, its failures as the build said them.
static llvm::Expected<BuiltProgram>
buildProgramUnchecked(const InstrumentedProgram &Program,
                      const ProjectFlags &Flags, const BuildOptions &Options,
                      llvm::raw_ostream &Progress) {
  auto TorchDir = findTorchDir(Options.TorchDir, Options.BuildPath);
  if (!TorchDir)
    return TorchDir.takeError();
  std::string ProjectDir = Options.WorkDir + "/project";
  std::string BuildDir = Options.WorkDir + "/build";
  std::string Log = Options.WorkDir + "/build.log";
  llvm::sys::fs::create_directories(BuildDir);
  llvm::sys::fs::create_directories(ProjectDir);
  BuiltProgram Built;
  BuildOptions WithRuntime = Options;
  if (WithRuntime.RuntimeObjects.empty()) {
    CachedRuntime Runtime = cachedRuntime(*TorchDir, Built.Seconds, Progress);
    WithRuntime.RuntimeObjects = std::move(Runtime.Objects);
    WithRuntime.TorchSettings = std::move(Runtime.TorchSettings);
  }
  auto Generated = projectText(Program, Flags, WithRuntime, Progress);
  if (!Generated)
    return Generated.takeError();
  const auto &[Project, Link] = *Generated;

  bool Changed = Project != readFile(ProjectDir + "/CMakeLists.txt");
  if (Changed)
    if (llvm::Error E =
            writeFileAtomically(ProjectDir + "/CMakeLists.txt", Project))
      return std::move(E);

  Built.TorchDir = *TorchDir;
  if (Changed || !llvm::sys::fs::exists(BuildDir + "/build.ninja")) {
    if (!Link.Target.empty())
      Progress << "skyline-check: linking like target '" << Link.Target
               << "' of " << Options.BuildPath << " (CMake File API)\n";
    Progress << "skyline-check: configuring the instrumented build\n";
    ProcessResult Configure =
        runProcess({"cmake", "-S", ProjectDir, "-B", BuildDir, "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release", "-DTorch_DIR=" + *TorchDir},
                   "", {}, Log, 600);
    Built.Seconds += Configure.Seconds;
    if (Configure.ExitCode != 0)
      return llvm::createStringError(
          std::errc::invalid_argument,
          "configuring the instrumented build failed (log: %s):\n%s",
          Log.c_str(), tailOfFile(Log, 15).c_str());
  }
  Progress << "skyline-check: building the instrumented program\n";
  ProcessResult Compile =
      runProcess({"ninja", "-C", BuildDir}, "", {}, Log, 3600);
  Built.Seconds += Compile.Seconds;
  std::string Output = readFile(Log);
  if (Compile.ExitCode != 0) {
    std::string Errors;
    std::string Mapped = mapToOriginal(Output, Program);
    for (llvm::StringRef Line : llvm::split(Mapped, '\n'))
      if (isDiagnostic(Line))
        Errors += Line.str() + "\n";
    return llvm::createStringError(
        std::errc::invalid_argument,
        "the instrumented program does not build (log: %s):\n%s", Log.c_str(),
        Errors.empty() ? tailOfFile(Log, 20).c_str() : Errors.c_str());
  }
  Built.Recompiled = Output.find("no work to do") == std::string::npos;
  Built.Executable = BuildDir + "/skyline_instrumented";
  return Built;
}

llvm::Error explainBuildFailure(llvm::StringRef Dir, llvm::Error Failure) {
  llvm::ErrorOr<llvm::sys::fs::space_info> Space =
      llvm::sys::fs::disk_space(Dir);
  if (!Space || Space->available >= MinFreeBuildBytes)
    return Failure;
  llvm::consumeError(std::move(Failure));
  return llvm::createStringError(
      std::errc::no_space_on_device,
      "the disk holding the work directory '%s' is full (%llu MiB free; the "
      "instrumented build needs about %llu MiB): free some space, or give "
      "--work-dir a directory on another disk",
      Dir.str().c_str(), (unsigned long long)(Space->available >> 20),
      (unsigned long long)(MinFreeBuildBytes >> 20));
}

llvm::Expected<BuiltProgram> buildProgram(const InstrumentedProgram &Program,
                                          const ProjectFlags &Flags,
                                          const BuildOptions &Options,
                                          llvm::raw_ostream &Progress) {
  auto Built = buildProgramUnchecked(Program, Flags, Options, Progress);
  if (!Built)
    return explainBuildFailure(Options.WorkDir, Built.takeError());
  return Built;
}

} // namespace skyline
