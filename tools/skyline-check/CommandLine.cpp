//===- CommandLine.cpp - argv to CommandLineOptions -----------------------===//
//
// Boost.Program_options in the manner of clang-tidy: sources are positional,
// -p DIR and -p=DIR both name the build directory, and everything after `--`
// is the compile command.
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"

#include "skyline/Config.h"
#include "skyline/InputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <boost/program_options.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
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

po::options_description describeOptions() {
  po::options_description Options("OPTIONS");
  Options.add_options()("help,h", "print this help and exit")(
      "version", "print the version and exit")(
      "build-path,p", po::value<std::string>()->value_name("DIR"),
      "build directory with compile_commands.json")(
      "analyze-only", "run the static phase only and print what it found")(
      "format",
      po::value<std::string>()->default_value("text")->value_name("FMT"),
      "output format: text (clang-style notes) or yaml "
      "(docs/program-model.md)")(
      "set-batch-size", po::value<int64_t>()->value_name("N"),
      "make a fix-it that sets the training batch size to N")(
      "export-fixes", po::value<std::string>()->value_name("FILE"),
      "write fix-its as YAML for clang-apply-replacements")(
      "batch-size-var", po::value<std::string>()->value_name("NAME"),
      "the variable, field (Struct::field) or macro that holds the training "
      "batch size, when it cannot be found from its uses");
  po::options_description Measure(
      "MEASUREMENT OPTIONS (without --analyze-only)");
  Measure.add_options()(
      "work-dir", po::value<std::string>()->value_name("DIR"),
      "where the instrumented copy, its build and the run logs go "
      "(default: <build dir>/skyline-work, else ./skyline-work)")(
      "torch-dir", po::value<std::string>()->value_name("DIR"),
      "LibTorch's CMake directory (default: Torch_DIR of the build dir's "
      "CMakeCache.txt, else the one skyline-check was built with)")(
      "link-arg", po::value<std::vector<std::string>>()->value_name("ARG"),
      "an extra library or linker flag for the instrumented program "
      "(repeatable)")(
      "memory-budget",
      po::value<std::string>()->default_value("4GiB")->value_name("SIZE"),
      "CPU memory a run may hold, like 512MiB or 8GiB; crossing it is an "
      "out-of-memory")(
      "max-runs", po::value<unsigned>()->default_value(6)->value_name("N"),
      "batch sizes to try: the declared one, its double, then half of the "
      "rest toward the memory capacity less --memory-margin and half where "
      "the time bends")(
      "warmup", po::value<unsigned>()->default_value(2)->value_name("N"),
      "iterations run before measuring")(
      "iterations", po::value<unsigned>()->default_value(50)->value_name("N"),
      "the most iterations a timing run measures; it stops sooner once the "
      "median is stable (--tolerance) or its share of --time-budget is spent")(
      "min-iterations",
      po::value<unsigned>()->default_value(5)->value_name("N"),
      "the fewest iterations a timing run measures")(
      "timing-runs", po::value<unsigned>()->default_value(3)->value_name("N"),
      "timing runs per batch size, interleaved over the sizes; the fastest "
      "is kept once another is within 5% of it (more runs until then, at "
      "most 3N): other work only slows a run")(
      "tolerance",
      po::value<std::string>()->default_value("2")->value_name("P"),
      "a timing run stops once the median's standard error is P% of it; 0 "
      "measures --iterations")(
      "time-budget",
      po::value<double>()->default_value(120)->value_name("SECONDS"),
      "all runs together: each run gets a share of what is left, and no "
      "batch size is added once it is spent (0: none)")(
      "breakdown-runs",
      po::value<std::string>()->default_value("all")->value_name("WHICH"),
      "which batch sizes also get a breakdown run (time split, memory kinds, "
      "layers): all, declared or none")(
      "breakdown-iterations",
      po::value<unsigned>()->default_value(3)->value_name("N"),
      "iterations a breakdown run measures")(
      "run-timeout",
      po::value<unsigned>()->default_value(300)->value_name("SECONDS"),
      "a run still going after this is stopped and reported")(
      "run-dir", po::value<std::string>()->value_name("DIR"),
      "the directory runs start in (default: the current one)")(
      "run-arg", po::value<std::vector<std::string>>()->value_name("ARG"),
      "an argument for the program (repeatable)")(
      "device",
      po::value<std::string>()->default_value("auto")->value_name("DEV"),
      "auto, cpu (hides GPUs from the program) or cuda")(
      "malloc-thresholds",
      po::value<std::string>()->default_value("pinned")->value_name("WHICH"),
      "glibc's malloc mmap and trim thresholds in the runs: pinned (a size's "
      "time then does not hang on which buffers glibc gave back to the "
      "system) or dynamic (glibc's default); set in your environment, yours "
      "are kept")("report", po::value<std::string>()->value_name("FILE"),
                  "write the runs, fits, predictions and suggestion as YAML "
                  "(docs/report.md)");
  po::options_description Model(
      "PREDICTION AND SUGGESTION OPTIONS (percent: 10 or 10%)");
  Model.add_options()(
      "memory-margin",
      po::value<std::string>()->default_value("10")->value_name("P"),
      "memory kept free: a size fits when its peak is under the capacity less "
      "P%")("round-to", po::value<int64_t>()->default_value(8)->value_name("N"),
            "suggested batch sizes are multiples of N")(
      "throughput-slack",
      po::value<std::string>()->default_value("5")->value_name("P"),
      "suggest the smallest size within P% of the best throughput that fits")(
      "min-gain", po::value<std::string>()->default_value("5")->value_name("P"),
      "suggest a new size only when it is predicted at least P% faster")(
      "hot-layer-share",
      po::value<std::string>()->default_value("20")->value_name("P"),
      "skyline-hot-layer reports layers taking at least P% of an iteration")(
      "what-if-batch-size", po::value<std::vector<int64_t>>()->value_name("N"),
      "print predicted time, throughput and memory at batch size N "
      "(repeatable)")("scale-learning-rate",
                      "export the learning-rate fix-it (linear scaling) along "
                      "with the batch size's");
  po::options_description Outputs("OUTPUT AND CI OPTIONS");
  Outputs.add_options()("sarif", po::value<std::string>()->value_name("FILE"),
                        "write the findings as SARIF 2.1.0 (docs/sarif.md)")(
      "source-root", po::value<std::string>()->value_name("DIR"),
      "SARIF URIs are relative to DIR (default: the git top level, else the "
      "current "
      "directory)")(
      "html", po::value<std::string>()->value_name("FILE"),
      "write a self-contained HTML page with charts (docs/html-report.md)")(
      "from-report", po::value<std::string>()->value_name("FILE"),
      "answer from a saved --report: no build and no runs; sources are "
      "optional")(
      "baseline", po::value<std::string>()->value_name("FILE"),
      "gate against an earlier --report: exit 3 on a regression (docs/ci.md)")(
      "max-throughput-drop",
      po::value<std::string>()->default_value("10")->value_name("P"),
      "the gate fails when throughput drops more than P% (and more than the "
      "noise)")("max-memory-growth",
                po::value<std::string>()->default_value("2")->value_name("P"),
                "the gate fails when peak memory grows more than P%")(
      "gate-repeats", po::value<unsigned>()->default_value(3)->value_name("N"),
      "runs at the baseline's batch size before a throughput drop counts")(
      "config", po::value<std::string>()->value_name("FILE"),
      "option defaults (default: the nearest .skyline.yaml above the first "
      "source)");
  Options.add(Measure).add(Model).add(Outputs);
  return Options;
}

