// The generated project of the Build stage: no precompiled header (measured
// not to pay, docs/performance.md), one target with the program's flags for
// every source. No CMake runs here: the build itself, and its cache (a second
// run compiles nothing), are tested by
// test/lit/examples/measure-regression.test.

#include "skyline/Build.h"

#include "skyline/Config.h"

#include "clang/Tooling/CompilationDatabase.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cstdlib>

using namespace skyline;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

const char *const IncludeLine = "target_compile_options(skyline_instrumented "
                                "PRIVATE -include skyline/runtime/Runtime.h)";

InstrumentedProgram program() {
  InstrumentedProgram Program;
  Program.SourceRoot = "/home/user/proj";
  Program.MirrorRoot = "/tmp/work/src";
  Program.MirrorOf["/home/user/proj/src/train.cpp"] =
      "/tmp/work/src/src/train.cpp";
  Program.Sources = {"/tmp/work/src/src/train.cpp"};
  return Program;
}

/// Flags as projectFlags reads them from the user's compile commands.
ProjectFlags userFlags() {
  ProjectFlags Flags;
  Flags.MirrorIncludes = {"/tmp/work/src/src"};
  Flags.Includes = {"/home/user/proj/include"};
  Flags.Definitions = {"USE_FAST_PATH", "MODEL_WIDTH=128"};
  Flags.Standard = "20";
  return Flags;
}

std::string generate(const BuildOptions &Options,
                     const ProjectFlags &Flags = userFlags()) {
  std::string Notes;
  llvm::raw_string_ostream Progress(Notes);
  auto Project = generateProject(program(), Flags, Options, Progress);
  if (!Project) {
    ADD_FAILURE() << llvm::toString(Project.takeError());
    return "";
  }
  return *Project;
}

size_t count(llvm::StringRef Text, llvm::StringRef What) {
  return Text.count(What);
}

BuildOptions withoutTarget() {
  BuildOptions Options;
  Options.WorkDir = "/tmp/work";
  Options.NoTargetReason = "no CMake build dir in this test";
  return Options;
}

TEST(BuildTest, NoPrecompiledHeader) {
  // Measured, a PCH of <torch/torch.h> made the cold build slower
  // (docs/performance.md): the runtime's header comes by -include, in the
  // very line utils/bench-build swaps for target_precompile_headers.
  std::string Project = generate(withoutTarget());
  EXPECT_THAT(Project, Not(HasSubstr("precompile")));
  EXPECT_THAT(Project, Not(HasSubstr("torch/torch.h")));
  EXPECT_EQ(count(Project, IncludeLine), 1u);
  EXPECT_EQ(count(Project, "-include"), 1u);
}

TEST(BuildTest, SameInputsSameProject) {
  // The cache compares the text with the last run's: it must not vary.
  EXPECT_EQ(generate(withoutTarget()), generate(withoutTarget()));
}

TEST(BuildTest, OneTargetOneSetOfFlags) {
  // The user's flags are the target's: the runtime's sources compile with the
  // program's definitions and standard (so a PCH, were there one, would be
  // compiled with the flags of every source it served).
  std::string Project = generate(withoutTarget());
  EXPECT_EQ(count(Project, "add_executable("), 1u);
  EXPECT_EQ(count(Project, "add_library("), 0u);
  EXPECT_THAT(Project, HasSubstr("add_executable(skyline_instrumented\n  "
                                 "\"/tmp/work/src/src/train.cpp\"\n  \"" +
                                 std::string(SKYLINE_RUNTIME_SOURCE_DIR) +
                                 "/MemoryTracker.cpp\""));
  EXPECT_THAT(
      Project,
      HasSubstr("target_compile_definitions(skyline_instrumented "
                "PRIVATE\n  \"USE_FAST_PATH\"\n  \"MODEL_WIDTH=128\")"));
  EXPECT_THAT(Project, HasSubstr("CXX_STANDARD 20)"));
}

TEST(BuildTest, LinkedLikeTheUsersTarget) {
  // Linked like the user's target (CMake File API), whose libraries carry
  // LibTorch: the runtime still compiles against LibTorch's headers, and the
  // runtime's header still comes by -include.
  BuildOptions Options;
  Options.WorkDir = "/tmp/work";
  CMakeTarget Target;
  Target.Name = "train";
  Target.Type = "EXECUTABLE";
  Target.LinkLanguage = "CXX";
  Target.Sources = {"/home/user/proj/src/train.cpp"};
  Target.LinkFlags = {"-Wl,--as-needed"};
  Target.LinkLibraries = {"/opt/libtorch/lib/libtorch.so",
                          "/opt/libtorch/lib/libc10.so"};
  Options.Target = Target;
  std::string Project = generate(Options);
  EXPECT_THAT(Project, HasSubstr(IncludeLine));
  EXPECT_THAT(Project, HasSubstr("${TORCH_INCLUDE_DIRS}"));
  EXPECT_THAT(Project, HasSubstr("\"/opt/libtorch/lib/libtorch.so\""));
  EXPECT_THAT(Project, Not(HasSubstr("\"${TORCH_LIBRARIES}\"")));
  EXPECT_THAT(Project, Not(HasSubstr("precompile")));
  EXPECT_EQ(count(Project, "find_package(Torch REQUIRED)"), 1u)
      << "no Torch settings from the runtime's cache: LibTorch is found";
}

