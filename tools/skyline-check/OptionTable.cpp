//===- OptionTable.cpp - skyline-check's options, each declared once ------===//
//
// The declarations come in a few kinds (a flag, a text, a count, a
// percentage, a choice of words), each of which checks its value the same way
// everywhere, so an option's line says only what is particular to it.
//
//===----------------------------------------------------------------------===//

#include "OptionTable.h"

#include "skyline/Experiments.h"
#include "skyline/Rules.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/StringSaver.h"

#include <boost/make_shared.hpp>

#include <cstdlib>
#include <utility>

namespace po = boost::program_options;

namespace skyline {

llvm::Error usageError(const llvm::Twine &Message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Message);
}

namespace {

/// Where an option's value goes.
template <typename T> using Field = std::function<T &(CommandLineOptions &)>;

template <typename T> Field<T> field(T CommandLineOptions::*Member) {
  return
      [Member](CommandLineOptions &Options) -> T & { return Options.*Member; };
}

/// A field of one of the structs that CommandLineOptions holds
/// (field(&CommandLineOptions::Rules, &RuleOptions::HotLayerShare)).
template <typename PartT, typename T>
Field<T> field(PartT CommandLineOptions::*Part, T PartT::*Member) {
  return [Part, Member](CommandLineOptions &Options) -> T & {
    return Options.*Part.*Member;
  };
}

template <typename T> Field<T> measureField(T MeasureOptions::*Member) {
  return field(&CommandLineOptions::Measure, Member);
}

template <typename T> Field<T> gateField(T GateOptions::*Member) {
  return field(&CommandLineOptions::Gate, Member);
}

template <typename T> Field<T> modelField(T ModelOptions::*Member) {
  return [Member](CommandLineOptions &Options) -> T & {
    return Options.Rules.Model.*Member;
  };
}

/// An option the parser reads itself: it has no Store.
OptionDecl declare(const char *Name, const po::value_semantic *Value,
                   const char *Help) {
  OptionDecl Decl;
  Decl.Description =
      boost::make_shared<po::option_description>(Name, Value, Help);
  return Decl;
}

/// An option whose value Boost parses into T, then Store(const T &,
/// CommandLineOptions &) checks and keeps.
template <typename T, typename StoreFn>
OptionDecl option(const char *Name, po::typed_value<T> *Value, const char *Help,
                  StoreFn Store, unsigned Traits = NoTraits) {
  OptionDecl Decl = declare(Name, Value, Help);
  Decl.Store = [Store](const po::variable_value &Given,
                       CommandLineOptions &Options) -> llvm::Error {
    return Store(Given.as<T>(), Options);
  };
  Decl.Traits = Traits;
  return Decl;
}

/// An option without a value; Into, if any, becomes true when it is given.
OptionDecl flag(const char *Name, const char *Help, Field<bool> Into = {}) {
  OptionDecl Decl =
      declare(Name, new po::untyped_value(/*zero_tokens=*/true), Help);
  if (Into)
    Decl.Store = [Into](const po::variable_value &,
                        CommandLineOptions &Options) -> llvm::Error {
      Into(Options) = true;
      return llvm::Error::success();
    };
  return Decl;
}

OptionDecl text(const char *Name, const char *ValueName, const char *Help,
                Field<std::string> Into, unsigned Traits = NoTraits) {
  return option(
      Name, po::value<std::string>()->value_name(ValueName), Help,
      [Into](const std::string &Text,
             CommandLineOptions &Options) -> llvm::Error {
        Into(Options) = Text;
        return llvm::Error::success();
      },
      Traits);
}

/// A repeatable text option.
OptionDecl texts(const char *Name, const char *ValueName, const char *Help,
                 Field<std::vector<std::string>> Into) {
  return option(
      Name, po::value<std::vector<std::string>>()->value_name(ValueName), Help,
      [Into](const std::vector<std::string> &Texts,
             CommandLineOptions &Options) -> llvm::Error {
        Into(Options) = Texts;
        return llvm::Error::success();
      });
}

/// A count with a default; ZeroError, if any, refuses 0.
OptionDecl count(const char *Name, const char *ValueName, unsigned Default,
                 const char *Help, Field<unsigned> Into,
                 const char *ZeroError = nullptr) {
  return option(
      Name,
      po::value<unsigned>()->default_value(Default)->value_name(ValueName),
      Help,
      [Into, ZeroError](unsigned N,
                        CommandLineOptions &Options) -> llvm::Error {
        if (N == 0 && ZeroError)
          return usageError(ZeroError);
        Into(Options) = N;
        return llvm::Error::success();
      });
}

/// Errors that name several counts, kept as they were written before each
/// count had its own declaration.
const char *const RunsAndIterationsError =
    "--max-runs and --iterations must be at least 1";
const char *const MeasuredIterationsError =
    "--min-iterations, --breakdown-iterations and --timing-runs must be at "
    "least 1";

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

/// Option Name's percentage as a fraction, or an error that shows Example
/// ("10" says "like 10 or 10%").
llvm::Expected<double> toFraction(const char *Name, const std::string &Text,
                                  const char *Example) {
  if (std::optional<double> Fraction = parsePercent(Text))
    return *Fraction;
  return usageError(llvm::Twine("--") + Name + " '" + Text +
                    "' is not a percentage from 0 to 100 (like " + Example +
                    " or " + Example + "%)");
}

OptionDecl percent(const char *Name, const char *Default, const char *Help,
                   Field<double> Into, const char *Example = "10") {
  return option(
      Name, po::value<std::string>()->default_value(Default)->value_name("P"),
      Help,
      [=](const std::string &Text, CommandLineOptions &Options) -> llvm::Error {
        llvm::Expected<double> Fraction = toFraction(Name, Text, Example);
        if (!Fraction)
          return Fraction.takeError();
        Into(Options) = *Fraction;
        return llvm::Error::success();
      });
}

/// One of a few words, each standing for a value of E; the first word is the
/// default.
template <typename E>
OptionDecl choice(const char *Name, const char *ValueName, const char *Help,
                  Field<E> Into,
                  std::vector<std::pair<const char *, E>> Choices) {
  std::string Expected; // "a, b or c"
  for (size_t I = 0; I < Choices.size(); ++I)
    Expected += std::string(I == 0                    ? ""
                            : I + 1 == Choices.size() ? " or "
                                                      : ", ") +
                Choices[I].first;
  auto Store = [=](const std::string &Word,
                   CommandLineOptions &Options) -> llvm::Error {
    for (const auto &[Choice, Value] : Choices)
      if (Word == Choice) {
        Into(Options) = Value;
        return llvm::Error::success();
      }
    return usageError(llvm::Twine("unknown --") + Name + " '" + Word +
                      "' (expected " + Expected + ")");
  };
  return option(Name,
                po::value<std::string>()
                    ->default_value(Choices.front().first)
                    ->value_name(ValueName),
                Help, Store);
}

/// A batch size to act on: at least 1.
llvm::Error checkBatchSize(const char *Name, int64_t Size) {
  if (Size <= 0)
    return usageError(llvm::Twine("--") + Name + " must be a positive integer");
  return llvm::Error::success();
}

OptionGroup generalOptions() {
  return {
      "OPTIONS",
      {
          flag("help,h", "print this help and exit"),
          flag("version", "print the version and exit"),
          option("build-path,p", po::value<std::string>()->value_name("DIR"),
                 "build directory with compile_commands.json",
                 [](const std::string &Dir,
                    CommandLineOptions &Options) -> llvm::Error {
                   if (Dir.empty()) // -p= or -p ''
                     return usageError("-p needs a directory");
                   Options.BuildPath = Dir;
                   return llvm::Error::success();
                 }),
          flag("analyze-only",
               "run the static phase only and print what it found",
               field(&CommandLineOptions::AnalyzeOnly)),
          choice<OutputFormat>(
              "format", "FMT",
              "output format: text (clang-style notes) or "
              "yaml (docs/program-model.md)",
              field(&CommandLineOptions::Format),
              {{"text", OutputFormat::Text}, {"yaml", OutputFormat::YAML}}),
          option("set-batch-size", po::value<int64_t>()->value_name("N"),
                 "make a fix-it that sets the training batch size to N",
                 [](int64_t Size, CommandLineOptions &Options) -> llvm::Error {
                   Options.SetBatchSize = Size;
                   return checkBatchSize("set-batch-size", Size);
                 }),
          option(
              "export-fixes", po::value<std::string>()->value_name("FILE"),
              "write fix-its as YAML for clang-apply-replacements",
              [](const std::string &File,
                 CommandLineOptions &Options) -> llvm::Error {
                // Declared after --analyze-only and --set-batch-size, so
                // both are stored by now.
                Options.ExportFixes = File;
                if (!Options.SetBatchSize && Options.AnalyzeOnly)
                  return usageError("--export-fixes needs a fix to export: "
                                    "give --set-batch-size=N");
                return llvm::Error::success();
              },
              NamesOutput),
          text("batch-size-var", "NAME",
               "the variable, field (Struct::field) or macro that holds the "
               "training batch size, when it cannot be found from its uses",
               field(&CommandLineOptions::BatchSizeVar)),
      }};
}

/// What is built for the runs.
std::vector<OptionDecl> buildOptions() {
  return {
      text("work-dir", "DIR",
           "where the instrumented copy, its build and the run logs go "
           "(default: <build dir>/skyline-work, else ./skyline-work)",
           field(&CommandLineOptions::WorkDir)),
      text("torch-dir", "DIR",
           "LibTorch's CMake directory (default: Torch_DIR of the build "
           "dir's CMakeCache.txt, else the one skyline-check was built "
           "with)",
           field(&CommandLineOptions::TorchDir)),
      texts("link-arg", "ARG",
            "an extra library or linker flag for the instrumented "
            "program (repeatable)",
            field(&CommandLineOptions::LinkArgs)),
  };
}

/// How much a sweep measures and how long it may take.
std::vector<OptionDecl> budgetOptions() {
  return {
      option(
          "memory-budget",
          po::value<std::string>()->default_value("4GiB")->value_name("SIZE"),
          "CPU memory a run may hold, like 512MiB or 8GiB; crossing it "
          "is an out-of-memory",
          [](const std::string &Text,
             CommandLineOptions &Options) -> llvm::Error {
            std::optional<int64_t> Budget = parseByteSize(Text);
            if (!Budget || *Budget <= 0)
              return usageError("--memory-budget '" + Text +
                                "' is not a size (like 512MiB or "
                                "8GiB)");
            Options.Measure.MemoryBudget = *Budget;
            return llvm::Error::success();
          }),
      count("max-runs", "N", 6,
            "batch sizes to try: the declared one, its double, then half "
            "of the rest toward the memory capacity less --memory-margin "
            "and half where the time bends or is least known",
            measureField(&MeasureOptions::MaxRuns), RunsAndIterationsError),
      count("warmup", "N", 2, "iterations run before measuring",
            measureField(&MeasureOptions::Warmup)),
      count("iterations", "N", 50,
            "the most iterations a timing run measures; it stops sooner "
            "once the median is stable (--tolerance) or its share of "
            "--time-budget is spent",
            measureField(&MeasureOptions::Iterations), RunsAndIterationsError),
      count("min-iterations", "N", 5,
            "the fewest iterations a timing run measures",
            measureField(&MeasureOptions::MinIterations),
            MeasuredIterationsError),
      count("timing-runs", "N", 3,
            "timing runs per batch size the decision rests on (the "
            "declared, the best, those around the suggestion; one run "
            "serves the rest), interleaved over the sizes; the fastest is "
            "kept once another is within 5% of it (more runs until then, at "
            "most 3N): other work only slows a run",
            measureField(&MeasureOptions::TimingRuns), MeasuredIterationsError),
      percent("tolerance", "2",
              "a timing run stops once the median's standard error is P% "
              "of it; 0 measures --iterations",
              measureField(&MeasureOptions::Tolerance), /*Example=*/"2"),
      option("time-budget",
             po::value<double>()->default_value(120)->value_name("SECONDS"),
             "all runs together: each run gets a share of what is left, "
             "and no batch size is added once it is spent (0: none)",
             [](double Seconds, CommandLineOptions &Options) -> llvm::Error {
               if (!(Seconds >= 0)) // NaN too
                 return usageError(
                     "--time-budget must be 0 (none) or more seconds");
               Options.Measure.TimeBudgetSeconds = Seconds;
               return llvm::Error::success();
             }),
      option("wait-for-quiet",
             po::value<double>()->default_value(0)->value_name("SECONDS"),
             "where other work keeps the CPUs as the runs start, wait up to "
             "this long for it to end (0: start at once)",
             [](double Seconds, CommandLineOptions &Options) -> llvm::Error {
               if (!(Seconds >= 0)) // NaN too
                 return usageError(
                     "--wait-for-quiet must be 0 (none) or more seconds");
               Options.Measure.QuietWaitSeconds = Seconds;
               return llvm::Error::success();
             }),
      choice<BreakdownRuns>(
          "breakdown-runs", "WHICH",
          "which batch sizes also get a breakdown run (time split, "
          "memory kinds, layers): all (but probes), declared or none",
          measureField(&MeasureOptions::Breakdown),
          {{"all", BreakdownRuns::All},
           {"declared", BreakdownRuns::Declared},
           {"none", BreakdownRuns::None}}),
      count("breakdown-iterations", "N", 3,
            "iterations a breakdown run measures",
            measureField(&MeasureOptions::BreakdownIterations),
            MeasuredIterationsError),
      count("run-timeout", "SECONDS", 300,
            "a run still going after this is stopped and reported",
            measureField(&MeasureOptions::RunTimeoutSeconds)),
  };
}

/// Where the runs go: here, or through Slurm (docs/cluster.md).
std::vector<OptionDecl> launcherOptions() {
  return {
      choice<LauncherChoice>(
          "launcher", "WHERE",
          "where the runs go: local (processes here) or slurm (each run a "
          "job step inside salloc/sbatch, else a job of its own, by srun)",
          measureField(&MeasureOptions::Launcher),
          {{"local", LauncherChoice::Local}, {"slurm", LauncherChoice::Slurm}}),
      option("slurm-args", po::value<std::string>()->value_name("ARGS"),
             "srun options for every run, split as a shell would and passed "
             "as given (\"-p gpu --gres=gpu:1 --time=10\")",
             [](const std::string &Text,
                CommandLineOptions &Options) -> llvm::Error {
               llvm::BumpPtrAllocator Allocator;
               llvm::StringSaver Saver(Allocator);
               llvm::SmallVector<const char *, 8> Words;
               llvm::cl::TokenizeGNUCommandLine(Text, Saver, Words);
               Options.Measure.SlurmArgs.assign(Words.begin(), Words.end());
               return llvm::Error::success();
             }),
      count("queue-timeout", "SECONDS", 600,
            "the longest a run's Slurm job may wait to start; it is then "
            "withdrawn and the sweep stops (0: no limit)",
            measureField(&MeasureOptions::QueueTimeoutSeconds)),
      count("parallel-runs", "N", 1,
            "with --launcher=slurm, up to N runs at once where they do not "
            "depend on each other (the repeats of a pass), each a job or "
            "step of its own",
            measureField(&MeasureOptions::ParallelRuns),
            "--parallel-runs must be at least 1"),
  };
}

/// How the runs start, and what is written of them.
std::vector<OptionDecl> runOptions() {
  return {
      text("run-dir", "DIR",
           "the directory runs start in (default: the current one)",
           measureField(&MeasureOptions::RunDir)),
      texts("run-arg", "ARG", "an argument for the program (repeatable)",
            measureField(&MeasureOptions::RunArgs)),
      choice<DeviceChoice>("device", "DEV",
                           "auto, cpu (hides GPUs from the program) or cuda "
                           "(fails where a run did not use a GPU)",
                           measureField(&MeasureOptions::Device),
                           {{"auto", DeviceChoice::Auto},
                            {"cpu", DeviceChoice::CPU},
                            {"cuda", DeviceChoice::CUDA}}),
      choice<MallocThresholds>(
          "malloc-thresholds", "WHICH",
          "glibc's malloc mmap and trim thresholds in the runs: pinned (a "
          "size's time then does not hang on which buffers glibc gave "
          "back to the system) or dynamic (glibc's default); set in your "
          "environment, yours are kept",
          measureField(&MeasureOptions::Malloc),
          {{"pinned", MallocThresholds::Pinned},
           {"dynamic", MallocThresholds::Dynamic}}),
      option("experiments", po::value<std::string>()->value_name("LIST"),
             "measured experiments to try, each a trial run with a fix-it: "
             "all, none, or names (threads, loader-workers, no-grad-eval, "
             "cudnn-benchmark, autocast-bf16, channels-last, "
             "pinned-memory); "
             "default: those that cost at most one extra run "
             "(docs/experiments/)",
             [](const std::string &Text,
                CommandLineOptions &Options) -> llvm::Error {
               auto Chosen = selectExperiments(Text);
               if (!Chosen)
                 return Chosen.takeError();
               Options.Measure.Experiments = std::move(*Chosen);
               return llvm::Error::success();
             }),
      text("report", "FILE",
           "write the runs, fits, predictions and suggestion as YAML "
           "(docs/report.md)",
           field(&CommandLineOptions::Report), NamesOutput | NeedsMeasurements),
  };
}

/// The options of a sweep (MeasureOptions) and of its build.
OptionGroup measurementOptions() {
  OptionGroup Group{"MEASUREMENT OPTIONS (without --analyze-only)", {}};
  for (const std::vector<OptionDecl> &Part :
       {buildOptions(), budgetOptions(), runOptions(), launcherOptions()})
    Group.Options.insert(Group.Options.end(), Part.begin(), Part.end());
  return Group;
}

/// The model's and the rules' options (RuleOptions).
OptionGroup predictionOptions() {
  return {
      "PREDICTION AND SUGGESTION OPTIONS (percent: 10 or 10%)",
      {
          option("memory-margin",
                 po::value<std::string>()->default_value("10")->value_name("P"),
                 "memory kept free: a size fits when its peak is under the "
                 "capacity less P%",
                 [](const std::string &Text,
                    CommandLineOptions &Options) -> llvm::Error {
                   llvm::Expected<double> Margin =
                       toFraction("memory-margin", Text, "10");
                   if (!Margin)
                     return Margin.takeError();
                   if (*Margin >= 1)
                     return usageError("--memory-margin must be below 100%");
                   // The sweep aims at the capacity the model keeps free.
                   Options.Rules.Model.MemoryMargin = *Margin;
                   Options.Measure.MemoryMargin = *Margin;
                   return llvm::Error::success();
                 }),
          option("round-to",
                 po::value<int64_t>()->default_value(8)->value_name("N"),
                 "suggested batch sizes are multiples of N",
                 [](int64_t N, CommandLineOptions &Options) -> llvm::Error {
                   if (N < 1)
                     return usageError("--round-to must be at least 1");
                   Options.Rules.Model.RoundTo = N;
                   return llvm::Error::success();
                 }),
          percent("throughput-slack", "5",
                  "suggest the smallest size within P% of the best throughput "
                  "that fits",
                  modelField(&ModelOptions::ThroughputSlack)),
          percent("min-gain", "5",
                  "suggest a new size only when it is predicted at least P% "
                  "faster",
                  modelField(&ModelOptions::MinGain)),
          // A rule's own option, declared with the rule (HotLayerRule.cpp).
          percent(
              hotLayerShareOption().Name, hotLayerShareOption().Default,
              hotLayerShareOption().Help,
              field(&CommandLineOptions::Rules, &RuleOptions::HotLayerShare)),
          option(
              "what-if-batch-size",
              po::value<std::vector<int64_t>>()->value_name("N"),
              "print predicted time, throughput and memory at batch size N "
              "(repeatable)",
              [](const std::vector<int64_t> &Sizes,
                 CommandLineOptions &Options) -> llvm::Error {
                for (int64_t Size : Sizes)
                  if (llvm::Error E =
                          checkBatchSize("what-if-batch-size", Size))
                    return E;
                Options.WhatIfBatchSizes = Sizes;
                return llvm::Error::success();
              },
              NeedsMeasurements),
          flag("scale-learning-rate",
               "export the learning-rate fix-it (linear scaling) along with "
               "the batch size's",
               field(&CommandLineOptions::ScaleLearningRate)),
      }};
}

/// The reports, the saved-report and gate options (GateOptions), and the
/// config file.
OptionGroup outputOptions() {
  return {
      "OUTPUT AND CI OPTIONS",
      {
          text("sarif", "FILE",
               "write the findings as SARIF 2.1.0 (docs/sarif.md)",
               field(&CommandLineOptions::Sarif),
               NamesOutput | NeedsMeasurements),
          text("source-root", "DIR",
               "SARIF URIs are relative to DIR (default: the git top level, "
               "else the current directory)",
               field(&CommandLineOptions::SourceRoot)),
          text("html", "FILE",
               "write a self-contained HTML page with charts "
               "(docs/html-report.md)",
               field(&CommandLineOptions::Html),
               NamesOutput | NeedsMeasurements),
          text("from-report", "FILE",
               "answer from a saved --report: no build and no runs; sources "
               "are optional",
               field(&CommandLineOptions::FromReport)),
          text("bundle", "DIR",
               "instrument and build, then write what the runs need into "
               "DIR and stop: skyline-measure DIR runs them where the "
               "hardware is (docs/cluster.md)",
               field(&CommandLineOptions::Bundle)),
          text("from-runs", "DIR",
               "answer from the runs skyline-measure made of a --bundle "
               "DIR: no build and no runs here; sources are optional",
               field(&CommandLineOptions::FromRuns)),
          text("baseline", "FILE",
               "gate against an earlier --report: exit 3 on a regression "
               "(docs/ci.md)",
               field(&CommandLineOptions::Baseline), NeedsMeasurements),
          percent("max-throughput-drop", "10",
                  "the gate fails when throughput drops more than P% (and "
                  "more than the noise)",
                  gateField(&GateOptions::MaxThroughputDrop)),
          percent("max-memory-growth", "2",
                  "the gate fails when peak memory grows more than P%",
                  gateField(&GateOptions::MaxMemoryGrowth)),
          count("gate-repeats", "N", 3,
                "runs at the baseline's batch size before a throughput drop "
                "counts",
                gateField(&GateOptions::Repeats),
                "--gate-repeats must be at least 1"),
          // The parser reads it before the other options have values.
          declare("config", po::value<std::string>()->value_name("FILE"),
                  "option defaults (default: the nearest .skyline.yaml above "
                  "the first source)"),
      }};
}

} // namespace

std::vector<OptionGroup> declareOptions() {
  return {generalOptions(), measurementOptions(), predictionOptions(),
          outputOptions()};
}

po::options_description
describeOptions(const std::vector<OptionGroup> &Groups) {
  // Boost prints the first group's options under its caption, then each
  // further group under its own.
  po::options_description All(Groups.front().Caption);
  for (const OptionDecl &Decl : Groups.front().Options)
    All.add(Decl.Description);
  for (auto Group = Groups.begin() + 1; Group != Groups.end(); ++Group) {
    po::options_description Described(Group->Caption);
    for (const OptionDecl &Decl : Group->Options)
      Described.add(Decl.Description);
    All.add(Described);
  }
  return All;
}

} // namespace skyline
