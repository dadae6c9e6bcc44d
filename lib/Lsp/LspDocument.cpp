//===- LspDocument.cpp - What skyline-lsp shows for one program -----------===//

#include "skyline/LspDocument.h"

#include "skyline/Experiments.h"
#include "skyline/FixExport.h"
#include "skyline/OtherWork.h"
#include "skyline/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace skyline {

TextIndex::TextIndex(std::string TheText) : Text(std::move(TheText)) {
  LineStarts.push_back(0);
  for (unsigned I = 0; I < Text.size(); ++I)
    if (Text[I] == '\n')
      LineStarts.push_back(I + 1);
}

/// UTF-16 code units of the UTF-8 bytes [From, To): a four-byte sequence
/// is two, continuation bytes none.
static int utf16Units(llvm::StringRef Text, unsigned From, unsigned To) {
  int Units = 0;
  for (unsigned I = From; I < To && I < Text.size(); ++I) {
    unsigned char C = Text[I];
    if ((C & 0xC0) == 0x80)
      continue;
    Units += C >= 0xF0 ? 2 : 1;
  }
  return Units;
}

LspPosition TextIndex::position(unsigned Offset) const {
  Offset = std::min<unsigned>(Offset, Text.size());
  auto It = std::upper_bound(LineStarts.begin(), LineStarts.end(), Offset);
  int Line = int(It - LineStarts.begin()) - 1;
  return {Line, utf16Units(Text, LineStarts[Line], Offset)};
}

unsigned TextIndex::offset(LspPosition Position) const {
  if (Position.Line < 0)
    return 0;
  if (size_t(Position.Line) >= LineStarts.size())
    return Text.size();
  unsigned I = LineStarts[Position.Line];
  for (int Units = 0; I < Text.size() && Text[I] != '\n';) {
    if (Units >= Position.Character)
      break;
    unsigned char C = Text[I];
    Units += C >= 0xF0 ? 2 : 1;
    ++I;
    while (I < Text.size() && (Text[I] & 0xC0) == 0x80)
      ++I;
  }
  return I;
}

unsigned TextIndex::offsetOf(unsigned Line, unsigned Column) const {
  if (Line == 0 || Line > LineStarts.size())
    return Text.size();
  return std::min<unsigned>(LineStarts[Line - 1] + (Column ? Column - 1 : 0),
                            Text.size());
}

LineMap::LineMap(llvm::StringRef Analyzed, llvm::StringRef Current) {
  if (Analyzed == Current)
    return;
  Same = false;
  llvm::SmallVector<llvm::StringRef, 0> A, C;
  Analyzed.split(A, '\n');
  Current.split(C, '\n');
  size_t P = 0;
  while (P < A.size() && P < C.size() && A[P] == C[P])
    ++P;
  size_t S = 0;
  while (S < A.size() - P && S < C.size() - P &&
         A[A.size() - 1 - S] == C[C.size() - 1 - S])
    ++S;
  Prefix = int(P);
  AnalyzedEnd = int(A.size() - S);
  Shift = int(C.size()) - int(A.size());
}

std::optional<int> LineMap::map(int Line) const {
  if (Same || Line < Prefix)
    return Line;
  if (Line >= AnalyzedEnd)
    return Line + Shift;
  return std::nullopt;
}

std::optional<int> LineMap::unmap(int Line) const {
  if (Same || Line < Prefix)
    return Line;
  if (Line >= AnalyzedEnd + Shift)
    return Line - Shift;
  return std::nullopt;
}

static std::string absoluteFrom(llvm::StringRef BaseDir, llvm::StringRef Path) {
  if (Path.empty() || llvm::sys::path::is_absolute(Path))
    return Path.str();
  llvm::SmallString<256> Full(BaseDir);
  llvm::sys::path::append(Full, Path);
  llvm::sys::path::remove_dots(Full, true);
  return std::string(Full);
}

bool reportDescribes(const SavedReport &Report, llvm::StringRef Source,
                     llvm::StringRef BaseDir) {
  return llvm::any_of(Report.Program.Sources, [&](const std::string &S) {
    return absoluteFrom(BaseDir, S) == Source;
  });
}

