// The --html page from hand-built runs and model: what it shows, what it
// escapes, what it says when data is missing, and that Chromium renders it
// without a console message or a network request.

#include "skyline/HtmlReport.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <cstdlib>
#include <regex>
#include <sys/wait.h>

using namespace skyline;

namespace {

constexpr int64_t MiB = int64_t(1) << 20;
constexpr int64_t GiB = int64_t(1) << 30;

MeasuredRun fitRun(int64_t BatchSize, double Ms, int64_t Peak) {
  MeasuredRun Run;
  Run.BatchSize = BatchSize;
  Run.Iterations = 8;
  Run.IterationMs.Median = Ms;
  Run.IterationMs.Stddev = 1.25;
  Run.Throughput = double(BatchSize) * 1000 / Ms;
  Run.PeakBytes = Peak;
  Run.WallSeconds = 3.5;
  return Run;
}

LayerMeasure layer(int Scope, std::string Name, std::string Type, unsigned Line,
                   double Forward, double Backward) {
  LayerMeasure L;
  L.Scope = Scope;
  L.Name = std::move(Name);
  L.Type = std::move(Type);
  L.File = Line ? "train.cpp" : "";
  L.Line = Line;
  L.ForwardMs = Forward;
  L.BackwardMs = Backward;
  L.ActivationBytes = 300 * MiB;
  L.WeightBytes = 12 * MiB;
  return L;
}

/// 32 and 64 fit (t = 10 + 0.9375 b ms, peak = 0.5 GiB + 48 MiB b), 256
/// ran out of memory; 128 is suggested, 136 is the largest that fits.
Measurement measurement() {
  Measurement M;
  M.Device = DeviceType::CUDA;
  M.DeviceName = "NVIDIA H200";
  M.TorchVersion = "2.11.0";
  M.Threads = 8;
  M.MemoryCapacityBytes = 8 * GiB;
  MeasuredRun First = fitRun(32, 40, 2 * GiB);
  First.Memory = {{MemoryKind::Weights, 256 * MiB},
                  {MemoryKind::Gradients, 256 * MiB},
                  {MemoryKind::OptimizerState, 512 * MiB},
                  {MemoryKind::Activations, 900 * MiB},
                  {MemoryKind::Data, 24 * MiB},
                  {MemoryKind::Temporaries, 64 * MiB},
                  {MemoryKind::Untracked, 36 * MiB}};
  First.Layers = {layer(1, "head<&>", "torch::nn::Linear", 31, 2, 3),
                  layer(-1, "", "", 0, 1, 0.5),
                  layer(0, "conv1", "torch::nn::Conv2d", 20, 8, 12)};
  M.Runs.push_back(std::move(First));
  M.Runs.push_back(fitRun(64, 70, 3584 * MiB));
  MeasuredRun Oom;
  Oom.BatchSize = 256;
  Oom.OutOfMemory = true;
  Oom.WallSeconds = 1.5;
  M.Runs.push_back(Oom);
  return M;
}

Prediction predict(int64_t BatchSize) {
  Prediction P;
  P.BatchSize = BatchSize;
  P.IterationMs = 10 + 0.9375 * double(BatchSize);
  P.Throughput = double(BatchSize) * 1000 / P.IterationMs;
  P.PeakBytes = GiB / 2 + 48 * MiB * BatchSize;
  P.Fits = true;
  P.Extrapolated = BatchSize > 64;
  return P;
}

Analysis analysis() {
  Analysis A;
  A.CurrentBatchSize = 32;
  A.CapacityBytes = 8 * GiB;
  A.UsableBytes = int64_t(0.9 * double(8 * GiB));
  A.IterationMs = LinearFit{10, 0.9375, 1, {0, 0}, 2};
  A.PeakBytes = LinearFit{double(GiB / 2), double(48 * MiB), 1, {0, 0}, 2};
  A.FirstOutOfMemory = 256;
  A.MaxBatchSize = 136;
  A.Current = predict(32);
  Suggestion S;
  S.BatchSize = 128;
  S.At = predict(128);
  S.Gain = S.At.Throughput / 800 - 1;
  A.Suggested = S;
  for (int64_t B : {32, 64, 128, 136})
    A.Predictions.push_back(predict(B));
  return A;
}

std::vector<Finding> findings() {
  Finding Batch;
  Batch.Rule = "skyline-batch-size";
  Batch.Message =
      "batch size 32 leaves 23% on the table; <script>alert(1)</script> & co";
  Batch.At = {"train.cpp", 12, 30, 200, 2};
  Batch.Edits.push_back({Batch.At, "128"});
  Finding Rate;
  Rate.Rule = "skyline-batch-size";
  Rate.Level = DiagLevel::Note;
  Rate.Message = "scale the learning rate with the batch size";
  Rate.At = {"train.cpp", 40, 7, 900, 4};
  Rate.Edits.push_back({Rate.At, "4e-3"});
  Rate.OptionalFix = true;
  Finding Hot;
  Hot.Rule = "skyline-hot-layer";
  Hot.Level = DiagLevel::Remark;
  Hot.Message = "layer 'conv1' takes \"50%\" of the iteration";
  Hot.At = {"train.cpp", 20, 5, 400, 5};
  Finding Gate;
  Gate.Rule = "skyline-regression";
  Gate.Level = DiagLevel::Error;
  Gate.Message = "throughput fell by 12%";
  return {Batch, Rate, Hot, Gate};
}

struct Fixture {
  Measurement M = measurement();
  Analysis A = analysis();
  std::vector<Finding> F = findings();
  HtmlReportInput input() const {
    HtmlReportInput In;
    In.Title = "skyline-check: train.cpp";
    In.BatchSizeName = "kBatchSize";
    In.BatchSizeLocation = "train.cpp:12";
    In.Measured = &M;
    In.Model = &A;
    In.Findings = F;
    return In;
  }
};

bool has(const std::string &Page, llvm::StringRef Text) {
  return Page.find(Text.str()) != std::string::npos;
}

const char *const Ids[] = {
    "summary", "throughput-chart", "memory-chart", "memory-breakdown",
    "layers",  "findings",         "runs"};

void expectIds(const std::string &Page) {
  for (const char *Id : Ids)
    EXPECT_TRUE(has(Page, std::string("id=\"") + Id + "\"")) << Id;
}

void expectWholePage(const std::string &Page) {
  EXPECT_EQ(Page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(llvm::StringRef(Page).ends_with("</html>\n"));
  expectIds(Page);
}

TEST(HtmlReportTest, FormatsBytes) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(12 * 1024), "12.0 KiB");
  EXPECT_EQ(formatBytes(200 * MiB), "200 MiB");
  EXPECT_EQ(formatBytes(3 * GiB / 2), "1.50 GiB");
  EXPECT_EQ(formatBytes(-2 * MiB), "-2.00 MiB");
}

