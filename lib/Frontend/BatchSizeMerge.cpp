//===- BatchSizeMerge.cpp - The program's training batch size -------------===//
//
// Joins what each translation unit found: the sizes given to functions that
// another source defines, the option defaults another source declares, the
// call graph that tells which uses run. Then chooses the training batch
// size only where the uses decide it; where they do not, it chooses none
// and says which candidates it saw and why each was not taken: a wrong
// answer would have the user change the wrong line.
//
//===----------------------------------------------------------------------===//

#include "BatchSizeTracer.h"
#include "Finders.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"

#include <map>

namespace skyline::frontend {
namespace {

/// A use at this confidence or above decides the role: a loader whose
/// batches reach a training loop (0.95), a tensor made or a loop stride in
/// one (0.9). Below it, names only (0.6, 0.4).
constexpr double DecisiveConfidence = 0.9;

int rolePriority(BatchSizeRole Role) {
  switch (Role) {
  case BatchSizeRole::Train:
    return 2;
  case BatchSizeRole::Unknown:
    return 1;
  case BatchSizeRole::Eval:
    return 0;
  }
  return 0;
}

/// Gives a site read from an option declared in another source the literal
/// of that option's default; one no source declares keeps no value.
void resolvePendingOption(BatchSizeSite &Site,
                          const std::vector<OptionDefault> &Defaults) {
  if (!isPendingOption(Site))
    return;
  for (const OptionDefault &Option : Defaults)
    if (llvm::is_contained(Option.Keys, Site.Name)) {
      std::vector<UseStep> Chain = std::move(Site.Chain);
      Chain.insert(Chain.end(), Option.Site.Chain.begin(),
                   Option.Site.Chain.end());
      Site.Value = Option.Site.Value;
      Site.Literal = Option.Site.Literal;
      Site.InString = Option.Site.InString;
      Site.Chain = std::move(Chain);
      return;
    }
}

/// Adds Dataset to Kept's shared datasets unless it is one Kept has.
void shareDataset(BatchSizeSite &Kept,
                  const std::optional<SourceSpan> &Dataset) {
  if (!Dataset)
    return;
  auto Same = [&](const SourceSpan &S) {
    return S.File == Dataset->File && S.Offset == Dataset->Offset;
  };
  if ((Kept.DatasetArgument && Same(*Kept.DatasetArgument)) ||
      llvm::any_of(Kept.SharedDatasetArguments, Same))
    return;
  Kept.SharedDatasetArguments.push_back(*Dataset);
}

/// One literal and every use that leads to it, the strongest kept.
struct Candidate {
  BatchSizeSite Site;
  /// Where every use of it is in a function main never calls: that
  /// function's name.
  std::string OnlyIn;
};

/// A candidate and why it is not the training batch size: "'batch_size' =
/// 4 at main.cpp:46 (used in test_mnist(), which main never calls)". The
/// file by its name: the candidates' notes give the whole path.
std::string whyNot(const Candidate &C) {
  const BatchSizeSite &Site = C.Site;
  std::string Text = "'" + Site.Name + "' = " + std::to_string(Site.Value) +
                     " at " +
                     llvm::sys::path::filename(Site.Literal.File).str() + ":" +
                     std::to_string(Site.Literal.Line) + " (";
  if (!C.OnlyIn.empty())
    return Text + "used in " + C.OnlyIn + "(), which main never calls)";
  if (!Site.Chain.empty() && Site.Chain.front().Description == NamedOnly)
    return Text + "named like a batch size, but reaches no data loader, no "
                  "tensor made in the training loop and no loop stride)";
  if (Site.Role == BatchSizeRole::Train)
    return Text + "named like a training size, but its batches reach no "
                  "loop with backward() or step())";
  return Text + "its batches reach no loop with backward() or step())";
}

class Merger {
public:
  Merger(std::vector<BatchSizeFindings> &Found,
         const std::vector<OptionDefault> &Defaults)
      : Found(Found), Defaults(Defaults) {
    for (const BatchSizeFindings &F : Found) {
      Graph.add(F.Calls);
      for (const DimensionParameter &P : F.DimensionParameters)
        Dimensions.emplace(std::make_pair(P.Function, P.Index), P.At);
    }
  }

