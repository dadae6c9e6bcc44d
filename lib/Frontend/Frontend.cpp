//===- Frontend.cpp - Parse the program, run the finders, merge -----------===//
//
// Each source is parsed with its compile command; the finders run over the
// program's own declarations only (the traversal scope), which keeps the cost
// close to parsing. Records from all translation units are then merged:
// a header seen by several sources counts once, and module names are
// resolved program-wide (a member built in one file is called in another).
//
//===----------------------------------------------------------------------===//

#include "skyline/Frontend.h"

#include "skyline/Config.h"
#include "skyline/FileHash.h"

#include "BatchSizeTracer.h"
#include "Finders.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Basic/DiagnosticLex.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>

using namespace clang;

namespace skyline {
namespace {

using namespace frontend;

/// What every translation unit contributed, before merging.
struct Collected {
  std::vector<ModuleFindings> Modules;
  std::vector<SourceSpan> SaveCalls;
  ThreadSettings Threads;
  std::vector<DataLoaderSite> Loaders;
  std::vector<EvaluationLoop> EvaluationLoops;
  std::set<std::string> Files;
  std::set<std::string> SystemFiles;
  std::vector<TrainingLoop> Loops;
  std::vector<BatchSizeFindings> BatchSizes; // one a translation unit
  std::vector<OptionDefault> OptionDefaults; // of every source
  std::optional<BatchSizeSite> Named;
  unsigned Analyzed = 0; // translation units whose AST was read
};

std::optional<BatchSizeSite>
namedMacro(const TUContext &TU, const Preprocessor &PP, llvm::StringRef Name) {
  const IdentifierInfo *II = PP.getIdentifierInfo(Name);
  const MacroInfo *MI = II ? PP.getMacroInfo(II) : nullptr;
  if (!MI || MI->getNumTokens() != 1 ||
      !MI->getReplacementToken(0).is(tok::numeric_constant))
    return std::nullopt;
  const Token &Literal = MI->getReplacementToken(0);
  BatchSizeSite Site;
  Site.Name = Name.str();
  Site.Kind = BatchSizeKind::Macro;
  Site.Literal = TU.tokenSpan(Literal.getLocation());
  llvm::StringRef Text(Literal.getLiteralData(), Literal.getLength());
  long long Value = 0;
  if (Text.getAsInteger(0, Value))
    return std::nullopt;
  Site.Value = Value;
  Site.Chain = {{"named by --batch-size-var", "", 0},
                {"definition of macro " + Site.Name, Site.Literal.File,
                 Site.Literal.Line}};
  return Site;
}

/// The callee of each torch::save call: runs make it a no-op.
void findSaveCalls(const TUContext &TU, std::vector<SourceSpan> &Out) {
  using namespace clang::ast_matchers;
  auto Save =
      callExpr(callee(functionDecl(hasName("::torch::save")))).bind("n");
  for (const CallExpr *Call : TU.findAll<CallExpr>(Save))
    if (const auto *Ref =
            dyn_cast<DeclRefExpr>(Call->getCallee()->IgnoreImplicit());
        Ref && !Ref->getBeginLoc().isMacroID())
      Out.push_back(TU.spanOf(Ref->getSourceRange()));
}

/// Records every file the preprocessor enters: the program's own, and the
/// system headers apart.
class FileRecorder : public PPCallbacks {
public:
  FileRecorder(const SourceManager &SM, std::set<std::string> &Files,
               std::set<std::string> &SystemFiles)
      : SM(SM), Files(Files), SystemFiles(SystemFiles) {}
  void FileChanged(SourceLocation Loc, FileChangeReason Reason,
                   SrcMgr::CharacteristicKind Kind, FileID) override {
    if (Reason != EnterFile)
      return;
    OptionalFileEntryRef Entry = SM.getFileEntryRefForID(SM.getFileID(Loc));
    if (!Entry)
      return;
    (Kind == SrcMgr::C_User ? Files : SystemFiles)
        .insert(normalizedPath(Entry->getName()));
  }

private:
  const SourceManager &SM;
  std::set<std::string> &Files, &SystemFiles;
};

class AnalysisConsumer : public ASTConsumer {
public:
  AnalysisConsumer(CompilerInstance &CI, Collected &Out,
                   const FrontendOptions &Options)
      : CI(CI), Out(Out), Options(Options) {}

