//===- SkylineMeasure.cpp - Runs a measure bundle where the hardware is ---===//
//
// skyline-measure DIR: the runs of a bundle that skyline-check --bundle=DIR
// wrote, on a machine that has LibTorch and no LLVM, Clang or sources.
// Builds the bundle's program against that machine's LibTorch (once), runs
// the sweep measure() runs (the same Sweep, through the same launchers),
// and writes DIR/runs.yaml for skyline-check --from-runs=DIR. It links
// LLVM's Support library statically and no Clang (docs/cluster.md).
//
//===----------------------------------------------------------------------===//

#include "skyline/Config.h"
#include "skyline/Experiments.h"
#include "skyline/Measure.h"
#include "skyline/MeasurePlan.h"
#include "skyline/RunReport.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

using namespace skyline;
namespace fs = llvm::sys::fs;

namespace {

constexpr const char *Usage =
    "usage: skyline-measure [options] DIR\n"
    "Runs the sweep of a measure bundle (skyline-check --bundle=DIR) and\n"
    "writes DIR/runs.yaml for skyline-check --from-runs=DIR.\n"
    "  --torch-dir=DIR   LibTorch's CMake directory (default: $TORCH_DIR,\n"
    "                    else the python torch package's, else the one\n"
    "                    skyline-measure was built with)\n"
    "  --executable=FILE run this build of the bundle's program instead of\n"
    "                    building it (DIR/prebuilt/ is the one built where\n"
    "                    the bundle was written)\n"
    "  --run-dir=DIR     where the runs start (default: the plan's, where it\n"
    "                    exists here, else the current directory)\n"
    "  --jobs=N          parallel compile jobs of the build\n";

struct Arguments {
  std::string Bundle, TorchDir, Executable, RunDir, Jobs;
};

std::optional<Arguments> parseArguments(int Argc, char **Argv) {
  Arguments Args;
  for (int I = 1; I < Argc; ++I) {
    llvm::StringRef Arg = Argv[I];
    if (Arg == "--help" || Arg == "-h")
      return std::nullopt;
    if (Arg.consume_front("--torch-dir="))
      Args.TorchDir = Arg.str();
    else if (Arg.consume_front("--executable="))
      Args.Executable = Arg.str();
    else if (Arg.consume_front("--run-dir="))
      Args.RunDir = Arg.str();
    else if (Arg.consume_front("--jobs="))
      Args.Jobs = Arg.str();
    else if (Arg.starts_with("-") || !Args.Bundle.empty())
      return std::nullopt;
    else
      Args.Bundle = Arg.str();
  }
  if (Args.Bundle.empty())
    return std::nullopt;
  return Args;
}

std::string absolute(llvm::StringRef Path) {
  llvm::SmallString<256> Out(Path);
  fs::make_absolute(Out);
  return Out.str().str();
}

/// Args[0] run to its end with its output appended to Log; its exit code.
int runLogged(std::vector<std::string> Args, llvm::StringRef Log) {
  auto Program = llvm::sys::findProgramByName(Args.front());
  if (!Program)
    return -1;
  std::vector<llvm::StringRef> Refs(Args.begin(), Args.end());
  std::optional<llvm::StringRef> Redirects[] = {std::nullopt, Log, Log};
  std::string Error;
  // ExecuteAndWait truncates the log: each step gets its own.
  return llvm::sys::ExecuteAndWait(*Program, Refs, std::nullopt, Redirects, 0,
                                   0, &Error);
}

/// The python torch package's CMake directory, where python3 imports it.
std::string pythonTorchDir(llvm::StringRef Bundle) {
  auto Python = llvm::sys::findProgramByName("python3");
  if (!Python)
    return "";
  std::string Out = (Bundle + "/build/torch-prefix.txt").str();
  fs::create_directories(Bundle + "/build");
  llvm::StringRef Args[] = {*Python, "-c",
                            "import torch.utils; "
                            "print(torch.utils.cmake_prefix_path)"};
  std::optional<llvm::StringRef> Redirects[] = {std::nullopt, Out,
                                                llvm::StringRef("/dev/null")};
  if (llvm::sys::ExecuteAndWait(*Python, Args, std::nullopt, Redirects) != 0)
    return "";
  auto Buffer = llvm::MemoryBuffer::getFile(Out);
  if (!Buffer)
    return "";
  std::string Dir =
      (llvm::StringRef((*Buffer)->getBuffer()).trim() + "/Torch").str();
  return fs::exists(Dir + "/TorchConfig.cmake") ? Dir : "";
}

std::string torchDir(const Arguments &Args) {
  if (!Args.TorchDir.empty())
    return Args.TorchDir;
  if (const char *Env = std::getenv("TORCH_DIR"); Env && *Env)
    return Env;
  if (std::string Python = pythonTorchDir(Args.Bundle); !Python.empty())
    return Python;
  return fs::exists(std::string(SKYLINE_TORCH_DIR) + "/TorchConfig.cmake")
             ? SKYLINE_TORCH_DIR
             : "";
}

/// The bundle's program built here against this machine's LibTorch, in
/// DIR/build (kept: a second run rebuilds nothing).
llvm::Expected<std::string> buildProgram(const Arguments &Args) {
  std::string Torch = torchDir(Args);
  if (Torch.empty())
    return llvm::createStringError(
        std::errc::no_such_file_or_directory,
        "no LibTorch found to build the bundle's program: give "
        "--torch-dir=DIR (LibTorch's share/cmake/Torch) or set TORCH_DIR");
  std::string Build = Args.Bundle + "/build";
  llvm::errs() << "skyline-measure: building the program against " << Torch
               << " (log: " << Build << "/configure.log, build.log)\n";
  std::vector<std::string> Configure = {"cmake",
                                        "-S",
                                        Args.Bundle + "/project",
                                        "-B",
                                        Build,
                                        "-DCMAKE_BUILD_TYPE=Release",
                                        "-DTorch_DIR=" + Torch};
  if (llvm::sys::findProgramByName("ninja"))
    Configure.push_back("-GNinja");
  auto Started = std::chrono::steady_clock::now();
  fs::create_directories(Build);
  if (!fs::exists(Build + "/CMakeCache.txt") &&
      runLogged(Configure, Build + "/configure.log") != 0)
    return llvm::createStringError(
        std::errc::invalid_argument,
        "configuring the bundle's program failed (cmake; see %s/configure.log)",
        Build.c_str());
  std::vector<std::string> Compile = {"cmake", "--build", Build};
  if (!Args.Jobs.empty())
    llvm::append_range(Compile, std::vector<std::string>{"-j", Args.Jobs});
  if (runLogged(Compile, Build + "/build.log") != 0)
    return llvm::createStringError(
        std::errc::invalid_argument,
        "building the bundle's program failed (see %s/build.log)",
        Build.c_str());
  std::chrono::duration<double> Took =
      std::chrono::steady_clock::now() - Started;
  llvm::errs() << llvm::format("skyline-measure: built in %.1f s\n",
                               Took.count());
  return Build + "/skyline_instrumented";
}

/// Where the runs start: --run-dir, else the plan's where it is here, else
/// the current directory (said: a program that reads its data by a
/// relative path needs it there).
std::string runDirectory(const Arguments &Args, llvm::StringRef Planned) {
  if (!Args.RunDir.empty())
    return absolute(Args.RunDir);
  if (!Planned.empty() && fs::is_directory(Planned))
    return Planned.str();
  std::string Current = absolute(".");
  if (!Planned.empty())
    llvm::errs() << "skyline-measure: note: the plan's run directory "
                 << Planned << " is not on this machine; the runs start in "
                 << Current << " (--run-dir=DIR to choose)\n";
  return Current;
}

llvm::Error writeRuns(llvm::StringRef Path, llvm::StringRef Text) {
  std::string Temporary = (Path + ".tmp").str();
  std::error_code EC;
  {
    llvm::raw_fd_ostream Out(Temporary, EC);
    if (!EC) {
      Out << Text;
      Out.close();
      EC = Out.error();
    }
  }
  if (!EC)
    EC = fs::rename(Temporary, Path);
  if (EC)
    return llvm::createStringError(EC, "cannot write '%s': %s",
                                   Path.str().c_str(), EC.message().c_str());
  return llvm::Error::success();
}

int fail(llvm::Error E) {
  llvm::errs() << "skyline-measure: error: " << llvm::toString(std::move(E))
               << "\n";
  return 1;
}

} // namespace