void makeReportPathsAbsolute(SavedReport &Report, llvm::StringRef BaseDir) {
  auto Absolute = [&](llvm::StringRef Path) {
    return absoluteFrom(BaseDir, Path);
  };
  rewritePaths(Report.Program, Absolute);
  for (MeasuredRun &Run : Report.Measured.Runs) {
    for (LayerMeasure &Layer : Run.Layers)
      if (!Layer.File.empty())
        Layer.File = Absolute(Layer.File);
    for (HostSyncMeasure &Sync : Run.HostSyncs)
      if (!Sync.File.empty())
        Sync.File = Absolute(Sync.File);
  }
}

static bool sameSpan(const SourceSpan &A, const SourceSpan &B) {
  return A.File == B.File && A.Offset == B.Offset;
}

/// Where a finding of the report's program model is in the current one:
/// its span when the place moved (the batch-size literal, a call or
/// construction of the same layer, the same optimizer's learning rate);
/// none when the place is not one of those.
static std::optional<SourceSpan> moveOnto(const SourceSpan &At,
                                          const ProgramModel &Then,
                                          const ProgramModel &Now) {
  if (Then.BatchSize && Now.BatchSize && sameSpan(At, Then.BatchSize->Literal))
    return Now.BatchSize->Literal;
  for (const ModuleCall &Call : Then.ModuleCalls)
    if (Call.File == At.File && Call.Line == At.Line)
      for (const ModuleCall &Moved : Now.ModuleCalls)
        if (Moved.Name == Call.Name)
          return SourceSpan{Moved.File, Moved.Line, Moved.Column, Moved.Offset,
                            At.Length};
  for (const ModuleSite &Site : Then.Modules)
    if (Site.File == At.File && Site.Line == At.Line)
      for (const ModuleSite &Moved : Now.Modules)
        if (Moved.Name == Site.Name)
          return SourceSpan{Moved.File, Moved.Line, Moved.Column, 0, At.Length};
  for (const TrainingLoop &Loop : Then.TrainingLoops)
    for (const OptimizerSite &Opt : Loop.Optimizers)
      if (Opt.LearningRate && sameSpan(At, *Opt.LearningRate))
        for (const TrainingLoop &NowLoop : Now.TrainingLoops)
          for (const OptimizerSite &NowOpt : NowLoop.Optimizers)
            if (NowOpt.Name == Opt.Name && NowOpt.LearningRate)
              return *NowOpt.LearningRate;
  return std::nullopt;
}

/// The training loop shapes tensors by the batch size (the driver's rule).
static bool needsWholeBatches(const ProgramModel &Program) {
  return llvm::any_of(Program.TrainingLoops, [](const TrainingLoop &Loop) {
    return !Loop.BatchShapes.empty();
  });
}

std::string measuredBeforeChangeNote(llvm::ArrayRef<std::string> Changes) {
  if (Changes.empty())
    return "";
  return " (measured before the change: " + llvm::join(Changes, ", ") + ")";
}

std::vector<std::string> measurementWarnings(const Measurement &M,
                                             unsigned Cores) {
  std::vector<std::string> Warnings = M.Problems;
  // As Sweep::warnOfOtherWork says them when the sweep ends.
  std::vector<std::pair<int64_t, double>> SizeCores, SizeSteal;
  for (const MeasuredRun &Run : M.Runs) {
    if (Run.OtherWorkCores >= 0)
      SizeCores.push_back({Run.BatchSize, Run.OtherWorkCores});
    if (Run.StealCores >= 0)
      SizeSteal.push_back({Run.BatchSize, Run.StealCores});
  }
  if (std::optional<std::string> Busy = busyDuringRunsWarning(SizeCores, Cores))
    Warnings.push_back(std::move(*Busy));
  if (std::optional<std::string> Steal =
          stealDuringRunsWarning(SizeSteal, Cores))
    Warnings.push_back(std::move(*Steal));
  return Warnings;
}

