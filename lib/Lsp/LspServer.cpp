//===- LspServer.cpp - skyline-lsp: the analysis in the editor ------------===//
//
// The protocol side: MLIR's JSONTransport reads and writes the messages and
// its MessageHandler dispatches them (an unknown method, or parameters that
// do not decode, are answered with an error by the handler). Analyses run
// on one worker thread, so hovers, hints and actions answer from the latest
// results at once while a parse runs; after a source's first analysis the
// worker precompiles its system includes (a preamble) for the next ones.
// The measure command runs skyline-check as a child process on a thread of
// its own, its progress lines reported as work-done progress. The client's
// stream reaches the transport through LspInputFilter.h, which answers
// what it refuses through the server (LspRejectedMethod).
//
//===----------------------------------------------------------------------===//

#include "skyline/LspServer.h"

#include "skyline/Build.h"
#include "skyline/CompilationSetup.h"
#include "skyline/Config.h"
#include "skyline/FileHash.h"
#include "skyline/Frontend.h"
#include "skyline/FrontendCache.h"
#include "skyline/InputFile.h"
#include "skyline/LspDocument.h"
#include "skyline/LspInputFilter.h"
#include "skyline/MeasureProgress.h"
#include "skyline/MeasurementStore.h"
#include "skyline/OutputFiles.h"
#include "skyline/Preamble.h"
#include "skyline/Rules.h"
#include "skyline/RunReport.h"
#include "skyline/RuntimeCache.h"
#include "skyline/TextReport.h"

#include "mlir/Tools/lsp-server-support/Logging.h"
#include "mlir/Tools/lsp-server-support/Protocol.h"
#include "mlir/Tools/lsp-server-support/Transport.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dirent.h>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

namespace skyline {
namespace {

using mlir::lsp::Callback;
using mlir::lsp::Logger;
using mlir::lsp::URIForFile;
namespace json = llvm::json;

/// Parameters taken as they come: `initialize` reads fields MLIR's
/// InitializeParams lacks (initializationOptions, rootUri).
struct RawParams {
  json::Value Value = nullptr;
};
bool fromJSON(const json::Value &Value, RawParams &Result, json::Path) {
  Result.Value = Value;
  return true;
}

/// textDocument/didSave, which MLIR's protocol types lack.
struct DidSaveParams {
  mlir::lsp::TextDocumentIdentifier textDocument;
};
bool fromJSON(const json::Value &Value, DidSaveParams &Result, json::Path P) {
  json::ObjectMapper O(Value, P);
  return O && O.map("textDocument", Result.textDocument);
}

/// Path with its links resolved; itself where it does not resolve.
std::string realPathOf(llvm::StringRef Path) {
  llvm::SmallString<256> Real;
  if (llvm::sys::fs::real_path(Path, Real))
    return Path.str();
  return std::string(Real);
}

/// One of clang's errors, as its text output gives it.
struct CompileError {
  std::string File;
  unsigned Line = 0, Column = 0; // 1-based; the column in bytes
  std::string Message;
};

/// The errors in clang's text output ("file:line:col: error: ..."), the
/// lines after each (its notes, its "In file included from") left out.
std::vector<CompileError> compileErrorsIn(llvm::StringRef Output) {
  std::vector<CompileError> Errors;
  for (llvm::StringRef Line : llvm::split(Output, '\n')) {
    size_t At = Line.find(": error: ");
    size_t Length = 9;
    if (At == llvm::StringRef::npos) {
      At = Line.find(": fatal error: ");
      Length = 15;
    }
    if (At == llvm::StringRef::npos)
      continue;
    llvm::StringRef Where = Line.take_front(At);
    CompileError E;
    auto [Rest, ColumnText] = Where.rsplit(':');
    auto [File, LineText] = Rest.rsplit(':');
    if (File.empty() || LineText.getAsInteger(10, E.Line) ||
        ColumnText.getAsInteger(10, E.Column))
      continue;
    E.File = File.str();
    E.Message = Line.drop_front(At + Length).str();
    Errors.push_back(std::move(E));
  }
  return Errors;
}

/// One analysis of a program: the state LspDocument.h answers from and the
/// text of each of its files as analyzed (positions are computed in it,
/// then moved onto the editor's text by a LineMap).
struct Analyzed {
  ProgramState State;
  bool UsedPreamble = false;
  /// A preamble to precompile once this analysis is published.
  std::optional<PreamblePlan> PreambleToBuild;
  /// The system headers the parse entered (listed beside the preamble made
  /// from it); empty when the model came from a cache.
  std::vector<std::string> SystemFiles;
  /// The cached model used instead of a parse; empty: parsed.
  std::string ModelFrom;
  std::map<std::string, TextIndex> Texts;
  /// Each analyzed file's path by its real path: the editor may have opened
  /// it through a link (Texts and findings hold the analysis's paths).
  std::map<std::string, std::string> PathByRealPath;
  std::string Error; // the analysis failed: shown as one diagnostic
  /// The program does not compile: clang's errors, each at its place.
  std::vector<CompileError> CompileErrors;
  /// The findings are the last analysis's that compiled (State, Texts):
  /// kept while the code does not compile, and marked so.
  bool FromBefore = false;
  double Seconds = 0;

  /// The path this analysis knows EditorFile by.
  std::string pathOf(llvm::StringRef EditorFile) const {
    if (Texts.count(EditorFile.str()))
      return EditorFile.str();
    auto It = PathByRealPath.find(realPathOf(EditorFile));
    return It == PathByRealPath.end() ? EditorFile.str() : It->second;
  }
};

/// What one analysis works from: the file, skyline-check's options for
/// it, the measurement's report and the compile commands.
struct AnalysisInputs {
  std::string File; // its links resolved
  std::string Root; // the workspace
  CommandLineOptions Options;
  std::string WorkDir, ReportPath;
  std::optional<llvm::Expected<SavedReport>> Report;
  CompilationSetup Setup;
};

struct Document {
  URIForFile Uri;
  std::string RealPath; // the file opened, its links resolved
  int64_t Version = 0;
  std::string Text;
  std::shared_ptr<const Analyzed> Latest;
};

/// Where the server keeps the model of its last parse of Source (one file a
/// source, replaced when its key changes): `models/` in the cache root;
/// empty without one.
std::string modelCachePath(llvm::StringRef Source) {
  std::string Preambles = preambleDirectory();
  if (Preambles.empty())
    return "";
  return (llvm::sys::path::parent_path(Preambles) + "/models/" +
          sha256Hex(Source).substr(0, 24) + ".yaml")
      .str();
}

/// workspace/executeCommand's command that measures the program of a file.
constexpr const char *MeasureCommand = "skyline.measure";

/// A measurement running in the background: skyline-check on one source.
struct MeasureJob {
  std::string File;
  /// Its work-done progress: the client's workDoneToken, else one the
  /// server created; null where the client shows none.
  json::Value Token = nullptr;
  bool ClientToken = false;
  std::atomic<bool> Cancel{false};
};

/// skyline-check running for a MeasureJob, and how it ended.
struct MeasureRun {
  llvm::sys::ProcessInfo Child; // Pid 0: it did not start (Error says why)
  std::string Error;
  llvm::SmallString<128> OutPath, ErrPath; // its stdout and stderr
  std::string Log;                         // its stderr, the last read
  bool Terminated = false;                 // cancelled
  int Code = -1;
};

json::Value toJSONPosition(const LspPosition &P) {
  return json::Object{{"line", P.Line}, {"character", P.Character}};
}

json::Value rangeJSON(LspPosition Start, LspPosition End) {
  return json::Object{{"start", toJSONPosition(Start)},
                      {"end", toJSONPosition(End)}};
}

int severity(const Finding &F) {
  // The front end's notes have no entry in the catalog of the rules.
  bool FrontEndNote = !findRule(F.Rule);
  switch (F.Level) {
  case DiagLevel::Error:
    return 1;
  case DiagLevel::Warning:
    return 2;
  case DiagLevel::Note:
    // The front end's layer, call and loop notes are many: hints, which
    // editors show faintly; a batch-size note is information.
    return FrontEndNote ? 4 : 3;
  case DiagLevel::Remark:
    return 4;
  }
  return 3;
}

class Server {
public:
  Server(mlir::lsp::JSONTransport &Transport, const LspServerOptions &Options)
      : Handler(Transport), Options(Options) {
    Handler.method("initialize", this, &Server::onInitialize);
    Handler.notification("initialized", this, &Server::onInitialized);
    Handler.method("shutdown", this, &Server::onShutdown);
    Handler.notification("textDocument/didOpen", this, &Server::onDidOpen);
    Handler.notification("textDocument/didChange", this, &Server::onDidChange);
    Handler.notification("textDocument/didSave", this, &Server::onDidSave);
    Handler.notification("textDocument/didClose", this, &Server::onDidClose);
    Handler.method("textDocument/hover", this, &Server::onHover);
    Handler.method("textDocument/inlayHint", this, &Server::onInlayHint);
    Handler.method("textDocument/codeAction", this, &Server::onCodeAction);
    Handler.method("workspace/executeCommand", this, &Server::onExecuteCommand);
    Handler.notification("window/workDoneProgress/cancel", this,
                         &Server::onCancelProgress);
    Handler.method(LspRejectedMethod, this, &Server::onRejected);
    Progress = Handler.outgoingNotification<json::Value>("$/progress");
    CreateProgress = Handler.outgoingRequest<json::Value, RawParams>(
        "window/workDoneProgress/create",
        [this](json::Value Id, llvm::Expected<RawParams> Reply) {
          bool Created = bool(Reply);
          if (!Reply)
            llvm::consumeError(Reply.takeError());
          std::lock_guard<std::mutex> Lock(Mutex);
          auto It = ProgressCreated.find(llvm::formatv("{0}", Id).str());
          if (It != ProgressCreated.end()) {
            It->second->set_value(Created);
            ProgressCreated.erase(It);
          }
        });
    PublishDiagnostics = Handler.outgoingNotification<json::Value>(
        "textDocument/publishDiagnostics");
    ShowMessage =
        Handler.outgoingNotification<json::Value>("window/showMessage");
    LogMessage = Handler.outgoingNotification<json::Value>("window/logMessage");
    RefreshHints = Handler.outgoingRequest<json::Value, RawParams>(
        "workspace/inlayHint/refresh",
        [](json::Value, llvm::Expected<RawParams> Reply) {
          if (!Reply)
            llvm::consumeError(Reply.takeError());
        });
    Worker = std::thread([this] { work(); });
  }

