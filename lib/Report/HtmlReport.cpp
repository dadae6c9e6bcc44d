//===- HtmlReport.cpp - One self-contained HTML page ----------------------===//
//
// Writes the page section by section into one string. The charts are SVG
// drawn here from the measured runs and the model's two lines; styling is one
// inline <style>, so the page opens from disk without a network or a script.
//
//===----------------------------------------------------------------------===//

#include "skyline/HtmlReport.h"

#include "skyline/Experiments.h"

#include "skyline/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

namespace skyline {

std::string escapeHtml(llvm::StringRef Text) {
  static const std::pair<char, const char *> Entities[] = {{'&', "&amp;"},
                                                           {'<', "&lt;"},
                                                           {'>', "&gt;"},
                                                           {'"', "&quot;"},
                                                           {'\'', "&#39;"}};
  std::string Out;
  Out.reserve(Text.size());
  for (char C : Text) {
    const auto *It =
        llvm::find_if(Entities, [C](const auto &E) { return E.first == C; });
    if (It != std::end(Entities))
      Out += It->second;
    else
      Out += C;
  }
  return Out;
}

namespace {

template <typename... Ts> std::string fmt(const char *Format, Ts... Values) {
  std::string Out;
  llvm::raw_string_ostream(Out) << llvm::format(Format, Values...);
  return Out;
}

/// 1234567 as "1,234,567": batch sizes and large rates read at a glance.
std::string groupDigits(int64_t Value) {
  std::string Digits = std::to_string(Value < 0 ? -Value : Value);
  std::string Out;
  for (size_t I = 0; I < Digits.size(); ++I) {
    if (I && (Digits.size() - I) % 3 == 0)
      Out += ',';
    Out += Digits[I];
  }
  return Value < 0 ? "-" + Out : Out;
}

std::string formatRate(double SamplesPerSecond) {
  if (!std::isfinite(SamplesPerSecond))
    return "n/a";
  if (SamplesPerSecond < 1000)
    return fmt("%.1f", SamplesPerSecond);
  return groupDigits(int64_t(std::llround(SamplesPerSecond)));
}

std::string formatMs(double Ms) { return fmt("%.2f ms", Ms); }
std::string formatPercent(double Fraction) {
  return fmt("%.1f%%", Fraction * 100);
}

//===----------------------------------------------------------------------===//
// Charts
//===----------------------------------------------------------------------===//

/// One axis from zero: ticks at 1, 2 or 5 times a power of ten.
struct Axis {
  double Max = 1;  // the domain is [0, Max], in data units
  /// A log axis runs from Min to Max, ticked at 1, 2 and 5 times the powers
  /// of ten: for batch sizes that span more than 10x.
  bool Log = false;
  double Min = 0;
  double Step = 1; // between ticks
  double Unit = 1; // tick labels show Value / Unit
  std::string Title;
};

/// The 1, 2 or 5 times a power of ten nearest Raw.
double niceStep(double Raw) {
  double Magnitude = std::pow(10, std::floor(std::log10(Raw)));
  double Norm = Raw / Magnitude;
  if (Norm < 1.5)
    return Magnitude;
  if (Norm < 3)
    return 2 * Magnitude;
  if (Norm < 7)
    return 5 * Magnitude;
  return 10 * Magnitude;
}

Axis niceAxis(double DataMax, double Unit, bool Integer, std::string Title) {
  Axis A;
  A.Unit = Unit;
  A.Title = std::move(Title);
  double Max = DataMax / Unit;
  if (!std::isfinite(Max) || Max <= 0)
    Max = 1;
  double Step = niceStep(Max / 5);
  if (Integer && Unit == 1)
    Step = std::max(1.0, std::round(Step));
  A.Step = Step * Unit;
  A.Max = std::ceil(Max / Step - 1e-9) * Step * Unit;
  return A;
}

/// A log axis over [DataMin, DataMax], from the 1, 2 or 5 times a power of
/// ten at or below DataMin to the one at or above DataMax.
Axis logAxis(double DataMin, double DataMax, std::string Title) {
  Axis A;
  A.Log = true;
  A.Title = std::move(Title);
  double Magnitude = std::pow(10, std::floor(std::log10(DataMin)));
  A.Min = Magnitude;
  for (double M : {2.0, 5.0})
    if (M * Magnitude <= DataMin)
      A.Min = M * Magnitude;
  Magnitude = std::pow(10, std::floor(std::log10(DataMax)));
  A.Max = 10 * Magnitude;
  for (double M : {5.0, 2.0, 1.0})
    if (M * Magnitude >= DataMax)
      A.Max = M * Magnitude;
  return A;
}

/// The ticks of a log axis: 1, 2 and 5 times the powers of ten in range.
std::vector<double> logTicks(const Axis &A) {
  std::vector<double> Ticks;
  for (double P = std::pow(10, std::floor(std::log10(A.Min))); P <= A.Max;
       P *= 10)
    for (double M : {1.0, 2.0, 5.0})
      if (M * P >= A.Min * (1 - 1e-9) && M * P <= A.Max * (1 + 1e-9))
        Ticks.push_back(M * P);
  return Ticks;
}

std::string tickLabel(double Value, double Step) {
  if (Step >= 1)
    return groupDigits(int64_t(std::llround(Value)));
  int Decimals = int(std::ceil(-std::log10(Step) - 1e-9));
  return fmt("%.*f", Decimals, Value);
}

/// The unit memory axes are labelled in: the largest not above Max.
std::pair<double, const char *> byteUnit(double Max) {
  static const std::pair<double, const char *> Units[] = {
      {1099511627776.0, "TiB"},
      {1073741824.0, "GiB"},
      {1048576.0, "MiB"},
      {1024.0, "KiB"}};
  for (const auto &Unit : Units)
    if (Max >= Unit.first)
      return Unit;
  return {1.0, "bytes"};
}

constexpr double Width = 720, Height = 400;
constexpr double Left = 78, Right = 24, Top = 60, Bottom = 52;

/// An SVG chart with both axes from zero. Marks outside the plot area are
/// clipped, so a steep model curve cannot draw over the labels.
class Chart {
public:
  Chart(llvm::StringRef Id, llvm::StringRef Label, Axis X, Axis Y)
      : Id(Id.str()), X(std::move(X)), Y(std::move(Y)), OS(Out) {
    OS << "<svg class=\"chart\" viewBox=\"0 0 " << Width << " " << Height
       << "\" role=\"img\" aria-label=\"" << escapeHtml(Label)
       << "\" xmlns=\"http://www.w3.org/2000/svg\">\n"
       << "<defs><clipPath id=\"" << this->Id << "-clip\"><rect x=\"" << Left
       << "\" y=\"" << Top << "\" width=\"" << Width - Left - Right
       << "\" height=\"" << Height - Top - Bottom << "\"/></clipPath></defs>\n";
    drawAxes();
  }