void loadMeasurement(ProgramState &State, SavedReport Report,
                     llvm::StringRef ReportPath,
                     llvm::ArrayRef<std::string> KeyChanges) {
  State.ReportPath = ReportPath.str();
  State.Measured.clear();
  State.SourcesChanged = false;
  for (const auto &[File, Digest] : Report.Program.FileSha256) {
    auto Now = State.Model.FileSha256.find(File);
    if (Now == State.Model.FileSha256.end() || Now->second != Digest)
      State.SourcesChanged = true;
  }
  if (Report.Program.FileSha256.empty())
    State.SourcesChanged = true; // nothing ties it to this text
  State.Changes.clear();
  if (State.SourcesChanged)
    State.Changes.push_back("sources");
  for (const std::string &Change : KeyChanges)
    if (Change != "sources")
      State.Changes.push_back(Change);
  State.MeasuredBeforeChange = !State.Changes.empty();
  std::string Note = measuredBeforeChangeNote(State.Changes);
  const ProgramModel &Then = Report.Program;
  int64_t Declared = Then.BatchSize ? Then.BatchSize->Value : 0;
  ModelOptions Options = State.Rules.Model;
  Options.WholeBatchesOnly = needsWholeBatches(Then);
  State.Predicted = analyze(Report.Measured, Declared, Options);
  if (Then.BatchSize)
    State.Measured =
        runRules({Then, Report.Measured, *State.Predicted, State.Rules});
  for (Finding &F : State.Measured) {
    F.Message += Note;
    if (!State.SourcesChanged)
      continue;
    // The report's offsets hold for the text it was made from: each
    // finding goes where its place is now, and its fix-it, made for the
    // old text, is dropped (the actions are made from the current model).
    if (std::optional<SourceSpan> Moved = moveOnto(F.At, Then, State.Model))
      F.At = *Moved;
    F.Edits.clear();
  }
  // What the terminal prints about the measurement itself goes where the
  // measured findings start: the batch size, as it is now.
  const std::optional<BatchSizeSite> &Site =
      State.Model.BatchSize || State.SourcesChanged ? State.Model.BatchSize
                                                    : Then.BatchSize;
  unsigned Cores = std::max(1u, std::thread::hardware_concurrency());
  for (const std::string &Warning :
       measurementWarnings(Report.Measured, Cores)) {
    if (!Site)
      break;
    Finding F;
    F.Level = DiagLevel::Warning;
    F.At = Site->Literal;
    F.Message = Warning + Note;
    State.Measured.push_back(std::move(F));
  }
  State.Report = std::move(Report);
}

/// The measured run at the declared size (the rules' current run).
static const MeasuredRun *currentRun(const ProgramState &State) {
  if (!State.Report || !State.Predicted)
    return nullptr;
  const ProgramModel &Then = State.Report->Program;
  if (!Then.BatchSize)
    return nullptr;
  RuleContext Context{Then, State.Report->Measured, *State.Predicted,
                      State.Rules};
  return Context.currentRun();
}

static std::string interval(double Low, double High, const char *Format) {
  if (!std::isfinite(High))
    return llvm::formatv("({0}..)", llvm::formatv(Format, Low)).str();
  return llvm::formatv("({0}..{1})", llvm::formatv(Format, Low),
                       llvm::formatv(Format, High))
      .str();
}

static std::string byteInterval(const Interval &R) {
  if (!std::isfinite(R.High))
    return "(" + formatBytes(int64_t(R.Low)) + "..)";
  return "(" + formatBytes(int64_t(R.Low)) + ".." +
         formatBytes(int64_t(R.High)) + ")";
}

/// The largest size the actions offer, and what bounds it: the bound the
/// command line puts on its suggestion (suggestionCap), named by the bound
/// that decided it. Without a maximum that fits, only the data and failed
/// runs bound it ("" where nothing does).
static std::pair<int64_t, std::string> largestOffered(const Analysis &A) {
  int64_t Fits = A.MaxBatchSize.value_or(std::numeric_limits<int64_t>::max());
  int64_t Cap = suggestionCap(A, Fits);
  if (Cap == Fits)
    return {Cap, A.MaxBatchSize ? "largest that fits" : ""};
  if (Cap == A.DataBound)
    return {Cap, "below the size that held the whole dataset"};
  if (Cap == A.FailureBound)
    return {Cap, "below the size that failed"};
  return {Cap, "half the training data"};
}

/// The largest divisor of Samples at most Size (Samples > 0, Size >= 1).
static int64_t largestDivisorAtMost(int64_t Samples, int64_t Size) {
  int64_t Best = 1;
  for (int64_t D = 1; D * D <= Samples; ++D)
    if (Samples % D == 0)
      for (int64_t Divisor : {D, Samples / D})
        if (Divisor <= Size)
          Best = std::max(Best, Divisor);
  return Best;
}