  /// Ends the worker once its analysis is done (a parse is not interrupted).
  void stop() {
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      Stopping = true;
    }
    Wake.notify_all();
  }
  bool workerIdle() {
    std::lock_guard<std::mutex> Lock(Mutex);
    return !Busy;
  }
  void join() {
    Worker.join();
    std::vector<std::thread> Threads;
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      Threads = std::move(PreambleThreads);
    }
    for (std::thread &Thread : Threads)
      Thread.join();
  }
  /// Kills what the server started but a measurement's skyline-check (the
  /// preamble's clang: the worker waiting for it then ends at once), and
  /// lets nothing start after it.
  void endChildren();
  /// Stops every measurement (their skyline-check gets SIGTERM and stops
  /// what it started) and waits for them.
  void stopMeasurements() {
    std::vector<std::thread> Threads;
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      for (auto &[File, Job] : Measuring)
        Job->Cancel = true;
      Threads = std::move(MeasureThreads);
    }
    for (std::thread &Thread : Threads)
      Thread.join();
  }

  mlir::lsp::MessageHandler Handler;
  bool ShutdownReceived = false;

private:
  void onInitialize(const RawParams &Params, Callback<json::Value> Reply);
  void onInitialized(const RawParams &) {}
  void onShutdown(const RawParams &, Callback<json::Value> Reply) {
    ShutdownReceived = true;
    Reply(nullptr);
  }
  void onDidOpen(const mlir::lsp::DidOpenTextDocumentParams &Params);
  void onDidChange(const mlir::lsp::DidChangeTextDocumentParams &Params);
  void onDidSave(const DidSaveParams &Params);
  void onDidClose(const mlir::lsp::DidCloseTextDocumentParams &Params);
  void onHover(const mlir::lsp::TextDocumentPositionParams &Params,
               Callback<json::Value> Reply);
  void onInlayHint(const mlir::lsp::InlayHintsParams &Params,
                   Callback<json::Value> Reply);
  void onCodeAction(const mlir::lsp::CodeActionParams &Params,
                    Callback<json::Value> Reply);
  void onExecuteCommand(const RawParams &Params, Callback<json::Value> Reply);
  void onCancelProgress(const RawParams &Params);
  void onRejected(const RawParams &Params, Callback<json::Value> Reply);
  /// A measurement: skyline-check on the job's file, its lines as
  /// work-done progress, its outcome as the progress's end.
  void measure(std::shared_ptr<MeasureJob> Job);
  MeasureRun startSkylineCheck(const MeasureJob &Job);
  void followRun(MeasureJob &Job, MeasureRun &Run, MeasureProgress &Bar);
  std::string outcomeOf(const MeasureRun &Run);
  void progress(const MeasureJob &Job, json::Object Value) {
    if (Job.Token.kind() != json::Value::Null)
      Progress(json::Object{{"token", Job.Token}, {"value", std::move(Value)}});
  }
  /// Job's token: the client's, else one created and answered (the
  /// protocol's order: no `begin` before the client's reply).
  void createProgress(MeasureJob &Job);
  double expectedBuildSeconds(const std::string &File);
  std::string nextId(llvm::StringRef What) {
    return ("skyline-" + What + "-" + llvm::Twine(++NextRequestId)).str();
  }

  void schedule(const std::string &File);
  void buildPreamble(PreamblePlan Plan, std::vector<std::string> SystemFiles);
  /// The URI the client knows Path by: the one it opened where it opened
  /// the file (through a link, say), else Path's own.
  std::string uriFor(const std::string &Path);
  std::optional<llvm::json::Object>
  quickfixJSON(const BatchSizeAction &Action, const Analyzed &Result,
               llvm::StringRef File, const LineMap &Lines,
               const llvm::json::Array &Fixed);
  /// Sends the diagnostics of Uri: every open file's, without repeats.
  void sendDiagnostics(const std::string &Uri,
                       const std::vector<json::Array> &Parts,
                       std::optional<int64_t> Version);
  /// The compile-command warnings already shown (the worker's only).
  std::set<std::string> SetupWarned;
  /// Preambles that failed to build or to load twice, and those that did
  /// not load once (under Mutex: preamble threads add to the first).
  std::set<std::string> BadPreambles, PreamblesDeleted;
  bool badPreamble(const std::string &Pch) {
    std::lock_guard<std::mutex> Lock(Mutex);
    return BadPreambles.count(Pch) != 0;
  }
  void work();
  /// One analysis of the program of EditorFile, in named steps.
  std::shared_ptr<Analyzed> analyze(const std::string &EditorFile);
  llvm::Error gatherInputs(AnalysisInputs &In);
  void sayWhatTheSetupDid(const AnalysisInputs &In);
  llvm::Expected<ProgramModel> parseProgram(const AnalysisInputs &In,
                                            Analyzed &Result,
                                            std::string &ClangErrors);
  void notePreambleUse(const std::string &File,
                       const std::optional<PreamblePlan> &Preamble,
                       PreambleUse Use);
  void takeTheModel(const AnalysisInputs &In, ProgramModel Model,
                    Analyzed &Result);
  void attachMeasurement(AnalysisInputs &In, Analyzed &Result);
  void publish(const std::string &File, const Analyzed &Result,
               const Document &Doc);
  /// Result's diagnostics by the file they are in: clang's errors, the
  /// front end's notes and the measured findings (a warning with its notes
  /// as related locations).
  std::map<std::string, json::Array> diagnosticsByFile(const std::string &File,
                                                       const Analyzed &Result,
                                                       const Document &Doc);
  /// Sends them by the URIs the client knows, each URI with what every
  /// open file says of it.
  void publishByUri(const std::string &File,
                    std::map<std::string, json::Array> ByFile,
                    const Document &Doc);

  /// The document and its latest analysis, copied under the lock.
  bool snapshot(llvm::StringRef File, Document &Out) {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Documents.find(File.str());
    if (It == Documents.end())
      return false;
    Out = It->second;
    return true;
  }

  const LspServerOptions &Options;
  mlir::lsp::OutgoingNotification<json::Value> PublishDiagnostics;
  mlir::lsp::OutgoingNotification<json::Value> ShowMessage;
  mlir::lsp::OutgoingNotification<json::Value> LogMessage;
  mlir::lsp::OutgoingRequest<json::Value> RefreshHints;
  mlir::lsp::OutgoingNotification<json::Value> Progress;
  mlir::lsp::OutgoingRequest<json::Value> CreateProgress;
  std::atomic<int64_t> NextRequestId{0};

  // Set by initialize, read by the worker afterwards.
  std::vector<std::string> InitArguments;
  std::string ReportOption; // initializationOptions.report
  bool CanRefreshHints = false;
  bool CanShowProgress = false; // window.workDoneProgress
  bool HoverMarkdown = false;   // textDocument.hover.contentFormat

  std::mutex Mutex; // guards what follows
  /// The window/workDoneProgress/create requests waiting for their reply,
  /// by request id.
  std::map<std::string, std::shared_ptr<std::promise<bool>>> ProgressCreated;
  /// How long each program's instrumented build took last (the progress
  /// of its next measurement moves by it).
  std::map<std::string, double> LastBuildSeconds;
  std::map<std::string, Document> Documents;
  std::deque<std::string> Queue;
  bool Busy = false, Stopping = false;
  std::condition_variable Wake;
  std::thread Worker;
  /// The measurement running for each file: one at a time a program.
  std::map<std::string, std::shared_ptr<MeasureJob>> Measuring;
  std::vector<std::thread> MeasureThreads; // joined at the end
  /// The URIs each open file's analysis published to, to clear them later.
  std::map<std::string, std::set<std::string>> Published;
  /// What each open file's analysis says of each URI: a header two open
  /// programs share shows what both say, and closing one keeps the other's.
  std::map<std::string, std::map<std::string, json::Array>> Contributions;
  /// Preambles being precompiled, each on a thread of its own: an analysis
  /// never waits for one.
  std::set<std::string> PreamblesBuilding;
  std::vector<std::thread> PreambleThreads; // joined at the end

  /// Held while a child process starts and while endChildren looks for
  /// them: none starts unseen, or after it.
  std::mutex ChildrenMutex;
  std::atomic<bool> Ending{false}; // set under ChildrenMutex
  std::set<pid_t> MeasurePids;     // under ChildrenMutex
};