  /// Every literal the uses lead to, once, with the strongest use's role.
  std::vector<Candidate> candidates() {
    std::vector<Candidate> Out;
    std::map<std::pair<std::string, unsigned>, size_t> ByLiteral;
    for (BatchSizeFindings &F : Found)
      for (FoundBatchSize &Use : F.Sites) {
        if (!joinCallee(Use))
          continue;
        resolvePendingOption(Use.Site, Defaults);
        bool Runs = Graph.reaches(Use.UsedIn);
        if (isPendingOption(Use.Site))
          readAtRunTime(Use.Site);
        if (Use.Site.Kind == BatchSizeKind::RuntimeRead) {
          if (Runs)
            RuntimeReads.push_back(std::move(Use.Site));
          continue;
        }
        if (Use.Site.Value <= 0)
          continue; // -1 in view({-1, n}) is no batch size
        auto Key =
            std::make_pair(Use.Site.Literal.File, Use.Site.Literal.Offset);
        auto [It, New] = ByLiteral.try_emplace(Key, Out.size());
        if (New) {
          Out.push_back({std::move(Use.Site), Runs ? "" : Use.UsedInName});
          continue;
        }
        merge(Out[It->second], std::move(Use.Site), Runs);
      }
    return Out;
  }

  /// The named-like candidates no use led to, each literal once.
  std::vector<Candidate> byName(const std::vector<Candidate> &Used) {
    std::vector<Candidate> Out;
    for (BatchSizeFindings &F : Found)
      for (BatchSizeSite &Site : F.ByName) {
        resolvePendingOption(Site, Defaults);
        auto Same = [&](const Candidate &C) {
          return C.Site.Literal.File == Site.Literal.File &&
                 C.Site.Literal.Offset == Site.Literal.Offset;
        };
        if (Site.Value <= 0 || Site.Role == BatchSizeRole::Eval ||
            llvm::any_of(Used, Same) || llvm::any_of(Out, Same))
          continue;
        Out.push_back({Site, ""});
      }
    return Out;
  }

  /// The uses, in code that runs, of a value read at run time with no
  /// default in the source.
  std::vector<BatchSizeSite> RuntimeReads;

private:
  /// A command-line option no source gives a default: read at run time,
  /// at the step that reads it (a pending option's chain ends there).
  static void readAtRunTime(BatchSizeSite &Site) {
    if (Site.Chain.empty())
      return;
    UseStep *Read = &Site.Chain.back();
    Site.Kind = BatchSizeKind::RuntimeRead;
    Site.ReadFrom = "command-line option '" + Site.Name + "'";
    Site.Literal = {Read->File, Read->Line, Read->Column, 0, 0};
    Read->Description = "read at run time from " + Site.ReadFrom +
                        " here, which has no default in the source";
  }

  /// A size given to a function defined in another source counts where
  /// that source makes the parameter a tensor's first dimension: its chain
  /// starts there.
  bool joinCallee(FoundBatchSize &Use) const {
    if (Use.Callee.empty())
      return true;
    auto It = Dimensions.find({Use.Callee, Use.ParamIndex});
    if (It == Dimensions.end())
      return false;
    Use.Site.Chain.insert(Use.Site.Chain.begin(), It->second);
    return true;
  }

  /// Adds Site, a use of Kept's literal: the stronger use is kept whole, a
  /// use that runs over one that does not; the other's dataset is shaped
  /// by the size too.
  static void merge(Candidate &Kept, BatchSizeSite Site, bool Runs) {
    unsigned Uses = Kept.Site.Uses + 1;
    bool KeptRuns = Kept.OnlyIn.empty();
    if (std::make_tuple(Runs, rolePriority(Site.Role), Site.Confidence) >
        std::make_tuple(KeptRuns, rolePriority(Kept.Site.Role),
                        Kept.Site.Confidence)) {
      std::swap(Kept.Site, Site);
      if (Runs)
        Kept.OnlyIn.clear();
    }
    Kept.Site.Uses = Uses;
    shareDataset(Kept.Site, Site.DatasetArgument);
    for (const SourceSpan &Shared : Site.SharedDatasetArguments)
      shareDataset(Kept.Site, Shared);
  }