bool clientTakesMarkdownHovers(const llvm::json::Object &Capabilities) {
  const llvm::json::Object *Document = Capabilities.getObject("textDocument");
  const llvm::json::Object *Hover =
      Document ? Document->getObject("hover") : nullptr;
  const llvm::json::Array *Formats =
      Hover ? Hover->getArray("contentFormat") : nullptr;
  return Formats && llvm::any_of(*Formats, [](const llvm::json::Value &V) {
           return V.getAsString() == "markdown";
         });
}

/// Characters as a terminal counts them: UTF-8 sequences are one.
static size_t columns(llvm::StringRef Text) {
  return llvm::count_if(Text, [](char C) { return (C & 0xC0) != 0x80; });
}

/// The hovers' Markdown as plain text, for a client that shows the markup
/// as typed: `code` becomes 'code', emphasis goes, and a table becomes
/// aligned columns (right-aligned where the Markdown says so), without
/// its separator line or an empty header. Only what the hovers write.
static std::string plainText(llvm::StringRef Markdown) {
  auto Inline = [](llvm::StringRef Text) {
    std::string Out;
    for (char C : Text)
      if (C == '`')
        Out += '\'';
      else if (C != '*')
        Out += C;
    return Out;
  };
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  Markdown.split(Lines, '\n');
  std::string Out;
  for (size_t I = 0; I < Lines.size();) {
    if (!Lines[I].starts_with("|")) {
      Out += Inline(Lines[I]);
      if (++I < Lines.size())
        Out += '\n';
      continue;
    }
    std::vector<std::vector<std::string>> Rows;
    std::vector<bool> Right;
    for (; I < Lines.size() && Lines[I].starts_with("|"); ++I) {
      llvm::SmallVector<llvm::StringRef, 8> Cells;
      Lines[I].trim().drop_front().drop_back().split(Cells, '|');
      bool Separator = llvm::all_of(Cells, [](llvm::StringRef Cell) {
        Cell = Cell.trim();
        return !Cell.empty() &&
               Cell.find_first_not_of("-:") == llvm::StringRef::npos;
      });
      if (Separator) {
        for (llvm::StringRef Cell : Cells)
          Right.push_back(Cell.trim().ends_with(":"));
        continue;
      }
      std::vector<std::string> Row;
      for (llvm::StringRef Cell : Cells)
        Row.push_back(Inline(Cell.trim()));
      if (llvm::any_of(Row, [](const std::string &C) { return !C.empty(); }))
        Rows.push_back(std::move(Row));
    }
    std::vector<size_t> Widths;
    for (const auto &Row : Rows)
      for (size_t C = 0; C < Row.size(); ++C) {
        Widths.resize(std::max(Widths.size(), Row.size()));
        Widths[C] = std::max(Widths[C], columns(Row[C]));
      }
    for (const auto &Row : Rows) {
      std::string Line;
      for (size_t C = 0; C < Row.size(); ++C) {
        std::string Pad(Widths[C] - columns(Row[C]), ' ');
        bool AlignRight = C < Right.size() && Right[C];
        Line += (C ? "  " : "") + (AlignRight ? Pad + Row[C] : Row[C] + Pad);
      }
      Out += llvm::StringRef(Line).rtrim().str();
      if (I < Lines.size())
        Out += '\n';
    }
  }
  return Out;
}