/// This process's children, from the parent field of /proc/<pid>/stat.
std::vector<pid_t> childProcesses() {
  std::vector<pid_t> Children;
  pid_t Self = ::getpid();
  DIR *Proc = ::opendir("/proc");
  if (!Proc)
    return Children;
  while (dirent *Entry = ::readdir(Proc)) {
    pid_t Pid = 0;
    if (llvm::StringRef(Entry->d_name).getAsInteger(10, Pid) || Pid <= 0)
      continue;
    auto Stat = llvm::MemoryBuffer::getFileAsStream("/proc/" +
                                                    llvm::Twine(Pid) + "/stat");
    if (!Stat)
      continue;
    // "pid (comm) state ppid ...": comm may hold anything, ')' too.
    llvm::StringRef Text = (*Stat)->getBuffer();
    size_t Paren = Text.rfind(')');
    if (Paren == llvm::StringRef::npos)
      continue;
    llvm::SmallVector<llvm::StringRef, 3> Fields;
    Text.drop_front(Paren + 1).split(Fields, ' ', 3, /*KeepEmpty=*/false);
    pid_t Parent = 0;
    if (Fields.size() >= 2 && !Fields[1].getAsInteger(10, Parent) &&
        Parent == Self)
      Children.push_back(Pid);
  }
  ::closedir(Proc);
  return Children;
}

void Server::endChildren() {
  std::lock_guard<std::mutex> Lock(ChildrenMutex);
  Ending = true;
  // A measurement's skyline-check is stopped politely (stopMeasurements):
  // it then stops what it started. The rest (a preamble's clang) has
  // nothing to keep: its temporary .pch is removed by its owner.
  for (pid_t Pid : childProcesses())
    if (!MeasurePids.count(Pid))
      ::kill(Pid, SIGKILL);
}

void Server::onRejected(const RawParams &Params, Callback<json::Value> Reply) {
  const json::Object *Object = Params.Value.getAsObject();
  std::string Message =
      Object ? Object->getString("message").value_or("").str() : "";
  int64_t Code = Object ? Object->getInteger("code").value_or(0) : 0;
  if (Code != LspParseError)
    Code = LspInvalidRequest;
  Logger::error("{0}", Message);
  LogMessage(json::Object{{"type", 1}, {"message", "skyline-lsp: " + Message}});
  Reply(llvm::make_error<mlir::lsp::LSPError>(Message,
                                              mlir::lsp::ErrorCode(Code)));
}

void Server::onInitialize(const RawParams &Params,
                          Callback<json::Value> Reply) {
  const json::Object *Object = Params.Value.getAsObject();
  std::string Root;
  if (Object) {
    if (std::optional<llvm::StringRef> Uri = Object->getString("rootUri")) {
      if (auto Parsed = URIForFile::fromURI(*Uri))
        Root = Parsed->file().str();
      else
        llvm::consumeError(Parsed.takeError());
    } else if (std::optional<llvm::StringRef> Path =
                   Object->getString("rootPath"))
      Root = Path->str();
    if (const json::Object *Init = Object->getObject("initializationOptions")) {
      if (const json::Array *Args = Init->getArray("arguments"))
        for (const json::Value &Arg : *Args)
          if (std::optional<llvm::StringRef> S = Arg.getAsString())
            InitArguments.push_back(S->str());
      if (std::optional<llvm::StringRef> DB =
              Init->getString("compilationDatabase"))
        InitArguments.insert(InitArguments.begin(), {"-p", DB->str()});
      if (std::optional<llvm::StringRef> Report = Init->getString("report"))
        ReportOption = Report->str();
    }
    if (const json::Object *Caps = Object->getObject("capabilities")) {
      HoverMarkdown = clientTakesMarkdownHovers(*Caps);
      if (const json::Object *Workspace = Caps->getObject("workspace"))
        if (const json::Object *Hints = Workspace->getObject("inlayHint"))
          CanRefreshHints = Hints->getBoolean("refreshSupport").value_or(false);
      if (const json::Object *Window = Caps->getObject("window"))
        CanShowProgress =
            Window->getBoolean("workDoneProgress").value_or(false);
    }
  }
  // Relative paths (-p, --work-dir, the report) are the workspace's, as the
  // command line's are the current directory's.
  if (!Root.empty() && llvm::sys::fs::is_directory(Root))
    llvm::sys::fs::set_current_path(Root);
  json::Object Capabilities{
      {"textDocumentSync",
       json::Object{{"openClose", true},
                    {"change", int(mlir::lsp::TextDocumentSyncKind::Full)},
                    {"save", json::Object{{"includeText", false}}}}},
      {"hoverProvider", true},
      {"inlayHintProvider", true},
      {"codeActionProvider",
       json::Object{{"codeActionKinds", json::Array{"quickfix"}}}},
  };
  if (!Options.SkylineCheck.empty())
    Capabilities["executeCommandProvider"] =
        json::Object{{"commands", json::Array{MeasureCommand}}};
  Reply(json::Object{{"serverInfo", json::Object{{"name", "skyline-lsp"},
                                                 {"version", SKYLINE_VERSION}}},
                     {"capabilities", std::move(Capabilities)}});
}

void Server::onDidOpen(const mlir::lsp::DidOpenTextDocumentParams &Params) {
  std::string File = Params.textDocument.uri.file().str();
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Document &Doc = Documents[File];
    Doc.Uri = Params.textDocument.uri;
    Doc.RealPath = realPathOf(File);
    Doc.Version = Params.textDocument.version;
    Doc.Text = Params.textDocument.text;
  }
  schedule(File);
}

void Server::onDidChange(const mlir::lsp::DidChangeTextDocumentParams &Params) {
  // The analysis reads the files on disk, as the build does: an edit moves
  // the hints and actions (LineMap) until the save analyzes again.
  std::lock_guard<std::mutex> Lock(Mutex);
  auto It = Documents.find(Params.textDocument.uri.file().str());
  if (It == Documents.end())
    return;
  if (mlir::failed(mlir::lsp::TextDocumentContentChangeEvent::applyTo(
          Params.contentChanges, It->second.Text)))
    Logger::error("could not apply a change to {0}",
                  Params.textDocument.uri.file());
  It->second.Version = Params.textDocument.version;
}

void Server::onDidSave(const DidSaveParams &Params) {
  schedule(Params.textDocument.uri.file().str());
}

void Server::onDidClose(const mlir::lsp::DidCloseTextDocumentParams &Params) {
  std::string File = Params.textDocument.uri.file().str();
  // Each URI this file's analysis spoke of keeps what the other open files
  // say of it (a header they share); the file itself has nothing left.
  std::vector<std::pair<std::string, std::vector<json::Array>>> Send;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Documents.erase(File);
    std::set<std::string> Uris = std::move(Published[File]);
    Published.erase(File);
    Uris.insert(Params.textDocument.uri.uri().str());
    for (const std::string &Uri : Uris) {
      auto &Parts = Contributions[Uri];
      Parts.erase(File);
      std::vector<json::Array> Left;
      for (const auto &[Owner, Part] : Parts)
        Left.push_back(Part);
      if (Parts.empty())
        Contributions.erase(Uri);
      Send.push_back({Uri, std::move(Left)});
    }
  }
  for (const auto &[Uri, Parts] : Send)
    sendDiagnostics(Uri, Parts, std::nullopt);
}

