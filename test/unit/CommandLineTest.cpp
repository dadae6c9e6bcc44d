// The command line parses as clang-tidy's does; every usage error is one.

#include "CommandLine.h"

#include "gtest/gtest.h"

using namespace skyline;

namespace {

ParsedCommandLine parse(std::vector<const char *> Args) {
  Args.insert(Args.begin(), "skyline-check");
  return parseCommandLine(Args.size(), Args.data());
}

TEST(CommandLineTest, BuildPathBothSpellings) {
  for (auto Args : {std::vector<const char *>{"a.cpp", "-p", "build"},
                    std::vector<const char *>{"a.cpp", "-p=build"},
                    std::vector<const char *>{"-pbuild", "a.cpp"}}) {
    auto Parsed = parse(Args);
    auto *Options = std::get_if<CommandLineOptions>(&Parsed);
    ASSERT_TRUE(Options);
    EXPECT_EQ(Options->BuildPath, "build");
    EXPECT_EQ(Options->Sources, std::vector<std::string>{"a.cpp"});
    EXPECT_FALSE(Options->ExtraArgs);
  }
}

TEST(CommandLineTest, ArgumentsAfterDoubleDash) {
  auto Parsed = parse({"a.cpp", "b.cpp", "--analyze-only", "--format=yaml", "--",
                       "-std=c++17", "-Iinc"});
  auto *Options = std::get_if<CommandLineOptions>(&Parsed);
  ASSERT_TRUE(Options);
  EXPECT_EQ(Options->Sources, (std::vector<std::string>{"a.cpp", "b.cpp"}));
  EXPECT_TRUE(Options->AnalyzeOnly);
  EXPECT_EQ(Options->Format, OutputFormat::YAML);
  ASSERT_TRUE(Options->ExtraArgs);
  EXPECT_EQ(*Options->ExtraArgs, (std::vector<std::string>{"-std=c++17", "-Iinc"}));
}

TEST(CommandLineTest, FixOptions) {
  auto Parsed = parse({"a.cpp", "--set-batch-size", "128", "--export-fixes=f.yaml",
                       "--batch-size-var=kBatch"});
  auto *Options = std::get_if<CommandLineOptions>(&Parsed);
  ASSERT_TRUE(Options);
  EXPECT_EQ(Options->SetBatchSize, 128);
  EXPECT_EQ(Options->ExportFixes, "f.yaml");
  EXPECT_EQ(Options->BatchSizeVar, "kBatch");
}

TEST(CommandLineTest, UsageErrors) {
  struct Case {
    std::vector<const char *> Args;
    const char *Message;
  } Cases[] = {
      {{}, "no source files given"},
      {{"a.cpp", "--format=json"}, "unknown --format 'json'"},
      {{"a.cpp", "--set-batch-size=0"}, "must be a positive integer"},
      {{"a.cpp", "--set-batch-size=abc"}, "set-batch-size"},
      {{"a.cpp", "--export-fixes=f.yaml"}, "give --set-batch-size=N"},
      {{"a.cpp", "--no-such-option"}, "no-such-option"},
      {{"a.cpp", "-p"}, "build-path"},
  };
  for (const Case &C : Cases) {
    auto Parsed = parse(C.Args);
    auto *Error = std::get_if<UsageError>(&Parsed);
    ASSERT_TRUE(Error) << C.Message;
    EXPECT_NE(Error->Message.find(C.Message), std::string::npos) << Error->Message;
  }
}

TEST(CommandLineTest, HelpAndVersion) {
  auto Help = parse({"--help"});
  ASSERT_TRUE(std::get_if<HelpRequest>(&Help));
  EXPECT_NE(std::get<HelpRequest>(Help).Text.find("--analyze-only"), std::string::npos);
  auto Version = parse({"--version"});
  ASSERT_TRUE(std::get_if<HelpRequest>(&Version));
  EXPECT_NE(std::get<HelpRequest>(Version).Text.find("skyline-check version"),
            std::string::npos);
}

} // namespace
