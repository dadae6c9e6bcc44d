//===- Rules.cpp - The rule catalog, the registry and NOLINT --------------===//

#include "skyline/Rules.h"

#include "skyline/InputFile.h"

#include "Rules/RuleFactories.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

namespace skyline {

llvm::ArrayRef<RuleInfo> ruleCatalog() {
  static const RuleInfo Rules[] = {
      {"skyline-batch-size",
       "The training batch size leaves throughput on the table",
       "Iteration time grows about linearly with the batch size, so throughput "
       "rises toward "
       "a limit and flattens. The suggested size is the smallest (rounded) "
       "whose predicted "
       "throughput is within the slack of the best that fits in memory; the "
       "fix-it changes "
       "the literal the batch size comes from. A note offers the learning rate "
       "scaled by the "
       "linear scaling rule.",
       "docs/rules/skyline-batch-size.md"},
      {"skyline-memory-capacity",
       "The training batch size does not fit in memory, or only just",
       "The measured or predicted peak memory at the declared batch size is "
       "over the "
       "device's capacity less the margin (--memory-margin); the fix-it sets "
       "the largest "
       "batch size that fits.",
       "docs/rules/skyline-memory-capacity.md"},
      {"skyline-hot-layer", "A layer takes a large share of the iteration time",
       "The layer's forward and backward time is above the share of the "
       "iteration time set "
       "by --hot-layer-share; reported at the call site and the construction "
       "site.",
       "docs/rules/skyline-hot-layer.md"},
      {"skyline-memory-breakdown",
       "Peak memory by kind at the training batch size",
       "Weights, gradients, optimizer state, activations and data at the peak "
       "of the "
       "measured run at the declared batch size, and how activations grow per "
       "sample.",
       "docs/rules/skyline-memory-breakdown.md"},
      {"skyline-malloc-thresholds",
       "The program loses time to glibc returning memory each iteration",
       "With glibc's dynamic malloc thresholds the program took markedly "
       "longer an iteration at the declared batch size than with them pinned "
       "(as skyline-check measures): glibc gives memory back to the system "
       "and faults it in again every iteration. The measured times hold with "
       "the GLIBC_TUNABLES the runs had, or a caching allocator.",
       "docs/rules/skyline-malloc-thresholds.md"},
      {"skyline-throughput-regression",
       "Throughput dropped against the baseline",
       "Throughput at the baseline's batch size is lower than the baseline's "
       "by more than "
       "--max-throughput-drop, after repeated measurements and with the noise "
       "taken into "
       "account.",
       "docs/rules/skyline-throughput-regression.md"},
      {"skyline-memory-regression", "Peak memory grew against the baseline",
       "Peak memory at the baseline's batch size is higher than the baseline's "
       "by more than "
       "--max-memory-growth.",
       "docs/rules/skyline-memory-regression.md"},
      {"skyline-baseline-environment",
       "The baseline ran in a different environment",
       "The baseline report was measured with another LibTorch version, "
       "device, thread "
       "count or memory capacity; the gate still compares, but differences may "
       "come from the "
       "environment rather than the code.",
       "docs/rules/skyline-baseline-environment.md"},
  };
  return Rules;
}

const RuleInfo *findRule(llvm::StringRef Id) {
  for (const RuleInfo &Rule : ruleCatalog())
    if (Rule.Id == Id)
      return &Rule;
  return nullptr;
}

Rule::~Rule() = default;

const MeasuredRun *RuleContext::currentRun() const {
  const MeasuredRun *FirstFit = nullptr;
  for (const MeasuredRun &Run : Measured.Runs) {
    if (Run.OutOfMemory || Run.Iterations == 0)
      continue;
    if (Run.BatchSize == Program.BatchSize->Value)
      return &Run;
    if (!FirstFit)
      FirstFit = &Run;
  }
  return FirstFit;
}

std::vector<std::unique_ptr<Rule>> createRules() {
  std::vector<std::unique_ptr<Rule>> Rules;
  Rules.push_back(createBatchSizeRule());
  Rules.push_back(createMemoryCapacityRule());
  Rules.push_back(createHotLayerRule());
  Rules.push_back(createMemoryBreakdownRule());
  Rules.push_back(createMallocThresholdsRule());
  return Rules;
}

std::vector<Finding> runRules(const RuleContext &Context) {
  std::vector<Finding> Findings;
  if (!Context.Program.BatchSize)
    return Findings;
  for (const std::unique_ptr<Rule> &R : createRules())
    R->check(Context, Findings);
  return dropSilenced(std::move(Findings));
}

namespace {

/// Whether the comment after Marker (NOLINT or NOLINTNEXTLINE) in Line
/// names Rule; a bare marker names every rule.
bool markerSilences(llvm::StringRef Line, llvm::StringRef Marker,
                    llvm::StringRef Rule) {
  for (size_t At = Line.find(Marker); At != llvm::StringRef::npos;
       At = Line.find(Marker, At + 1)) {
    llvm::StringRef Rest = Line.drop_front(At + Marker.size());
    if (Marker == "NOLINT" && Rest.starts_with("NEXTLINE"))
      continue;
    if (!Rest.starts_with("("))
      return true;
    llvm::StringRef Names =
        Rest.drop_front().take_until([](char C) { return C == ')'; });
    llvm::SmallVector<llvm::StringRef, 4> Parts;
    Names.split(Parts, ',');
    for (llvm::StringRef Name : Parts) {
      Name = Name.trim();
      if (Name == Rule || Name == "*" ||
          (Name.ends_with("*") && Rule.starts_with(Name.drop_back())))
        return true;
    }
  }
  return false;
}

} // namespace

bool isSilenced(llvm::StringRef Line, llvm::StringRef PreviousLine,
                llvm::StringRef Rule) {
  return markerSilences(Line, "NOLINT", Rule) ||
         markerSilences(PreviousLine, "NOLINTNEXTLINE", Rule);
}

std::vector<Finding> dropSilenced(std::vector<Finding> Findings) {
  llvm::StringMap<std::vector<llvm::StringRef>> Lines;
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> Buffers;
  auto LinesOf =
      [&](llvm::StringRef File) -> const std::vector<llvm::StringRef> & {
    auto It = Lines.find(File);
    if (It != Lines.end())
      return It->second;
    std::vector<llvm::StringRef> &Split = Lines[File];
    // A saved report can name any path: regular files only, bounded.
    if (auto Buffer = readSourceBuffer(File)) {
      llvm::SmallVector<llvm::StringRef, 0> Parts;
      Buffer->getBuffer().split(Parts, '\n');
      Split.assign(Parts.begin(), Parts.end());
      Buffers[File] = std::move(Buffer);
    }
    return Split;
  };
  std::vector<Finding> Kept;
  // A note belongs to the warning or error before it: silencing one
  // silences its notes, as in clang-tidy.
  std::string SilencedRule;
  for (Finding &F : Findings) {
    if (F.Level == DiagLevel::Note && F.Rule == SilencedRule)
      continue;
    if (F.Level != DiagLevel::Note)
      SilencedRule.clear();
    const std::vector<llvm::StringRef> &Text = LinesOf(F.At.File);
    llvm::StringRef Line =
        F.At.Line && F.At.Line <= Text.size() ? Text[F.At.Line - 1] : "";
    llvm::StringRef Previous = F.At.Line > 1 && F.At.Line - 1 <= Text.size()
                                   ? Text[F.At.Line - 2]
                                   : "";
    if (!F.At.File.empty() && isSilenced(Line, Previous, F.Rule)) {
      if (F.Level != DiagLevel::Note)
        SilencedRule = F.Rule;
      continue;
    }
    Kept.push_back(std::move(F));
  }
  return Kept;
}

} // namespace skyline
