//===- LspDocument.h - What skyline-lsp shows for one program ---*- C++ -*-===//
//
// The language server's answers, computed from the stages' own results
// with no protocol types: the findings of the front end (programModelNotes)
// and of the rules on the latest measurement (runRules on a saved report),
// the hover texts, the inlay hints and the batch-size actions (the fix-its
// of makeBatchSizeFix, as --export-fixes writes them). LspServer.h puts them
// on the wire; these are unit-tested without it.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_LSPDOCUMENT_H
#define SKYLINE_LSPDOCUMENT_H

#include "skyline/Findings.h"
#include "skyline/Model.h"
#include "skyline/ProgramModel.h"
#include "skyline/Rules.h"
#include "skyline/RunReport.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace skyline {

/// A 0-based line and character (UTF-16 code units), as LSP counts them.
struct LspPosition {
  int Line = 0;
  int Character = 0;
};

/// Byte offsets and LSP positions in one text.
class TextIndex {
public:
  explicit TextIndex(std::string Text = "");
  LspPosition position(unsigned Offset) const;
  unsigned offset(LspPosition Position) const;
  /// The offset of a 1-based line and byte column, as clang counts them.
  unsigned offsetOf(unsigned Line, unsigned Column) const;
  const std::string &text() const { return Text; }

private:
  std::string Text;
  std::vector<unsigned> LineStarts;
};

/// Where each line of the text analyzed is in the text edited since (the
/// lines before and after the region an edit changed keep their text); a
/// line inside that region has none.
class LineMap {
public:
  LineMap(llvm::StringRef Analyzed, llvm::StringRef Current);
  std::optional<int> map(int Line) const; // 0-based
  /// The line of the text analyzed that a current line was; none inside
  /// the changed region.
  std::optional<int> unmap(int Line) const;
  bool identity() const { return Same; }

private:
  bool Same = true;
  int Prefix = 0;      // lines equal from the start
  int AnalyzedEnd = 0; // first line of the common suffix, analyzed text
  int Shift = 0;       // current line = analyzed line + Shift past it
};

/// What the server knows of one program: its static model as last analyzed
/// and what its latest measurement says.
struct ProgramState {
  ProgramModel Model; // absolute paths
  std::vector<Finding> StaticNotes;
  RuleOptions Rules;
  /// The latest measurement's report, its Model stage and the rules'
  /// findings, anchored in the code as it is now; none without a report.
  std::optional<SavedReport> Report;
  std::string ReportPath;
  std::optional<Analysis> Predicted;
  std::vector<Finding> Measured;
  /// What changed since the program was measured, in keyChanges' order
  /// (MeasurementStore.h): "sources" (the files' SHA-256 differ from the
  /// report's), "compile flags", "LibTorch", "device". The findings say so.
  std::vector<std::string> Changes;
  bool MeasuredBeforeChange = false; // Changes is not empty
  bool SourcesChanged = false;       // the report's offsets are stale
};

/// The suffix a measured finding carries in its message when the
/// measurement was made before Changes (none when nothing changed):
/// " (measured before the change: sources, compile flags)".
std::string measuredBeforeChangeNote(llvm::ArrayRef<std::string> Changes);

/// The warnings skyline-check prints about a measurement itself, which say
/// how far its figures hold: the report's problems (a size that failed,
/// runs that ended early or did not agree, a spent time budget), then
/// other work that held the CPUs during the kept runs and the hypervisor's
/// steal, as the sweep says them (OtherWork.h; Cores: the machine's, as
/// the sweep counts them). Not the threads warning: a report does not say
/// how many CPUs its runs had.
std::vector<std::string> measurementWarnings(const Measurement &M,
                                             unsigned Cores);

/// Fills the measured half of State from a report of this program:
/// the Model stage and the rules as `--from-report` runs them, the findings
/// moved onto the current code where their place moved (the batch-size
/// literal, a layer's call or construction, an optimizer's learning rate)
/// and, when the files changed since, marked and without fix-its; then
/// measurementWarnings, each a warning at the batch-size literal (no rule
/// id: no rule makes them).
/// KeyChanges: what else changed since (keyChanges of the report's key and
/// the program's now, without "sources", which the files' digests decide
/// here); those findings are marked too, and keep their fix-its.
void loadMeasurement(ProgramState &State, SavedReport Report,
                     llvm::StringRef ReportPath,
                     llvm::ArrayRef<std::string> KeyChanges = {});