  bool HandleTopLevelDecl(DeclGroupRef Group) override {
    const SourceManager &SM = CI.getSourceManager();
    for (Decl *D : Group) {
      SourceLocation Loc = SM.getExpansionLoc(D->getLocation());
      if (Loc.isValid() && !SM.isInSystemHeader(Loc))
        UserDecls.push_back(D);
    }
    return true;
  }

  /// LibTorch's headers are most of the parse, and every analysis looks at
  /// the user's code only: the bodies of ordinary functions in system
  /// headers are skipped (Sema still parses those it must: constexpr,
  /// deduced return types). Templates keep theirs: instantiating one (a
  /// module holder's constructor making the user's module) instantiates
  /// the user's code the analyses read. The user's own headers keep all.
  bool shouldSkipFunctionBody(Decl *D) override {
    const SourceManager &SM = CI.getSourceManager();
    if (!SM.isInSystemHeader(SM.getExpansionLoc(D->getLocation())))
      return false;
    if (D->isTemplated())
      return false;
    return true;
  }

  void HandleTranslationUnit(ASTContext &Ctx) override {
    if (Ctx.getDiagnostics().hasErrorOccurred() &&
        !Options.AcceptCompileErrors)
      return;
    ++Out.Analyzed;
    Ctx.setTraversalScope(UserDecls);
    TUContext TU(Ctx);
    Out.Modules.push_back(findModules(TU));
    LoopFindings Loops = findTrainingLoops(TU);
    for (const TrainingLoop &Loop : Loops.Loops)
      Out.Loops.push_back(Loop);
    Out.BatchSizes.push_back(findBatchSizes(TU, Loops));
    findEvaluationLoops(TU, Loops, Out.EvaluationLoops);
    for (OptionDefault &Option : BatchSizeTracer(TU).optionDefaults())
      Out.OptionDefaults.push_back(std::move(Option));
    findSaveCalls(TU, Out.SaveCalls);
    findThreadSettings(TU, Out.Threads);
    findDataLoaders(TU, Out.Loaders);
    if (!Options.BatchSizeVar.empty() && !Out.Named) {
      Out.Named = findNamedBatchSize(TU, Options.BatchSizeVar);
      if (!Out.Named)
        Out.Named = namedMacro(TU, CI.getPreprocessor(), Options.BatchSizeVar);
    }
  }

private:
  CompilerInstance &CI;
  Collected &Out;
  const FrontendOptions &Options;
  std::vector<Decl *> UserDecls;
};

class AnalysisAction : public ASTFrontendAction {
public:
  AnalysisAction(Collected &Out, const FrontendOptions &Options)
      : Out(Out), Options(Options) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI,
                                                 llvm::StringRef) override {
    CI.getPreprocessor().addPPCallbacks(std::make_unique<FileRecorder>(
        CI.getSourceManager(), Out.Files, Out.SystemFiles));
    // Read by ExecuteAction, after this: AnalysisConsumer says which.
    CI.getFrontendOpts().SkipFunctionBodies = true;
    if (Options.AcceptCompileErrors) {
      // A header of another machine is skipped, not the end of the parse:
      // after a fatal error clang instantiates no template, and a module
      // holder's constructor is one. No error limit, for the same reason.
      CI.getDiagnostics().setSeverity(diag::err_pp_file_not_found,
                                      diag::Severity::Error, SourceLocation());
      CI.getDiagnostics().setErrorLimit(0);
    }
    return std::make_unique<AnalysisConsumer>(CI, Out, Options);
  }

private:
  Collected &Out;
  const FrontendOptions &Options;
};

class AnalysisActionFactory : public tooling::FrontendActionFactory {
public:
  AnalysisActionFactory(Collected &Out, const FrontendOptions &Options)
      : Out(Out), Options(Options) {}
  std::unique_ptr<FrontendAction> create() override {
    return std::make_unique<AnalysisAction>(Out, Options);
  }

private:
  Collected &Out;
  const FrontendOptions &Options;
};

//===----------------------------------------------------------------------===//
// Merging
//===----------------------------------------------------------------------===//

std::string shortTypeName(llvm::StringRef Type) {
  size_t Colon = Type.rfind("::");
  return (Colon == llvm::StringRef::npos ? Type : Type.substr(Colon + 2)).str();
}

class ModuleMerger {
public:
  explicit ModuleMerger(const std::vector<ModuleFindings> &All) {
    llvm::StringSet<> SeenCalls;
    for (const ModuleFindings &TU : All) {
      for (const RawConstruction &C : TU.Constructions)
        if (!ById.count(C.Id)) {
          ById[C.Id] = Constructions.size();
          Constructions.push_back(C);
        }
      for (const RawRegistration &R : TU.Registrations)
        Registrations.try_emplace(R.OwnerKey, R);
      for (const RawModuleCall &Call : TU.Calls)
        if (SeenCalls
                .insert(Call.Call.File + "@" + std::to_string(Call.Call.Offset))
                .second)
          Calls.push_back(Call);
    }
    std::stable_sort(Constructions.begin(), Constructions.end(),
                     [](const RawConstruction &A, const RawConstruction &B) {
                       return std::tie(A.Site.File, A.Site.Line,
                                       A.Site.Column) <
                              std::tie(B.Site.File, B.Site.Line, B.Site.Column);
                     });
    ById.clear();
    for (size_t I = 0; I < Constructions.size(); ++I) {
      ById[Constructions[I].Id] = I;
      // Children name their parent by its expression.
      if (!Constructions[I].ExprId.empty())
        ById.try_emplace(Constructions[I].ExprId, I);
      if (!Constructions[I].OwnerKey.empty())
        ByOwner.try_emplace(Constructions[I].OwnerKey, I);
    }
    // push_back children are numbered after the parent's constructor arguments.
    std::map<std::string, int> Appended;
    for (RawConstruction &C : Constructions)
      if (C.AppendedChild)
        C.ChildIndex = Appended[C.ParentRef]++;
  }