std::string batchSizeHover(const ProgramState &State, bool Markdown) {
  if (!Markdown)
    return plainText(batchSizeHover(State, true));
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  const BatchSizeSite &Site = *State.Model.BatchSize;
  OS << "**training batch size** `" << Site.Name << "` = " << Site.Value << " ("
     << batchSizeKindName(Site.Kind) << ")\n\n";
  if (!State.Predicted) {
    OS << "Not measured yet: run `skyline-check " << Site.Literal.File
       << " -p <build dir>` to measure; its report is read from the work "
          "directory.";
    return Text;
  }
  const Analysis &A = *State.Predicted;
  if (!A.canPredictTime() || !A.canPredictMemory()) {
    if (const MeasuredRun *Run = currentRun(State))
      OS << "measured at " << Run->BatchSize << ": "
         << llvm::formatv("{0:F2}", Run->IterationMs.Median) << " ms, "
         << llvm::formatv("{0:F0}", Run->Throughput) << " samples/s, "
         << formatBytes(Run->PeakBytes) << " peak\n\n";
    OS << "cannot predict: "
       << (A.TimeProblem.empty() ? A.MemoryProblem : A.TimeProblem) << "\n";
    return Text;
  }
  std::vector<std::pair<int64_t, std::string>> Rows{{Site.Value, "current"}};
  if (A.Suggested)
    Rows.push_back({A.Suggested->BatchSize, "suggested"});
  Rows.push_back({Site.Value * 2, "doubled"});
  if (A.MaxBatchSize)
    Rows.push_back({*A.MaxBatchSize, "largest that fits"});
  auto [Largest, Bound] = largestOffered(A);
  if (A.MaxBatchSize && Largest != *A.MaxBatchSize)
    Rows.push_back({Largest, Bound});
  OS << "| batch size | which | iteration ms | samples/s | peak memory |\n"
     << "| ---: | --- | ---: | ---: | ---: |\n";
  for (const auto &[Size, What] : Rows) {
    std::optional<Prediction> P = predictAt(A, Size);
    if (!P)
      continue;
    OS << "| " << Size << " | " << What
       << (P->Extrapolated ? " (extrapolated)" : "") << " | "
       << llvm::formatv("{0:F2}", P->IterationMs) << " "
       << interval(P->IterationMsRange.Low, P->IterationMsRange.High, "{0:F2}")
       << " | " << llvm::formatv("{0:F0}", P->Throughput) << " "
       << interval(P->ThroughputRange.Low, P->ThroughputRange.High, "{0:F0}")
       << " | " << formatBytes(P->PeakBytes) << " "
       << byteInterval(P->PeakBytesRange) << " |\n";
  }
  OS << "\n90% intervals in parentheses. Fits: iteration time R² "
     << llvm::formatv("{0:F4}", A.IterationMs->RSquared) << ", peak memory R² "
     << llvm::formatv("{0:F4}", A.PeakBytes->RSquared) << ", over "
     << A.TimePoints.size() << " batch sizes measured (up to "
     << A.LargestMeasuredBatchSize << ")";
  if (A.Suggested)
    OS << "; suggested " << A.Suggested->BatchSize << ": "
       << formatShare(A.Suggested->Gain) << " more throughput ("
       << formatShareRange(A.Suggested->GainRange.Low,
                           A.Suggested->GainRange.High)
       << ")";
  else if (!A.NoSuggestionReason.empty())
    OS << "; no suggestion: " << A.NoSuggestionReason;
  OS << ".";
  if (State.MeasuredBeforeChange)
    OS << "\n\n*Measured before the change:* "
       << llvm::join(State.Changes, ", ") << " (" << State.ReportPath << ").";
  return Text;
}

/// The measured row of the layer Name called at File:Line: the row of that
/// call site, as the runs measure per call; by name alone where the code
/// changed since (the lines moved) or Line is the layer's construction.
static const LayerMeasure *layerOf(const ProgramState &State,
                                   const MeasuredRun &Run, llvm::StringRef Name,
                                   llvm::StringRef File, unsigned Line) {
  if (!State.SourcesChanged)
    for (const LayerMeasure &Layer : Run.Layers)
      if (Layer.Name == Name && Layer.File == File && Layer.Line == Line)
        return &Layer;
  bool IsCall = llvm::any_of(State.Model.ModuleCalls, [&](const ModuleCall &C) {
    return C.File == File && C.Line == Line;
  });
  if (IsCall && !State.SourcesChanged)
    return nullptr; // a call the runs did not measure (outside the loop)
  for (const LayerMeasure &Layer : Run.Layers)
    if (Layer.Name == Name)
      return &Layer;
  return nullptr;
}

/// The measured layer of a call or construction at File:Line.
static const LayerMeasure *layerAt(const ProgramState &State,
                                   const MeasuredRun &Run, llvm::StringRef File,
                                   unsigned Line, std::string &Name) {
  for (const ModuleCall &Call : State.Model.ModuleCalls)
    if (Call.File == File && Call.Line == Line)
      Name = Call.Name;
  if (Name.empty())
    for (const ModuleSite &Site : State.Model.Modules)
      if (Site.File == File && Site.Line == Line)
        Name = Site.Name;
  if (Name.empty())
    return nullptr;
  return layerOf(State, Run, Name, File, Line);
}