/// Whether Report describes the program of Source (an absolute path): one
/// of its sources is Source, relative paths taken from BaseDir.
bool reportDescribes(const SavedReport &Report, llvm::StringRef Source,
                     llvm::StringRef BaseDir);

/// Makes every path of Report's program model absolute (from BaseDir).
void makeReportPathsAbsolute(SavedReport &Report, llvm::StringRef BaseDir);

/// Whether the client shows Markdown hovers: "markdown" is among
/// textDocument.hover.contentFormat in the capabilities it sent with
/// `initialize`. A client that lists none is sent plain text.
bool clientTakesMarkdownHovers(const llvm::json::Object &Capabilities);

/// A hover on the training batch-size literal: predicted time, throughput
/// and memory with their 90% intervals at the current, the suggested, the
/// doubled and the largest fitting sizes (and the largest the suggestion
/// may be, where the data or a failure bound it lower), and the fits'
/// quality; without a measurement, what the front end found and how to
/// measure. Markdown, else plain text (the tables as aligned columns).
std::string batchSizeHover(const ProgramState &State, bool Markdown = true);

/// A hover on a layer's call or construction at File:Line (1-based): its
/// forward and backward time, share of the median iteration and memory in
/// the measured run at the declared size; none when no layer is there.
std::optional<std::string> layerHover(const ProgramState &State,
                                      llvm::StringRef File, unsigned Line,
                                      bool Markdown = true);

/// A hover on the line an experiment's finding points at (File:Line,
/// 1-based): each trial there, what it changed, its iteration time against
/// the baseline's, the throughput gain with its 90% interval, and the
/// verdict (docs/experiments/); none where no experiment's finding is.
std::optional<std::string> experimentHover(const ProgramState &State,
                                           llvm::StringRef File, unsigned Line,
                                           bool Markdown = true);

/// An inlay hint at a byte offset of File as analyzed.
struct InlayHintAt {
  std::string File;
  unsigned Offset = 0;
  std::string Label;
  bool PaddingLeft = true;
};

/// Each measured layer's call (forward, backward and share of the median
/// iteration), the batch-size literal (predicted throughput and peak
/// memory) and the training loop (the median iteration); none unmeasured.
std::vector<InlayHintAt> inlayHints(const ProgramState &State);

/// Whether an action of Kind is among those the client asked for
/// (CodeActionContext.only; empty: any): a kind asked for covers its
/// subkinds ("quickfix" covers "quickfix.skyline"), "" covers every kind.
bool codeActionKindRequested(llvm::ArrayRef<std::string> Only,
                             llvm::StringRef Kind);

/// "Set batch size to N", each a quickfix: the suggested size, sizes between
/// it and the largest offered, that size, and double the current one (in
/// increasing order where there is no suggestion), each titled with its
/// predicted throughput change and peak memory, with the fix-it of
/// makeBatchSizeFix (the edit --export-fixes writes). Measured, no size
/// past the bound the command line puts on its suggestion (suggestionCap:
/// the largest that fits, lowered by the data and by failed runs), and
/// where the loop needs whole batches only divisors of the dataset. None
/// where Only does not ask for quickfixes.
struct BatchSizeAction {
  std::string Title;
  int64_t BatchSize = 0;
  Finding Fix;
  bool Preferred = false; // the suggestion
};
std::vector<BatchSizeAction>
batchSizeActions(const ProgramState &State,
                 llvm::ArrayRef<std::string> Only = {});

/// The fix-it of each experiment that measured faster beyond the runs'
/// noise, a preferred quickfix of its warning, titled with the measured
/// gain and its interval ("Apply experiment threads: +20% throughput
/// measured (6.8% to 35%)"); BatchSize is 0. None where the sources
/// changed since the measurement (its fix-its are dropped) or Only does not
/// ask for quickfixes.
std::vector<BatchSizeAction>
experimentActions(const ProgramState &State,
                  llvm::ArrayRef<std::string> Only = {});

} // namespace skyline

#endif // SKYLINE_LSPDOCUMENT_H