  void emit(ProgramModel &Model) {
    Names.assign(Constructions.size(), "");
    for (size_t I = 0; I < Constructions.size(); ++I) {
      ModuleSite Site = Constructions[I].Site;
      Site.Name = nameOf(I, 0);
      Site.RegisteredAt = Constructions[I].RegisteredAt;
      if (Site.RegisteredAt.empty())
        if (auto It = Registrations.find(Constructions[I].OwnerKey);
            It != Registrations.end())
          Site.RegisteredAt = It->second.At;
      if (std::optional<size_t> Parent = parentOf(Constructions[I]))
        Site.Parent = nameOf(*Parent, 0);
      else if (llvm::StringRef(Constructions[I].ParentRef)
                   .starts_with(ThisParentPrefix))
        Site.Parent = llvm::StringRef(Constructions[I].ParentRef)
                          .drop_front(ThisParentPrefix.size())
                          .str();
      Model.Modules.push_back(std::move(Site));
    }
    // A registered module built where no construction is seen (a copy of a
    // parameter, a member set through a reference) is still a module.
    for (const auto &[OwnerKey, Registration] : Registrations) {
      if (ByOwner.count(OwnerKey) || Registration.Name.empty())
        continue;
      ModuleSite Site = Registration.Site;
      Site.Name = Registration.Name;
      Site.RegisteredAt = Registration.At;
      Model.Modules.push_back(std::move(Site));
    }
    std::stable_sort(Model.Modules.begin(), Model.Modules.end(),
                     [](const ModuleSite &A, const ModuleSite &B) {
                       return std::tie(A.File, A.Line, A.Column) <
                              std::tie(B.File, B.Line, B.Column);
                     });
    for (const RawModuleCall &Raw : Calls) {
      ModuleCall Call = Raw.Call;
      Call.Name = Raw.FallbackName;
      if (auto It = ByOwner.find(Raw.CalleeKey); It != ByOwner.end())
        Call.Name = nameOf(It->second, 0);
      else if (auto Reg = Registrations.find(Raw.CalleeKey);
               Reg != Registrations.end())
        Call.Name = Reg->second.Name;
      Model.ModuleCalls.push_back(std::move(Call));
    }
    std::stable_sort(Model.ModuleCalls.begin(), Model.ModuleCalls.end(),
                     [](const ModuleCall &A, const ModuleCall &B) {
                       return std::tie(A.File, A.Offset) <
                              std::tie(B.File, B.Offset);
                     });
  }

private:
  std::optional<size_t> parentOf(const RawConstruction &C) const {
    if (C.ParentRef.empty())
      return std::nullopt;
    if (auto It = ById.find(C.ParentRef); It != ById.end())
      return It->second;
    if (auto It = ByOwner.find(C.ParentRef); It != ByOwner.end())
      return It->second;
    return std::nullopt;
  }