  double px(double V) const {
    if (X.Log)
      return Left + std::log(std::max(V, X.Min * 1e-3) / X.Min) /
                        std::log(X.Max / X.Min) * (Width - Left - Right);
    return Left + V / X.Max * (Width - Left - Right);
  }
  double py(double V) const {
    return Height - Bottom - V / Y.Max * (Height - Top - Bottom);
  }
  bool inX(double V) const {
    return V >= (X.Log ? X.Min : 0) && V <= X.Max;
  }
  bool drew(llvm::StringRef Class) const { return Drawn.contains(Class); }

  /// A shaded band between Low and High (one y each a point of Xs): the 90%
  /// interval around a curve. Points with a NaN bound are left out.
  void band(llvm::ArrayRef<double> Xs, llvm::ArrayRef<double> Low,
            llvm::ArrayRef<double> High, llvm::StringRef Class,
            llvm::StringRef Tooltip) {
    std::vector<size_t> Kept;
    for (size_t I = 0; I < Xs.size(); ++I)
      if (std::isfinite(Low[I]) && std::isfinite(High[I]) && inX(Xs[I]))
        Kept.push_back(I);
    if (Kept.size() < 2)
      return;
    auto At = [&](double V) { return py(std::clamp(V, -Y.Max, 3 * Y.Max)); };
    std::string D;
    for (size_t I : Kept)
      D += fmt("%s%.1f %.1f ", D.empty() ? "M" : "L", px(Xs[I]), At(High[I]));
    for (auto It = Kept.rbegin(); It != Kept.rend(); ++It)
      D += fmt("L%.1f %.1f ", px(Xs[*It]), At(Low[*It]));
    D += "Z";
    Drawn.insert(Class);
    OS << "<path class=\"" << Class << "\" clip-path=\"url(#" << Id
       << "-clip)\" d=\"" << D << "\"><title>" << escapeHtml(Tooltip)
       << "</title></path>\n";
  }

  /// A line through Points; a NaN y starts a new piece.
  void curve(llvm::ArrayRef<std::pair<double, double>> Points,
             llvm::StringRef Class, llvm::StringRef Tooltip) {
    std::string D;
    bool Pen = false;
    for (const auto &[PX, PY] : Points) {
      if (!std::isfinite(PY)) {
        Pen = false;
        continue;
      }
      // Far outside the plot the clip hides it; keep the numbers small.
      double Clamped = std::clamp(PY, -Y.Max, 3 * Y.Max);
      D += fmt("%s%.1f %.1f ", Pen ? "L" : "M", px(PX), py(Clamped));
      Pen = true;
    }
    if (D.empty())
      return;
    D.pop_back();
    Drawn.insert(Class);
    OS << "<path class=\"" << Class << "\" clip-path=\"url(#" << Id
       << "-clip)\" d=\"" << D << "\"><title>" << escapeHtml(Tooltip)
       << "</title></path>\n";
  }

  void dot(double VX, double VY, llvm::StringRef Class,
           llvm::StringRef Tooltip) {
    if (!inX(VX))
      return;
    Drawn.insert(Class);
    OS << fmt("<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\">",
              Class.str().c_str(), px(VX), py(VY))
       << "<title>" << escapeHtml(Tooltip) << "</title></circle>\n";
  }

  /// An X with a short label: a run that ran out of memory.
  void cross(double VX, double VY, llvm::StringRef Tooltip) {
    double CX = px(VX), CY = py(VY);
    Drawn.insert("oom");
    OS << "<g class=\"oom\"><title>" << escapeHtml(Tooltip) << "</title>"
       << fmt("<path d=\"M%.1f %.1f l12 12 M%.1f %.1f l-12 12\"/>", CX - 6,
              CY - 6, CX + 6, CY - 6)
       << fmt("<text x=\"%.1f\" y=\"%.1f\">OOM</text></g>\n", CX + 9, CY - 8);
  }

  /// A vertical line at a batch size, labelled in the top margin; Slot
  /// stacks labels so that nearby lines stay readable. Beyond the axis only
  /// the label is drawn, at the right edge with an arrow.
  void vertical(double VX, llvm::StringRef Class, llvm::StringRef Label,
                unsigned Slot) {
    double LabelY = Top - 8 - 15 * Slot;
    if (VX > X.Max) {
      Drawn.insert(Class);
      OS << "<g class=\"marker " << Class << "\">"
         << text(Class, Width - Right, LabelY, "end", (Label + " \u2192").str())
         << "</g>\n";
      return;
    }
    if (!inX(VX))
      return;
    double LX = px(VX);
    Drawn.insert(Class);
    bool NearRight = LX > Width - Right - 140;
    OS << "<g class=\"marker " << Class << "\">"
       << line(Class, LX, LabelY + 4, LX, Height - Bottom)
       << text(Class, LX + (NearRight ? -4 : 4), LabelY,
               NearRight ? "end" : "start", Label)
       << "</g>\n";
  }

  /// A horizontal line across the plot, labelled at the left end (where
  /// memory is lowest, so the label rarely hides a point) above or below it.
  void horizontal(double VY, llvm::StringRef Class, llvm::StringRef Label,
                  bool Below) {
    double LY = py(VY);
    Drawn.insert(Class);
    OS << "<g class=\"level " << Class << "\">"
       << line(Class, Left, LY, Width - Right, LY)
       << text(Class, Left + 6, Below ? LY + 15 : LY - 6, "start", Label)
       << "</g>\n";
  }

  std::string finish() {
    OS << "</svg>\n";
    return std::move(Out);
  }

private:
  static std::string line(llvm::StringRef Class, double X1, double Y1,
                          double X2, double Y2) {
    return fmt("<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
               "y2=\"%.1f\"/>",
               Class.str().c_str(), X1, Y1, X2, Y2);
  }

  static std::string text(llvm::StringRef Class, double TX, double TY,
                          const char *Anchor, llvm::StringRef Text) {
    return fmt("<text class=\"%s\" x=\"%.1f\" y=\"%.1f\" "
               "text-anchor=\"%s\">",
               Class.str().c_str(), TX, TY, Anchor) +
           escapeHtml(Text) + "</text>\n";
  }

