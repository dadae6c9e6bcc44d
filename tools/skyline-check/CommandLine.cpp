//===- CommandLine.cpp - argv to CommandLineOptions -----------------------===//
//
// Boost.Program_options in the manner of clang-tidy: sources are positional,
// -p DIR and -p=DIR both name the build directory, and everything after `--`
// is the compile command.
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"

#include "skyline/Config.h"

#include <boost/program_options.hpp>

#include <sstream>

namespace po = boost::program_options;

namespace skyline {
namespace {

const char *const Usage =
    "USAGE: skyline-check [options] <source>... [-p <build-dir>] [-- <compiler args>]\n"
    "\n"
    "Finds the training batch size, the layers and the training loop of a\n"
    "LibTorch (PyTorch C++) program, as a compiler would.\n"
    "\n"
    "Compile commands come from compile_commands.json in -p <build-dir> or in a\n"
    "directory above the first source, or from the flags after --; without\n"
    "either, the LibTorch headers skyline-check was built with are used.\n";

po::options_description describeOptions() {
  po::options_description Options("OPTIONS");
  Options.add_options()
      ("help,h", "print this help and exit")
      ("version", "print the version and exit")
      ("build-path,p", po::value<std::string>()->value_name("DIR"),
       "build directory with compile_commands.json")
      ("analyze-only", "run the static phase only and print what it found")
      ("format", po::value<std::string>()->default_value("text")->value_name("FMT"),
       "output format: text (clang-style notes) or yaml (docs/program-model.md)")
      ("set-batch-size", po::value<int64_t>()->value_name("N"),
       "make a fix-it that sets the training batch size to N")
      ("export-fixes", po::value<std::string>()->value_name("FILE"),
       "write fix-its as YAML for clang-apply-replacements")
      ("batch-size-var", po::value<std::string>()->value_name("NAME"),
       "the variable, field (Struct::field) or macro that holds the training "
       "batch size, when it cannot be found from its uses");
  po::options_description Measure("MEASUREMENT OPTIONS (without --analyze-only)");
  Measure.add_options()
      ("work-dir", po::value<std::string>()->value_name("DIR"),
       "where the instrumented copy, its build and the run logs go "
       "(default: <build dir>/skyline-work, else ./skyline-work)")
      ("torch-dir", po::value<std::string>()->value_name("DIR"),
       "LibTorch's CMake directory (default: Torch_DIR of the build dir's "
       "CMakeCache.txt, else the one skyline-check was built with)")
      ("link-arg", po::value<std::vector<std::string>>()->value_name("ARG"),
       "an extra library or linker flag for the instrumented program (repeatable)")
      ("memory-budget", po::value<std::string>()->default_value("4GiB")->value_name("SIZE"),
       "CPU memory a run may hold, like 512MiB or 8GiB; crossing it is an out-of-memory")
      ("max-runs", po::value<unsigned>()->default_value(4)->value_name("N"),
       "batch sizes to try: the declared one, then doubling toward the budget")
      ("warmup", po::value<unsigned>()->default_value(2)->value_name("N"),
       "iterations run before measuring")
      ("iterations", po::value<unsigned>()->default_value(8)->value_name("N"),
       "iterations measured per run")
      ("run-timeout", po::value<unsigned>()->default_value(300)->value_name("SECONDS"),
       "a run still going after this is stopped and reported")
      ("run-dir", po::value<std::string>()->value_name("DIR"),
       "the directory runs start in (default: the current one)")
      ("run-arg", po::value<std::vector<std::string>>()->value_name("ARG"),
       "an argument for the program (repeatable)")
      ("device", po::value<std::string>()->default_value("auto")->value_name("DEV"),
       "auto, cpu (hides GPUs from the program) or cuda")
      ("report", po::value<std::string>()->value_name("FILE"),
       "write the measured runs as YAML (docs/report.md)");
  Options.add(Measure);
  return Options;
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
    po::notify(Values);
  } catch (const po::error &E) {
    return UsageError{E.what()};
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
  if (Options.Sources.empty())
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
    return UsageError{"unknown --format '" + Format + "' (expected text or yaml)"};
  if (Values.count("set-batch-size")) {
    Options.SetBatchSize = Values["set-batch-size"].as<int64_t>();
    if (*Options.SetBatchSize <= 0)
      return UsageError{"--set-batch-size must be a positive integer"};
  }
  if (Values.count("export-fixes")) {
    Options.ExportFixes = Values["export-fixes"].as<std::string>();
    if (!Options.SetBatchSize)
      return UsageError{"--export-fixes needs a fix to export: give --set-batch-size=N"};
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
  Measure.RunTimeoutSeconds = Values["run-timeout"].as<unsigned>();
  if (Measure.MaxRuns == 0 || Measure.Iterations == 0)
    return UsageError{"--max-runs and --iterations must be at least 1"};
  Measure.RunDir = Text("run-dir");
  Measure.RunArgs = Texts("run-arg");
  std::string Device = Text("device");
  if (Device == "cpu")
    Measure.Device = DeviceChoice::CPU;
  else if (Device == "cuda")
    Measure.Device = DeviceChoice::CUDA;
  else if (Device != "auto")
    return UsageError{"unknown --device '" + Device + "' (expected auto, cpu or cuda)"};
  return Options;
}

} // namespace skyline