std::optional<std::string> layerHover(const ProgramState &State,
                                      llvm::StringRef File, unsigned Line,
                                      bool Markdown) {
  if (!Markdown) {
    std::optional<std::string> Text = layerHover(State, File, Line, true);
    return Text ? std::optional<std::string>(plainText(*Text)) : std::nullopt;
  }
  const MeasuredRun *Run = currentRun(State);
  if (!Run)
    return std::nullopt;
  std::string Name;
  const LayerMeasure *Layer = layerAt(State, *Run, File, Line, Name);
  if (!Layer)
    return std::nullopt;
  // The share as skyline-hot-layer gives it: of the median iteration.
  double Iteration = Run->IterationMs.Median;
  double Share = hotLayerShare(*Run, *Layer);
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  OS << "**layer** `" << Layer->Name << "` (" << Layer->Type
     << ") at batch size " << Run->BatchSize << "\n\n"
     << "| | |\n| --- | ---: |\n"
     << "| forward | " << llvm::formatv("{0:F2}", Layer->ForwardMs) << " ms |\n"
     << "| backward | " << llvm::formatv("{0:F2}", Layer->BackwardMs)
     << " ms |\n"
     << "| share of the median iteration | " << formatShare(Share) << " of "
     << llvm::formatv("{0:F2}", Iteration) << " ms |\n";
  if (Layer->GpuMs >= 0)
    OS << "| GPU kernels | " << llvm::formatv("{0:F2}", Layer->GpuMs)
       << " ms |\n";
  OS << "| activations at the peak | " << formatBytes(Layer->ActivationBytes)
     << " |\n"
     << "| weights | " << formatBytes(Layer->WeightBytes) << " |\n";
  if (State.MeasuredBeforeChange)
    OS << "\n*Measured before the change:* " << llvm::join(State.Changes, ", ")
       << " (" << State.ReportPath << ").";
  return Text;
}

std::vector<InlayHintAt> inlayHints(const ProgramState &State) {
  std::vector<InlayHintAt> Hints;
  const MeasuredRun *Run = currentRun(State);
  if (!Run || !State.Model.BatchSize)
    return Hints;
  const char *Stale = State.MeasuredBeforeChange ? " (before the change)" : "";
  for (const ModuleCall &Call : State.Model.ModuleCalls) {
    const LayerMeasure *Layer =
        layerOf(State, *Run, Call.Name, Call.File, Call.Line);
    if (!Layer || Run->IterationMs.Median <= 0)
      continue;
    Hints.push_back(
        {Call.File, Call.Offset + Call.Length,
         llvm::formatv("fwd {0:F2} ms, bwd {1:F2} ms, {2} of the "
                       "median iteration{3}",
                       Layer->ForwardMs, Layer->BackwardMs,
                       formatShare(hotLayerShare(*Run, *Layer)), Stale)
             .str()});
  }
  const BatchSizeSite &Site = *State.Model.BatchSize;
  if (std::optional<Prediction> P = predictAt(*State.Predicted, Site.Value))
    Hints.push_back(
        {Site.Literal.File, Site.Literal.Offset + Site.Literal.Length,
         llvm::formatv("{0:F0} samples/s, {1} peak{2}", P->Throughput,
                       formatBytes(P->PeakBytes), Stale)
             .str()});
  else
    Hints.push_back({Site.Literal.File,
                     Site.Literal.Offset + Site.Literal.Length,
                     llvm::formatv("measured at {0}: {1:F0} samples/s, {2} "
                                   "peak{3}",
                                   Run->BatchSize, Run->Throughput,
                                   formatBytes(Run->PeakBytes), Stale)
                         .str()});
  for (const TrainingLoop &Loop : State.Model.TrainingLoops)
    if (Loop.LoopOffset > 0 || Loop.Line == 1)
      Hints.push_back(
          {Loop.File, Loop.LoopOffset,
           llvm::formatv("median iteration {0:F2} ms at batch size {1}{2}",
                         Run->IterationMs.Median, Run->BatchSize, Stale)
               .str(),
           false});
  return Hints;
}

/// The suggestion with the learning rates scaled along: the optional
/// fix-its the batch-size rule made for it (--scale-learning-rate), where
/// they hold for the code as it is.
static std::optional<BatchSizeAction>
withScaledLearningRate(const ProgramState &State,
                       const BatchSizeAction &Suggested) {
  BatchSizeAction Scaled = Suggested;
  Scaled.Preferred = false;
  std::string Rates;
  for (const Finding &F : State.Measured)
    if (F.Rule == rules::batchSize().Id && F.OptionalFix && !F.Edits.empty()) {
      llvm::append_range(Scaled.Fix.Edits, F.Edits);
      Rates += (Rates.empty() ? "" : ", ") + F.Edits.front().Text;
    }
  if (Rates.empty())
    return std::nullopt;
  Scaled.Title = "Set batch size to " + std::to_string(Suggested.BatchSize) +
                 " and scale the learning rate to " + Rates +
                 " (linear scaling rule)";
  return Scaled;
}