  void drawAxes() {
    double X0 = Left, X1 = Width - Right, Y0 = Height - Bottom, Y1 = Top;
    OS << "<g class=\"axes\">\n";
    if (X.Log)
      for (double V : logTicks(X))
        OS << line("grid", px(V), Y0, px(V), Y1)
           << text("tick", px(V), Y0 + 16, "middle",
                   tickLabel(V, std::min(1.0, V)));
    else
      for (double V = 0; V <= X.Max * (1 + 1e-9); V += X.Step)
        OS << line("grid", px(V), Y0, px(V), Y1)
           << text("tick", px(V), Y0 + 16, "middle",
                   tickLabel(V / X.Unit, X.Step / X.Unit));
    for (double V = 0; V <= Y.Max * (1 + 1e-9); V += Y.Step)
      OS << line("grid", X0, py(V), X1, py(V))
         << text("tick", X0 - 6, py(V) + 4, "end",
                 tickLabel(V / Y.Unit, Y.Step / Y.Unit));
    OS << line("axis", X0, Y0, X1, Y0) << line("axis", X0, Y0, X0, Y1)
       << text("axis-title", (X0 + X1) / 2, Height - 12, "middle", X.Title)
       << fmt("<text class=\"axis-title\" transform=\"translate(18 %.1f) "
              "rotate(-90)\" text-anchor=\"middle\">",
              (Y0 + Y1) / 2)
       << escapeHtml(Y.Title) << "</text>\n</g>\n";
  }