TEST(HtmlReportTest, FormatsShares) {
  EXPECT_EQ(formatShare(0.0412), "4.1%");
  EXPECT_EQ(formatShare(0.372), "37%");
  EXPECT_EQ(formatShareRange(-0.088, 0.114), "-8.8% to 11%");
  // An extrapolation's interval end: "far", not 31 digits of it.
  EXPECT_EQ(formatShare(99.99), "9999%");
  EXPECT_EQ(formatShare(5.76e28), "over 10000%");
  EXPECT_EQ(formatShareRange(-1, 1e30), "-100% to over 10000%");
  EXPECT_EQ(formatFarShare(-100), "under -10000%");
  EXPECT_FALSE(formatFarShare(0.5));
}

TEST(HtmlReportTest, EscapesText) {
  EXPECT_EQ(escapeHtml("<a href=\"x\">Tom's & co</a>"),
            "&lt;a href=&quot;x&quot;&gt;Tom&#39;s &amp; co&lt;/a&gt;");
}

TEST(HtmlReportTest, ShowsRunsModelAndFindings) {
  Fixture X;
  std::string Page = renderHtmlReport(X.input());
  expectWholePage(Page);

  // Header and summary.
  EXPECT_TRUE(has(Page, "<title>skyline-check: train.cpp</title>"));
  EXPECT_TRUE(has(Page, "cuda (NVIDIA H200)"));
  EXPECT_TRUE(has(Page, "LibTorch 2.11.0 &middot; 8 threads"));
  EXPECT_TRUE(
      has(Page, "<code>kBatchSize</code> = 32 at <code>train.cpp:12</code>"));
  EXPECT_TRUE(
      has(Page, "800.0 samples/s (40.00 ms per iteration, peak 2.00 GiB)"));
  EXPECT_TRUE(
      has(Page, "<strong id=\"suggested-size\">128</strong>: 984.6 samples/s"));
  EXPECT_TRUE(has(Page, "+23.1%"));
  EXPECT_TRUE(has(Page, "<span id=\"max-size\">136</span>"));

  // Charts: the model curves, the markers, the capacity and usable lines,
  // the run that ran out of memory.
  EXPECT_TRUE(has(Page, "<path class=\"model\""));
  EXPECT_TRUE(has(Page, "<line class=\"capacity\""));
  EXPECT_TRUE(has(Page, "capacity 8.00 GiB"));
  EXPECT_TRUE(has(Page, "<line class=\"usable\""));
  EXPECT_TRUE(has(Page, "usable 7.20 GiB (less 10.0% margin)"));
  EXPECT_TRUE(has(Page, ">current 32</text>"));
  EXPECT_TRUE(has(Page, ">suggested 128</text>"));
  EXPECT_TRUE(has(Page, ">max 136</text>"));
  EXPECT_TRUE(has(Page, "batch size 256: out of memory"));
  EXPECT_TRUE(has(Page, "batch size 64: 914.3 samples/s measured"));
  EXPECT_TRUE(has(Page, "peak memory (GiB)"));
  EXPECT_TRUE(has(Page, "suggested size</li>"));
  EXPECT_TRUE(has(Page, "largest that fits</li>"));

  // The breakdown and the layers at the current size, slowest first.
  EXPECT_TRUE(has(Page, "optimizer_state</td><td class=\"num\">512 MiB</td>"
                        "<td class=\"num\">25.0%</td>"));
  size_t Conv = Page.find("<tr><td>conv1</td>");
  size_t Head = Page.find("<tr><td>head&lt;&amp;&gt;</td>");
  size_t Unscoped = Page.find("<tr><td>(unscoped)</td>");
  ASSERT_NE(Conv, std::string::npos);
  ASSERT_NE(Head, std::string::npos);
  ASSERT_NE(Unscoped, std::string::npos);
  EXPECT_LT(Conv, Head);
  EXPECT_LT(Head, Unscoped);
  EXPECT_TRUE(has(Page, "<code>train.cpp:20</code>"));
  EXPECT_TRUE(has(Page, "50.0%"));

  // Findings, escaped.
  EXPECT_FALSE(has(Page, "<script"));
  EXPECT_TRUE(has(Page, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co"));
  EXPECT_TRUE(has(Page, "layer &#39;conv1&#39; takes &quot;50%&quot;"));
  EXPECT_TRUE(has(
      Page, "[skyline-batch-size]</code> <code class=\"loc\">train.cpp:12:30"));
  EXPECT_TRUE(has(Page, "fix: replace with <code>128</code>"));
  EXPECT_TRUE(has(Page, "optional fix: replace with <code>4e-3</code>"));
  EXPECT_TRUE(has(Page, "[skyline-regression]</code><div class=\"message\">"));

  // Runs.
  EXPECT_TRUE(has(Page, "<td class=\"num\">70.00 &plusmn; 1.25</td>"));
  EXPECT_TRUE(has(Page, "<tr class=\"oom-run\"><td class=\"num\">256</td>"));
}

TEST(HtmlReportTest, ListsEveryTrialWithItsVerdict) {
  // Baseline 3.6 ms at 16, one run: s is the assumed 5%, t = 1.645. A trial
  // at 2.4 ms: +50.0%, exp(ln 1.5 -+ 1.645 x 0.05 x sqrt 2) - 1 = 33.5% to
  // 68.5%; one that failed says why. An insertion is said as one.
  Measurement M;
  MeasuredRun Run;
  Run.BatchSize = 16;
  Run.Iterations = 8;
  Run.IterationMs.Median = 3.6;
  Run.Throughput = 4444.4;
  M.Runs = {Run};
  TrialRun Faster{"loader-workers", "1 loader worker <&>", 1, 16, {2.4}, 2.4,
                  0, ""};
  TrialRun Failed{"threads", "1 intra-op thread", 1, 16, {}, 0, 0,
                  "it crashed"};
  M.Trials = {Faster, Failed};
  Finding F;
  F.Rule = "skyline-experiment-loader-workers";
  F.Message = "experiment loader-workers";
  F.Edits = {{{"train.cpp", 8, 73, 263, 0}, ".workers(1)"}};
  std::vector<Finding> Findings{F};
  HtmlReportInput In;
  In.Title = "skyline-check: train.cpp";
  In.Measured = &M;
  In.Findings = Findings;
  std::string Page = renderHtmlReport(In);
  expectWholePage(Page);
  EXPECT_TRUE(has(Page, "<h2>Experiments</h2>"));
  EXPECT_TRUE(has(Page, "<tr><td>loader-workers</td><td>1 loader worker "
                        "&lt;&amp;&gt;</td><td class=\"num\">16</td><td "
                        "class=\"num\">2.400</td><td class=\"num\">3.600</td>"
                        "<td class=\"num\">+50.0% (33.5% to 68.5%)</td>"
                        "<td>faster</td></tr>"));
  EXPECT_TRUE(has(Page, "<tr><td>threads</td><td>1 intra-op thread</td><td "
                        "class=\"num\">16</td><td class=\"num\">&ndash;</td>"
                        "<td class=\"num\">&ndash;</td><td class=\"num\">"
                        "&ndash;</td><td>failed: it crashed</td></tr>"));
  EXPECT_TRUE(has(Page, "fix: insert <code>.workers(1)</code> at "
                        "<code>train.cpp:8:73</code>"));
  // A paired trial (no-grad-eval) compares its own passes, and says its
  // peaks: 3 pairs, each 10 against 9 ms, so no spread: +11.1% exactly.
  TrialRun Paired{"no-grad-eval", "torch::NoGradGuard", 1, 16, {9}, 9,
                  12 << 20, ""};
  Paired.BaselineSamplesMs = {10, 10, 10};
  Paired.TrialSamplesMs = {9, 9, 9};
  Paired.BaselinePeakBytes = 30 << 20;
  M.Trials = {Paired};
  EXPECT_TRUE(has(renderHtmlReport(In),
                  "<td class=\"num\">9.000</td><td class=\"num\">10.000</td>"
                  "<td class=\"num\">+11.1% (11.1% to 11.1%)</td><td>faster "
                  "(peak 12.0 MiB against 30.0 MiB)</td></tr>"));
  // No trials: no section.
  M.Trials.clear();
  EXPECT_FALSE(has(renderHtmlReport(In), "<h2>Experiments</h2>"));
}

TEST(HtmlReportTest, MakesNoNetworkReference) {
  Fixture X;
  std::string Page = renderHtmlReport(X.input());
  std::regex Resource(R"((src|href|srcset)\s*=\s*["']?\s*(https?:)?//)",
                      std::regex::icase);
  std::regex Url(R"(url\(\s*["']?\s*(https?:)?//|@import)", std::regex::icase);
  EXPECT_FALSE(std::regex_search(Page, Resource));
  EXPECT_FALSE(std::regex_search(Page, Url));
  // The only absolute URL is the SVG namespace, a name and no request.
  std::string Rest = Page;
  for (size_t At; (At = Rest.find("xmlns=\"http://www.w3.org/2000/svg\"")) !=
                  std::string::npos;)
    Rest.erase(At, 34);
  EXPECT_FALSE(has(Rest, "http://"));
  EXPECT_FALSE(has(Rest, "https://"));
}

TEST(HtmlReportTest, IsDeterministic) {
  Fixture X;
  EXPECT_EQ(renderHtmlReport(X.input()), renderHtmlReport(X.input()));
}

TEST(HtmlReportTest, SaysWhatIsMissingWithoutAnything) {
  HtmlReportInput In;
  std::string Page = renderHtmlReport(In);
  expectWholePage(Page);
  EXPECT_TRUE(has(Page, "<title>skyline-check report</title>"));
  EXPECT_TRUE(has(Page, "No measurements: the program was not run"));
  EXPECT_TRUE(has(Page, "No runs to plot."));
  EXPECT_TRUE(has(Page, "No findings."));
  EXPECT_TRUE(has(Page, "none: no model of the runs"));
  EXPECT_FALSE(has(Page, "<svg"));
}

TEST(HtmlReportTest, SaysWhatIsMissingWithoutRuns) {
  Measurement M;
  HtmlReportInput In;
  In.Measured = &M;
  std::string Page = renderHtmlReport(In);
  expectWholePage(Page);
  EXPECT_TRUE(has(Page, "No runs were measured."));
  EXPECT_TRUE(has(Page, "LibTorch version not known"));
}

TEST(HtmlReportTest, OneRunHasNoModel) {
  Measurement M = measurement();
  M.Runs.resize(1);
  Analysis A;
  A.CurrentBatchSize = 32;
  A.CapacityBytes = 8 * GiB;
  A.UsableBytes = 7 * GiB;
  A.TimeProblem = "only one batch size fit in memory";
  A.MemoryProblem = "only one batch size fit in memory";
  A.NoSuggestionReason = "no time model";
  HtmlReportInput In;
  In.Measured = &M;
  In.Model = &A;
  std::string Page = renderHtmlReport(In);
  expectWholePage(Page);
  EXPECT_TRUE(
      has(Page, "No throughput curve: only one batch size fit in memory"));
  EXPECT_TRUE(has(Page, "No memory fit: only one batch size fit in memory"));
  EXPECT_TRUE(has(Page, "none: no time model"));
  EXPECT_FALSE(has(Page, "class=\"model\""));
  // The legends list only what the charts drew.
  EXPECT_FALSE(has(Page, "suggested size</li>"));
  EXPECT_FALSE(has(Page, "memory fit</li>"));
  EXPECT_TRUE(has(Page, "current size</li>"));
  EXPECT_TRUE(has(Page, "<circle class=\"measured\""));
  EXPECT_TRUE(has(Page, "<line class=\"capacity\""));
}

TEST(HtmlReportTest, AllRunsOutOfMemory) {
  Measurement M = measurement();
  M.Runs.erase(M.Runs.begin(), M.Runs.begin() + 2);
  HtmlReportInput In;
  In.Measured = &M;
  std::string Page = renderHtmlReport(In);
  expectWholePage(Page);
  EXPECT_TRUE(has(
      Page, "Every run ran out of memory; the smallest size tried was 256."));
  EXPECT_TRUE(has(Page, "<g class=\"oom\">"));
  EXPECT_TRUE(has(Page, "No run fit in memory."));
  EXPECT_TRUE(has(Page, "No throughput to plot: every run ran out of memory."));
}

TEST(HtmlReportTest, RunsWithoutLayersOrBreakdown) {
  Measurement M = measurement();
  M.Runs[0].Layers.clear();
  M.Runs[0].Memory.clear();
  HtmlReportInput In;
  In.Measured = &M;
  std::string Page = renderHtmlReport(In);
  expectWholePage(Page);
  EXPECT_TRUE(has(Page, "No per-layer times were recorded at batch size 32."));
  EXPECT_TRUE(has(Page, "No breakdown was recorded."));
  EXPECT_TRUE(has(Page, "none: no model of the runs"));
}

// The setup kind by statement, under the kinds: each statement before the
// loop, escaped, with its line, bytes and share of the peak.
TEST(HtmlReportTest, NamesTheStatementsThatMadeMemoryBeforeTraining) {
  Fixture X;
  MeasuredRun &Run = X.M.Runs[0];
  Run.Memory.back() = {MemoryKind::Setup, 32 * MiB};
  Run.Memory.push_back({MemoryKind::Untracked, 4 * MiB});
  Run.SetupStatements = {
      {0, "train.cpp", "std::vector<float> cache(1 << 23);", 15, 32 * MiB}};
  std::string Page = renderHtmlReport(X.input());
  expectWholePage(Page);
  EXPECT_TRUE(has(Page, "setup</td><td class=\"num\">32.0 MiB</td>")) << Page;
  EXPECT_TRUE(has(Page, "<tr><td><code>std::vector&lt;float&gt; cache(1 "
                        "&lt;&lt; 23);</code></td><td>train.cpp:15</td><td "
                        "class=\"num\">32.0 MiB</td><td class=\"num\">1.6%"
                        "</td></tr>"))
      << Page;
  // Without statements (an older report, a CUDA run): no such table.
  Fixture Plain;
  EXPECT_FALSE(has(renderHtmlReport(Plain.input()), "setup-statements"));
}

TEST(HtmlReportTest, DrawsNoPoorFit) {
  Fixture X;
  X.A.TimeProblem = "R\u00b2 0.41 is below 0.90";
  X.A.Suggested.reset();
  std::string Page = renderHtmlReport(X.input());
  EXPECT_TRUE(has(Page,
                  "R&sup2; 1.000 over 2 runs; <span class=\"missing\">cannot "
                  "predict: R\u00b2 0.41 is below 0.90</span>"));
  size_t First = Page.find("<path class=\"model\"");
  ASSERT_NE(First, std::string::npos) << "the memory fit is still drawn";
  EXPECT_GT(First, Page.find("id=\"memory-chart\""));
  EXPECT_EQ(Page.find("<path class=\"model\"", First + 1), std::string::npos);
}

TEST(HtmlReportTest, NamesAFarMaximumAtTheEdge) {
  Fixture X;
  X.A.MaxBatchSize = int64_t(1) << 24;
  X.A.Predictions.push_back(predict(*X.A.MaxBatchSize));
  std::string Page = renderHtmlReport(X.input());
  EXPECT_TRUE(has(Page, ">max 16,777,216 \u2192</text>"));
  // The axis ends near four times the largest run, not at the maximum.
  EXPECT_TRUE(has(Page, ">1,200</text>"));
  EXPECT_FALSE(has(Page, "batch size 16,777,216:")) << "no dot off the chart";
}

TEST(HtmlReportTest, WideSweepsGetALogAxisAndEveryCurveItsBand) {
  // 64 to 65,536: more than 10x, so the batch axis is logarithmic, ticked
  // at 1, 2 and 5 times the powers of ten; the model's curves carry their
  // 90% bands, from the analysis itself.
  Fixture X;
  X.M.Runs.clear();
  for (int64_t B : {64, 512, 4096, 65536}) {
    X.M.Runs.push_back(fitRun(B, 2 + 0.01 * double(B), GiB / 2 + 1000 * B));
    X.M.Runs.back().TimingRunMedians = {2 + 0.01 * double(B),
                                        2.2 + 0.011 * double(B)};
  }
  X.A = analyze(X.M, 64, ModelOptions());
  ASSERT_TRUE(X.A.canPredictTime()) << X.A.TimeProblem;
  std::string Page = renderHtmlReport(X.input());
  EXPECT_TRUE(has(Page, "batch size (log scale)"));
  for (const char *Tick : {">50</text>", ">100</text>", ">200</text>",
                           ">50,000</text>", ">100,000</text>"})
    EXPECT_TRUE(has(Page, Tick)) << Tick;
  EXPECT_TRUE(has(Page, "<path class=\"band\" clip-path=\"url(#throughput-clip)"));
  EXPECT_TRUE(has(Page, "<path class=\"band\" clip-path=\"url(#memory-clip)"));
  EXPECT_TRUE(has(Page, "90% interval of a new run"));

  // A narrow sweep keeps the linear axis from zero.
  Fixture Narrow;
  std::string Linear = renderHtmlReport(Narrow.input());
  EXPECT_FALSE(has(Linear, "log scale"));
}

/// Writes Page and runs check-html.py on it; skips when there is no
/// Chromium.
void checkInBrowser(const std::string &Page, llvm::StringRef Name) {
  std::string Dir = ::testing::TempDir();
  std::string Html = Dir + Name.str() + ".html";
  std::string Png = Dir + Name.str() + ".png";
  {
    std::error_code EC;
    llvm::raw_fd_ostream Out(Html, EC);
    ASSERT_FALSE(EC) << EC.message();
    Out << Page;
  }
  std::string Python =
      llvm::sys::fs::exists(SKYLINE_PYTHON) ? SKYLINE_PYTHON : "python3";
  std::string Command = "'" + Python +
                        "' '" SKYLINE_TEST_INPUTS "/check-html.py' '" + Html +
                        "' '" + Png + "'";
  for (const char *Id : Ids)
    Command += std::string(" --expect-id ") + Id;
  int Status = std::system(Command.c_str());
  ASSERT_TRUE(WIFEXITED(Status)) << Command;
  if (WEXITSTATUS(Status) == 77)
    GTEST_SKIP() << "chromium not found";
  EXPECT_EQ(WEXITSTATUS(Status), 0) << Command;
}

TEST(HtmlReportTest, RendersInChromium) {
  Fixture X;
  checkInBrowser(renderHtmlReport(X.input()), "html-report-full");
}

TEST(HtmlReportTest, EmptyPageRendersInChromium) {
  checkInBrowser(renderHtmlReport(HtmlReportInput()), "html-report-empty");
}

} // namespace