/// "10", "10%" or "2.5" percent as a fraction in [0, 1].
std::optional<double> parsePercent(const std::string &Text) {
  std::string Number = Text;
  if (!Number.empty() && Number.back() == '%')
    Number.pop_back();
  char *End = nullptr;
  double Value = std::strtod(Number.c_str(), &End);
  if (Number.empty() || *End != '\0' || !(Value >= 0 && Value <= 100))
    return std::nullopt;
  return Value / 100;
}

/// The nearest .skyline.yaml in Dir or above it.
std::string findConfigFile(llvm::StringRef Start) {
  llvm::SmallString<256> Dir(Start);
  llvm::sys::fs::make_absolute(Dir);
  llvm::sys::path::remove_dots(Dir, /*remove_dot_dot=*/true);
  for (llvm::StringRef D = Dir; !D.empty();
       D = llvm::sys::path::parent_path(D)) {
    llvm::SmallString<256> Candidate(D);
    llvm::sys::path::append(Candidate, ".skyline.yaml");
    if (llvm::sys::fs::is_regular_file(Candidate))
      return std::string(Candidate);
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
std::optional<std::vector<std::string>>
configArguments(const std::string &Path, const po::options_description &Known,
                std::string &Error) {
  // Read even with --analyze-only: a directory, FIFO, huge file or alias
  // bomb is refused before anything is built from it.
  auto Loaded = loadYamlInput(Path, "config file", ConfigLimits);
  if (!Loaded) {
    Error = llvm::toString(Loaded.takeError());
    return std::nullopt;
  }
  const YAML::Node &Root = *Loaded;
  std::vector<std::string> Args;
  if (Root.IsNull())
    return Args;
  if (!Root.IsMap()) {
    Error = "config file '" + Path +
            "' must be a mapping of option names to values";
    return std::nullopt;
  }
  // A key or value that is a list or mapping where a scalar belongs throws.
  try {
    for (const auto &Entry : Root) {
      std::string Key = Entry.first.as<std::string>();
      // An empty key matches every option without a short name, and Boost
      // throws ambiguous_option for it (found by test/fuzz).
      if (Key.empty() || Key == "config" || !Known.find_nothrow(Key, false)) {
        Error = "unknown option '" + Key + "' in config file '" + Path +
                "' (keys are long option names, like memory-margin)";
        return std::nullopt;
      }
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
    Error = "config file '" + Path + "': " + E.what() +
            "; keys are option names, values scalars or lists of scalars";
    return std::nullopt;
  }
  return Args;
}

/// The first argument that names a file to write, if any: an output path
/// that comes from a file the user did not name could overwrite anything.
std::optional<std::string>
outputOption(const std::vector<std::string> &Args) {
  for (const std::string &Arg : Args)
    for (const char *Output :
         {"--export-fixes=", "--report=", "--sarif=", "--html="})
      if (llvm::StringRef(Arg).starts_with(Output))
        return Arg;
  return std::nullopt;
}

} // namespace

ParsedCommandLine parseCommandLine(int Argc, const char *const *Argv) {
  std::vector<std::string> Args;
  std::optional<std::vector<std::string>> ExtraArgs;
  for (int I = 1; I < Argc; ++I) {
    std::string Arg = Argv[I];
    if (Arg == "--") {
      ExtraArgs.emplace(Argv + I + 1, Argv + Argc);
      break;
    }
    if (Arg.rfind("-p=", 0) == 0) { // clang-tidy accepts -p=DIR
      Args.push_back("-p");
      Args.push_back(Arg.substr(3));
      continue;
    }
    Args.push_back(Arg);
  }

  po::options_description Visible = describeOptions();
  po::options_description All = Visible;
  All.add_options()("source", po::value<std::vector<std::string>>(), "");
  po::positional_options_description Positional;
  Positional.add("source", -1);
  po::variables_map Values;
  try {
    po::store(po::command_line_parser(Args)
                  .options(All)
                  .positional(Positional)
                  .style(po::command_line_style::default_style &
                         ~po::command_line_style::allow_guessing)
                  .run(),
              Values);
  } catch (po::error &E) {
    return UsageError{usageText(E)};
  }

  // The command line wins: a stored value is kept, a default is replaced.
  std::string ConfigFile;
  if (Values.count("config"))
    ConfigFile = Values["config"].as<std::string>();
  else if (!Values.count("help") && !Values.count("version"))
    ConfigFile = findConfigFile(
        Values.count("source")
            ? llvm::sys::path::parent_path(
                  Values["source"].as<std::vector<std::string>>().front())
                  .str()
            : ".");
  if (!ConfigFile.empty()) {
    if (!llvm::sys::fs::exists(ConfigFile))
      return UsageError{"config file '" + ConfigFile + "' does not exist"};
    std::string Error;
    auto ConfigArgs = configArguments(ConfigFile, Visible, Error);
    if (!ConfigArgs)
      return UsageError{Error};
    if (!Values.count("config"))
      if (std::optional<std::string> Output = outputOption(*ConfigArgs))
        return UsageError{
            "config file '" + ConfigFile + "' names an output (" + *Output +
            "): a .skyline.yaml found above the sources holds option "
            "defaults, not where to write; name outputs on the command line, "
            "or give this file with --config=FILE"};
    try {
      po::store(po::command_line_parser(*ConfigArgs)
                    .options(Visible)
                    .style(po::command_line_style::default_style &
                           ~po::command_line_style::allow_guessing)
                    .run(),
                Values);
    } catch (po::error &E) {
      return UsageError{usageText(E) + " (in config file '" + ConfigFile +
                        "')"};
    }
  }
  try {
    po::notify(Values);
  } catch (po::error &E) {
    return UsageError{usageText(E)};
  }

  if (Values.count("help")) {
    std::ostringstream Text;
    Text << Usage << "\n" << Visible;
    return HelpRequest{Text.str()};
  }
  if (Values.count("version"))
    return HelpRequest{"skyline-check version " SKYLINE_VERSION
                       "\n  LLVM/Clang " SKYLINE_LLVM_VERSION
                       ", built with LibTorch " SKYLINE_TORCH_VERSION "\n"};

  CommandLineOptions Options;
  if (Values.count("source"))
    Options.Sources = Values["source"].as<std::vector<std::string>>();
  Options.FromReport = Values.count("from-report")
                           ? Values["from-report"].as<std::string>()
                           : std::string();
  Options.ConfigFile = ConfigFile;
  if (Options.Sources.empty() && Options.FromReport.empty())
    return UsageError{"no source files given"};
  if (Values.count("build-path"))
    Options.BuildPath = Values["build-path"].as<std::string>();
  if (Options.BuildPath.empty() && Values.count("build-path"))
    return UsageError{"-p needs a directory"};
  Options.ExtraArgs = std::move(ExtraArgs);
  Options.AnalyzeOnly = Values.count("analyze-only") > 0;
  std::string Format = Values["format"].as<std::string>();
  if (Format == "yaml")
    Options.Format = OutputFormat::YAML;
  else if (Format != "text")
    return UsageError{"unknown --format '" + Format +
                      "' (expected text or yaml)"};
  if (Values.count("set-batch-size")) {
    Options.SetBatchSize = Values["set-batch-size"].as<int64_t>();
    if (*Options.SetBatchSize <= 0)
      return UsageError{"--set-batch-size must be a positive integer"};
  }
  if (Values.count("export-fixes")) {
    Options.ExportFixes = Values["export-fixes"].as<std::string>();
    if (!Options.SetBatchSize && Options.AnalyzeOnly)
      return UsageError{
          "--export-fixes needs a fix to export: give --set-batch-size=N"};
  }
  if (Values.count("batch-size-var"))
    Options.BatchSizeVar = Values["batch-size-var"].as<std::string>();
  auto Text = [&](const char *Name) {
    return Values.count(Name) ? Values[Name].as<std::string>() : std::string();
  };
  auto Texts = [&](const char *Name) {
    return Values.count(Name) ? Values[Name].as<std::vector<std::string>>()
                              : std::vector<std::string>();
  };
  Options.WorkDir = Text("work-dir");
  Options.TorchDir = Text("torch-dir");
  Options.LinkArgs = Texts("link-arg");
  Options.Report = Text("report");
  MeasureOptions &Measure = Options.Measure;
  std::optional<int64_t> Budget = parseByteSize(Text("memory-budget"));
  if (!Budget || *Budget <= 0)
    return UsageError{"--memory-budget '" + Text("memory-budget") +
                      "' is not a size (like 512MiB or 8GiB)"};
  Measure.MemoryBudget = *Budget;
  Measure.MaxRuns = Values["max-runs"].as<unsigned>();
  Measure.Warmup = Values["warmup"].as<unsigned>();
  Measure.Iterations = Values["iterations"].as<unsigned>();
  Measure.MinIterations = Values["min-iterations"].as<unsigned>();
  Measure.TimingRuns = Values["timing-runs"].as<unsigned>();
  Measure.BreakdownIterations = Values["breakdown-iterations"].as<unsigned>();
  Measure.RunTimeoutSeconds = Values["run-timeout"].as<unsigned>();
  if (Measure.MaxRuns == 0 || Measure.Iterations == 0)
    return UsageError{"--max-runs and --iterations must be at least 1"};
  if (Measure.MinIterations == 0 || Measure.BreakdownIterations == 0 ||
      Measure.TimingRuns == 0)
    return UsageError{
        "--min-iterations, --breakdown-iterations and --timing-runs must be at "
        "least 1"};
  std::optional<double> Tolerance =
      parsePercent(Values["tolerance"].as<std::string>());
  if (!Tolerance)
    return UsageError{"--tolerance '" + Values["tolerance"].as<std::string>() +
                      "' is not a percentage from 0 to 100 (like 2 or 2%)"};
  Measure.Tolerance = *Tolerance;
  Measure.TimeBudgetSeconds = Values["time-budget"].as<double>();
  if (!(Measure.TimeBudgetSeconds >= 0))
    return UsageError{"--time-budget must be 0 (none) or more seconds"};
  std::string Breakdown = Text("breakdown-runs");
  if (Breakdown == "declared")
    Measure.Breakdown = BreakdownRuns::Declared;
  else if (Breakdown == "none")
    Measure.Breakdown = BreakdownRuns::None;
  else if (Breakdown != "all")
    return UsageError{"unknown --breakdown-runs '" + Breakdown +
                      "' (expected all, declared or none)"};
  Measure.RunDir = Text("run-dir");
  Measure.RunArgs = Texts("run-arg");
  std::string Malloc = Text("malloc-thresholds");
  if (Malloc == "dynamic")
    Measure.Malloc = MallocThresholds::Dynamic;
  else if (Malloc != "pinned")
    return UsageError{"unknown --malloc-thresholds '" + Malloc +
                      "' (expected pinned or dynamic)"};
  std::string Device = Text("device");
  if (Device == "cpu")
    Measure.Device = DeviceChoice::CPU;
  else if (Device == "cuda")
    Measure.Device = DeviceChoice::CUDA;
  else if (Device != "auto")
    return UsageError{"unknown --device '" + Device +
                      "' (expected auto, cpu or cuda)"};

  auto Percent = [&](const char *Name,
                     double &Into) -> std::optional<UsageError> {
    std::optional<double> Value = parsePercent(Values[Name].as<std::string>());
    if (!Value)
      return UsageError{std::string("--") + Name + " '" +
                        Values[Name].as<std::string>() +
                        "' is not a percentage from 0 to 100 (like 10 or 10%)"};
    Into = *Value;
    return std::nullopt;
  };
  ModelOptions &Model = Options.Rules.Model;
  for (auto [Name, Into] :
       {std::pair<const char *, double *>{"memory-margin", &Model.MemoryMargin},
        {"throughput-slack", &Model.ThroughputSlack},
        {"min-gain", &Model.MinGain},
        {"hot-layer-share", &Options.Rules.HotLayerShare},
        {"max-throughput-drop", &Options.Gate.MaxThroughputDrop},
        {"max-memory-growth", &Options.Gate.MaxMemoryGrowth}})
    if (auto Error = Percent(Name, *Into))
      return *Error;
  if (Model.MemoryMargin >= 1)
    return UsageError{"--memory-margin must be below 100%"};
  Options.Measure.MemoryMargin = Model.MemoryMargin; // the sweep aims there
  Model.RoundTo = Values["round-to"].as<int64_t>();
  if (Model.RoundTo < 1)
    return UsageError{"--round-to must be at least 1"};
  Options.Gate.Repeats = Values["gate-repeats"].as<unsigned>();
  if (Options.Gate.Repeats == 0)
    return UsageError{"--gate-repeats must be at least 1"};
  if (Values.count("what-if-batch-size"))
    for (int64_t Size :
         Values["what-if-batch-size"].as<std::vector<int64_t>>()) {
      if (Size <= 0)
        return UsageError{"--what-if-batch-size must be a positive integer"};
      Options.WhatIfBatchSizes.push_back(Size);
    }
  Options.ScaleLearningRate = Values.count("scale-learning-rate") > 0;
  Options.Sarif = Text("sarif");
  Options.SourceRoot = Text("source-root");
  Options.Html = Text("html");
  Options.Baseline = Text("baseline");
  if (!Options.FromReport.empty() && Options.AnalyzeOnly)
    return UsageError{"--from-report answers from measurements; it cannot go "
                      "with --analyze-only"};
  if (Options.AnalyzeOnly)
    for (const char *Name :
         {"sarif", "html", "baseline", "report", "what-if-batch-size"})
      if (Values.count(Name))
        return UsageError{
            std::string("--") + Name +
            " needs measurements: drop --analyze-only, or use --from-report"};
  return Options;
}

} // namespace skyline