std::string Server::uriFor(const std::string &Path) {
  std::string Real = realPathOf(Path);
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    for (const auto &[File, Doc] : Documents)
      if (File == Path || Doc.RealPath == Real)
        return Doc.Uri.uri().str();
  }
  auto Uri = URIForFile::fromFile(Path);
  if (!Uri) {
    llvm::consumeError(Uri.takeError());
    return "";
  }
  return Uri->uri().str();
}

void Server::sendDiagnostics(const std::string &Uri,
                             const std::vector<json::Array> &Parts,
                             std::optional<int64_t> Version) {
  json::Array Diagnostics;
  std::set<std::string> Seen;
  for (const json::Array &Part : Parts)
    for (const json::Value &Diagnostic : Part)
      if (Seen.insert(llvm::formatv("{0}", Diagnostic).str()).second)
        Diagnostics.push_back(Diagnostic);
  json::Object Params{{"uri", Uri}, {"diagnostics", std::move(Diagnostics)}};
  if (Version)
    Params["version"] = *Version;
  PublishDiagnostics(std::move(Params));
}

void Server::schedule(const std::string &File) {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (std::find(Queue.begin(), Queue.end(), File) == Queue.end())
      Queue.push_back(File);
  }
  Wake.notify_all();
}

void Server::work() {
  for (;;) {
    std::string File;
    {
      std::unique_lock<std::mutex> Lock(Mutex);
      Wake.wait(Lock, [&] { return Stopping || !Queue.empty(); });
      if (Stopping)
        return;
      File = Queue.front();
      Queue.pop_front();
      Busy = true;
    }
    std::shared_ptr<Analyzed> Result = analyze(File);
    Document Doc;
    bool Open;
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      Busy = false;
      auto It = Documents.find(File);
      Open = It != Documents.end();
      if (Open) {
        // Code that does not compile keeps the findings of the last
        // analysis that did, marked so: hovers and actions answer on.
        const std::shared_ptr<const Analyzed> &Before = It->second.Latest;
        if (!Result->CompileErrors.empty() && Before &&
            (Before->Error.empty() || Before->FromBefore)) {
          Result->State = Before->State;
          Result->Texts = Before->Texts;
          Result->PathByRealPath = Before->PathByRealPath;
          Result->FromBefore = true;
        }
        It->second.Latest = Result;
        Doc = It->second;
      }
    }
    if (!Open)
      continue;
    publish(File, *Result, Doc);
    if (CanRefreshHints)
      RefreshHints(json::Value(nullptr), nextId("refresh"));
    if (Result->PreambleToBuild) {
      std::lock_guard<std::mutex> Lock(Mutex);
      if (!Stopping &&
          PreamblesBuilding.insert(Result->PreambleToBuild->Pch).second)
        PreambleThreads.emplace_back([this, Plan = *Result->PreambleToBuild,
                                      Files = Result->SystemFiles]() mutable {
          buildPreamble(std::move(Plan), std::move(Files));
        });
    }
  }
}

void Server::buildPreamble(PreamblePlan Plan,
                           std::vector<std::string> SystemFiles) {
  auto Finished = llvm::make_scope_exit([&] {
    std::lock_guard<std::mutex> Lock(Mutex);
    PreamblesBuilding.erase(Plan.Pch);
  });
  auto Start = [&]() -> llvm::Expected<std::unique_ptr<PreambleBuild>> {
    std::lock_guard<std::mutex> Lock(ChildrenMutex);
    if (Ending)
      return nullptr;
    return PreambleBuild::start(Plan, std::move(SystemFiles));
  };
  auto Build = Start();
  if (Build && !*Build)
    return; // the session is ending
  llvm::Error E = Build ? (*Build)->finish() : Build.takeError();
  if (E && Ending) {
    // Killed at the session's end (endChildren), not a bad preamble.
    llvm::consumeError(std::move(E));
    return;
  }
  if (E) {
    Logger::error("{0}", llvm::toString(std::move(E)));
    std::lock_guard<std::mutex> Lock(Mutex);
    BadPreambles.insert(Plan.Pch);
    return;
  }
  Logger::info("precompiled the preamble {0} in {1} s", Plan.Pch,
               (*Build)->seconds());
}

/// skyline-check's arguments for one source: the server's, the client's,
/// then the source, before any `--` (whose flags stay last).
std::vector<std::string> argumentsFor(std::vector<std::string> Arguments,
                                      const std::string &Source) {
  auto Dash = std::find(Arguments.begin(), Arguments.end(), "--");
  Arguments.insert(Dash, Source);
  return Arguments;
}

std::shared_ptr<Analyzed> Server::analyze(const std::string &EditorFile) {
  // The file itself, its links resolved: a measurement names it so, and
  // the editor's own path is put back where the server answers (pathOf,
  // uriFor).
  AnalysisInputs In;
  In.File = realPathOf(EditorFile);
  auto Result = std::make_shared<Analyzed>();
  auto Start = std::chrono::steady_clock::now();
  auto Done = [&] {
    for (const auto &[Path, Text] : Result->Texts)
      Result->PathByRealPath.try_emplace(realPathOf(Path), Path);
    Result->Seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
            .count();
    Logger::info("analyzed {0} in {1} s{2}", In.File, Result->Seconds,
                 !Result->ModelFrom.empty()
                     ? " (its model from " + Result->ModelFrom + ")"
                 : Result->UsedPreamble
                     ? std::string(" (with its precompiled preamble)")
                     : std::string());
    return Result;
  };
  if (llvm::Error E = gatherInputs(In)) {
    Result->Error = llvm::toString(std::move(E));
    return Done();
  }
  sayWhatTheSetupDid(In);
  std::string ClangErrors;
  llvm::Expected<ProgramModel> Model = parseProgram(In, *Result, ClangErrors);
  if (!Model) {
    // Clang's errors at their places, as clangd shows them; the message
    // alone where it printed none it could place.
    Result->CompileErrors = compileErrorsIn(ClangErrors);
    Result->Error = llvm::toString(Model.takeError());
    if (Result->CompileErrors.empty() && !ClangErrors.empty())
      Result->Error += ":\n" + ClangErrors;
    return Done();
  }
  takeTheModel(In, std::move(*Model), *Result);
  if (Result->State.Model.BatchSize && In.Report)
    attachMeasurement(In, *Result);
  return Done();
}

llvm::Error Server::gatherInputs(AnalysisInputs &In) {
  std::vector<std::string> Arguments = Options.Arguments;
  llvm::append_range(Arguments, InitArguments);
  auto Parsed = Options.ParseArguments(argumentsFor(Arguments, In.File));
  if (!Parsed)
    return Parsed.takeError();
  In.Options = std::move(*Parsed);
  // The measurement: the report the client names, else the one the work
  // directory keeps (attachMeasurement: the one under the program's key
  // now, else its latest). Read first, as the program's sources are the
  // ones it lists.
  llvm::SmallString<256> Root;
  llvm::sys::fs::current_path(Root);
  In.Root = std::string(Root);
  In.WorkDir = workDirectoryFor(In.Options);
  In.ReportPath =
      ReportOption.empty() ? latestReportPath(In.WorkDir) : ReportOption;
  if (llvm::sys::fs::exists(In.ReportPath)) {
    In.Report.emplace(readReport(In.ReportPath));
    // Relative paths in a report are from where skyline-check ran, as
    // --from-report reads them: the workspace.
    if (*In.Report)
      makeReportPathsAbsolute(**In.Report, In.Root);
  }
  // A program of several sources, as its measurement lists them, is
  // analyzed whole, as skyline-check analyzes it: a layer made in one
  // source and trained in another then gets its findings and hints.
  if (In.Report && *In.Report &&
      reportDescribes(**In.Report, In.File, In.Root)) {
    std::vector<std::string> Sources;
    for (const std::string &Source : (*In.Report)->Program.Sources)
      if (Source == In.File || llvm::sys::fs::is_regular_file(Source))
        Sources.push_back(Source);
    if (Sources.size() > 1)
      In.Options.Sources = Sources;
  }
  auto Setup = loadCompilationSetup(In.Options.BuildPath, In.Options.ExtraArgs,
                                    In.Options.Sources);
  if (!Setup)
    return Setup.takeError();
  In.Setup = std::move(*Setup);
  return llvm::Error::success();
}

void Server::sayWhatTheSetupDid(const AnalysisInputs &In) {
  // What the sanitizer dropped from the repository's commands, and which
  // config gave the defaults: the server's log says it, as the CLI does.
  for (const std::string &Note : In.Setup.Notes)
    Logger::info("skyline-lsp: {0}", Note);
  if (!In.Options.ConfigFile.empty())
    Logger::info("skyline-lsp: option defaults from config file '{0}'",
                 In.Options.ConfigFile);
  for (const std::string &Note : In.Options.ConfigNotes)
    Logger::info("skyline-lsp: {0}", Note);
  // Said once a session (each file would say the same): the fallback flags
  // may parse the program differently from its build.
  for (const std::string &Warning : In.Setup.Warnings) {
    Logger::info("{0}", Warning);
    if (SetupWarned.insert(Warning.substr(0, Warning.find(" for "))).second)
      ShowMessage(json::Object{
          {"type", 2},
          {"message",
           "skyline-lsp: " + Warning +
               " (initializationOptions.compilationDatabase names it)"}});
  }
}

