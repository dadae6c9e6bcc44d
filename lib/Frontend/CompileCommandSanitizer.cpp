//===- CompileCommandSanitizer.cpp - Compile commands made safe -----------===//
//
// The arguments are split as clang's driver splits them (its option table:
// joined and separate values, aliases such as --write-dependencies for -MD),
// so an option is judged by what the driver would make of it, not by its
// spelling.
//
//===----------------------------------------------------------------------===//

#include "skyline/CompileCommandSanitizer.h"

#include "clang/Driver/Options.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Option/Arg.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Option/OptTable.h"
#include "llvm/Option/Option.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"

namespace skyline {
namespace {

namespace opts = clang::driver::options;

/// A response file larger than this is no list of flags.
constexpr uint64_t MaxResponseFileBytes = 1 << 20;

constexpr const char *LoadsCode = "loads code into the compiler";
constexpr const char *WritesFile = "writes a file";
constexpr const char *ReachesInternals =
    "passes the compiler's internals an option no driver checks";

/// Families of options, by their name without the dash, that write a file
/// (outputs, profiles, coverage notes, traces, crash reproducers, records).
constexpr llvm::StringLiteral WritingPrefixes[] = {"save-temps",
                                                   "ftime-trace",
                                                   "fprofile",
                                                   "fcs-profile",
                                                   "fcoverage",
                                                   "fcrash-diagnostics",
                                                   "gen-reproducer",
                                                   "fproc-stat-report",
                                                   "save-stats",
                                                   "fsave-optimization-record",
                                                   "foptimization-record-file",
                                                   "fmodules-cache-path"};

/// What -Xclang, -Xpreprocessor and -Wp, may pass on: macros, include
/// paths, warnings, and diagnostics' looks; anything else there reaches
/// options no driver checks (-load, -dependency-file, -o).
bool harmlessInternalFlag(llvm::StringRef Value) {
  if (Value.starts_with("-D") || Value.starts_with("-U") ||
      Value.starts_with("-I") || Value == "-w")
    return true;
  if (Value.starts_with("-W") && !Value.contains(','))
    return true;
  return Value == "-fno-pch-timestamp" || Value == "-fcolor-diagnostics" ||
         Value == "-fno-color-diagnostics";
}

std::string absoluteIn(llvm::StringRef Directory, llvm::StringRef Path) {
  llvm::SmallString<256> Result(Path);
  if (!llvm::sys::path::is_absolute(Result)) {
    Result = Directory;
    llvm::sys::path::append(Result, Path);
  }
  llvm::sys::path::remove_dots(Result, /*remove_dot_dot=*/true);
  return std::string(Result);
}

std::string realPathOr(llvm::StringRef Path) {
  llvm::SmallString<256> Real;
  if (llvm::sys::fs::real_path(Path, Real))
    return Path.str();
  return std::string(Real);
}

bool isWithin(llvm::StringRef Path, llvm::StringRef Root) {
  return Path == Root || (Path.starts_with(Root) && Root.size() < Path.size() &&
                          (Root.ends_with("/") || Path[Root.size()] == '/'));
}

/// Why the option A is dropped; empty when it is kept.
std::string whyDropped(const llvm::opt::Arg &A) {
  const llvm::opt::Option &Option = A.getOption();
  llvm::StringRef Name = Option.getName();
  if (Option.matches(opts::OPT_fplugin_EQ) ||
      Option.matches(opts::OPT_fplugin_arg) ||
      Option.matches(opts::OPT_fpass_plugin_EQ))
    return LoadsCode;
  if (Option.matches(opts::OPT_M_Group) || Option.matches(opts::OPT_o) ||
      Option.matches(opts::OPT__serialize_diags) ||
      Option.matches(opts::OPT_dumpdir) ||
      Option.matches(opts::OPT_fstack_usage) ||
      Option.matches(opts::OPT_coverage) ||
      Option.matches(opts::OPT_ftest_coverage))
    return WritesFile;
  if (llvm::any_of(WritingPrefixes, [&](llvm::StringRef Prefix) {
        return Name.starts_with(Prefix);
      }))
    return WritesFile;
  // Implicit modules are compiled into a cache outside the tool's own.
  if (Option.matches(opts::OPT_fmodules) ||
      Option.matches(opts::OPT_fcxx_modules))
    return "builds modules into a cache outside skyline-check's";
  if (Option.matches(opts::OPT_config) ||
      Option.matches(opts::OPT_config_system_dir_EQ) ||
      Option.matches(opts::OPT_config_user_dir_EQ))
    return "reads compiler options from a file the command chose";
  if (Name.starts_with("ccc-"))
    return "is an internal option of clang's driver";
  if (Option.matches(opts::OPT_Xclang) ||
      Option.matches(opts::OPT_Xpreprocessor) ||
      Option.matches(opts::OPT_Wp_COMMA)) {
    for (llvm::StringRef Value : A.getValues()) {
      if (harmlessInternalFlag(Value))
        continue;
      if (Value.starts_with("-load") || Value.contains("plugin"))
        return LoadsCode;
      if (Value.starts_with("-M") || Value.starts_with("-dependency") ||
          Value.starts_with("-o") || Value.contains("-file"))
        return WritesFile;
      return ReachesInternals;
    }
    return "";
  }
  if (Name.starts_with("X") && !Option.matches(opts::OPT_Xlinker) &&
      !Option.matches(opts::OPT_Xassembler))
    return "passes options on to another tool";
  return "";
}

/// An MSVC-style command: its options are another table's.
bool isClangClCommand(llvm::ArrayRef<std::string> CommandLine) {
  std::string Compiler = llvm::sys::path::stem(CommandLine.front()).lower();
  if (Compiler == "clang-cl" || Compiler == "cl")
    return true;
  for (const std::string &Arg : CommandLine.drop_front()) {
    if (Arg == "--")
      return false; // inputs follow, whatever they are named
    if (Arg == "--driver-mode=cl")
      return true;
  }
  return false;
}

class Sanitizer {
public:
  Sanitizer(llvm::StringRef Directory, llvm::StringRef Filename,
            const SanitizerOptions &Options)
      : Directory(Directory), Filename(Filename),
        Source(absoluteIn(Directory, Filename)) {
    for (const std::string &Root : Options.TrustedRoots)
      if (!Root.empty())
        Roots.push_back(realPathOr(absoluteIn(Directory, Root)));
  }