TEST(BuildTest, LinkedLikeTheUsersTargetTheCachedTorchSettingsServe) {
  // find_package(Torch) spends most of a configure detecting CUDA; with the
  // link line from the user's target the project needs only its headers and
  // flags, which the runtime's cache entry kept.
  BuildOptions Options;
  Options.WorkDir = "/tmp/work";
  CMakeTarget Target;
  Target.Name = "train";
  Target.LinkLanguage = "CXX";
  Target.LinkLibraries = {"/opt/libtorch/lib/libtorch.so"};
  Options.Target = Target;
  Options.TorchSettings = "/cache/runtime/abc/torch-settings.cmake";
  std::string Project = generate(Options);
  EXPECT_THAT(Project, Not(HasSubstr("find_package")));
  EXPECT_THAT(Project,
              HasSubstr("project(skyline_instrumented CXX)\n"
                        "include(\"/cache/runtime/abc/torch-settings.cmake\")\n"
                        "add_executable(skyline_instrumented"));
  EXPECT_THAT(Project, HasSubstr("${TORCH_INCLUDE_DIRS}"));
  EXPECT_THAT(Project, HasSubstr("if(TORCH_CUDA_LIBRARIES)"));

  // Without the user's target LibTorch's imported targets are linked, which
  // only find_package makes.
  BuildOptions NoTarget = withoutTarget();
  NoTarget.TorchSettings = Options.TorchSettings;
  std::string Linked = generate(NoTarget);
  EXPECT_THAT(Linked, HasSubstr("find_package(Torch REQUIRED)"));
  EXPECT_THAT(Linked, Not(HasSubstr("torch-settings.cmake")));
  EXPECT_THAT(Linked, HasSubstr("\"${TORCH_LIBRARIES}\""));
}

/// The instrumented program builds wherever the user's does: each source
/// gets its own command's options (a forced -include that the code relies
/// on, a feature flag) beside what the target gives, and no warning is an
/// error for the instrumentation's own code.
TEST(BuildTest, EachSourceKeepsItsOwnCommandsOptions) {
  clang::tooling::FixedCompilationDatabase Database(
      "/home/user/proj",
      {"--driver-mode=g++", "-std=c++17", "-include", "fstream", "-Werror",
       "-Werror=shadow", "-Wall", "-fno-strict-aliasing", "-Iinclude", "-DFAST",
       "-include", "src/config.h", "-mno-avx512f"});
  ProgramModel Model;
  Model.Sources = {"/home/user/proj/src/train.cpp"};
  InstrumentedProgram Program = program();
  Program.MirrorOf["/home/user/proj/src/config.h"] =
      "/tmp/work/src/src/config.h";
  ProjectFlags Flags = projectFlags(Database, Model, Program);
  ASSERT_EQ(Flags.SourceOptions.size(), 1u);
  EXPECT_EQ(Flags.SourceOptions["/tmp/work/src/src/train.cpp"],
            (std::vector<std::string>{
                "-include", "fstream", "-Wall", "-fno-strict-aliasing",
                "-include", "/tmp/work/src/src/config.h", "-mno-avx512f"}));
  EXPECT_EQ(Flags.Definitions, (std::vector<std::string>{"FAST"}));
  std::string Project = generate(withoutTarget(), Flags);
  EXPECT_THAT(Project,
              HasSubstr("set_source_files_properties(\"/tmp/work/src/src/"
                        "train.cpp\" PROPERTIES COMPILE_FLAGS \"-include "
                        "fstream -Wall -fno-strict-aliasing -include "
                        "/tmp/work/src/src/config.h -mno-avx512f\")"));
  EXPECT_THAT(Project, Not(HasSubstr("Werror")));
}

/// A build that fails on a full disk says so, not what failed first (CMake
/// said "CUDA compiler identification failed"); elsewhere the failure is the
/// build's own.
TEST(BuildTest, AFullDiskIsSaidAsOne) {
  auto Failure = [] {
    return llvm::createStringError(std::errc::invalid_argument,
                                   "configuring the instrumented build failed");
  };
  EXPECT_EQ(
      llvm::toString(explainBuildFailure(::testing::TempDir(), Failure())),
      "configuring the instrumented build failed");
  llvm::SmallString<128> Small;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("full-disk", Small));
  std::string Mount =
      "mount -t tmpfs -o size=2m tmpfs " + std::string(Small) + " 2>/dev/null";
  if (std::system(Mount.c_str()) != 0) {
    llvm::sys::fs::remove(Small);
    GTEST_SKIP() << "a small file system needs mount (root, a kernel that "
                    "lets it)";
  }
  std::string Said = llvm::toString(explainBuildFailure(Small, Failure()));
  std::string Unmount = "umount " + std::string(Small);
  std::system(Unmount.c_str());
  llvm::sys::fs::remove(Small);
  EXPECT_EQ(Said, "the disk holding the work directory '" + std::string(Small) +
                      "' is full (2 MiB free; the instrumented build needs "
                      "about 256 MiB): free some space, or give --work-dir a "
                      "directory on another disk");
}

} // namespace