llvm::Expected<ProgramModel> Server::parseProgram(const AnalysisInputs &In,
                                                  Analyzed &Result,
                                                  std::string &ClangErrors) {
  const clang::tooling::CompilationDatabase &DB = *In.Setup.Database;
  const std::vector<std::string> &Sources = In.Options.Sources;
  // The program's leading system #includes, precompiled once (Preamble.h):
  // an analysis after a save then parses the program's own code only.
  std::optional<PreamblePlan> Preamble =
      planPreamble(DB, Sources, preambleDirectory());
  if (Preamble && badPreamble(Preamble->Pch))
    Preamble.reset();
  llvm::raw_string_ostream ClangStream(ClangErrors);
  FrontendOptions Frontend;
  Frontend.BatchSizeVar = In.Options.BatchSizeVar;
  Frontend.DiagnosticStream = &ClangStream;
  // The model the last parse of the same sources with the same flags and
  // options kept, where the files it read are unchanged (FrontendCache.h):
  // skyline-check's in the work directory (a measured run's), else the
  // server's own. Reopening an unchanged program then parses nothing.
  std::string KeptModel = modelCachePath(In.File);
  std::string Key = frontendCacheKey(DB, Sources, Frontend);
  std::optional<ProgramModel> Cached;
  if (!Options.SkylineCheck.empty())
    Cached = readCachedProgram(
        In.WorkDir + "/program-model.yaml",
        frontendCacheKey(DB, Sources, Frontend, Options.SkylineCheck));
  if (Cached)
    Result.ModelFrom = In.WorkDir + "/program-model.yaml";
  else if (!KeptModel.empty() && (Cached = readCachedProgram(KeptModel, Key)))
    Result.ModelFrom = KeptModel;
  if (Cached)
    return std::move(*Cached);
  std::vector<std::string> SystemFiles;
  Frontend.SystemFilesRead = &SystemFiles;
  PreambleUse Use = PreambleUse::None;
  llvm::Expected<ProgramModel> Model = analyzeWithPreamble(
      DB, Sources, Frontend, Preamble, &Use, /*OnePass=*/true);
  notePreambleUse(In.File, Preamble, Use);
  Result.UsedPreamble = Use == PreambleUse::Used;
  if (!Model)
    return Model;
  // Through the preamble, SystemFiles has it and the headers in it.
  if (!KeptModel.empty()) {
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(KeptModel));
    if (llvm::Error E = writeCachedProgram(KeptModel, Key, *Model, SystemFiles))
      Logger::error("the program's model is not kept: {0}",
                    llvm::toString(std::move(E)));
  }
  // A whole parse makes the preamble for the next.
  if (!Result.UsedPreamble && Preamble && !badPreamble(Preamble->Pch)) {
    Result.SystemFiles = SystemFiles;
    Result.PreambleToBuild = Preamble;
  }
  return Model;
}

void Server::notePreambleUse(const std::string &File,
                             const std::optional<PreamblePlan> &Preamble,
                             PreambleUse Use) {
  // One that no longer loads is made anew once (LibTorch updated); one
  // that never loads (a header without include guards) is not made again
  // this session.
  if (Use == PreambleUse::Deleted) {
    Logger::error("the preamble {0} did not load; deleted", Preamble->Pch);
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!PreamblesDeleted.insert(Preamble->Pch).second)
      BadPreambles.insert(Preamble->Pch);
  }
  if (Use == PreambleUse::Kept)
    Logger::info("{0} does not parse, with or without the preamble {1}", File,
                 Preamble->Pch);
}

void Server::takeTheModel(const AnalysisInputs &In, ProgramModel Model,
                          Analyzed &Result) {
  ProgramState &State = Result.State;
  State.Model = std::move(Model);
  State.Rules = In.Options.Rules;
  // Paths in messages as the command line shows a found file: relative
  // to the workspace (the current directory) when below it.
  State.StaticNotes = programModelNotes(State.Model, [&](llvm::StringRef Path) {
    llvm::StringRef Shown = Path;
    if (Shown.consume_front(In.Root) && Shown.consume_front("/"))
      return Shown.str();
    return Path.str();
  });
  for (const std::string &Path : State.Model.Files)
    if (auto Buffer = readSourceBuffer(Path))
      Result.Texts.try_emplace(Path, Buffer->getBuffer().str());
  if (!Result.Texts.count(In.File))
    if (auto Buffer = llvm::MemoryBuffer::getFile(In.File))
      Result.Texts.try_emplace(In.File, (*Buffer)->getBuffer().str());
  if (State.Model.BatchSize)
    return;
  if (const auto &Read = State.Model.RuntimeBatchSize) {
    // Read at run time: the program model's note at the read says so; the
    // hint is what would let skyline-check predict other sizes.
    Finding Runtime;
    Runtime.Rule = rules::batchSize().Id.str();
    Runtime.Level = DiagLevel::Note;
    Runtime.Message =
        "the training batch size is read at run time from " + Read->ReadFrom +
        ", with no default in the source: a measurement runs at the size the "
        "program is given and predicts no other; give it a default here, or "
        "name a variable that holds a literal with --batch-size-var=NAME";
    Runtime.At = {Read->Literal.File, Read->Literal.Line, Read->Literal.Column,
                  Read->Literal.Offset, Read->Literal.Length};
    State.StaticNotes.push_back(std::move(Runtime));
    return;
  }
  // Most C++ files an editor opens are no training program: only one with a
  // training loop is told that its batch size was not found.
  for (const TrainingLoop &Loop : State.Model.TrainingLoops) {
    Finding Missing;
    Missing.Rule = rules::batchSize().Id.str();
    Missing.Level = DiagLevel::Warning;
    Missing.Message =
        "no training batch size found for this training loop; name the "
        "variable, field or macro with --batch-size-var=NAME "
        "(initializationOptions.arguments or .skyline.yaml)";
    Missing.At = {Loop.File, Loop.Line, Loop.Column, Loop.LoopOffset, 1};
    State.StaticNotes.push_back(std::move(Missing));
  }
}

void Server::attachMeasurement(AnalysisInputs &In, Analyzed &Result) {
  if (!*In.Report) {
    Result.Error = llvm::toString(In.Report->takeError());
    return;
  }
  SavedReport Saved = std::move(**In.Report);
  // The program's key as it is now, for the files the report describes.
  auto TorchDir = findTorchDir(In.Options.TorchDir, In.Options.BuildPath);
  std::string Torch = TorchDir ? *TorchDir : "";
  if (!TorchDir)
    llvm::consumeError(TorchDir.takeError());
  MeasurementKey Now = currentMeasurementKey(*In.Setup.Database, Saved.Program,
                                             Torch, In.Options.Measure.Device);
  std::string ReportPath = In.ReportPath;
  if (ReportOption.empty() && Saved.Key != Now) {
    std::string Kept = keptReportPath(In.WorkDir, Now);
    if (llvm::sys::fs::exists(Kept)) {
      auto Exact = readReport(Kept);
      if (!Exact) {
        Logger::error("{0}", llvm::toString(Exact.takeError()));
      } else if (Exact->Key == Now) {
        makeReportPathsAbsolute(*Exact, In.Root);
        Saved = std::move(*Exact);
        ReportPath = Kept;
      }
    }
  }
  std::vector<std::string> Changes;
  if (Saved.Key)
    Changes = keyChanges(*Saved.Key, Now);
  LogMessage(json::Object{
      {"type", 4},
      {"message",
       llvm::formatv("skyline-lsp: {0}: measurement {1}{2}; the program's "
                     "key now: {3} (sources {4}, compile_flags {5}, "
                     "libtorch {6}, device {7})",
                     In.File, ReportPath,
                     !Saved.Key        ? std::string(" (written without a key)")
                     : Changes.empty() ? std::string(" (the same key)")
                                       : " (measured before the change: " +
                                             llvm::join(Changes, ", ") + ")",
                     keyName(Now), Now.Sources, Now.Flags, Now.LibTorch,
                     Now.Device)
           .str()}});
  if (reportDescribes(Saved, In.File, In.Root))
    loadMeasurement(Result.State, std::move(Saved), ReportPath, Changes);
}

void Server::publish(const std::string &File, const Analyzed &Result,
                     const Document &Doc) {
  publishByUri(File, diagnosticsByFile(File, Result, Doc), Doc);
}