  std::vector<BatchSizeFindings> &Found;
  const std::vector<OptionDefault> &Defaults;
  CallGraph Graph;
  std::map<std::pair<std::string, unsigned>, UseStep> Dimensions;
};

bool isDecisive(const Candidate &C) {
  return C.OnlyIn.empty() && C.Site.Role == BatchSizeRole::Train &&
         C.Site.Confidence >= DecisiveConfidence;
}

/// The warning of a program whose uses decide no training batch size, with
/// each candidate and why it was not taken; none without candidates.
std::optional<std::string>
undecidedWarning(const std::vector<Candidate> &Used,
                 const std::vector<Candidate> &Named) {
  std::vector<std::string> Reasons;
  for (const Candidate &C : Used)
    if (C.Site.Role != BatchSizeRole::Eval)
      Reasons.push_back(whyNot(C));
  for (const Candidate &C : Named)
    Reasons.push_back(whyNot(C));
  if (Reasons.empty())
    return std::nullopt;
  std::string Text = "the training batch size is not chosen, no use of a "
                     "size decides it; candidate" +
                     std::string(Reasons.size() == 1 ? "" : "s") + ": ";
  for (size_t I = 0; I < Reasons.size(); ++I)
    Text += (I ? "; " : "") + Reasons[I];
  return Text;
}

} // namespace

void mergeBatchSizes(std::vector<BatchSizeFindings> &Found,
                     const std::vector<OptionDefault> &Defaults,
                     std::optional<BatchSizeSite> Named, bool NamedByUser,
                     ProgramModel &Model) {
  Merger M(Found, Defaults);
  std::vector<Candidate> Used = M.candidates();
  if (Named)
    resolvePendingOption(*Named, Defaults);

  std::optional<size_t> Train;
  if (Named) {
    Named->Role = BatchSizeRole::Train;
    Named->Confidence = 1.0;
    Model.BatchSize = std::move(*Named);
  } else if (!NamedByUser) {
    for (size_t I = 0; I < Used.size(); ++I)
      if (isDecisive(Used[I]) &&
          (!Train ||
           std::make_pair(Used[I].Site.Confidence, Used[I].Site.Uses) >
               std::make_pair(Used[*Train].Site.Confidence,
                              Used[*Train].Site.Uses)))
        Train = I;
    // No literal decides, but the training loop's size is read at run
    // time: that read is the answer, with nothing to change in the source.
    auto Runtime = llvm::find_if(M.RuntimeReads, [](const BatchSizeSite &S) {
      return S.Role == BatchSizeRole::Train &&
             S.Confidence >= DecisiveConfidence;
    });
    if (Train)
      Model.BatchSize = Used[*Train].Site;
    else if (Runtime != M.RuntimeReads.end())
      Model.RuntimeBatchSize = *Runtime;
    else if (auto Warning = undecidedWarning(Used, M.byName(Used)))
      Model.Warnings.push_back(std::move(*Warning));
  }
  for (size_t I = 0; I < Used.size(); ++I) {
    BatchSizeSite &Site = Used[I].Site;
    if ((Train && I == *Train) ||
        (Model.BatchSize &&
         Model.BatchSize->Literal.File == Site.Literal.File &&
         Model.BatchSize->Literal.Offset == Site.Literal.Offset))
      continue;
    // A training role only names decided (a name does not), and no role
    // for a size only code that never runs uses.
    if (!Used[I].OnlyIn.empty() ||
        (Site.Role == BatchSizeRole::Train && !isDecisive(Used[I])))
      Site.Role = BatchSizeRole::Unknown;
    Model.OtherBatchSizes.push_back(std::move(Site));
  }
  std::stable_sort(Model.OtherBatchSizes.begin(), Model.OtherBatchSizes.end(),
                   [](const BatchSizeSite &A, const BatchSizeSite &B) {
                     return std::tie(A.Literal.File, A.Literal.Offset) <
                            std::tie(B.Literal.File, B.Literal.Offset);
                   });
}

} // namespace skyline::frontend
