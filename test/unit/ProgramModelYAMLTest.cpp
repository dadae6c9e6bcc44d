// A ProgramModel survives a trip through YAML, and bad input is refused.

#include "skyline/ProgramModelYAML.h"

#include "gtest/gtest.h"

using namespace skyline;

namespace {

ProgramModel sampleModel() {
  ProgramModel Model;
  Model.Sources = {"/src/train.cpp"};
  BatchSizeSite Site;
  Site.Name = "kTrainBatchSize";
  Site.Value = 64;
  Site.Kind = BatchSizeKind::NamespaceConstant;
  Site.Role = BatchSizeRole::Train;
  Site.Confidence = 0.95;
  Site.Literal = {"/src/train.cpp", 3, 33, 52, 2};
  Site.Chain = {
      {"given to make_data_loader() as its batch size here", "/src/train.cpp",
       30, 44},
      {"'kTrainBatchSize' initialised here", "/src/train.cpp", 3, 15}};
  Model.BatchSize = Site;
  Site.Name = "kTestBatchSize";
  Site.Role = BatchSizeRole::Eval;
  Site.Value = 1000;
  Site.Kind = BatchSizeKind::ConfigDefault;
  Site.ListInitType = "unsigned int";
  Model.OtherBatchSizes.push_back(Site);
  Model.Modules.push_back({"conv1", "torch::nn::Conv2d", "1, 10, 5", "",
                           "/src/net.h", 12, 9, "/src/net.h:14"});
  Model.Modules.push_back({"layer.0", "torch::nn::Linear", "2, 3", "layer",
                           "/src/net.h", 20, 9, ""});
  Model.ModuleCalls.push_back({"conv1", "/src/net.h", 30, 5, 400, 20, false});
  TrainingLoop Loop;
  Loop.File = "/src/train.cpp";
  Loop.Line = 40;
  Loop.Column = 3;
  Loop.Function = "train";
  Loop.LoopOffset = 930;
  Loop.LoopLength = 180;
  OptimizerSite Opt{"optimizer",
                    "torch::optim::SGD",
                    "/src/train.cpp",
                    35,
                    950,
                    SourceSpan{"/src/train.cpp", 35, 60, 900, 4},
                    "0.01"};
  Opt.AfterDeclaration = SourceSpan{"/src/train.cpp", 35, 78, 948, 0};
  Opt.Indent = "  ";
  Opt.ThroughPointer = true;
  Loop.Optimizers.push_back(Opt);
  Loop.BackwardCalls.push_back({"/src/train.cpp", 44, 5, 1000, 15});
  Loop.StepCalls.push_back({"/src/train.cpp", 45, 5, 1020, 16});
  Loop.StepCalls.push_back({"/src/train.cpp", 46, 5, 1040, 19, "*opt_"});
  Loop.SetupStatements.push_back(
      {{"/src/train.cpp", 31, 3, 700, 58},
       "auto dataset = torch::data::datasets::MNIST(kDataRoot)"});
  Loop.HostSyncs.push_back(
      {{"/src/train.cpp", 47, 14, 1070, 18}, "item", "loss.item<float>()"});
  Loop.DeviceCopies.push_back({{"/src/train.cpp", 43, 17, 960, 21},
                               {"/src/train.cpp", 43, 27, 970, 0},
                               {"/src/train.cpp", 43, 31, 974, 6},
                               {"/src/train.cpp", 43, 37, 980, 0},
                               "batch.data.to(device)"});
  Model.TrainingLoops.push_back(Loop);
  Model.Threads.Calls.push_back({"/src/train.cpp", 25, 26, 600, 1});
  Model.Threads.MainStart = SourceSpan{"/src/train.cpp", 24, 13, 570, 0};
  Model.Threads.MainIndent = "\t";
  Model.Threads.IncludeAt = SourceSpan{"/src/train.cpp", 3, 1, 44, 0};
  Model.Threads.MainIncludes = {"torch/torch.h", "model.h"};
  DataLoaderSite Loader;
  Loader.Call = {"/src/train.cpp", 40, 17, 800, 5};
  Loader.Dataset = {"/src/train.cpp", 40, 47, 830, 20};
  Loader.Options = {"/src/train.cpp", 41, 7, 860, 40};
  Loader.Workers = SourceSpan{"/src/train.cpp", 41, 45, 898, 1};
  Loader.WorkersValue = 0;
  Loader.WorkersInsertAt = {"/src/train.cpp", 41, 47, 900, 0};
  Loader.Training = true;
  DataLoaderSite Test;
  Test.Options = {"/src/train.cpp", 44, 40, 990, 15};
  Test.OptionsIsCount = true;
  Model.Loaders = {Loader, Test};
  EvaluationLoop Evaluation;
  Evaluation.File = "/src/train.cpp";
  Evaluation.Line = 60;
  Evaluation.Column = 3;
  Evaluation.Function = "test";
  Evaluation.BodyStart = {"/src/train.cpp", 60, 32, 1400, 0};
  Evaluation.Indent = "\t  ";
  Evaluation.Guarded = true;
  Evaluation.GuardName = "no_grad_guard";
  Model.EvaluationLoops = {Evaluation};
  Model.Warnings.push_back("a warning");
  Model.Files = {"/src/net.h", "/src/train.cpp"};
  Model.FileSha256["/src/train.cpp"] =
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  return Model;
}

TEST(ProgramModelYAMLTest, RoundTrip) {
  ProgramModel Model = sampleModel();
  std::string Text = programModelToYAML(Model);
  std::string Error;
  auto Read = programModelFromYAML(Text, Error);
  ASSERT_TRUE(Read) << Error;
  EXPECT_EQ(programModelToYAML(*Read), Text);
  ASSERT_TRUE(Read->BatchSize);
  EXPECT_EQ(Read->BatchSize->Literal.Offset, 52u);
  EXPECT_EQ(Read->BatchSize->Kind, BatchSizeKind::NamespaceConstant);
  EXPECT_EQ(Read->BatchSize->ListInitType, "");
  ASSERT_EQ(Read->BatchSize->Chain.size(), 2u);
  EXPECT_EQ(Read->BatchSize->Chain[0].Line, 30u);
  EXPECT_EQ(Read->BatchSize->Chain[0].Column, 44u);
  EXPECT_EQ(Read->BatchSize->Chain[1].Description,
            "'kTrainBatchSize' initialised here");
  ASSERT_EQ(Read->OtherBatchSizes.size(), 1u);
  EXPECT_EQ(Read->OtherBatchSizes[0].Kind, BatchSizeKind::ConfigDefault);
  EXPECT_EQ(Read->OtherBatchSizes[0].ListInitType, "unsigned int");
  EXPECT_EQ(Read->Modules[1].Parent, "layer");
  EXPECT_EQ(Read->TrainingLoops[0].Optimizers[0].LearningRateText, "0.01");
  const OptimizerSite &Optimizer = Read->TrainingLoops[0].Optimizers[0];
  ASSERT_TRUE(Optimizer.AfterDeclaration);
  EXPECT_EQ(Optimizer.AfterDeclaration->Offset, 948u);
  EXPECT_EQ(Optimizer.AfterDeclaration->Column, 78u);
  EXPECT_EQ(Optimizer.Indent, "  ");
  EXPECT_TRUE(Optimizer.ThroughPointer);
  EXPECT_EQ(Read->TrainingLoops[0].LoopOffset, 930u);
  EXPECT_EQ(Read->TrainingLoops[0].LoopLength, 180u);
  EXPECT_EQ(Read->TrainingLoops[0].StepCalls[0].Optimizer, "");
  EXPECT_EQ(Read->TrainingLoops[0].StepCalls[1].Optimizer, "*opt_");
  ASSERT_EQ(Read->TrainingLoops[0].HostSyncs.size(), 1u);
  EXPECT_EQ(Read->TrainingLoops[0].HostSyncs[0].Kind, "item");
  EXPECT_EQ(Read->TrainingLoops[0].HostSyncs[0].At.Length, 18u);
  ASSERT_EQ(Read->TrainingLoops[0].DeviceCopies.size(), 1u);
  const DeviceCopySite &Copy = Read->TrainingLoops[0].DeviceCopies[0];
  EXPECT_EQ(Copy.TensorEnd.Offset, 970u);
  EXPECT_EQ(Copy.Argument.Length, 6u);
  EXPECT_EQ(Copy.ArgumentEnd.Column, 37u);
  EXPECT_EQ(Copy.Text, "batch.data.to(device)");
  ASSERT_EQ(Read->TrainingLoops[0].SetupStatements.size(), 1u);
  const SetupStatement &Setup = Read->TrainingLoops[0].SetupStatements[0];
  EXPECT_EQ(Setup.Text,
            "auto dataset = torch::data::datasets::MNIST(kDataRoot)");
  EXPECT_EQ(Setup.At.Line, 31u);
  EXPECT_EQ(Setup.At.Offset, 700u);
  EXPECT_EQ(Setup.At.Length, 58u);
  EXPECT_EQ(Read->FileSha256, Model.FileSha256);
  ASSERT_EQ(Read->Threads.Calls.size(), 1u);
  EXPECT_EQ(Read->Threads.Calls[0].Offset, 600u);
  ASSERT_TRUE(Read->Threads.MainStart);
  EXPECT_EQ(Read->Threads.MainStart->Offset, 570u);
  EXPECT_EQ(Read->Threads.MainStart->Length, 0u);
  EXPECT_EQ(Read->Threads.MainIndent, "\t");
  ASSERT_TRUE(Read->Threads.IncludeAt);
  EXPECT_EQ(Read->Threads.IncludeAt->Offset, 44u);
  EXPECT_EQ(Read->Threads.IncludeAt->Line, 3u);
  EXPECT_EQ(Read->Threads.MainIncludes,
            (std::vector<std::string>{"torch/torch.h", "model.h"}));
  ASSERT_EQ(Read->Loaders.size(), 2u);
  EXPECT_TRUE(Read->Loaders[0].Training);
  ASSERT_TRUE(Read->Loaders[0].Workers);
  EXPECT_EQ(Read->Loaders[0].Workers->Offset, 898u);
  EXPECT_EQ(Read->Loaders[0].WorkersValue, 0);
  EXPECT_EQ(Read->Loaders[0].WorkersInsertAt.Offset, 900u);
  EXPECT_EQ(Read->Loaders[0].Options.Length, 40u);
  EXPECT_FALSE(Read->Loaders[1].Training);
  EXPECT_TRUE(Read->Loaders[1].OptionsIsCount);
  EXPECT_FALSE(Read->Loaders[1].Workers);
  ASSERT_EQ(Read->EvaluationLoops.size(), 1u);
  const EvaluationLoop &Evaluation = Read->EvaluationLoops[0];
  EXPECT_EQ(Evaluation.Line, 60u);
  EXPECT_EQ(Evaluation.Column, 3u);
  EXPECT_EQ(Evaluation.Function, "test");
  EXPECT_EQ(Evaluation.BodyStart.Offset, 1400u);
  EXPECT_EQ(Evaluation.BodyStart.Length, 0u);
  EXPECT_EQ(Evaluation.Indent, "\t  ");
  EXPECT_TRUE(Evaluation.Guarded);
  EXPECT_EQ(Evaluation.GuardName, "no_grad_guard");
}

TEST(ProgramModelYAMLTest, HasTheDocumentedKeys) {
  std::string Text = programModelToYAML(sampleModel());
  for (const char *Key :
       {"schema_version: 1", "batch_size:", "other_batch_sizes:", "modules:",
        "module_calls:", "training_loop:", "registered_at: /src/net.h:14",
        "kind: namespace-constant", "kind: config-default",
        "list_init_type: unsigned int",
        "step_calls:", "backward_calls:", "optimizers:", "data_loaders:",
        "options_is_count: true", "workers_insert_at:", "evaluation_loops:",
        "body_start:", "guard_name: no_grad_guard", "host_syncs:",
        "kind: item", "device_copies:", "tensor_end:", "argument_end:"})
    EXPECT_NE(Text.find(Key), std::string::npos) << Key;
}

TEST(ProgramModelYAMLTest, ARuntimeReadRoundTripsApartFromTheBatchSize) {
  ProgramModel Model = sampleModel();
  Model.BatchSize.reset();
  BatchSizeSite Read;
  Read.Name = "batch_size";
  Read.Kind = BatchSizeKind::RuntimeRead;
  Read.Role = BatchSizeRole::Train;
  Read.Confidence = 0.9;
  Read.ReadFrom = "environment variable 'BATCH'";
  Read.Literal = {"/src/train.cpp", 12, 30, 301, 18};
  Read.Chain = {{"read at run time here", "/src/train.cpp", 12, 30}};
  Model.RuntimeBatchSize = Read;
  std::string Text = programModelToYAML(Model);
  EXPECT_NE(Text.find("batch_size: ~"), std::string::npos) << Text;
  std::string Error;
  auto Back = programModelFromYAML(Text, Error);
  ASSERT_TRUE(Back) << Error;
  EXPECT_FALSE(Back->BatchSize);
  ASSERT_TRUE(Back->RuntimeBatchSize);
  EXPECT_EQ(Back->RuntimeBatchSize->Kind, BatchSizeKind::RuntimeRead);
  EXPECT_EQ(Back->RuntimeBatchSize->ReadFrom, "environment variable 'BATCH'");
  EXPECT_EQ(Back->RuntimeBatchSize->Value, 0);
  EXPECT_EQ(Back->RuntimeBatchSize->Literal.Offset, 301u);
  EXPECT_EQ(Back->RuntimeBatchSize->Chain.size(), 1u);

  // A read at run time is never a batch size a run overrides, and the
  // runtime key holds nothing else.
  std::string Runtime = Text;
  Runtime.replace(Runtime.find("kind: runtime"), 13, "kind: macro");
  EXPECT_FALSE(programModelFromYAML(Runtime, Error));
  EXPECT_EQ(Error, "runtime_batch_size.kind is 'macro'; it must be 'runtime'");
  std::string AsTraining = programModelToYAML(sampleModel());
  AsTraining.replace(AsTraining.find("kind: namespace-constant"), 24,
                     "kind: runtime");
  EXPECT_FALSE(programModelFromYAML(AsTraining, Error));
  EXPECT_NE(Error.find("a batch size of kind 'runtime' is outside "
                       "runtime_batch_size"),
            std::string::npos)
      << Error;
}

TEST(ProgramModelYAMLTest, RefusesOtherSchemaVersions) {
  std::string Error;
  EXPECT_FALSE(programModelFromYAML("schema_version: 99\n", Error));
  EXPECT_NE(Error.find("unsupported schema_version 99"), std::string::npos);
  EXPECT_FALSE(programModelFromYAML("- a list\n", Error));
  EXPECT_FALSE(programModelFromYAML("{unclosed", Error));
}

TEST(ProgramModelYAMLTest, RefusesImpossibleValues) {
  auto ReadWith = [](const std::string &From, const std::string &To) {
    std::string Text = programModelToYAML(sampleModel());
    size_t At = Text.find(From);
    EXPECT_NE(At, std::string::npos) << From;
    Text.replace(At, From.size(), To);
    std::string Error;
    EXPECT_FALSE(programModelFromYAML(Text, Error)) << To;
    return Error;
  };
  EXPECT_EQ(ReadWith("value: 64", "value: -5"),
            "batch_size.value is -5; a batch size must be at least 1");
  EXPECT_EQ(ReadWith("value: 1000", "value: 0"),
            "other_batch_sizes[0].value is 0; a batch size must be at least 1");
  EXPECT_EQ(ReadWith("confidence: 0.95", "confidence: .nan"),
            "batch_size.confidence is nan; it must be from 0 to 1");
  EXPECT_EQ(ReadWith("ba7816bf", "zz7816bf"),
            "file_sha256 of '/src/train.cpp' is "
            "'zz7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'"
            "; it must be 64 lowercase hex digits (a SHA-256)");
  // The indentation goes into a fix-it as it is.
  EXPECT_EQ(ReadWith("main_indent: \"\\t\"", "main_indent: \"x();\""),
            "thread_settings.main_indent holds more than spaces and tabs");
  // So do an optimizer's name and indentation (the channels-last fix-it),
  // in every copy of the loop the file holds.
  auto ReadWithEvery = [](const std::string &From, const std::string &To) {
    std::string Text = programModelToYAML(sampleModel());
    EXPECT_NE(Text.find(From), std::string::npos) << From;
    for (size_t At = Text.find(From); At != std::string::npos;
         At = Text.find(From, At + To.size()))
      Text.replace(At, From.size(), To);
    std::string Error;
    EXPECT_FALSE(programModelFromYAML(Text, Error)) << To;
    return Error;
  };
  EXPECT_EQ(ReadWithEvery("indent: \"  \"", "indent: \"x();\""),
            "the indent of optimizer 'optimizer' holds more than spaces and "
            "tabs");
  EXPECT_EQ(ReadWithEvery("name: optimizer", "name: \"o; system()\""),
            "optimizer name 'o; system()' is not an identifier");
  // A device copy's edits go inside its call, in order: a device past the
  // call's end would put the trial's text elsewhere.
  EXPECT_EQ(ReadWithEvery("argument_end: {file: /src/train.cpp, line: 43, "
                          "column: 37, offset: 980",
                          "argument_end: {file: /src/train.cpp, line: 43, "
                          "column: 37, offset: 990"),
            "device copy 'batch.data.to(device)' at /src/train.cpp:43: "
            "tensor_end, argument and argument_end must lie inside its call, "
            "in that order");
}

} // namespace