std::map<std::string, json::Array>
Server::diagnosticsByFile(const std::string &File, const Analyzed &Result,
                          const Document &Doc) {
  std::map<std::string, json::Array> ByFile;
  std::string AnalyzedFile = Result.pathOf(File);
  ByFile[AnalyzedFile];
  if (!Result.Error.empty() && Result.CompileErrors.empty()) {
    ByFile[AnalyzedFile].push_back(
        json::Object{{"range", rangeJSON({0, 0}, {0, 0})},
                     {"severity", 1},
                     {"source", "skyline-lsp"},
                     {"message", Result.Error}});
  }
  // Clang's errors where it put them, in the text it parsed (the file as
  // saved; the editor's text where that is the file's).
  for (const CompileError &E : Result.CompileErrors) {
    std::string Text;
    if (realPathOf(E.File) == Doc.RealPath)
      Text = Doc.Text;
    else if (auto Buffer = readSourceBuffer(E.File))
      Text = Buffer->getBuffer().str();
    TextIndex Index(std::move(Text));
    unsigned Begin = Index.offsetOf(E.Line, E.Column);
    ByFile[E.File].push_back(json::Object{
        {"range", rangeJSON(Index.position(Begin), Index.position(Begin))},
        {"severity", 1},
        {"source", "clang"},
        {"message", E.Message}});
  }
  // A finding's range in the editor's text; none where its line changed.
  auto RangeOf = [&](const Finding &F) -> std::optional<json::Value> {
    if (F.At.File.empty())
      return std::nullopt;
    auto Text = Result.Texts.find(F.At.File);
    if (Text == Result.Texts.end())
      return std::nullopt;
    unsigned Begin = Text->second.offsetOf(F.At.Line, F.At.Column);
    LspPosition Start = Text->second.position(Begin);
    LspPosition End = Text->second.position(Begin + F.At.Length);
    if (F.At.File == AnalyzedFile) {
      LineMap Lines(Text->second.text(), Doc.Text);
      std::optional<int> Line = Lines.map(Start.Line);
      if (!Line)
        return std::nullopt;
      End.Line += *Line - Start.Line;
      Start.Line = *Line;
    }
    return rangeJSON(Start, End);
  };
  auto Add = [&](const Finding &F, llvm::ArrayRef<Finding> Notes) {
    std::optional<json::Value> Range = RangeOf(F);
    if (!Range)
      return;
    json::Object Diagnostic{
        {"range", std::move(*Range)},
        {"severity", severity(F)},
        {"source", "skyline-check"},
        {"message", Result.FromBefore
                        ? F.Message + " (from the last analysis that "
                                      "compiled: the code does not now)"
                        : F.Message}};
    if (!F.Rule.empty())
      Diagnostic["code"] = F.Rule;
    if (const RuleInfo *Rule = findRule(F.Rule))
      if (!Rule->DocsPage.empty())
        Diagnostic["data"] = json::Object{{"docs", Rule->DocsPage}};
    // The notes the terminal prints under a warning (where the layer is
    // made, the learning rate to scale) are its related locations too.
    json::Array Related;
    for (const Finding &Note : Notes) {
      std::optional<json::Value> NoteRange = RangeOf(Note);
      std::string Uri = uriFor(Note.At.File);
      if (Uri.empty())
        continue;
      if (NoteRange)
        Related.push_back(json::Object{
            {"location",
             json::Object{{"uri", Uri}, {"range", std::move(*NoteRange)}}},
            {"message", Note.Message}});
    }
    if (!Related.empty())
      Diagnostic["relatedInformation"] = std::move(Related);
    ByFile[F.At.File].push_back(std::move(Diagnostic));
  };
  // A note without a rule (the batch size's path) belongs to the one above.
  const std::vector<Finding> &Static = Result.State.StaticNotes;
  for (size_t I = 0; I < Static.size(); ++I) {
    size_t End = I + 1;
    while (End < Static.size() && Static[End].Rule.empty())
      ++End;
    Add(Static[I], llvm::ArrayRef<Finding>(Static).slice(I + 1, End - I - 1));
    I = End - 1;
  }
  const std::vector<Finding> &Measured = Result.State.Measured;
  for (size_t I = 0; I < Measured.size(); ++I) {
    size_t End = I + 1;
    if (Measured[I].Level == DiagLevel::Warning)
      while (End < Measured.size() && Measured[End].Level == DiagLevel::Note &&
             Measured[End].Rule == Measured[I].Rule)
        ++End;
    Add(Measured[I],
        llvm::ArrayRef<Finding>(Measured).slice(I + 1, End - I - 1));
  }
  return ByFile;
}

void Server::publishByUri(const std::string &File,
                          std::map<std::string, json::Array> ByFile,
                          const Document &Doc) {
  // Each file by the URI the client knows it by (a link it opened).
  std::map<std::string, json::Array> ByUri;
  for (auto &[Path, Diagnostics] : ByFile) {
    std::string Uri = uriFor(Path);
    if (Uri.empty())
      continue;
    json::Array &Into = ByUri[Uri];
    for (json::Value &Diagnostic : Diagnostics)
      Into.push_back(std::move(Diagnostic));
  }
  std::vector<std::pair<std::string, std::vector<json::Array>>> Send;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    std::set<std::string> &Mine = Published[File];
    std::set<std::string> Touched = Mine;
    for (const auto &[Uri, Diagnostics] : ByUri)
      Touched.insert(Uri);
    for (const std::string &Uri : Touched) {
      auto &Parts = Contributions[Uri];
      auto It = ByUri.find(Uri);
      if (It == ByUri.end())
        Parts.erase(File); // cleared where nothing is left
      else
        Parts[File] = It->second;
      std::vector<json::Array> All;
      for (const auto &[Owner, Part] : Parts)
        All.push_back(Part);
      if (Parts.empty())
        Contributions.erase(Uri);
      Send.push_back({Uri, std::move(All)});
    }
    Mine.clear();
    for (const auto &[Uri, Diagnostics] : ByUri)
      Mine.insert(Uri);
  }
  std::string Own = Doc.Uri.uri().str();
  for (const auto &[Uri, Parts] : Send)
    sendDiagnostics(Uri, Parts,
                    Uri == Own ? std::optional<int64_t>(Doc.Version)
                               : std::nullopt);
}

void Server::onHover(const mlir::lsp::TextDocumentPositionParams &Params,
                     Callback<json::Value> Reply) {
  Document Doc;
  if (!snapshot(Params.textDocument.uri.file(), Doc) || !Doc.Latest)
    return Reply(nullptr);
  const Analyzed &Result = *Doc.Latest;
  std::string File = Result.pathOf(Params.textDocument.uri.file());
  auto Text = Result.Texts.find(File);
  if (Text == Result.Texts.end())
    return Reply(nullptr);
  LineMap Lines(Text->second.text(), Doc.Text);
  std::optional<int> Line = Lines.unmap(Params.position.line);
  if (!Line)
    return Reply(nullptr);
  const ProgramState &State = Result.State;
  std::optional<std::string> Markdown;
  if (State.Model.BatchSize && State.Model.BatchSize->Literal.File == File &&
      int(State.Model.BatchSize->Literal.Line) == *Line + 1)
    Markdown = batchSizeHover(State, HoverMarkdown);
  else
    Markdown = layerHover(State, File, *Line + 1, HoverMarkdown);
  if (!Markdown)
    Markdown = experimentHover(State, File, *Line + 1, HoverMarkdown);
  if (!Markdown)
    return Reply(nullptr);
  Reply(json::Object{
      {"contents",
       json::Object{{"kind", HoverMarkdown ? "markdown" : "plaintext"},
                    {"value", *Markdown}}}});
}

void Server::onInlayHint(const mlir::lsp::InlayHintsParams &Params,
                         Callback<json::Value> Reply) {
  Document Doc;
  json::Array Hints;
  if (!snapshot(Params.textDocument.uri.file(), Doc) || !Doc.Latest)
    return Reply(std::move(Hints));
  const Analyzed &Result = *Doc.Latest;
  std::string File = Result.pathOf(Params.textDocument.uri.file());
  auto Text = Result.Texts.find(File);
  if (Text == Result.Texts.end())
    return Reply(std::move(Hints));
  LineMap Lines(Text->second.text(), Doc.Text);
  for (const InlayHintAt &Hint : inlayHints(Result.State)) {
    if (Hint.File != File)
      continue;
    LspPosition At = Text->second.position(Hint.Offset);
    std::optional<int> Line = Lines.map(At.Line);
    if (!Line || *Line < Params.range.start.line ||
        *Line > Params.range.end.line)
      continue;
    At.Line = *Line;
    Hints.push_back(json::Object{{"position", toJSONPosition(At)},
                                 {"label", Hint.Label},
                                 {"paddingLeft", Hint.PaddingLeft},
                                 {"paddingRight", !Hint.PaddingLeft}});
  }
  Reply(std::move(Hints));
}