  SanitizedCommand run(llvm::ArrayRef<std::string> CommandLine) {
    SanitizedCommand Result;
    if (CommandLine.empty())
      return Result;
    Result.Arguments = {CommandLine.front(), "--no-default-config"};
    if (isClangClCommand(CommandLine)) {
      Result.Dropped.push_back(
          {llvm::join(CommandLine.drop_front(), " "),
           "is an MSVC-style (clang-cl) command, which skyline-check does not "
           "read"});
      Result.Arguments.front() = "clang++";
      Result.Arguments.push_back("--");
      Result.Arguments.push_back(Filename);
      return Result;
    }
    std::vector<std::string> Expanded;
    bool Inputs = false; // past "--": names, not options or response files
    for (const std::string &Arg : CommandLine.drop_front()) {
      if (Inputs)
        Expanded.push_back(Arg);
      else
        expand(Arg, Expanded, Result.Dropped, /*Nested=*/false);
      Inputs = Inputs || Arg == "--";
    }
    keepSafeOptions(Expanded, Result);
    return Result;
  }

private:
  /// Arg, or the arguments of the response file it names where that file
  /// may be read.
  void expand(const std::string &Arg, std::vector<std::string> &Into,
              std::vector<DroppedArgument> &Dropped, bool Nested) {
    if (!llvm::StringRef(Arg).starts_with("@") || Arg.size() == 1) {
      Into.push_back(Arg);
      return;
    }
    if (Nested) {
      Dropped.push_back({Arg, "is a response file named in a response file"});
      return;
    }
    std::string Path = absoluteIn(Directory, Arg.substr(1));
    std::string Real = realPathOr(Path);
    llvm::sys::fs::file_status Status;
    if (llvm::sys::fs::status(Real, Status) ||
        Status.type() != llvm::sys::fs::file_type::regular_file) {
      Dropped.push_back({Arg, "is a response file that is not a regular file"});
      return;
    }
    if (Status.getSize() > MaxResponseFileBytes) {
      Dropped.push_back({Arg, "is a response file larger than 1 MiB"});
      return;
    }
    if (llvm::none_of(Roots, [&](const std::string &Root) {
          return isWithin(Real, Root);
        })) {
      Dropped.push_back({Arg, "is a response file outside the build directory "
                              "and the sources' repository"});
      return;
    }
    auto Buffer = llvm::MemoryBuffer::getFile(Real);
    if (!Buffer) {
      Dropped.push_back({Arg, "is a response file that cannot be read"});
      return;
    }
    llvm::BumpPtrAllocator Alloc;
    llvm::StringSaver Saver(Alloc);
    llvm::SmallVector<const char *, 32> Tokens;
    llvm::cl::TokenizeGNUCommandLine((*Buffer)->getBuffer(), Saver, Tokens);
    for (const char *Token : Tokens)
      expand(Token, Into, Dropped, /*Nested=*/true);
  }

  bool isTheSource(llvm::StringRef Input) const {
    return absoluteIn(Directory, Input) == Source;
  }