bool codeActionKindRequested(llvm::ArrayRef<std::string> Only,
                             llvm::StringRef Kind) {
  return Only.empty() || llvm::any_of(Only, [&](llvm::StringRef Asked) {
           return Asked.empty() || Kind == Asked ||
                  Kind.starts_with((Asked + ".").str());
         });
}

std::vector<BatchSizeAction>
batchSizeActions(const ProgramState &State, llvm::ArrayRef<std::string> Only) {
  std::vector<BatchSizeAction> Actions;
  if (!State.Model.BatchSize || !codeActionKindRequested(Only, "quickfix"))
    return Actions;
  const BatchSizeSite &Site = *State.Model.BatchSize;
  std::vector<std::pair<int64_t, std::string>> Sizes;
  const Analysis *A = State.Predicted ? &*State.Predicted : nullptr;
  // Measured, the sizes stay under the command line's bound on its
  // suggestion, and divide the dataset where the loop needs whole batches.
  int64_t Limit = std::numeric_limits<int64_t>::max();
  std::string Bound;
  if (A)
    std::tie(Limit, Bound) = largestOffered(*A);
  int64_t Whole = A ? A->WholeBatchSamples : 0;
  auto Offerable = [&](int64_t Size) {
    return Size >= 1 && Size <= Limit && (Whole <= 0 || Whole % Size == 0);
  };
  if (Whole > 0 && Limit >= 1 && Limit < std::numeric_limits<int64_t>::max())
    Limit = largestDivisorAtMost(Whole, Limit);
  if (A && A->Suggested)
    Sizes.push_back({A->Suggested->BatchSize, "suggested"});
  if (A && A->Suggested && !Bound.empty() && Limit > A->Suggested->BatchSize) {
    // Two sizes between the suggestion and the largest offered, in equal
    // ratios, rounded as suggestions are.
    double Ratio = std::pow(double(Limit) / A->Suggested->BatchSize, 1.0 / 3);
    int64_t Round = std::max<int64_t>(1, State.Rules.Model.RoundTo);
    for (int Step = 1; Step <= 2; ++Step) {
      int64_t Size = int64_t(A->Suggested->BatchSize * std::pow(Ratio, Step));
      Size = std::max<int64_t>(Round, Size / Round * Round);
      if (Whole > 0)
        Size = largestDivisorAtMost(Whole, Size);
      Sizes.push_back({Size, ""});
    }
  }
  if (!Bound.empty())
    Sizes.push_back({Limit, Bound});
  Sizes.push_back({Site.Value * 2, "doubled"});
  // Without a suggestion no size is preferred: the nearest comes first.
  if (!A || !A->Suggested)
    llvm::stable_sort(
        Sizes, [](const auto &X, const auto &Y) { return X.first < Y.first; });
  for (const auto &[Size, What] : Sizes) {
    // The suggestion is the command line's own, within its bound.
    if (Size == Site.Value || (A && What != "suggested" && !Offerable(Size)) ||
        Size < 1 ||
        llvm::any_of(Actions, [&, Size = Size](const BatchSizeAction &Done) {
          return Done.BatchSize == Size;
        }))
      continue;
    BatchSizeAction Action;
    Action.BatchSize = Size;
    Action.Fix = makeBatchSizeFix(Site, Size);
    Action.Preferred = What == "suggested";
    std::string Figures;
    if (A)
      if (std::optional<Prediction> P = predictAt(*A, Size)) {
        std::optional<Prediction> Now = predictAt(*A, Site.Value);
        if (Now && Now->Throughput > 0) {
          double Gain = P->Throughput / Now->Throughput - 1;
          Figures += (Gain < 0 ? "-" : "+") + formatShare(std::fabs(Gain)) +
                     " throughput, ";
        }
        Figures += formatBytes(P->PeakBytes) + " peak";
      }
    std::string Label = What;
    if (!Figures.empty())
      Label += (Label.empty() ? "" : ": ") + Figures;
    Action.Title = "Set batch size to " + std::to_string(Size) +
                   (Label.empty() ? "" : " (" + Label + ")");
    Actions.push_back(std::move(Action));
    if (What == "suggested")
      if (std::optional<BatchSizeAction> Scaled =
              withScaledLearningRate(State, Actions.back()))
        Actions.push_back(std::move(*Scaled));
  }
  return Actions;
}

} // namespace skyline