  std::string Id;
  Axis X, Y;
  llvm::StringSet<> Drawn; // classes of the marks, for the legend
  std::string Out;
  llvm::raw_string_ostream OS;
};

//===----------------------------------------------------------------------===//
// The page
//===----------------------------------------------------------------------===//

const char *const Style = R"css(
:root { --fg: #1d2430; --muted: #5b6575; --line: #d8dde5; --bg: #ffffff;
  --measured: #1f6fd1; --model: #e07b00; --current: #444c58; --suggested: #1a9a4b;
  --max: #7a3fc4; --capacity: #c62828; --usable: #e57373; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1000px; padding: 24px; color: var(--fg);
  background: var(--bg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI",
  Roboto, "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line);
  padding-bottom: 4px; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas,
  "DejaVu Sans Mono", monospace; font-size: 13px; }
.env { color: var(--muted); margin: 0; }
.missing { color: var(--muted); font-style: italic; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px;
  margin: 0; }
dl.summary dt { color: var(--muted); } dl.summary dd { margin: 0; }
.gain { color: var(--suggested); font-weight: 600; }
figure { margin: 0; }
svg.chart { width: 100%; height: auto; display: block; }
svg text { font-size: 12px; fill: var(--fg); }
.marker text, .level text, .oom text { paint-order: stroke; stroke: #fff;
  stroke-width: 4px; stroke-linejoin: round; }
.grid { stroke: #eef1f5; } .axis { stroke: var(--muted); }
.tick { fill: var(--muted); } .axis-title { font-size: 13px; }
circle.measured { fill: var(--measured); stroke: #fff; stroke-width: 1.5; }
circle.predicted { fill: #fff; stroke: var(--model); stroke-width: 2; }
path.model { fill: none; stroke: var(--model); stroke-width: 2; }
path.band { fill: var(--model); fill-opacity: 0.15; stroke: none; }
.oom path { stroke: var(--capacity); stroke-width: 2.5; }
.oom text { fill: var(--capacity); font-weight: 600; }
.marker line { stroke-width: 1.5; stroke-dasharray: 5 4; }
.marker.current line { stroke: var(--current); }
.marker.current text { fill: var(--current); }
.marker.suggested line { stroke: var(--suggested); }
.marker.suggested text { fill: var(--suggested); font-weight: 600; }
.marker.max line { stroke: var(--max); }
.marker.max text { fill: var(--max); }
line.capacity { stroke: var(--capacity); stroke-width: 2; }
.level.capacity text { fill: var(--capacity); }
line.usable { stroke: var(--usable); stroke-width: 1.5; stroke-dasharray: 8 4; }
.level.usable text { fill: var(--capacity); }
ul.legend { list-style: none; padding: 0; margin: 6px 0 0; display: flex;
  flex-wrap: wrap; gap: 4px 18px; color: var(--muted); font-size: 13px; }
.key { display: inline-block; width: 18px; height: 0; margin-right: 6px;
  vertical-align: middle; border-top: 2px solid; }
.key.dot { width: 10px; height: 10px; border-radius: 50%; border: 0; }
.key.measured { background: var(--measured); }
.key.predicted { background: #fff; border: 2px solid var(--model); }
.key.model { border-color: var(--model); }
.key.band { background: var(--model); opacity: 0.3; border: none; }
.key.current { border-top: 2px dashed var(--current); }
.key.suggested { border-top: 2px dashed var(--suggested); }
.key.max { border-top: 2px dashed var(--max); }
.key.capacity { border-color: var(--capacity); }
.key.usable { border-top: 2px dashed var(--usable); }
.key.oom { border: 0; width: auto; height: auto; vertical-align: baseline;
  color: var(--capacity); font-weight: 700; font-size: 16px; line-height: 1; }
.key.swatch { width: 12px; height: 12px; border: 0; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.share { position: relative; min-width: 90px; }
.share span.bar { position: absolute; left: 0; top: 3px; bottom: 3px;
  background: #dbe8fa; z-index: -1; }
tr.oom-run td { color: var(--capacity); }
ol.findings { padding-left: 20px; }
ol.findings li { margin-bottom: 10px; }
.level-name { font-weight: 700; text-transform: lowercase; }
.level-error { color: #b71c1c; } .level-warning { color: #a15c00; }
.level-remark { color: #1f6fd1; } .level-note { color: var(--muted); }
.fix { margin: 2px 0 0; color: var(--muted); }
.k0 { --k: #4e79a7; } .k1 { --k: #f28e2b; } .k2 { --k: #e15759; }
.k3 { --k: #76b7b2; } .k4 { --k: #59a14f; } .k5 { --k: #edc948; }
.k6 { --k: #b07aa1; } .k7 { --k: #9c755f; } .k8 { --k: #ff9da7; }
rect.kind { fill: var(--k); } .key.swatch { background: var(--k); }
)css";

constexpr unsigned CurveSamples = 160;

class Page {
public:
  explicit Page(const HtmlReportInput &In) : In(In), OS(Out) {}

  std::string render() {
    head();
    header();
    summary();
    throughputChart();
    memoryChart();
    memoryBreakdown();
    layers();
    findings();
    experiments();
    runs();
    OS << "</body>\n</html>\n";
    return std::move(Out);
  }

private:
  llvm::ArrayRef<MeasuredRun> allRuns() const {
    if (!In.Measured)
      return {};
    return In.Measured->Runs;
  }

  bool anyFit() const {
    return llvm::any_of(allRuns(),
                        [](const MeasuredRun &R) { return !R.OutOfMemory; });
  }

  /// The declared size: the model's, else the first run's (Measure runs
  /// the declared size first).
  std::optional<int64_t> currentSize() const {
    if (In.Model && In.Model->CurrentBatchSize > 0)
      return In.Model->CurrentBatchSize;
    if (!allRuns().empty())
      return allRuns().front().BatchSize;
    return std::nullopt;
  }

  const MeasuredRun *runAt(int64_t BatchSize) const {
    for (const MeasuredRun &Run : allRuns())
      if (Run.BatchSize == BatchSize)
        return &Run;
    return nullptr;
  }

  /// The run the breakdown and the layers come from: the current size's,
  /// else the first that fit.
  const MeasuredRun *detailRun() const {
    if (std::optional<int64_t> Current = currentSize())
      if (const MeasuredRun *Run = runAt(*Current); Run && !Run->OutOfMemory)
        return Run;
    for (const MeasuredRun &Run : allRuns())
      if (!Run.OutOfMemory)
        return &Run;
    return nullptr;
  }

  int64_t capacity() const {
    if (In.Model && In.Model->CapacityBytes > 0)
      return In.Model->CapacityBytes;
    return In.Measured ? In.Measured->MemoryCapacityBytes : 0;
  }

  /// The fits the charts draw: a poor one is kept in the model to show its
  /// R² but predicts nothing, so it is not drawn.
  const LinearFit *timeFit() const {
    return In.Model && In.Model->canPredictTime() ? &*In.Model->IterationMs
                                                  : nullptr;
  }
  const LinearFit *memoryFit() const {
    return In.Model && In.Model->canPredictMemory() ? &*In.Model->PeakBytes
                                                    : nullptr;
  }

  std::string whyNoFit(llvm::StringRef Problem) const {
    if (!In.Model)
      return "no model of the runs.";
    return Problem.empty() ? "the model has no fit." : Problem.str();
  }

  void missing(llvm::StringRef Text) {
    OS << "<p class=\"missing\">" << escapeHtml(Text) << "</p>\n";
  }

  void head() {
    std::string Title = In.Title.empty() ? "skyline-check report" : In.Title;
    OS << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
          "charset=\"utf-8\">\n"
       << "<meta name=\"viewport\" content=\"width=device-width, "
          "initial-scale=1\">\n"
       // An empty icon: the browser would otherwise ask for /favicon.ico.
       << "<link rel=\"icon\" href=\"data:,\">\n"
       << "<title>" << escapeHtml(Title) << "</title>\n<style>" << Style
       << "</style>\n</head>\n<body>\n<header id=\"header\">\n<h1>"
       << escapeHtml(Title) << "</h1>\n";
  }

  void header() {
    if (!In.Measured) {
      OS << "<p class=\"env\">Device: not known (the program was not "
            "run).</p>\n"
         << "</header>\n";
      return;
    }
    const Measurement &M = *In.Measured;
    OS << "<p class=\"env\">Device: <span id=\"device\">"
       << escapeHtml(nameOf(M.Device)) << " (" << escapeHtml(M.DeviceName)
       << ")</span> &middot; LibTorch "
       << escapeHtml(M.TorchVersion.empty() ? "version not known"
                                            : M.TorchVersion);
    if (M.Threads > 0)
      OS << " &middot; " << M.Threads
         << (M.Threads == 1 ? " thread" : " threads");
    if (M.MemoryCapacityBytes > 0)
      OS << " &middot; memory capacity " << formatBytes(M.MemoryCapacityBytes);
    OS << "</p>\n</header>\n";
  }

  void item(llvm::StringRef Term, llvm::StringRef Html) {
    OS << "<dt>" << escapeHtml(Term) << "</dt><dd>" << Html << "</dd>\n";
  }

  std::string batchSizeText() const {
    std::string Text;
    if (!In.BatchSizeName.empty())
      Text += "<code>" + escapeHtml(In.BatchSizeName) + "</code> = ";
    std::optional<int64_t> Current = currentSize();
    Text += Current ? groupDigits(*Current) : std::string("not known");
    if (!In.BatchSizeLocation.empty())
      Text += " at <code>" + escapeHtml(In.BatchSizeLocation) + "</code>";
    return Text;
  }

  std::string measuredText() const {
    std::optional<int64_t> Current = currentSize();
    const MeasuredRun *Run = Current ? runAt(*Current) : nullptr;
    if (!Run)
      return "<span class=\"missing\">not measured</span>";
    if (Run->OutOfMemory)
      return "<span class=\"level-error\">ran out of memory</span>";
    return formatRate(Run->Throughput) + " samples/s (" +
           formatMs(Run->IterationMs.Median) + " per iteration, peak " +
           formatBytes(Run->PeakBytes) + ")";
  }

  std::string suggestionText() const {
    if (!In.Model)
      return "<span class=\"missing\">none: no model of the runs</span>";
    if (!In.Model->Suggested) {
      if (In.Model->NoSuggestionReason.empty())
        return "none";
      return "none: " + escapeHtml(In.Model->NoSuggestionReason);
    }
    const Suggestion &S = *In.Model->Suggested;
    return "<strong id=\"suggested-size\">" + groupDigits(S.BatchSize) +
           "</strong>: " + formatRate(S.At.Throughput) +
           " samples/s predicted, <span class=\"gain\">" +
           fmt("%+.1f%%", S.Gain * 100) +
           "</span> over the current size, peak " +
           formatBytes(S.At.PeakBytes) + " predicted";
  }

  std::string maxSizeText() const {
    if (!In.Model)
      return "<span class=\"missing\">not known: no model of the runs</span>";
    if (!In.Model->MaxBatchSize)
      return "<span class=\"missing\">not known" +
             (In.Model->MemoryProblem.empty()
                  ? std::string()
                  : ": " + escapeHtml(In.Model->MemoryProblem)) +
             "</span>";
    std::string Text = "<span id=\"max-size\">" +
                       groupDigits(*In.Model->MaxBatchSize) + "</span>";
    if (In.Model->UsableBytes > 0)
      Text += " (under " + formatBytes(In.Model->UsableBytes) + " usable of " +
              formatBytes(capacity()) + ")";
    return Text;
  }

  static std::string fitText(const std::optional<LinearFit> &Fit,
                             llvm::StringRef Problem) {
    std::string Text;
    if (Fit)
      Text = fmt("R&sup2; %.3f over %u runs", Fit->RSquared, Fit->Points);
    if (Problem.empty())
      return Fit ? Text : "<span class=\"missing\">none</span>";
    return (Fit ? Text + "; " : std::string()) +
           "<span class=\"missing\">cannot predict: " + escapeHtml(Problem) +
           "</span>";
  }

  void summary() {
    OS << "<section id=\"summary\">\n<h2>Summary</h2>\n";
    if (!In.Measured)
      missing("No measurements: the program was not run, so there is nothing "
              "to plot or predict.");
    else if (allRuns().empty())
      missing("No runs were measured.");
    else if (!anyFit())
      missing("Every run ran out of memory; the smallest size tried was " +
              groupDigits(allRuns().front().BatchSize) + ".");
    OS << "<dl class=\"summary\">\n";
    item("Batch size", batchSizeText());
    item("Measured throughput", measuredText());
    item("Suggested batch size", suggestionText());
    item("Largest batch size that fits", maxSizeText());
    if (In.Model) {
      item("Time model", fitText(In.Model->IterationMs, In.Model->TimeProblem));
      item("Memory model",
           fitText(In.Model->PeakBytes, In.Model->MemoryProblem));
    }
    OS << "</dl>\n";
    if (In.Measured && !In.Measured->Problems.empty()) {
      OS << "<ul class=\"problems\">\n";
      for (const std::string &Problem : In.Measured->Problems)
        OS << "<li>" << escapeHtml(Problem) << "</li>\n";
      OS << "</ul>\n";
    }
    OS << "</section>\n";
  }

  /// The largest batch size either chart shows. The largest that fits can
  /// be far beyond the runs (a flat memory line): past four times the other
  /// sizes it is only named at the right edge, so the runs stay readable.
  double batchSizeExtent() const {
    double Max = 0;
    for (const MeasuredRun &Run : allRuns())
      Max = std::max(Max, double(Run.BatchSize));
    if (std::optional<int64_t> Current = currentSize())
      Max = std::max(Max, double(*Current));
    if (In.Model && In.Model->Suggested)
      Max = std::max(Max, double(In.Model->Suggested->BatchSize));
    if (In.Model && In.Model->MaxBatchSize)
      Max = std::max(Max, std::min(double(*In.Model->MaxBatchSize), 4 * Max));
    return Max;
  }

  /// The smallest batch size the charts show: a run's, the current one.
  double smallestBatchSize() const {
    double Min = batchSizeExtent();
    for (const MeasuredRun &Run : allRuns())
      if (Run.BatchSize > 0)
        Min = std::min(Min, double(Run.BatchSize));
    if (std::optional<int64_t> Current = currentSize())
      Min = std::min(Min, double(*Current));
    return Min;
  }

  /// Linear from zero; logarithmic where the sizes span more than 10x (a
  /// sweep from 64 to 100,000 would otherwise crowd every small size
  /// against the axis).
  Axis batchAxis() const {
    double Extent = batchSizeExtent(), Smallest = smallestBatchSize();
    if (Smallest > 0 && Extent > 10 * Smallest)
      return logAxis(Smallest / 1.05, Extent * 1.05, "batch size (log scale)");
    return niceAxis(Extent * 1.05, 1, /*Integer=*/true, "batch size");
  }

  /// The batch sizes curves are sampled at: evenly over a linear axis from
  /// just above zero, in equal ratios over a log one.
  std::vector<double> sampleSizes(const Axis &X) const {
    std::vector<double> Sizes;
    for (unsigned I = 1; I <= CurveSamples; ++I)
      Sizes.push_back(X.Log ? X.Min * std::pow(X.Max / X.Min,
                                               double(I) / CurveSamples)
                            : X.Max * I / CurveSamples);
    return Sizes;
  }

  /// Samples of F over the batch-size axis.
  std::vector<std::pair<double, double>>
  sample(const Axis &X, llvm::function_ref<double(double)> F) const {
    std::vector<std::pair<double, double>> Points;
    for (double B : sampleSizes(X))
      Points.push_back({B, F(B)});
    return Points;
  }

  /// The 90% band of a predicted quantity over the axis.
  void drawBand(Chart &C, const Axis &X,
                llvm::function_ref<Interval(double)> Range,
                llvm::StringRef Tooltip) const {
    std::vector<double> Xs = sampleSizes(X), Low, High;
    for (double B : Xs) {
      Interval R = Range(B);
      Low.push_back(R.Low);
      High.push_back(R.High);
    }
    C.band(Xs, Low, High, "band", Tooltip);
  }

  /// Samples per second the time fit predicts; NaN where it predicts no
  /// positive time.
  /// The model's throughput: its time is piecewise linear through the
  /// measured sizes, not the fitted line.
  double predictedRate(double BatchSize) const {
    double Ms = predictedIterationMs(*In.Model, BatchSize);
    return Ms > 0 ? BatchSize * 1000 / Ms : std::nan("");
  }

  /// Current, suggested and (on the memory chart) the largest size.
  void drawMarkers(Chart &C, bool WithMax) const {
    unsigned Slot = 0;
    if (std::optional<int64_t> Current = currentSize())
      C.vertical(double(*Current), "current",
                 "current " + groupDigits(*Current), Slot++);
    if (In.Model && In.Model->Suggested)
      C.vertical(double(In.Model->Suggested->BatchSize), "suggested",
                 "suggested " + groupDigits(In.Model->Suggested->BatchSize),
                 Slot++);
    if (WithMax && In.Model && In.Model->MaxBatchSize)
      C.vertical(double(*In.Model->MaxBatchSize), "max",
                 "max " + groupDigits(*In.Model->MaxBatchSize), Slot++);
  }

  bool measuredSize(int64_t BatchSize) const {
    return llvm::any_of(allRuns(), [&](const MeasuredRun &R) {
      return R.BatchSize == BatchSize;
    });
  }

  struct LegendKey {
    const char *Drawn; // the chart's class for the mark
    const char *Key;   // the class of the key's swatch
    const char *Text;
  };

  /// Keys for what the chart drew, and only those.
  void legend(const Chart &C, llvm::ArrayRef<LegendKey> Keys) {
    OS << "<ul class=\"legend\">";
    for (const LegendKey &K : Keys)
      if (C.drew(K.Drawn))
        OS << "<li><span class=\"key " << K.Key << "\">"
           << (llvm::StringRef(K.Key) == "oom" ? "&times;" : "") << "</span>"
           << K.Text << "</li>";
    OS << "</ul>\n";
  }

  void throughputChart() {
    OS << "<section>\n<h2>Throughput against batch size</h2>\n"
       << "<figure id=\"throughput-chart\">\n";
    if (!anyFit() && !timeFit()) {
      missing(allRuns().empty()
                  ? "No runs to plot."
                  : "No throughput to plot: every run ran out of memory.");
      OS << "</figure>\n</section>\n";
      return;
    }
    Axis X = batchAxis();
    const LinearFit *Fit = timeFit();
    double YMax = 0;
    for (const MeasuredRun &Run : allRuns())
      if (!Run.OutOfMemory && std::isfinite(Run.Throughput))
        YMax = std::max(YMax, Run.Throughput);
    if (In.Model)
      for (const Prediction &P : In.Model->Predictions)
        if (std::isfinite(P.Throughput) && P.BatchSize <= X.Max)
          YMax = std::max(YMax, P.Throughput);
    if (Fit)
      // Up to the plot's right edge, where the curve is highest unless the
      // fit's intercept is negative; then the clip cuts the spike.
      for (double B : {X.Max, X.Max / 2})
        if (double R = predictedRate(B); std::isfinite(R))
          YMax = std::max(YMax, R);
    Chart C("throughput", "throughput against batch size", X,
            niceAxis(YMax * 1.08, 1, false, "throughput (samples/s)"));
    if (Fit) {
      drawBand(
          C, X,
          [&](double B) {
            Interval Ms = predictedIterationRange(*In.Model, B);
            return Ms.Low > 0 ? Interval{B * 1000 / Ms.High, B * 1000 / Ms.Low}
                              : Interval{std::nan(""), std::nan("")};
          },
          "90% interval of a new run's throughput");
      C.curve(sample(X, [&](double B) { return predictedRate(B); }), "model",
              "model: b / t(b)");
    }
    drawMarkers(C, /*WithMax=*/false);
    if (In.Model)
      for (const Prediction &P : In.Model->Predictions)
        if (!measuredSize(P.BatchSize) && P.Throughput > 0)
          C.dot(double(P.BatchSize), P.Throughput, "predicted",
                "batch size " + groupDigits(P.BatchSize) + ": " +
                    formatRate(P.Throughput) + " samples/s predicted");
    for (const MeasuredRun &Run : allRuns()) {
      if (Run.OutOfMemory)
        C.cross(double(Run.BatchSize), 0,
                "batch size " + groupDigits(Run.BatchSize) + ": out of memory");
      else
        C.dot(double(Run.BatchSize), Run.Throughput, "measured",
              "batch size " + groupDigits(Run.BatchSize) + ": " +
                  formatRate(Run.Throughput) + " samples/s measured");
    }
    OS << C.finish();
    legend(C,
           {{"measured", "dot measured", "measured"},
            {"model", "model",
             "predicted: b / t(b), t through the measured times"},
            {"band", "band", "90% interval of a new run"},
            {"predicted", "dot predicted", "predicted at a size of interest"},
            {"current", "current", "current size"},
            {"suggested", "suggested", "suggested size"},
            {"oom", "oom", "ran out of memory"}});
    if (!Fit)
      missing("No throughput curve: " +
              whyNoFit(In.Model ? In.Model->TimeProblem : ""));
    OS << "</figure>\n</section>\n";
  }

  void memoryChart() {
    OS << "<section>\n<h2>Peak memory against batch size</h2>\n"
       << "<figure id=\"memory-chart\">\n";
    int64_t Capacity = capacity();
    if (allRuns().empty() && !memoryFit()) {
      missing("No runs to plot.");
      OS << "</figure>\n</section>\n";
      return;
    }
    Axis X = batchAxis();
    const LinearFit *Fit = memoryFit();
    double YMax = double(Capacity);
    for (const MeasuredRun &Run : allRuns())
      YMax = std::max(YMax, double(Run.PeakBytes));
    // Not the fit at the right edge: past the capacity it would only squeeze
    // the part that matters; the clip cuts the line at the top.
    if (In.Model)
      for (const Prediction &P : In.Model->Predictions)
        if (P.BatchSize <= X.Max)
          YMax = std::max(YMax, double(P.PeakBytes));
    YMax *= 1.12;
    auto [Unit, UnitName] = byteUnit(YMax);
    Chart C("memory", "peak memory against batch size", X,
            niceAxis(YMax, Unit, false,
                     std::string("peak memory (") + UnitName + ")"));
    if (Fit && In.Model->canPredictMemory())
      drawBand(
          C, X,
          [&](double B) {
            return predictedPeakRange(*In.Model, std::max<int64_t>(
                                                     1, std::llround(B)));
          },
          "90% interval of a new run's peak");
    if (Fit)
      C.curve(sample(X, [&](double B) { return Fit->at(B); }), "model",
              "model: " + formatBytes(int64_t(Fit->Intercept)) + " + " +
                  formatBytes(int64_t(Fit->Slope)) + " per sample");
    if (Capacity > 0)
      C.horizontal(double(Capacity), "capacity",
                   "capacity " + formatBytes(Capacity), /*Below=*/false);
    if (In.Model && In.Model->UsableBytes > 0 && Capacity > 0)
      C.horizontal(double(In.Model->UsableBytes), "usable",
                   "usable " + formatBytes(In.Model->UsableBytes) + " (less " +
                       formatPercent(1 - double(In.Model->UsableBytes) /
                                             double(Capacity)) +
                       " margin)",
                   /*Below=*/true);
    drawMarkers(C, /*WithMax=*/true);
    if (In.Model)
      for (const Prediction &P : In.Model->Predictions)
        if (!measuredSize(P.BatchSize) && P.PeakBytes > 0)
          C.dot(double(P.BatchSize), double(P.PeakBytes), "predicted",
                "batch size " + groupDigits(P.BatchSize) + ": " +
                    formatBytes(P.PeakBytes) + " predicted");
    for (const MeasuredRun &Run : allRuns()) {
      if (Run.OutOfMemory)
        // It stopped when it crossed the capacity: mark it there.
        C.cross(double(Run.BatchSize),
                double(Capacity > 0 ? Capacity : Run.PeakBytes),
                "batch size " + groupDigits(Run.BatchSize) + ": out of memory");
      else
        C.dot(double(Run.BatchSize), double(Run.PeakBytes), "measured",
              "batch size " + groupDigits(Run.BatchSize) + ": " +
                  formatBytes(Run.PeakBytes) + " peak measured");
    }
    OS << C.finish();
    legend(C,
           {{"measured", "dot measured", "measured peak"},
            {"model", "model", "memory fit"},
            {"band", "band", "90% interval of a new run's peak"},
            {"predicted", "dot predicted", "predicted at a size of interest"},
            {"capacity", "capacity", "capacity"},
            {"usable", "usable", "usable (capacity less the margin)"},
            {"current", "current", "current"},
            {"suggested", "suggested", "suggested"},
            {"max", "max", "largest that fits"},
            {"oom", "oom", "ran out of memory"}});
    if (Capacity <= 0)
      missing("The memory capacity is not known; no capacity line.");
    if (!Fit)
      missing("No memory fit: " +
              whyNoFit(In.Model ? In.Model->MemoryProblem : ""));
    OS << "</figure>\n</section>\n";
  }

  void memoryBreakdown() {
    OS << "<section id=\"memory-breakdown\">\n<h2>Memory at the peak, by "
          "kind</h2>\n";
    const MeasuredRun *Run = detailRun();
    int64_t Total = 0;
    if (Run)
      for (const auto &Entry : Run->Memory)
        Total += std::max<int64_t>(0, Entry.second);
    if (!Run || Total <= 0) {
      missing(Run ? "No breakdown was recorded." : "No run fit in memory.");
      OS << "</section>\n";
      return;
    }
    OS << "<p>At batch size " << groupDigits(Run->BatchSize) << ": "
       << formatBytes(Total) << " in all.</p>\n"
       << "<svg class=\"chart\" viewBox=\"0 0 " << Width
       << " 40\" role=\"img\" aria-label=\"memory by kind\" "
          "xmlns=\"http://www.w3.org/2000/svg\">\n";
    double X = 0;
    unsigned Index = 0;
    for (const auto &[Kind, Bytes] : Run->Memory) {
      double W = double(std::max<int64_t>(0, Bytes)) / double(Total) * Width;
      OS << fmt("<rect class=\"kind k%u\" x=\"%.1f\" y=\"4\" width=\"%.1f\" "
                "height=\"32\">",
                Index++ % 9, X, W)
         << "<title>" << escapeHtml(nameOf(Kind)) << ": " << formatBytes(Bytes)
         << "</title></rect>\n";
      X += W;
    }
    OS << "</svg>\n<table class=\"breakdown\">\n<tr><th>kind</th><th "
          "class=\"num\">bytes</th><th class=\"num\">share</th></tr>\n";
    Index = 0;
    for (const auto &[Kind, Bytes] : Run->Memory)
      OS << "<tr><td><span class=\"key swatch k" << Index++ % 8 << "\"></span>"
         << escapeHtml(nameOf(Kind)) << "</td><td class=\"num\">"
         << formatBytes(Bytes) << "</td><td class=\"num\">"
         << formatPercent(double(std::max<int64_t>(0, Bytes)) / double(Total))
         << "</td></tr>\n";
    OS << "</table>\n";
    setupStatements(*Run, Total);
    OS << "</section>\n";
  }

  /// The setup kind by statement: what each statement before the training
  /// loop made and the peak still held (a dataset, a cache), by its line.
  void setupStatements(const MeasuredRun &Run, int64_t Total) {
    if (Run.SetupStatements.empty())
      return;
    OS << "<p>Made before training and held at the peak, by the statement "
          "before the loop that made it (weights left out):</p>\n"
       << "<table class=\"setup-statements\">\n<tr><th>statement</th><th>"
          "where</th><th class=\"num\">bytes</th><th class=\"num\">share"
          "</th></tr>\n";
    for (const SetupMeasure &Setup : Run.SetupStatements)
      OS << "<tr><td><code>" << escapeHtml(Setup.Text) << "</code></td><td>"
         << escapeHtml(Setup.File) << ":" << Setup.Line
         << "</td><td class=\"num\">" << formatBytes(Setup.Bytes)
         << "</td><td class=\"num\">"
         << formatPercent(double(std::max<int64_t>(0, Setup.Bytes)) /
                          double(Total))
         << "</td></tr>\n";
    OS << "</table>\n";
  }

  void layers() {
    OS << "<section>\n<h2>Time by layer</h2>\n";
    const MeasuredRun *Run = detailRun();
    if (!Run || Run->Layers.empty()) {
      OS << "<div id=\"layers\">";
      missing(Run ? "No per-layer times were recorded at batch size " +
                        groupDigits(Run->BatchSize) + "."
                  : std::string("No per-layer times: no run fit in memory."));
      OS << "</div>\n</section>\n";
      return;
    }
    std::vector<const LayerMeasure *> Rows;
    for (const LayerMeasure &Layer : Run->Layers)
      Rows.push_back(&Layer);
    std::stable_sort(
        Rows.begin(), Rows.end(), [](const auto *A, const auto *B) {
          return A->ForwardMs + A->BackwardMs > B->ForwardMs + B->BackwardMs;
        });
    bool Gpu = llvm::any_of(Rows, [](const auto *L) { return L->GpuMs >= 0; });
    double Iteration = Run->IterationMs.Median;
    OS << "<p>At batch size " << groupDigits(Run->BatchSize)
       << ", self time per iteration of " << formatMs(Iteration)
       << ", slowest first.</p>\n<table id=\"layers\">\n<tr><th>layer</th>"
          "<th>type</th><th>location</th><th class=\"num\">forward ms</th>"
          "<th class=\"num\">backward ms</th>"
       << (!Gpu ? ""
           : Run->GpuMsSource == GpuTimeSource::CudaEvents
               ? "<th class=\"num\">GPU ms "
                 "(CUDA events)</th>"
               : "<th class=\"num\">GPU ms</th>")
       << "<th class=\"num\">share of iteration</th><th "
          "class=\"num\">activations</th><th class=\"num\">weights</th></tr>\n";
    for (const LayerMeasure *L : Rows) {
      OS << "<tr><td>"
         << (L->Name.empty() ? std::string("(unscoped)") : escapeHtml(L->Name))
         << "</td><td><code>" << escapeHtml(L->Type) << "</code></td><td>";
      if (!L->File.empty())
        OS << "<code>" << escapeHtml(L->File) << ":" << L->Line << "</code>";
      OS << "</td><td class=\"num\">" << fmt("%.3f", L->ForwardMs)
         << "</td><td class=\"num\">" << fmt("%.3f", L->BackwardMs) << "</td>";
      if (Gpu)
        OS << "<td class=\"num\">"
           << (L->GpuMs >= 0 ? fmt("%.3f", L->GpuMs) : std::string("&ndash;"))
           << "</td>";
      OS << "<td class=\"num share\">";
      if (Iteration > 0) {
        double Share = (L->ForwardMs + L->BackwardMs) / Iteration;
        OS << fmt("<span class=\"bar\" style=\"width:%.1f%%\"></span>",
                  std::clamp(Share, 0.0, 1.0) * 100)
           << formatPercent(Share);
      } else {
        OS << "&ndash;";
      }
      OS << "</td><td class=\"num\">" << formatBytes(L->ActivationBytes)
         << "</td><td class=\"num\">" << formatBytes(L->WeightBytes)
         << "</td></tr>\n";
    }
    OS << "</table>\n</section>\n";
  }

  static std::string location(const SourceSpan &At) {
    if (At.File.empty())
      return "";
    std::string Text = At.File;
    if (At.Line)
      Text += ":" + std::to_string(At.Line);
    if (At.Line && At.Column)
      Text += ":" + std::to_string(At.Column);
    return Text;
  }

  void findings() {
    OS << "<section>\n<h2>Findings</h2>\n";
    if (In.Findings.empty()) {
      OS << "<div id=\"findings\">";
      missing("No findings.");
      OS << "</div>\n</section>\n";
      return;
    }
    OS << "<ol id=\"findings\" class=\"findings\">\n";
    for (const Finding &F : In.Findings) {
      const char *Level = diagLevelName(F.Level);
      OS << "<li><span class=\"level-name level-" << Level << "\">" << Level
         << "</span> <code class=\"rule\">[" << escapeHtml(F.Rule)
         << "]</code>";
      if (std::string Where = location(F.At); !Where.empty())
        OS << " <code class=\"loc\">" << escapeHtml(Where) << "</code>";
      OS << "<div class=\"message\">" << escapeHtml(F.Message) << "</div>";
      for (const TextEdit &Edit : F.Edits)
        OS << "<p class=\"fix\">" << (F.OptionalFix ? "optional fix" : "fix")
           << (Edit.Range.Length == 0 && !Edit.Range.File.empty()
                   ? ": insert <code>"
                   : ": replace with <code>")
           << escapeHtml(Edit.Text) << "</code>"
           << (Edit.Range.File.empty()
                   ? std::string()
                   : " at <code>" + escapeHtml(location(Edit.Range)) +
                         "</code>")
           << "</p>";
      OS << "</li>\n";
    }
    OS << "</ol>\n</section>\n";
  }

  /// A paired trial's peaks, after its verdict: it compares memory too.
  static std::string pairedPeaks(const TrialRun &Trial,
                                 const TrialEffect &Effect) {
    if (!Trial.paired())
      return "";
    return " (peak " + formatBytes(Effect.TrialPeakBytes) + " against " +
           formatBytes(Effect.BaselinePeakBytes) + ")";
  }

  /// Every trial, whatever its verdict: the findings hold only the ones
  /// faster or worth a note, and this says what was tried.
  void experiments() {
    if (!In.Measured || In.Measured->Trials.empty())
      return;
    const Measurement &M = *In.Measured;
    OS << "<section>\n<h2>Experiments</h2>\n<table id=\"experiments\">\n"
          "<tr><th>experiment</th><th>setting</th><th class=\"num\">batch "
          "size</th><th class=\"num\">trial ms</th><th class=\"num\">"
          "baseline ms</th><th class=\"num\">throughput (90% interval)</th>"
          "<th>verdict</th></tr>\n";
    for (const TrialRun &Trial : M.Trials) {
      TrialEffect Effect = trialEffect(M, trialBaseline(M, Trial), Trial);
      OS << "<tr><td>" << escapeHtml(Trial.Experiment) << "</td><td>"
         << escapeHtml(Trial.Setting) << "</td><td class=\"num\">"
         << groupDigits(Trial.BatchSize) << "</td>";
      if (Effect.Verdict == TrialVerdict::Failed ||
          Effect.Verdict == TrialVerdict::NotTried)
        OS << "<td class=\"num\">&ndash;</td><td class=\"num\">&ndash;</td>"
              "<td class=\"num\">&ndash;</td><td>"
           << verdictName(Effect.Verdict) << ": "
           << escapeHtml(Effect.Verdict == TrialVerdict::Failed ? Trial.Problem
                                                                : Trial.NotTried)
           << "</td></tr>\n";
      else
        OS << "<td class=\"num\">" << fmt("%.3f", Effect.TrialMs)
           << "</td><td class=\"num\">" << fmt("%.3f", Effect.BaselineMs)
           << "</td><td class=\"num\">"
           << fmt("%+.1f%% (%.1f%% to %.1f%%)", Effect.Gain * 100,
                  Effect.Range.Low * 100, Effect.Range.High * 100)
           << "</td><td>" << verdictName(Effect.Verdict)
           << pairedPeaks(Trial, Effect) << "</td></tr>\n";
    }
    OS << "</table>\n</section>\n";
  }

  void runs() {
    OS << "<section>\n<h2>Measured runs</h2>\n";
    if (allRuns().empty()) {
      OS << "<div id=\"runs\">";
      missing(In.Measured ? "No runs were measured."
                          : "No runs: the program was not run.");
      OS << "</div>\n</section>\n";
      return;
    }
    OS << "<table id=\"runs\">\n<tr><th class=\"num\">batch size</th>"
          "<th>result</th><th class=\"num\">iterations</th><th "
          "class=\"num\">iteration ms (median &plusmn; sd)</th><th "
          "class=\"num\">samples/s</th><th class=\"num\">peak memory</th><th "
          "class=\"num\">wall s</th></tr>\n";
    for (const MeasuredRun &Run : allRuns()) {
      OS << (Run.OutOfMemory ? "<tr class=\"oom-run\">" : "<tr>")
         << "<td class=\"num\">" << groupDigits(Run.BatchSize) << "</td><td>"
         << (Run.OutOfMemory ? "out of memory" : "ok") << "</td>";
      if (Run.OutOfMemory)
        OS << "<td class=\"num\">&ndash;</td><td class=\"num\">&ndash;</td>"
           << "<td class=\"num\">&ndash;</td>";
      else
        OS << "<td class=\"num\">" << Run.Iterations
           << "</td><td class=\"num\">"
           << fmt("%.2f &plusmn; %.2f", Run.IterationMs.Median,
                  Run.IterationMs.Stddev)
           << "</td><td class=\"num\">" << formatRate(Run.Throughput)
           << "</td>";
      OS << "<td class=\"num\">"
         << (Run.PeakBytes > 0 ? formatBytes(Run.PeakBytes)
                               : std::string("&ndash;"))
         << "</td><td class=\"num\">" << fmt("%.1f", Run.WallSeconds)
         << "</td></tr>\n";
    }
    OS << "</table>\n</section>\n";
  }

  const HtmlReportInput &In;
  std::string Out;
  llvm::raw_string_ostream OS;
};

} // namespace

std::string renderHtmlReport(const HtmlReportInput &In) {
  return Page(In).render();
}

} // namespace skyline