/// A quickfix of Action's edits, placed on the text as the editor has it
/// (Lines maps File's analyzed lines onto it); none where an edit's line
/// changed since the analysis or its file has no URI.
std::optional<json::Object>
Server::quickfixJSON(const BatchSizeAction &Action, const Analyzed &Result,
                     llvm::StringRef File, const LineMap &Lines,
                     const json::Array &Fixed) {
  std::map<std::string, json::Array> Changes;
  for (const TextEdit &Edit : Action.Fix.Edits) {
    auto EditText = Result.Texts.find(Edit.Range.File);
    if (EditText == Result.Texts.end())
      return std::nullopt;
    LspPosition Start = EditText->second.position(Edit.Range.Offset);
    LspPosition End =
        EditText->second.position(Edit.Range.Offset + Edit.Range.Length);
    if (Edit.Range.File == File) {
      std::optional<int> S = Lines.map(Start.Line), E = Lines.map(End.Line);
      if (!S || !E)
        return std::nullopt; // the edited line changed since the analysis
      Start.Line = *S;
      End.Line = *E;
    }
    std::string Uri = uriFor(Edit.Range.File);
    if (Uri.empty())
      return std::nullopt;
    Changes[Uri].push_back(json::Object{{"range", rangeJSON(Start, End)},
                                        {"newText", Edit.Text}});
  }
  json::Object ChangesJSON;
  for (auto &[Uri, Edits] : Changes)
    ChangesJSON[Uri] = std::move(Edits);
  json::Object Item{{"title", Action.Title},
                    {"kind", "quickfix"},
                    {"edit", json::Object{{"changes", std::move(ChangesJSON)}}}};
  if (Action.Preferred) {
    Item["isPreferred"] = true;
    if (!Fixed.empty())
      Item["diagnostics"] = json::Array(Fixed);
  }
  return Item;
}

void Server::onCodeAction(const mlir::lsp::CodeActionParams &Params,
                          Callback<json::Value> Reply) {
  Document Doc;
  json::Array Actions;
  if (!snapshot(Params.textDocument.uri.file(), Doc) || !Doc.Latest)
    return Reply(std::move(Actions));
  const Analyzed &Result = *Doc.Latest;
  std::string File = Result.pathOf(Params.textDocument.uri.file());
  const ProgramState &State = Result.State;
  auto Text = Result.Texts.find(File);
  if (Text == Result.Texts.end())
    return Reply(std::move(Actions));
  LineMap Lines(Text->second.text(), Doc.Text);
  // The line (0-based, in the editor's text) of a 1-based analyzed line
  // within the requested range.
  auto InRange = [&](unsigned Line) -> std::optional<int> {
    std::optional<int> At = Lines.map(int(Line) - 1);
    if (!At || *At < Params.range.start.line || *At > Params.range.end.line)
      return std::nullopt;
    return At;
  };
  // The diagnostics the client sent on Line whose message starts with
  // Prefix: the actions fix them.
  auto FixedAt = [&](int Line, llvm::StringRef Prefix) {
    json::Array Fixed;
    for (const mlir::lsp::Diagnostic &D : Params.context.diagnostics)
      if (D.range.start.line == Line && D.source == "skyline-check" &&
          llvm::StringRef(D.message).starts_with(Prefix))
        Fixed.push_back(mlir::lsp::toJSON(D));
    return Fixed;
  };
  // Each experiment's fix-it, on the line of its warning.
  for (const BatchSizeAction &Action :
       experimentActions(State, Params.context.only)) {
    std::optional<int> Line = Action.Fix.At.File == File
                                  ? InRange(Action.Fix.At.Line)
                                  : std::nullopt;
    if (!Line)
      continue;
    llvm::StringRef Name = Action.Fix.Rule;
    Name.consume_front("skyline-experiment-");
    std::string Prefix = ("experiment " + Name + ":").str();
    if (std::optional<json::Object> Item =
            quickfixJSON(Action, Result, File, Lines, FixedAt(*Line, Prefix)))
      Actions.push_back(std::move(*Item));
  }
  if (!State.Model.BatchSize || State.Model.BatchSize->Literal.File != File)
    return Reply(std::move(Actions));
  std::optional<int> Literal = InRange(State.Model.BatchSize->Literal.Line);
  if (!Literal)
    return Reply(std::move(Actions));
  json::Array Fixed = FixedAt(*Literal, "");
  for (const BatchSizeAction &Action :
       batchSizeActions(State, Params.context.only))
    if (std::optional<json::Object> Item =
            quickfixJSON(Action, Result, File, Lines, Fixed))
      Actions.push_back(std::move(*Item));
  // A bare Command: every client runs one (a CodeAction holding a command
  // is read as a Command by some, lsprotocol's among them).
  if (!Options.SkylineCheck.empty() && Params.context.only.empty())
    Actions.push_back(
        json::Object{{"title", "Measure the batch sizes (skyline-check)"},
                     {"command", MeasureCommand},
                     {"arguments", json::Array{Doc.Uri.uri().str()}}});
  Reply(std::move(Actions));
}

void Server::onExecuteCommand(const RawParams &Params,
                              Callback<json::Value> Reply) {
  const json::Object *Object = Params.Value.getAsObject();
  std::optional<llvm::StringRef> Command =
      Object ? Object->getString("command") : std::nullopt;
  const json::Array *Arguments =
      Object ? Object->getArray("arguments") : nullptr;
  auto Fail = [&](mlir::lsp::ErrorCode Code, const llvm::Twine &Message) {
    Reply(llvm::make_error<mlir::lsp::LSPError>(Message.str(), Code));
  };
  if (!Command || *Command != MeasureCommand || Options.SkylineCheck.empty())
    return Fail(mlir::lsp::ErrorCode::InvalidParams,
                "unknown command '" + Command.value_or("") +
                    "' (skyline-lsp has " + MeasureCommand + ")");
  std::optional<llvm::StringRef> Uri = Arguments && !Arguments->empty()
                                           ? (*Arguments)[0].getAsString()
                                           : std::nullopt;
  if (!Uri)
    return Fail(mlir::lsp::ErrorCode::InvalidParams,
                llvm::Twine(MeasureCommand) +
                    " takes the document's URI as its argument");
  auto Parsed = URIForFile::fromURI(*Uri);
  if (!Parsed)
    return Fail(mlir::lsp::ErrorCode::InvalidParams,
                llvm::toString(Parsed.takeError()));
  auto Job = std::make_shared<MeasureJob>();
  Job->File = Parsed->file().str();
  if (const json::Value *Token = Object->get("workDoneToken")) {
    Job->Token = *Token;
    Job->ClientToken = true;
  }
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (Measuring.count(Job->File))
      return Fail(mlir::lsp::ErrorCode::RequestFailed,
                  "a measurement of " + Job->File +
                      " is already running: cancel it first");
    Measuring[Job->File] = Job;
    MeasureThreads.emplace_back([this, Job] { measure(Job); });
  }
  // Answered at once: the runs take a minute or more, and the server
  // answers everything else meanwhile.
  Reply(nullptr);
}

void Server::onCancelProgress(const RawParams &Params) {
  const json::Object *Object = Params.Value.getAsObject();
  const json::Value *Token = Object ? Object->get("token") : nullptr;
  if (!Token)
    return;
  std::lock_guard<std::mutex> Lock(Mutex);
  for (auto &[File, Job] : Measuring)
    if (Job->Token == *Token)
      Job->Cancel = true;
}

/// The last line of Text that has anything on it (a run's line is written
/// in two parts: "run 2/6 at batch size 128..." then its figures).
static llvm::StringRef lastLine(llvm::StringRef Text) {
  Text = Text.rtrim();
  size_t NewLine = Text.rfind('\n');
  return NewLine == llvm::StringRef::npos ? Text : Text.drop_front(NewLine + 1);
}

void Server::createProgress(MeasureJob &Job) {
  if (Job.ClientToken || !CanShowProgress)
    return;
  std::string Token = nextId("measure");
  std::string Id = nextId("progress");
  auto Created = std::make_shared<std::promise<bool>>();
  std::future<bool> Answer = Created->get_future();
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    ProgressCreated[llvm::formatv("{0}", json::Value(Id)).str()] = Created;
  }
  CreateProgress(json::Object{{"token", Token}}, Id);
  // A client that never answers shows no progress, and the measurement
  // goes on.
  if (Answer.wait_for(std::chrono::seconds(10)) == std::future_status::ready &&
      Answer.get())
    Job.Token = Token;
  std::lock_guard<std::mutex> Lock(Mutex);
  ProgressCreated.erase(llvm::formatv("{0}", json::Value(Id)).str());
}

