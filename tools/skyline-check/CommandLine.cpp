//===- CommandLine.cpp - argv to CommandLineOptions -----------------------===//
//
// Boost.Program_options in the manner of clang-tidy: sources are positional,
// -p DIR and -p=DIR both name the build directory, and everything after `--`
// is the compile command. The options themselves are declared in
// OptionTable.cpp; here they are parsed, merged with a .skyline.yaml and
// stored.
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"
#include "OptionTable.h"

#include "skyline/Config.h"
#include "skyline/FileOwnership.h"
#include "skyline/InputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <boost/program_options.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>

namespace po = boost::program_options;

namespace skyline {
namespace {

const char *const Usage =
    "USAGE: skyline-check [options] <source>... [-p <build-dir>] [-- <compiler "
    "args>]\n"
    "\n"
    "Finds the training batch size, the layers and the training loop of a\n"
    "LibTorch (PyTorch C++) program, as a compiler would.\n"
    "\n"
    "Compile commands come from compile_commands.json in -p <build-dir> or in "
    "a\n"
    "directory above the first source, or from the flags after --; without\n"
    "either, the LibTorch headers skyline-check was built with are used.\n";

/// The nearest .skyline.yaml in Start or above it, as git finds a
/// repository: the search stops at the repository's root (a directory with
/// a .git) and at a directory another user owns, and a file another user
/// owns is not read (Ignored says why), since one planted above a clone
/// could point the tool at a hostile build or link an object into the
/// measured program.
std::string findConfigFile(llvm::StringRef Start,
                           std::vector<std::string> &Ignored) {
  llvm::SmallString<256> Dir(Start);
  llvm::sys::fs::make_absolute(Dir);
  llvm::sys::path::remove_dots(Dir, /*remove_dot_dot=*/true);
  for (llvm::StringRef D = Dir; !D.empty();
       D = llvm::sys::path::parent_path(D)) {
    if (!ownedByCurrentUser(D))
      return "";
    llvm::SmallString<256> Candidate(D);
    llvm::sys::path::append(Candidate, ".skyline.yaml");
    if (llvm::sys::fs::is_regular_file(Candidate)) {
      if (llvm::Error E = checkPrivate(Candidate, "config file")) {
        Ignored.push_back("ignored " + llvm::toString(std::move(E)) +
                          "; give it with --config=FILE to use it");
        return "";
      }
      return std::string(Candidate);
    }
    llvm::SmallString<256> Git(D);
    llvm::sys::path::append(Git, ".git");
    if (llvm::sys::fs::exists(Git))
      return "";
  }
  return "";
}

/// Boost's what() replaces each %name% of its message with the user's text
/// until none is left, so a value holding its own placeholder
/// (`--iterations=%value%`) looped forever (found by test/fuzz): the user's
/// texts lose their '%' before what() runs. The using-declaration only
/// names Boost's protected map of them.
struct ErrorSubstitutions : po::error_with_option_name {
  using po::error_with_option_name::m_substitutions;
};

std::string usageText(po::error &E) {
  if (auto *Named = dynamic_cast<po::error_with_option_name *>(&E))
    for (auto &Entry : Named->*&ErrorSubstitutions::m_substitutions)
      Entry.second.erase(
          std::remove(Entry.second.begin(), Entry.second.end(), '%'),
          Entry.second.end());
  return E.what();
}

/// A .skyline.yaml as `--key=value` arguments: keys are long option names,
/// values scalars or lists of scalars (repeatable options).
llvm::Expected<std::vector<std::string>>
configArguments(const std::string &Path, const po::options_description &Known) {
  // Read even with --analyze-only: a directory, FIFO, huge file or alias
  // bomb is refused before anything is built from it.
  auto Loaded = loadYamlInput(Path, "config file", ConfigLimits);
  if (!Loaded)
    return Loaded.takeError();
  const YAML::Node &Root = *Loaded;
  std::vector<std::string> Args;
  if (Root.IsNull())
    return Args;
  if (!Root.IsMap())
    return usageError("config file '" + Path +
                      "' must be a mapping of option names to values");
  // A key or value that is a list or mapping where a scalar belongs throws.
  try {
    for (const auto &Entry : Root) {
      std::string Key = Entry.first.as<std::string>();
      // An empty key matches every option without a short name, and Boost
      // throws ambiguous_option for it (found by test/fuzz).
      if (Key.empty() || Key == "config" || !Known.find_nothrow(Key, false))
        return usageError("unknown option '" + Key + "' in config file '" +
                          Path +
                          "' (keys are long option names, like "
                          "memory-margin)");
      const YAML::Node &Value = Entry.second;
      if (Value.IsSequence()) {
        for (const YAML::Node &Item : Value)
          Args.push_back("--" + Key + "=" + Item.as<std::string>());
      } else if (Value.IsScalar()) {
        std::string Text = Value.as<std::string>();
        // A flag is `key: true`; `false` leaves it off.
        if (Text == "true")
          Args.push_back("--" + Key);
        else if (Text != "false")
          Args.push_back("--" + Key + "=" + Text);
      }
    }
  } catch (const YAML::Exception &E) {
    return usageError("config file '" + Path + "': " + E.what() +
                      "; keys are option names, values scalars or lists of "
                      "scalars");
  }
  return Args;
}

/// The first argument that names a file to write, if any: an output path
/// that comes from a file the user did not name could overwrite anything.
std::optional<std::string>
outputArgument(const std::vector<std::string> &Args,
               const std::vector<OptionGroup> &Table) {
  for (const std::string &Arg : Args)
    for (const OptionGroup &Group : Table)
      for (const OptionDecl &Decl : Group.Options)
        if ((Decl.Traits & NamesOutput) &&
            llvm::StringRef(Arg).starts_with("--" + Decl.name() + "="))
          return Arg;
  return std::nullopt;
}

/// Clang-tidy's spelling: `-p=DIR` is `-p DIR`, and what follows `--` is
/// the compile command.
struct SplitArguments {
  std::vector<std::string> Options;
  std::optional<std::vector<std::string>> CompileCommand;
};

SplitArguments splitArguments(int Argc, const char *const *Argv) {
  SplitArguments Split;
  for (int I = 1; I < Argc; ++I) {
    std::string Arg = Argv[I];
    if (Arg == "--") {
      Split.CompileCommand.emplace(Argv + I + 1, Argv + Argc);
      break;
    }
    if (Arg.rfind("-p=", 0) == 0) {
      Split.Options.push_back("-p");
      Split.Options.push_back(Arg.substr(3));
      continue;
    }
    Split.Options.push_back(Arg);
  }
  return Split;
}

/// Boost parses Args into Values; a value already there is kept, a default
/// replaced. Options are never abbreviated.
void storeArguments(
    const std::vector<std::string> &Args,
    const po::options_description &Options, po::variables_map &Values,
    const po::positional_options_description *Positional = nullptr) {
  po::command_line_parser Parser(Args);
  Parser.options(Options).style(po::command_line_style::default_style &
                                ~po::command_line_style::allow_guessing);
  if (Positional)
    Parser.positional(*Positional);
  po::store(Parser.run(), Values);
}

llvm::Error parseArguments(const std::vector<std::string> &Args,
                           const po::options_description &Visible,
                           po::variables_map &Values) {
  // Sources are positional and not shown by --help.
  po::options_description All = Visible;
  All.add_options()("source", po::value<std::vector<std::string>>(), "");
  po::positional_options_description Positional;
  Positional.add("source", -1);
  try {
    storeArguments(Args, All, Values, &Positional);
  } catch (po::error &E) {
    return usageError(usageText(E));
  }
  return llvm::Error::success();
}

/// The file named by --config, else the nearest .skyline.yaml above the
/// first source (the current directory's without sources); none for --help
/// and --version.
std::string configFileFor(const po::variables_map &Values,
                          std::vector<std::string> &Ignored) {
  if (Values.count("config"))
    return Values["config"].as<std::string>();
  if (Values.count("help") || Values.count("version"))
    return "";
  if (!Values.count("source"))
    return findConfigFile(".", Ignored);
  return findConfigFile(
      llvm::sys::path::parent_path(
          Values["source"].as<std::vector<std::string>>().front()),
      Ignored);
}

/// Adds the config file's values under the command line's: the command line
/// wins, the config file replaces defaults.
llvm::Error storeConfig(const std::string &ConfigFile,
                        const std::vector<OptionGroup> &Table,
                        const po::options_description &Visible,
                        po::variables_map &Values) {
  if (!llvm::sys::fs::exists(ConfigFile))
    return usageError("config file '" + ConfigFile + "' does not exist");
  llvm::Expected<std::vector<std::string>> Args =
      configArguments(ConfigFile, Visible);
  if (!Args)
    return Args.takeError();
  if (!Values.count("config"))
    if (std::optional<std::string> Output = outputArgument(*Args, Table))
      return usageError(
          "config file '" + ConfigFile + "' names an output (" + *Output +
          "): a .skyline.yaml found above the sources holds option "
          "defaults, not where to write; name outputs on the command line, "
          "or give this file with --config=FILE");
  try {
    storeArguments(*Args, Visible, Values);
  } catch (po::error &E) {
    return usageError(usageText(E) + " (in config file '" + ConfigFile + "')");
  }
  return llvm::Error::success();
}

std::string helpText(const po::options_description &Visible) {
  std::ostringstream Text;
  Text << Usage << "\n" << Visible;
  return Text.str();
}

const char *const VersionText =
    "skyline-check version " SKYLINE_VERSION
    "\n  LLVM/Clang " SKYLINE_LLVM_VERSION
    ", built with LibTorch " SKYLINE_TORCH_VERSION "\n";

/// Each option checks and stores its own value, in --help's order.
llvm::Error storeOptions(const std::vector<OptionGroup> &Table,
                         const po::variables_map &Values,
                         CommandLineOptions &Options) {
  for (const OptionGroup &Group : Table)
    for (const OptionDecl &Decl : Group.Options)
      if (Decl.Store && Values.count(Decl.name()))
        if (llvm::Error E = Decl.Store(Values[Decl.name()], Options))
          return E;
  return llvm::Error::success();
}

/// What cannot go together: --analyze-only measures nothing, --bundle
/// measures elsewhere, and one answer comes from one set of measurements.
llvm::Error checkAnalyzeOnly(const std::vector<OptionGroup> &Table,
                             const po::variables_map &Values,
                             const CommandLineOptions &Options) {
  if (!Options.Bundle.empty() &&
      (!Options.FromReport.empty() || !Options.FromRuns.empty()))
    return usageError("--bundle writes what the runs need; it cannot go "
                      "with --from-report or --from-runs");
  if (!Options.FromRuns.empty() && !Options.FromReport.empty())
    return usageError("--from-runs and --from-report each name the "
                      "measurements; give one");
  if (!Options.AnalyzeOnly)
    return llvm::Error::success();
  if (!Options.Bundle.empty() || !Options.FromRuns.empty())
    return usageError(
        std::string(Options.Bundle.empty() ? "--from-runs" : "--bundle") +
        " is about measurements; it cannot go with "
        "--analyze-only");
  if (!Options.FromReport.empty())
    return usageError("--from-report answers from measurements; it cannot "
                      "go with --analyze-only");
  for (const OptionGroup &Group : Table)
    for (const OptionDecl &Decl : Group.Options)
      if ((Decl.Traits & NeedsMeasurements) && Values.count(Decl.name()))
        return usageError("--" + Decl.name() +
                          " needs measurements: drop --analyze-only, or use "
                          "--from-report");
  return llvm::Error::success();
}

ParsedCommandLine usageErrorOf(llvm::Error E) {
  return UsageError{llvm::toString(std::move(E))};
}

} // namespace

ParsedCommandLine parseCommandLine(int Argc, const char *const *Argv) {
  std::vector<OptionGroup> Table = declareOptions();
  po::options_description Visible = describeOptions(Table);
  SplitArguments Split = splitArguments(Argc, Argv);
  po::variables_map Values;
  if (llvm::Error E = parseArguments(Split.Options, Visible, Values))
    return usageErrorOf(std::move(E));
  std::vector<std::string> ConfigNotes;
  std::string ConfigFile = configFileFor(Values, ConfigNotes);
  if (!ConfigFile.empty())
    if (llvm::Error E = storeConfig(ConfigFile, Table, Visible, Values))
      return usageErrorOf(std::move(E));
  try {
    po::notify(Values);
  } catch (po::error &E) {
    return UsageError{usageText(E)};
  }
  if (Values.count("help"))
    return HelpRequest{helpText(Visible)};
  if (Values.count("version"))
    return HelpRequest{VersionText};

  CommandLineOptions Options;
  if (Values.count("source"))
    Options.Sources = Values["source"].as<std::vector<std::string>>();
  Options.ExtraArgs = std::move(Split.CompileCommand);
  Options.ConfigFile = ConfigFile;
  Options.ConfigNotes = std::move(ConfigNotes);
  // Without an input no other option is worth checking.
  auto Given = [&](const char *Name) {
    const po::variable_value &Value = Values[Name];
    return !Value.empty() && !Value.as<std::string>().empty();
  };
  if (Options.Sources.empty() && !Given("from-report") && !Given("from-runs"))
    return UsageError{"no source files given"};
  if (llvm::Error E = storeOptions(Table, Values, Options))
    return usageErrorOf(std::move(E));
  if (llvm::Error E = checkAnalyzeOnly(Table, Values, Options))
    return usageErrorOf(std::move(E));
  return Options;
}

} // namespace skyline