  std::string nameOf(size_t I, int Depth) {
    if (!Names[I].empty())
      return Names[I];
    const RawConstruction &C = Constructions[I];
    std::string Name;
    if (!C.RegisteredName.empty())
      Name = C.RegisteredName;
    else if (auto It = Registrations.find(C.OwnerKey);
             !C.OwnerKey.empty() && It != Registrations.end())
      Name = It->second.Name;
    else if (llvm::StringRef(C.ParentRef).starts_with(ThisParentPrefix))
      Name = C.ChildName.empty() ? std::to_string(C.ChildIndex) : C.ChildName;
    else if (std::optional<size_t> Parent = parentOf(C); Parent && Depth < 16) {
      int Index = C.ChildIndex;
      if (C.AppendedChild)
        Index += Constructions[*Parent].NumArgs;
      Name = nameOf(*Parent, Depth + 1) + "." +
             (C.ChildName.empty() ? std::to_string(Index) : C.ChildName);
    } else if (!C.OwnerName.empty())
      Name = C.OwnerName;
    else
      Name = shortTypeName(C.Site.Type) + "@" + std::to_string(C.Site.Line);
    return Names[I] = Name;
  }

  std::vector<RawConstruction> Constructions;
  llvm::StringMap<size_t> ById, ByOwner;
  std::map<std::string, RawRegistration> Registrations;
  std::vector<RawModuleCall> Calls;
  std::vector<std::string> Names;
};

void appendUnique(std::vector<CallSite> &To,
                  const std::vector<CallSite> &From) {
  for (const CallSite &Site : From)
    if (llvm::none_of(To, [&](const CallSite &S) {
          return S.File == Site.File && S.Line == Site.Line &&
                 S.Column == Site.Column;
        }))
      To.push_back(Site);
}

void mergeLoops(const Collected &In, ProgramModel &Model) {
  for (const TrainingLoop &Loop : In.Loops) {
    auto It = llvm::find_if(Model.TrainingLoops, [&](const TrainingLoop &L) {
      return L.File == Loop.File && L.Line == Loop.Line &&
             L.Column == Loop.Column;
    });
    if (It == Model.TrainingLoops.end()) {
      Model.TrainingLoops.push_back(Loop);
      continue;
    }
    appendUnique(It->ZeroGradCalls, Loop.ZeroGradCalls);
    appendUnique(It->BackwardCalls, Loop.BackwardCalls);
    appendUnique(It->StepCalls, Loop.StepCalls);
    for (const OptimizerSite &Opt : Loop.Optimizers)
      if (llvm::none_of(It->Optimizers, [&](const OptimizerSite &O) {
            return O.File == Opt.File && O.Line == Opt.Line &&
                   O.Name == Opt.Name;
          }))
        It->Optimizers.push_back(Opt);
    for (const BatchShape &Shape : Loop.BatchShapes)
      if (llvm::none_of(It->BatchShapes, [&](const BatchShape &S) {
            return S.Call.Offset == Shape.Call.Offset &&
                   S.Call.File == Shape.Call.File &&
                   S.Variable == Shape.Variable;
          }))
        It->BatchShapes.push_back(Shape);
  }
}

/// Keeps the shapes whose dimension is the training batch size: its
/// variable by name (`kBatchSize`, the field `batch_size` of
/// `Options::batch_size`), or the declaration its literal initializes.
void keepBatchSizeShapes(ProgramModel &Model) {
  for (TrainingLoop &Loop : Model.TrainingLoops)
    llvm::erase_if(Loop.BatchShapes, [&](const BatchShape &Shape) {
      if (!Model.BatchSize)
        return true;
      const BatchSizeSite &Site = *Model.BatchSize;
      llvm::StringRef Name(Site.Name);
      size_t Separator = Name.find_last_of(":.");
      if (Separator != llvm::StringRef::npos)
        Name = Name.drop_front(Separator + 1);
      bool Declared = Shape.VariableLine == Site.Literal.Line &&
                      Shape.VariableFile == Site.Literal.File;
      return !(Declared || (!Name.empty() && Shape.Variable == Name));
    });
}

/// A module class whose constructor no source analyzed defines (it is
/// compiled in a library target, say): the layers it registers are not
/// seen, and the user can name that source too.
void warnOfModulesDefinedElsewhere(const Collected &In, ProgramModel &Model) {
  std::set<std::string> Defined;
  std::map<std::string, std::string> DeclaredOnly;
  for (const ModuleFindings &Found : In.Modules) {
    Defined.insert(Found.ClassesDefined.begin(), Found.ClassesDefined.end());
    DeclaredOnly.insert(Found.ClassesDeclaredOnly.begin(),
                        Found.ClassesDeclaredOnly.end());
  }
  for (const auto &[Class, At] : DeclaredOnly)
    if (!Defined.count(Class))
      Model.Warnings.push_back(
          "module class '" + Class + "' (" + At +
          ") has no constructor in the sources analyzed: the layers it "
          "registers are not seen; to see them, name the source that "
          "defines it too" +
          (Model.Sources.empty()
               ? std::string()
               : " (skyline-check " +
                     llvm::sys::path::filename(Model.Sources.front()).str() +
                     " <that source> ...)"));
}

/// Each loader once (a header's is seen by every source that includes it);
/// the training one is the training batch size's, else the only one.
void mergeLoaders(const std::vector<DataLoaderSite> &Found,
                  ProgramModel &Model) {
  std::set<std::pair<std::string, unsigned>> Seen;
  for (const DataLoaderSite &Loader : Found)
    if (Seen.insert({Loader.Call.File, Loader.Call.Offset}).second)
      Model.Loaders.push_back(Loader);
  const BatchSizeSite *Train = Model.BatchSize ? &*Model.BatchSize : nullptr;
  bool Marked = false;
  if (Train && Train->DatasetArgument)
    for (DataLoaderSite &Loader : Model.Loaders)
      if (Loader.Dataset.File == Train->DatasetArgument->File &&
          Loader.Dataset.Offset == Train->DatasetArgument->Offset)
        Marked = Loader.Training = true;
  if (!Marked && Model.Loaders.size() == 1)
    Model.Loaders.front().Training = true;
}

ProgramModel merge(Collected &In, llvm::ArrayRef<std::string> Sources,
                   const FrontendOptions &Options) {
  ProgramModel Model;
  for (const std::string &Source : Sources)
    Model.Sources.push_back(normalizedPath(Source));
  ModuleMerger(In.Modules).emit(Model);
  // A name the user gave that matches nothing is an answer too: no guessing.
  mergeBatchSizes(In.BatchSizes, In.OptionDefaults, In.Named,
                  !Options.BatchSizeVar.empty(), Model);
  mergeLoops(In, Model);
  keepBatchSizeShapes(Model);
  warnOfModulesDefinedElsewhere(In, Model);
  std::set<std::pair<std::string, unsigned>> SeenSaves;
  for (const SourceSpan &Save : In.SaveCalls)
    if (SeenSaves.insert({Save.File, Save.Offset}).second)
      Model.SaveCalls.push_back(Save);
  // A header's call is seen by every source that includes it: once each.
  std::set<std::pair<std::string, unsigned>> SeenThreadCalls;
  for (const SourceSpan &Call : In.Threads.Calls)
    if (SeenThreadCalls.insert({Call.File, Call.Offset}).second)
      Model.Threads.Calls.push_back(Call);
  // Only the source that defines main says where main starts.
  if (In.Threads.MainStart) {
    Model.Threads.MainStart = In.Threads.MainStart;
    Model.Threads.MainIndent = In.Threads.MainIndent;
    Model.Threads.IncludeAt = In.Threads.IncludeAt;
    Model.Threads.MainIncludes = In.Threads.MainIncludes;
  }
  mergeLoaders(In.Loaders, Model);
  // A header's loop is seen by every source that includes it: once each.
  std::set<std::pair<std::string, unsigned>> SeenEvaluationLoops;
  for (const EvaluationLoop &Loop : In.EvaluationLoops)
    if (SeenEvaluationLoops.insert({Loop.BodyStart.File, Loop.BodyStart.Offset})
            .second)
      Model.EvaluationLoops.push_back(Loop);
  Model.Files.assign(In.Files.begin(), In.Files.end());
  for (const std::string &File : Model.Files)
    if (std::optional<std::string> Digest = sha256OfFile(File))
      Model.FileSha256[File] = *Digest;
  return Model;
}

/// Clang's diagnostics, printed as they come, with the errors counted and
/// the first kept: the warning of a model read from code with errors names
/// it.
class ErrorRecorder : public DiagnosticConsumer {
public:
  ErrorRecorder(DiagnosticConsumer &Printer, llvm::raw_ostream &Stream)
      : Printer(Printer), Stream(Stream) {}
  void BeginSourceFile(const LangOptions &LangOpts,
                       const Preprocessor *PP) override {
    Printer.BeginSourceFile(LangOpts, PP);
  }
  void EndSourceFile() override { Printer.EndSourceFile(); }
  void finish() override { Printer.finish(); }
  void HandleDiagnostic(DiagnosticsEngine::Level Level,
                        const Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(Level, Info);
    // Past the first errors (a missing header's hundreds), only the count:
    // a note goes with the diagnostic it is attached to.
    if (Level >= DiagnosticsEngine::Error) {
      Shown = getNumErrors() <= ShownErrors;
      if (getNumErrors() == ShownErrors + 1)
        Stream << "skyline-check: note: errors past the first "
               << ShownErrors << " are not shown\n";
    }
    if (Shown || Level == DiagnosticsEngine::Warning ||
        Level == DiagnosticsEngine::Remark)
      Printer.HandleDiagnostic(Level, Info);
    if (Level < DiagnosticsEngine::Error || !First.empty())
      return;
    llvm::SmallString<128> Message;
    Info.FormatDiagnostic(Message);
    First = Message.str().str();
    if (Info.hasSourceManager() && Info.getLocation().isValid()) {
      PresumedLoc At =
          Info.getSourceManager().getPresumedLoc(Info.getLocation());
      if (At.isValid())
        First = std::string(At.getFilename()) + ":" +
                std::to_string(At.getLine()) + ": " + First;
    }
  }
  const std::string &first() const { return First; }

private:
  static constexpr unsigned ShownErrors = 20; // clang's own -ferror-limit
  DiagnosticConsumer &Printer;
  llvm::raw_ostream &Stream;
  std::string First;
  bool Shown = true;
};

std::string compileErrorsWarning(const ErrorRecorder &Errors) {
  unsigned Count = Errors.getNumErrors();
  return "the program does not compile here (" + std::to_string(Count) +
         " error" + (Count == 1 ? "" : "s") + ", the first at " +
         Errors.first() +
         "): the model holds what clang could read, and facts in the code it "
         "could not may be missing";
}

tooling::ArgumentsAdjuster gccOnlyFlagRemover() {
  return [](const tooling::CommandLineArguments &Args, llvm::StringRef) {
    static const char *const GccOnlyPrefixes[] = {
        "-fno-tree-",
        "-ftree-",
        "-fconcepts-diagnostics-depth",
        "-fno-printf-return-value",
        "-mno-direct-extern-access",
        "-fno-gnu-unique",
        "-fipa-",
        "-fno-ipa-",
        "-flto-partition"};
    tooling::CommandLineArguments Result;
    for (const std::string &Arg : Args)
      if (llvm::none_of(GccOnlyPrefixes, [&](const char *Prefix) {
            return llvm::StringRef(Arg).starts_with(Prefix);
          }))
        Result.push_back(Arg);
    return Result;
  };
}

/// The real file system, where only regular files open: an #include of
/// "/dev/stdin" would read the editor's JSON-RPC stream, of a FIFO would
/// block the parse, of /dev/zero would never end. Clang reports the refusal
/// at the #include as a file it cannot open.
class NotRegularCategory : public std::error_category {
public:
  const char *name() const noexcept override { return "skyline"; }
  std::string message(int) const override {
    return "not a regular file (skyline-check reads no device or FIFO)";
  }
};

std::error_code notRegularFile() {
  static const NotRegularCategory Category;
  return std::error_code(1, Category);
}

class RegularFilesOnly : public llvm::vfs::ProxyFileSystem {
public:
  RegularFilesOnly()
      : llvm::vfs::ProxyFileSystem(llvm::vfs::getRealFileSystem()) {}

  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>>
  openFileForRead(const llvm::Twine &Path) override {
    llvm::ErrorOr<llvm::vfs::Status> Status = status(Path);
    if (Status && !Status->isRegularFile() && !Status->isDirectory())
      return notRegularFile();
    return ProxyFileSystem::openFileForRead(Path);
  }
};

llvm::Error checkSources(llvm::ArrayRef<std::string> Sources) {
  for (const std::string &Source : Sources) {
    llvm::sys::fs::file_status Status;
    if (llvm::sys::fs::status(Source, Status))
      return llvm::createStringError(std::errc::no_such_file_or_directory,
                                     "no such file: '%s'", Source.c_str());
    if (Status.type() == llvm::sys::fs::file_type::directory_file)
      return llvm::createStringError(
          std::errc::is_a_directory,
          "'%s' is a directory; give the training program's source files "
          "(and -p with the build directory)",
          Source.c_str());
    // A FIFO would block the parser; a device is no source.
    if (Status.type() != llvm::sys::fs::file_type::regular_file)
      return llvm::createStringError(
          std::errc::invalid_argument,
          "'%s' is not a regular file; give the training program's source "
          "files",
          Source.c_str());
    // Else clang's "cannot open" reads as "the program does not compile".
    int FD;
    if (std::error_code EC = llvm::sys::fs::openFileForRead(Source, FD))
      return llvm::createStringError(EC, "cannot read source '%s': %s",
                                     Source.c_str(), EC.message().c_str());
    llvm::sys::Process::SafelyCloseFileDescriptor(FD);
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<ProgramModel>
analyzeProgram(const tooling::CompilationDatabase &DB,
               llvm::ArrayRef<std::string> Sources,
               const FrontendOptions &Options) {
  if (llvm::Error Err = checkSources(Sources))
    return std::move(Err);
  tooling::ClangTool Tool(DB, Sources,
                          std::make_shared<PCHContainerOperations>(),
                          llvm::makeIntrusiveRefCnt<RegularFilesOnly>());
  Tool.appendArgumentsAdjuster(gccOnlyFlagRemover());
  Tool.appendArgumentsAdjuster(tooling::getClangStripDependencyFileAdjuster());
  Tool.appendArgumentsAdjuster(tooling::getInsertArgumentAdjuster(
      {"-w", "-resource-dir", SKYLINE_CLANG_RESOURCE_DIR},
      tooling::ArgumentInsertPosition::END));
  llvm::raw_ostream &Stream =
      Options.DiagnosticStream ? *Options.DiagnosticStream : llvm::errs();
  auto DiagOpts = llvm::makeIntrusiveRefCnt<DiagnosticOptions>();
  DiagOpts->ShowColors = false;
  TextDiagnosticPrinter Printer(Stream, DiagOpts.get());
  ErrorRecorder Errors(Printer, Stream);
  Tool.setDiagnosticConsumer(&Errors);
  Tool.setPrintErrorMessage(false);

  Collected In;
  AnalysisActionFactory Factory(In, Options);
  int Status = Tool.run(&Factory);
  if (Options.CompileErrorsSeen)
    *Options.CompileErrorsSeen = Errors.getNumErrors();
  // Each source's AST read, errors or not: the model is what clang saw.
  bool ReadDespiteErrors = Status == 1 && Options.AcceptCompileErrors &&
                           Errors.getNumErrors() > 0 &&
                           In.Analyzed >= Tool.getSourcePaths().size();
  if (Status && !ReadDespiteErrors)
    return llvm::createStringError(
        std::errc::invalid_argument,
        Status == 1 ? "the program does not compile; fix the errors above, or "
                      "check the compile command (-p DIR or flags after --)"
                    : "some sources were skipped: no compile command for them");
  if (Options.SystemFilesRead)
    Options.SystemFilesRead->assign(In.SystemFiles.begin(),
                                    In.SystemFiles.end());
  ProgramModel Model = merge(In, Sources, Options);
  if (ReadDespiteErrors)
    Model.Warnings.insert(Model.Warnings.begin(), compileErrorsWarning(Errors));
  return Model;
}

std::optional<FrontendCommand>
frontendCommandLine(const tooling::CompilationDatabase &DB,
                    llvm::StringRef Source) {
  std::vector<tooling::CompileCommand> Commands = DB.getCompileCommands(Source);
  if (Commands.empty())
    return std::nullopt;
  const tooling::CompileCommand &Command = Commands.front();
  tooling::CommandLineArguments Args = Command.CommandLine;
  // The adjusters analyzeProgram's ClangTool applies, in its order.
  for (const tooling::ArgumentsAdjuster &Adjust :
       {tooling::getClangStripOutputAdjuster(), gccOnlyFlagRemover(),
        tooling::getClangStripDependencyFileAdjuster(),
        tooling::getInsertArgumentAdjuster(
            {"-w", "-resource-dir", SKYLINE_CLANG_RESOURCE_DIR},
            tooling::ArgumentInsertPosition::END)})
    Args = Adjust(Args, Command.Filename);
  return FrontendCommand{Command.Directory, Command.Filename, std::move(Args)};
}

llvm::Expected<ProgramModel> analyzeCode(llvm::StringRef Code,
                                         llvm::ArrayRef<std::string> Args,
                                         llvm::StringRef FileName,
                                         const FrontendOptions &Options) {
  Collected In;
  std::vector<std::string> FullArgs(Args.begin(), Args.end());
  FullArgs.insert(FullArgs.end(),
                  {"-w", "-resource-dir", SKYLINE_CLANG_RESOURCE_DIR});
  auto Action = std::make_unique<AnalysisAction>(In, Options);
  if (!tooling::runToolOnCodeWithArgs(std::move(Action), Code, FullArgs,
                                      FileName))
    return llvm::createStringError(std::errc::invalid_argument,
                                   "the code does not compile");
  std::string Name = FileName.str();
  return merge(In, llvm::ArrayRef<std::string>(Name), Options);
}

} // namespace skyline
