//===- Preamble.cpp - A program's system headers, precompiled -------------===//

#include "skyline/Preamble.h"

#include "skyline/Config.h"
#include "skyline/FileHash.h"
#include "skyline/OutputFiles.h"
#include "skyline/Process.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <csignal>
#include <unistd.h>

namespace skyline {
namespace {

/// A database whose commands first include a precompiled preamble: the
/// sources' own #includes of its headers are then skipped by their include
/// guards. Without carets, clang does not print its "N errors generated."
/// to stderr: a preamble that fails to load says nothing to the user. The
/// system headers in it are checked for changes explicitly, as the
/// program's own are: LibTorch updated in place makes it stale.
class WithPreamble : public clang::tooling::CompilationDatabase {
public:
  WithPreamble(const clang::tooling::CompilationDatabase &Base,
               llvm::StringRef Pch)
      : Base(Base), Pch(Pch.str()) {}
  std::vector<clang::tooling::CompileCommand>
  getCompileCommands(llvm::StringRef File) const override {
    std::vector<clang::tooling::CompileCommand> Commands =
        Base.getCompileCommands(File);
    for (clang::tooling::CompileCommand &Command : Commands)
      if (!Command.CommandLine.empty())
        Command.CommandLine.insert(Command.CommandLine.begin() + 1,
                                   {"-include-pch", Pch,
                                    "-fno-caret-diagnostics",
                                    "-fmodules-validate-system-headers"});
    return Commands;
  }
  std::vector<std::string> getAllFiles() const override {
    return Base.getAllFiles();
  }

private:
  const clang::tooling::CompilationDatabase &Base;
  std::string Pch;
};

/// Whether Arg names the command's source: as written, or by a path
/// relative to its directory (a database may spell the "file" absolute and
/// the argument relative).
bool namesTheSource(const FrontendCommand &Command, llvm::StringRef Arg) {
  if (Arg == Command.Filename)
    return true;
  if (Arg.starts_with("-"))
    return false;
  auto Absolute = [&](llvm::StringRef Path) {
    llvm::SmallString<256> Result(Path);
    if (!llvm::sys::path::is_absolute(Result)) {
      Result = Command.Directory;
      llvm::sys::path::append(Result, Path);
    }
    llvm::sys::path::remove_dots(Result, /*remove_dot_dot=*/true);
    return std::string(Result);
  };
  return Absolute(Arg) == Absolute(Command.Filename);
}

/// A command's flags, its source and the "--" before it (a command
/// inferred for a path the database spells otherwise has one) left out:
/// what must match for two sources to share a preamble.
std::pair<std::string, std::vector<std::string>>
flagsOf(const FrontendCommand &Command) {
  std::vector<std::string> Flags;
  for (const std::string &Arg : Command.Arguments)
    if (!namesTheSource(Command, Arg) && Arg != "--")
      Flags.push_back(Arg);
  return {Command.Directory, Flags};
}

/// The flags whose value is a path, written joined (-Idir) or apart.
constexpr llvm::StringLiteral PathFlags[] = {"-I",
                                             "-iquote",
                                             "-isystem",
                                             "-idirafter",
                                             "-include",
                                             "-imacros",
                                             "-isysroot",
                                             "--sysroot=",
                                             "--sysroot",
                                             "-B",
                                             "-F",
                                             "-iprefix",
                                             "-cxx-isystem",
                                             "-resource-dir=",
                                             "-resource-dir",
                                             "-fmodule-map-file=",
                                             "-ivfsoverlay",
                                             "--gcc-toolchain=",
                                             "--gcc-install-dir="};

/// How the preamble is built, in its key: a flag added or a clang changed
/// makes another .pch.
constexpr llvm::StringLiteral BuildFlags[] = {"-fpch-instantiate-templates"};

/// Whether File is Temporary or what clang made of it: clang writes its
/// output to "<stem>-XXXXXXXX.pch.tmp" first (Temporary's stem, a random
/// part, its extension and ".tmp"), and a killed or failed clang leaves it.
bool isTemporaryOf(llvm::StringRef File, llvm::StringRef Temporary) {
  llvm::StringRef Name = llvm::sys::path::filename(Temporary);
  llvm::StringRef Stem = llvm::sys::path::stem(Name);
  return File == Name || File.starts_with((Name + "-").str()) ||
         File.starts_with((Stem + "-").str());
}

/// Removes Temporary and what clang made of it.
void removeTemporaries(llvm::StringRef Temporary) {
  std::error_code EC;
  std::vector<std::string> Found;
  for (llvm::sys::fs::directory_iterator
           It(llvm::sys::path::parent_path(Temporary), EC),
       End;
       It != End && !EC; It.increment(EC))
    // Only this build's: another process's name may share the prefix.
    if (isTemporaryOf(llvm::sys::path::filename(It->path()), Temporary))
      Found.push_back(It->path());
  for (const std::string &Path : Found)
    llvm::sys::fs::remove(Path);
}

/// Removes the temporaries of builds whose process is gone (killed with
/// SIGKILL, or on a machine that rebooted): "<key>.tmp<pid>..." files.
void removeOrphanedTemporaries(llvm::StringRef Directory) {
  std::error_code EC;
  std::vector<std::string> Found;
  for (llvm::sys::fs::directory_iterator It(Directory, EC), End;
       It != End && !EC; It.increment(EC)) {
    llvm::StringRef File = llvm::sys::path::filename(It->path());
    size_t At = File.find(".tmp");
    if (At == llvm::StringRef::npos)
      continue;
    llvm::StringRef Digits = File.drop_front(At + 4).take_while(llvm::isDigit);
    unsigned Pid = 0;
    if (Digits.empty() || Digits.getAsInteger(10, Pid) || Pid == 0)
      continue;
    if (::kill(pid_t(Pid), 0) != 0 && errno == ESRCH)
      Found.push_back(It->path());
  }
  for (const std::string &Path : Found)
    llvm::sys::fs::remove(Path);
}

/// Whether clang's messages say the preamble did not load (a header
/// changed since, another clang, a damaged file), not the program's errors.
bool mentionsPreamble(llvm::StringRef Messages, llvm::StringRef Pch) {
  return Messages.contains(Pch) || Messages.contains("precompiled header") ||
         Messages.contains("AST file") || Messages.contains("PCH");
}

} // namespace

std::string systemPreamble(llvm::StringRef Text) {
  std::string Preamble;
  bool InComment = false;
  while (!Text.empty()) {
    auto [Line, Rest] = Text.split('\n');
    Text = Rest;
    llvm::StringRef T = Line.trim();
    if (InComment) {
      size_t End = T.find("*/");
      if (End == llvm::StringRef::npos)
        continue;
      InComment = false;
      T = T.drop_front(End + 2).trim();
    }
    if (T.consume_front("/*")) {
      size_t End = T.find("*/");
      if (End == llvm::StringRef::npos) {
        InComment = true;
        continue;
      }
      T = T.drop_front(End + 2).trim();
    }
    if (T.empty() || T.starts_with("//"))
      continue;
    llvm::StringRef Directive = T;
    if (!Directive.consume_front("#"))
      break;
    Directive = Directive.ltrim();
    if (Directive.starts_with("pragma") &&
        Directive.drop_front(6).trim() == "once")
      continue;
    if (!Directive.consume_front("include"))
      break;
    Directive = Directive.ltrim();
    if (!Directive.starts_with("<") || !Directive.contains('>'))
      break;
    Preamble += "#include " +
                Directive.take_until([](char C) { return C == '>'; }).str() +
                ">\n";
  }
  return Preamble;
}

bool namesRelativePath(const FrontendCommand &Command) {
  bool ValueNext = false;
  for (size_t I = 1; I < Command.Arguments.size(); ++I) {
    llvm::StringRef Arg = Command.Arguments[I];
    if (namesTheSource(Command, Arg))
      continue;
    if (ValueNext) {
      ValueNext = false;
      if (!llvm::sys::path::is_absolute(Arg))
        return true;
      continue;
    }
    if (!Arg.starts_with("-"))
      continue; // a flag's value that is no path (-x c++)
    for (llvm::StringRef Flag : PathFlags) {
      if (Arg == Flag || Arg == Flag.rtrim('=')) {
        ValueNext = true;
        break;
      }
      if (Arg.starts_with(Flag)) {
        if (!llvm::sys::path::is_absolute(Arg.drop_front(Flag.size())))
          return true;
        break;
      }
    }
  }
  return false;
}

std::optional<PreamblePlan>
planPreamble(const clang::tooling::CompilationDatabase &DB,
             llvm::ArrayRef<std::string> Sources, llvm::StringRef Directory) {
  if (Directory.empty() || Sources.empty())
    return std::nullopt;
  PreamblePlan Plan;
  for (const std::string &Given : Sources) {
    // A FIFO would block the read; the parse says what is wrong with it.
    if (!llvm::sys::fs::is_regular_file(Given))
      return std::nullopt;
    // By its absolute path, as the parse asks for it: a relative one would
    // get a command inferred from a neighbour's, not the source's own.
    llvm::SmallString<256> Source(Given);
    llvm::sys::fs::make_absolute(Source);
    auto Buffer = llvm::MemoryBuffer::getFile(Source);
    std::optional<FrontendCommand> Command = frontendCommandLine(DB, Source);
    if (!Buffer || !Command)
      return std::nullopt;
    std::string Text = systemPreamble((*Buffer)->getBuffer());
    if (Text.empty())
      return std::nullopt;
    if (Given == Sources.front()) {
      Plan.Text = std::move(Text);
      Plan.Command = std::move(*Command);
    } else if (Text != Plan.Text ||
               flagsOf(*Command) != flagsOf(Plan.Command)) {
      return std::nullopt;
    }
  }
  std::string Key = Plan.Text;
  for (const std::string &Arg : flagsOf(Plan.Command).second)
    Key += "\n" + Arg;
  Key += std::string("\n") + SKYLINE_CLANG;
  for (llvm::StringRef Flag : BuildFlags)
    Key += "\n" + Flag.str();
  if (namesRelativePath(Plan.Command))
    Key += "\n" + Plan.Command.Directory;
  Plan.Pch = (Directory + "/" + sha256Hex(Key).substr(0, 24) + ".pch").str();
  return Plan;
}

std::string preambleFilesPath(llvm::StringRef Pch) {
  return (Pch.drop_back(4) + ".files").str();
}

namespace {

/// A file behind the preamble changed (or went) since it was made: clang
/// checks only the program's own headers in a .pch, not system ones (the
/// -isystem LibTorch a pip upgrade replaced), and a stale one then loads
/// and answers with redefinitions.
bool headerChangedSince(llvm::ArrayRef<std::string> Files,
                        llvm::StringRef Pch) {
  llvm::sys::fs::file_status PchStatus;
  if (llvm::sys::fs::status(Pch, PchStatus))
    return true;
  auto Made = PchStatus.getLastModificationTime();
  for (const std::string &File : Files) {
    if (File == Pch)
      continue;
    llvm::sys::fs::file_status Status;
    if (llvm::sys::fs::status(File, Status) ||
        Status.getLastModificationTime() > Made)
      return true;
  }
  return false;
}

} // namespace

std::optional<std::vector<std::string>>
filesBehindPreamble(llvm::StringRef Pch) {
  auto Listed = llvm::MemoryBuffer::getFile(preambleFilesPath(Pch));
  if (!Listed)
    return std::nullopt;
  std::vector<std::string> Files{Pch.str()};
  for (llvm::StringRef Line : llvm::split((*Listed)->getBuffer(), '\n'))
    if (!Line.empty())
      Files.push_back(Line.str());
  return Files;
}

llvm::Expected<ProgramModel> analyzeWithPreamble(
    const clang::tooling::CompilationDatabase &DB,
    llvm::ArrayRef<std::string> Sources, const FrontendOptions &Options,
    const std::optional<PreamblePlan> &Plan, PreambleUse *Use, bool OnePass) {
  PreambleUse Ignored;
  if (!Use)
    Use = &Ignored;
  *Use = PreambleUse::None;
  std::string PreambleError;
  if (Plan && llvm::sys::fs::exists(Plan->Pch)) {
    // Clang's messages are held back: a preamble that does not load
    // (stale) says so in them, and the whole parse then speaks instead.
    std::string Messages;
    llvm::raw_string_ostream Held(Messages);
    FrontendOptions Through = Options;
    Through.DiagnosticStream = &Held;
    // Errors through a preamble may be the preamble's own (stale): they
    // fail here, and the whole parse below says what the program's are.
    Through.AcceptCompileErrors = false;
    std::vector<std::string> Read;
    Through.SystemFilesRead = &Read;
    std::optional<std::vector<std::string>> Behind =
        filesBehindPreamble(Plan->Pch);
    if (Behind && headerChangedSince(*Behind, Plan->Pch)) {
      // Stale: the whole parse answers, and the preamble is made anew.
      llvm::sys::fs::remove(Plan->Pch);
      llvm::sys::fs::remove(preambleFilesPath(Plan->Pch));
      llvm::Expected<ProgramModel> Model = analyzeProgram(DB, Sources, Options);
      *Use = PreambleUse::Deleted;
      return Model;
    }
    llvm::Expected<ProgramModel> Model =
        analyzeProgram(WithPreamble(DB, Plan->Pch), Sources, Through);
    if (Model && Behind) {
      llvm::raw_ostream &Out =
          Options.DiagnosticStream ? *Options.DiagnosticStream : llvm::errs();
      Out << Messages;
      if (Options.SystemFilesRead) {
        llvm::append_range(*Options.SystemFilesRead, *Behind);
        llvm::append_range(*Options.SystemFilesRead, Read);
      }
      *Use = PreambleUse::Used;
      return Model;
    }
    if (!Model && Behind && OnePass && !mentionsPreamble(Messages, Plan->Pch)) {
      llvm::raw_ostream &Out =
          Options.DiagnosticStream ? *Options.DiagnosticStream : llvm::errs();
      Out << Messages;
      *Use = PreambleUse::Kept;
      return Model;
    }
    PreambleError = Model ? "the list of its headers is missing"
                          : llvm::toString(Model.takeError());
  }
  unsigned Errors = 0;
  FrontendOptions Whole = Options;
  Whole.CompileErrorsSeen = &Errors;
  llvm::Expected<ProgramModel> Model = analyzeProgram(DB, Sources, Whole);
  if (Options.CompileErrorsSeen)
    *Options.CompileErrorsSeen = Errors;
  // Where the whole parse compiles, the preamble is what failed (a header
  // changed, another clang): it goes, to be made anew. Where the program
  // has errors (a model read despite them, or none), the preamble is kept
  // for the fix.
  if (PreambleError.empty())
    return Model;
  *Use = Model && Errors == 0 ? PreambleUse::Deleted : PreambleUse::Kept;
  if (*Use == PreambleUse::Deleted) {
    llvm::sys::fs::remove(Plan->Pch);
    llvm::sys::fs::remove(preambleFilesPath(Plan->Pch));
  }
  return Model;
}

llvm::Expected<std::unique_ptr<PreambleBuild>>
PreambleBuild::start(const PreamblePlan &Plan,
                     std::vector<std::string> SystemFiles) {
  std::unique_ptr<PreambleBuild> Build(new PreambleBuild);
  Build->Plan = Plan;
  Build->SystemFiles = std::move(SystemFiles);
  llvm::StringRef Pch = Plan.Pch;
  if (std::error_code EC =
          llvm::sys::fs::create_directories(llvm::sys::path::parent_path(Pch)))
    return llvm::createStringError(
        EC, "cannot create %s",
        llvm::sys::path::parent_path(Pch).str().c_str());
  // Written only where it differs: a .pch made from it (another process's)
  // records its time, and would no longer load.
  std::string Header = (Pch.drop_back(4) + ".h").str();
  auto Existing = llvm::MemoryBuffer::getFile(Header);
  if (!Existing || (*Existing)->getBuffer() != Plan.Text)
    if (llvm::Error E = writeFileAtomically(Header, Plan.Text))
      return std::move(E);
  removeOrphanedTemporaries(llvm::sys::path::parent_path(Pch));
  Build->Temporary =
      (Pch.drop_back(4) + ".tmp" + std::to_string(::getpid()) + ".pch").str();
  // The front end's own command, its source replaced by the preamble.
  const FrontendCommand &Command = Plan.Command;
  std::vector<std::string> Arguments{SKYLINE_CLANG};
  for (size_t I = 1; I < Command.Arguments.size(); ++I) {
    const std::string &Arg = Command.Arguments[I];
    // A compilation database puts "--" before the source: what follows
    // would be read as inputs.
    if (namesTheSource(Command, Arg) || Arg == "-c" || Arg == "-fsyntax-only" ||
        Arg == "--")
      continue;
    Arguments.push_back(Arg);
  }
  // The templates the headers instantiate are instantiated in the preamble,
  // not again at the end of every parse (without it, loading LibTorch's
  // preamble took 4 of the 5.6 s clang spent on mnist).
  for (llvm::StringRef Flag : BuildFlags)
    Arguments.push_back(Flag.str());
  // A crashing clang writes no reproducer outside the cache.
  Arguments.push_back("-fno-crash-diagnostics");
  llvm::append_range(Arguments,
                     std::vector<std::string>{"-x", "c++-header", Header, "-o",
                                              Build->Temporary});
  Build->Started = std::chrono::steady_clock::now();
  auto Child = BackgroundProcess::start(Arguments, Command.Directory,
                                        Pch.str() + ".log");
  if (!Child)
    return Child.takeError();
  Build->Child = std::move(*Child);
  return std::move(Build);
}

llvm::Error PreambleBuild::finish() {
  if (!Child)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "the preamble %s is already finished",
                                   Plan.Pch.c_str());
  int Code = Child->wait();
  Child.reset();
  Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Started)
          .count();
  // The headers in it, for the front end's caches (a parse through it does
  // not enter them), before the preamble itself appears.
  if (Code == 0)
    if (llvm::Error E = writeFileAtomically(
            preambleFilesPath(Plan.Pch),
            SystemFiles.empty() ? std::string()
                                : llvm::join(SystemFiles, "\n") + "\n"))
      return E;
  if (Code != 0 || llvm::sys::fs::rename(Temporary, Plan.Pch)) {
    removeTemporaries(Temporary);
    Temporary.clear();
    return llvm::createStringError(
        std::errc::io_error,
        "could not precompile the preamble %s (log: %s.log)", Plan.Pch.c_str(),
        Plan.Pch.c_str());
  }
  Temporary.clear();
  return llvm::Error::success();
}

PreambleBuild::~PreambleBuild() {
  Child.reset(); // stopped, where unfinished
  if (!Temporary.empty())
    removeTemporaries(Temporary);
}

} // namespace skyline