  void keepSafeOptions(const std::vector<std::string> &Args,
                       SanitizedCommand &Result) {
    std::vector<const char *> Argv;
    for (const std::string &Arg : Args)
      Argv.push_back(Arg.c_str());
    unsigned MissingIndex = 0, MissingCount = 0;
    llvm::opt::InputArgList Parsed =
        clang::driver::getDriverOptTable().ParseArgs(
            Argv, MissingIndex, MissingCount,
            llvm::opt::Visibility(opts::ClangOption));
    // Each option's arguments run from its index to the next one's.
    std::vector<const llvm::opt::Arg *> Options(Parsed.begin(), Parsed.end());
    for (size_t I = 0; I < Options.size(); ++I) {
      const llvm::opt::Arg &A = *Options[I];
      size_t Begin = A.getIndex();
      size_t End =
          I + 1 < Options.size() ? Options[I + 1]->getIndex() : Args.size();
      llvm::ArrayRef<std::string> Span =
          llvm::ArrayRef<std::string>(Args).slice(Begin, End - Begin);
      if (A.getOption().matches(opts::OPT__DASH_DASH)) {
        Result.Arguments.push_back("--");
        for (const std::string &Input : Span.drop_front())
          keepInput(Input, Result);
        continue;
      }
      if (A.getOption().matches(opts::OPT_INPUT)) {
        for (const std::string &Input : Span)
          keepInput(Input, Result);
        continue;
      }
      // Every build's command names its object: dropped without a word
      // (the tool writes its own outputs), as clang-tidy does.
      if (A.getOption().matches(opts::OPT_o))
        continue;
      std::string Why = whyDropped(A);
      if (Why.empty())
        llvm::append_range(Result.Arguments, Span);
      else
        Result.Dropped.push_back({llvm::join(Span, " "), Why});
    }
  }

  void keepInput(const std::string &Input, SanitizedCommand &Result) {
    if (isTheSource(Input))
      Result.Arguments.push_back(Input);
    else
      Result.Dropped.push_back({Input, "is an input other than the source"});
  }

  std::string Directory;
  std::string Filename; // as the command names it
  std::string Source;   // absolute
  std::vector<std::string> Roots;
};

} // namespace

SanitizedCommand sanitizeCompileCommand(llvm::ArrayRef<std::string> CommandLine,
                                        llvm::StringRef Directory,
                                        llvm::StringRef Filename,
                                        const SanitizerOptions &Options) {
  return Sanitizer(Directory, Filename, Options).run(CommandLine);
}

std::string describeDropped(llvm::ArrayRef<DroppedArgument> Dropped) {
  std::string Text;
  for (const DroppedArgument &Argument : Dropped) {
    if (!Text.empty())
      Text += "; ";
    Text += "'" + Argument.Text + "' (" + Argument.Why + ")";
  }
  return Text;
}

SanitizedCompilationDatabase::SanitizedCompilationDatabase(
    std::unique_ptr<clang::tooling::CompilationDatabase> Base,
    std::string Origin, SanitizerOptions Options)
    : Base(std::move(Base)), Origin(std::move(Origin)),
      Options(std::move(Options)) {}

clang::tooling::CompileCommand SanitizedCompilationDatabase::sanitize(
    clang::tooling::CompileCommand Command) const {
  SanitizedCommand Safe = sanitizeCompileCommand(
      Command.CommandLine, Command.Directory, Command.Filename, Options);
  Command.CommandLine = std::move(Safe.Arguments);
  if (Safe.Dropped.empty())
    return Command;
  std::string Note = "dropped from the compile command of '" +
                     Command.Filename + "' (" + Origin +
                     "): " + describeDropped(Safe.Dropped);
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Said.insert(Note).second)
    Pending.push_back(std::move(Note));
  return Command;
}

std::vector<clang::tooling::CompileCommand>
SanitizedCompilationDatabase::getCompileCommands(
    llvm::StringRef FilePath) const {
  std::vector<clang::tooling::CompileCommand> Commands =
      Base->getCompileCommands(FilePath);
  for (clang::tooling::CompileCommand &Command : Commands)
    Command = sanitize(std::move(Command));
  return Commands;
}

std::vector<std::string> SanitizedCompilationDatabase::getAllFiles() const {
  return Base->getAllFiles();
}

std::vector<clang::tooling::CompileCommand>
SanitizedCompilationDatabase::getAllCompileCommands() const {
  std::vector<clang::tooling::CompileCommand> Commands =
      Base->getAllCompileCommands();
  for (clang::tooling::CompileCommand &Command : Commands)
    Command = sanitize(std::move(Command));
  return Commands;
}

std::vector<std::string> SanitizedCompilationDatabase::takeNotes() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  std::vector<std::string> Notes = std::move(Pending);
  Pending.clear();
  return Notes;
}

} // namespace skyline