namespace skyline {

namespace {

constexpr llvm::StringLiteral ExperimentRulePrefix = "skyline-experiment-";

std::string signedShare(double Share) {
  return (Share < 0 ? "-" : "+") + formatShare(std::fabs(Share));
}

} // namespace

std::optional<std::string> experimentHover(const ProgramState &State,
                                           llvm::StringRef File, unsigned Line,
                                           bool Markdown) {
  if (!Markdown) {
    std::optional<std::string> Text = experimentHover(State, File, Line, true);
    return Text ? std::optional<std::string>(plainText(*Text)) : std::nullopt;
  }
  if (!State.Report)
    return std::nullopt;
  const Measurement &M = State.Report->Measured;
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  for (const Finding &F : State.Measured) {
    llvm::StringRef Rule = F.Rule;
    if (!Rule.consume_front(ExperimentRulePrefix) || F.At.File != File ||
        F.At.Line != Line)
      continue;
    for (const TrialRun &Trial : M.Trials) {
      if (Trial.Experiment != Rule)
        continue;
      TrialEffect Effect = trialEffect(M, trialBaseline(M, Trial), Trial);
      if (!Text.empty())
        OS << "\n";
      OS << "**experiment** `" << Trial.Experiment << "` "
         << (Trial.paired() ? std::string("in the program's evaluation passes")
                            : "at batch size " + std::to_string(Trial.BatchSize))
         << "\n\n"
         << "| | |\n| --- | ---: |\n"
         << "| trial | " << Trial.Setting << " |\n";
      if (Effect.Verdict == TrialVerdict::Failed ||
          Effect.Verdict == TrialVerdict::NotTried) {
        OS << "| verdict | " << verdictName(Effect.Verdict) << " |\n\n"
           << (Trial.Problem.empty() ? Trial.NotTried : Trial.Problem) << "\n";
        continue;
      }
      OS << (Trial.paired() ? "| pass | " : "| iteration | ")
         << llvm::formatv("{0:F3} ms against {1:F3} ms", Effect.TrialMs,
                          Effect.BaselineMs)
         << " |\n";
      if (Trial.paired())
        OS << "| peak memory | " << formatBytes(Effect.TrialPeakBytes)
           << " against " << formatBytes(Effect.BaselinePeakBytes) << " ("
           << signedShare(-Effect.MemorySaving) << ") |\n";
      OS
         << "| throughput | " << signedShare(Effect.Gain) << " ("
         << formatShareRange(Effect.Range.Low, Effect.Range.High)
         << ", 90% interval) |\n"
         << "| verdict | " << verdictName(Effect.Verdict) << " |\n";
    }
  }
  if (Text.empty())
    return std::nullopt;
  return Text;
}

std::vector<BatchSizeAction>
experimentActions(const ProgramState &State, llvm::ArrayRef<std::string> Only) {
  std::vector<BatchSizeAction> Actions;
  if (!codeActionKindRequested(Only, "quickfix"))
    return Actions;
  for (const Finding &F : State.Measured) {
    llvm::StringRef Name = F.Rule;
    if (!Name.consume_front(ExperimentRulePrefix) || F.Edits.empty() ||
        F.Level != DiagLevel::Warning)
      continue;
    auto Figure = [&](llvm::StringRef Key) {
      auto It = llvm::find_if(F.Figures,
                              [&](const auto &KV) { return KV.first == Key; });
      return It == F.Figures.end() ? 0.0 : It->second;
    };
    BatchSizeAction Action;
    // A paired trial compares memory too (no-grad-eval).
    std::string Memory =
        Figure("baselinePeakBytes") > 0
            ? signedShare(-Figure("memorySaving")) + " peak memory, "
            : "";
    Action.Title = "Apply experiment " + Name.str() + ": " + Memory +
                   signedShare(Figure("gain")) + " throughput measured (" +
                   formatShareRange(Figure("gainLow"), Figure("gainHigh")) +
                   ")";
    Action.Fix = F;
    // A trade of time for memory is offered, but not as the one to take.
    Action.Preferred = Figure("gainHigh") >= 0;
    Actions.push_back(std::move(Action));
  }
  return Actions;
}

} // namespace skyline