int main(int Argc, char **Argv) {
  std::optional<Arguments> Args = parseArguments(Argc, Argv);
  if (!Args) {
    llvm::errs() << Usage;
    return 2;
  }
  Args->Bundle = absolute(Args->Bundle);
  auto Plan = readMeasurePlan(bundlePlanPath(Args->Bundle));
  if (!Plan)
    return fail(Plan.takeError());
  std::string Executable =
      Args->Executable.empty() ? "" : absolute(Args->Executable);
  if (Executable.empty()) {
    auto Built = buildProgram(*Args);
    if (!Built)
      return fail(Built.takeError());
    Executable = *Built;
  }
  MeasureOptions Options = Plan->Options;
  Options.WorkDir = Args->Bundle;
  Options.RunDir = runDirectory(*Args, Options.RunDir);
  // The experiments skyline-check chose, planned from this node's machine.
  Options.PlanTrials =
      trialPlanner(Options.Experiments.value_or(std::vector<std::string>()),
                   Plan->Program);
  fs::remove(bundleRunsPath(Args->Bundle));
  auto Measured =
      measure(Executable, Plan->DeclaredBatchSize, Options, llvm::errs());
  if (!Measured)
    return fail(Measured.takeError());
  SavedReport Runs;
  Runs.SkylineVersion = Plan->SkylineVersion;
  Runs.Program = std::move(Plan->Program);
  Runs.Measured = std::move(*Measured);
  Runs.BuildSeconds = Plan->BuildSeconds;
  Runs.Key = Plan->Key;
  std::string Path = bundleRunsPath(Args->Bundle);
  if (llvm::Error E = writeRuns(Path, reportToYAML(Runs, nullptr)))
    return fail(std::move(E));
  llvm::errs() << llvm::format("skyline-measure: %zu runs kept, %.1f s; "
                               "written to %s\n",
                               Runs.Measured.Runs.size(),
                               totalRunSeconds(Runs.Measured), Path.c_str());
  return 0;
}