/// How long File's instrumented build took last: this session's last
/// measurement of it, else its work directory's latest report, else about
/// a LibTorch program's first build.
double Server::expectedBuildSeconds(const std::string &File) {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = LastBuildSeconds.find(File);
    if (It != LastBuildSeconds.end())
      return It->second;
  }
  std::vector<std::string> Arguments = Options.Arguments;
  llvm::append_range(Arguments, InitArguments);
  auto Parsed = Options.ParseArguments(argumentsFor(Arguments, File));
  if (!Parsed) {
    llvm::consumeError(Parsed.takeError());
    return 30;
  }
  std::string Latest = latestReportPath(workDirectoryFor(*Parsed));
  if (!llvm::sys::fs::exists(Latest))
    return 30;
  auto Report = readReport(Latest);
  if (!Report) {
    llvm::consumeError(Report.takeError());
    return 30;
  }
  return Report->BuildSeconds > 0 ? Report->BuildSeconds : 30;
}

/// Reads the lines of skyline-check's log past Seen into the bar; the
/// last, unfinished one too (a run's line is written in two parts, "run
/// 2/6 at batch size 128..." then its figures: its start counts at once).
static void observeNewLines(llvm::StringRef Log, size_t &Seen,
                            MeasureProgress &Bar, double Now) {
  llvm::StringRef New = Log.drop_front(std::min(Log.size(), Seen));
  size_t Complete = New.rfind('\n');
  if (Complete != llvm::StringRef::npos) {
    for (llvm::StringRef Line : llvm::split(New.take_front(Complete), '\n'))
      if (Line.consume_front("skyline-check: "))
        Bar.observe(Line, Now);
    Seen += Complete + 1;
    New = New.drop_front(Complete + 1);
  }
  if (New.consume_front("skyline-check: "))
    Bar.observe(New, Now);
}

void Server::measure(std::shared_ptr<MeasureJob> Job) {
  createProgress(*Job);
  MeasureProgress Bar(expectedBuildSeconds(Job->File));
  progress(*Job, json::Object{{"kind", "begin"},
                              {"title", ("skyline-check: measuring " +
                                         llvm::sys::path::filename(Job->File))
                                            .str()},
                              {"cancellable", true},
                              {"percentage", 0}});
  MeasureRun Run = startSkylineCheck(*Job);
  if (Run.Child.Pid > 0)
    followRun(*Job, Run, Bar);
  std::string Outcome = outcomeOf(Run);
  progress(*Job, json::Object{{"kind", "end"}, {"message", Outcome}});
  if (std::optional<double> Build = Bar.buildSeconds()) {
    std::lock_guard<std::mutex> Lock(Mutex);
    LastBuildSeconds[Job->File] = *Build;
  }
  if (!Run.Terminated && Run.Code != 0)
    ShowMessage(
        json::Object{{"type", 1}, {"message", "skyline-check: " + Outcome}});
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Measuring.erase(Job->File);
  }
  // The new report: diagnostics, hints and hovers come from it.
  if (Run.Code == 0)
    schedule(Job->File);
}

MeasureRun Server::startSkylineCheck(const MeasureJob &Job) {
  MeasureRun Run;
  std::vector<std::string> Arguments = Options.Arguments;
  llvm::append_range(Arguments, InitArguments);
  Arguments = argumentsFor(Arguments, Job.File);
  std::vector<llvm::StringRef> Argv{Options.SkylineCheck};
  for (const std::string &Arg : Arguments)
    Argv.push_back(Arg);
  llvm::sys::fs::createTemporaryFile("skyline-measure", "out", Run.OutPath);
  llvm::sys::fs::createTemporaryFile("skyline-measure", "err", Run.ErrPath);
  // stdin is /dev/null: the server's own is the protocol.
  std::optional<llvm::StringRef> Redirects[] = {
      llvm::StringRef(""), Run.OutPath.str(), Run.ErrPath.str()};
  Run.Error = "the server is ending";
  std::lock_guard<std::mutex> Lock(ChildrenMutex);
  if (Ending)
    return Run;
  Run.Error.clear();
  Run.Child = llvm::sys::ExecuteNoWait(Options.SkylineCheck, Argv, std::nullopt,
                                       Redirects, 0, &Run.Error);
  if (Run.Child.Pid > 0)
    MeasurePids.insert(Run.Child.Pid);
  return Run;
}

void Server::followRun(MeasureJob &Job, MeasureRun &Run, MeasureProgress &Bar) {
  auto Began = std::chrono::steady_clock::now();
  auto Since = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         Began)
        .count();
  };
  std::string Shown;
  size_t Seen = 0; // of the log, the lines the bar has read
  int ShownAt = 0;
  for (;;) {
    llvm::sys::ProcessInfo Done =
        llvm::sys::Wait(Run.Child, 0, &Run.Error, nullptr, true);
    if (auto Buffer = llvm::MemoryBuffer::getFile(Run.ErrPath))
      Run.Log = (*Buffer)->getBuffer().str();
    observeNewLines(Run.Log, Seen, Bar, Since());
    // The latest line is the message; the percentage moves with the time.
    std::string Line = lastLine(Run.Log).str();
    llvm::StringRef Message = Line;
    Message.consume_front("skyline-check: ");
    int Percentage = Bar.percentage(Since());
    if ((!Message.empty() && Message != Shown) || Percentage != ShownAt) {
      Shown = Message.str();
      ShownAt = Percentage;
      progress(Job, json::Object{{"kind", "report"},
                                 {"message", Shown},
                                 {"percentage", Percentage}});
    }
    if (Done.Pid != 0) {
      Run.Code = Done.ReturnCode;
      break;
    }
    if (Job.Cancel && !Run.Terminated) {
      // skyline-check stops everything it started and ends (143).
      ::kill(Run.Child.Pid, SIGTERM);
      Run.Terminated = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::lock_guard<std::mutex> Lock(ChildrenMutex);
  MeasurePids.erase(Run.Child.Pid);
}

std::string Server::outcomeOf(const MeasureRun &Run) {
  std::string Output;
  if (auto Buffer = llvm::MemoryBuffer::getFile(Run.OutPath))
    Output = (*Buffer)->getBuffer().str();
  llvm::sys::fs::remove(Run.OutPath);
  llvm::sys::fs::remove(Run.ErrPath);
  if (Run.Child.Pid <= 0)
    return "could not start " + Options.SkylineCheck + ": " + Run.Error;
  if (Run.Terminated)
    return "cancelled";
  if (Run.Code != 0) {
    // Its error line, as the terminal shows it.
    llvm::StringRef Log = Run.Log;
    llvm::StringRef Why = lastLine(Log);
    size_t At = Log.rfind("error: ");
    if (At != llvm::StringRef::npos)
      Why = Log.drop_front(At).take_until([](char C) { return C == '\n'; });
    return "failed (exit " + std::to_string(Run.Code) + "): " + Why.str();
  }
  std::string Outcome = "measured";
  size_t At = Output.find("suggested batch size:");
  if (At != std::string::npos)
    Outcome += "; " + llvm::StringRef(Output)
                          .drop_front(At)
                          .take_until([](char C) { return C == '\n'; })
                          .str();
  return Outcome;
}

} // namespace

int runLspServer(std::FILE *In, llvm::raw_ostream &Out,
                 const LspServerOptions &Options) {
  // The transport reads only what the filter passes (LspInputFilter.h).
  LspInputFilter Filter(::fileno(In));
  std::FILE *Filtered = Filter.open();
  if (!Filtered) {
    Logger::error("cannot read the client's messages: {0}",
                  std::strerror(errno));
    return 1;
  }
  mlir::lsp::JSONTransport Transport(Filtered, Out);
  Server TheServer(Transport, Options);
  llvm::Error Ended = Transport.run(TheServer.Handler);
  int Code = 0;
  if (Ended) {
    // The input ended without `exit`: the client is gone.
    Logger::error("the client went away: {0}",
                  llvm::toString(std::move(Ended)));
    Code = 1;
  } else if (!TheServer.ShutdownReceived) {
    Code = 1; // `exit` without `shutdown`, as the protocol says
  }
  // Nothing the server started outlives it, nor keeps it waiting: the
  // preamble's clang is killed (the worker waiting for it ends), each
  // measurement stopped.
  TheServer.stop();
  TheServer.endChildren();
  TheServer.stopMeasurements();
  if (!TheServer.workerIdle()) {
    // A parse in progress is not waited for (it can take seconds): the
    // process ends now, its answers written.
    Out.flush();
    std::fflush(stderr);
    std::_Exit(Code);
  }
  TheServer.join();
  std::fclose(Filtered);
  return Code;
}

} // namespace skyline
