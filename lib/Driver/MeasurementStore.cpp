//===- MeasurementStore.cpp - Measurements kept by what decides them ------===//

#include "skyline/MeasurementStore.h"

#include "skyline/Driver.h"
#include "skyline/FileHash.h"
#include "skyline/OutputFiles.h"
#include "skyline/RuntimeCache.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>

namespace skyline {
namespace {

std::string sourcesDigest(const std::map<std::string, std::string> &Files) {
  CacheKey Key;
  for (const auto &[File, Digest] : Files)
    Key.add(File, Digest);
  return Key.hex();
}

MeasurementKey keyWithFiles(const clang::tooling::CompilationDatabase &DB,
                            const ProgramModel &Program,
                            const std::map<std::string, std::string> &Files,
                            llvm::StringRef TorchDir, DeviceChoice Device) {
  MeasurementKey Key;
  Key.Sources = sourcesDigest(Files);
  CacheKey Flags;
  for (const std::string &Source : Program.Sources) {
    Flags.add("source", Source);
    for (const clang::tooling::CompileCommand &Command :
         DB.getCompileCommands(Source)) {
      Flags.add("directory", Command.Directory);
      Flags.add("command", llvm::join(Command.CommandLine, "\n"));
    }
  }
  Key.Flags = Flags.hex();
  CacheKey Torch;
  if (TorchDir.empty()) {
    Torch.add("torch", "none");
  } else {
    TorchIdentity Identity = torchIdentity(TorchDir);
    Torch.add("torch", Identity.Directory);
    Torch.add("torch version", Identity.VersionHeader);
  }
  Key.LibTorch = Torch.hex();
  Key.Device = deviceChoiceName(Device).str();
  return Key;
}

/// The keyed reports of a work directory, newest first.
std::vector<std::string> keptReports(const std::string &Directory) {
  std::vector<std::pair<std::string, int64_t>> Found;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Directory, EC), End;
       It != End && !EC; It.increment(EC)) {
    if (llvm::sys::path::extension(It->path()) != ".yaml")
      continue;
    llvm::sys::fs::file_status Status;
    if (llvm::sys::fs::status(It->path(), Status) ||
        !llvm::sys::fs::is_regular_file(Status))
      continue;
    Found.emplace_back(It->path(),
                       std::chrono::duration_cast<std::chrono::nanoseconds>(
                           Status.getLastModificationTime().time_since_epoch())
                           .count());
  }
  llvm::sort(Found, [](const auto &A, const auto &B) {
    return A.second != B.second ? A.second > B.second : A.first < B.first;
  });
  std::vector<std::string> Paths;
  for (auto &[Path, Time] : Found)
    Paths.push_back(std::move(Path));
  return Paths;
}

} // namespace

llvm::StringRef deviceChoiceName(DeviceChoice Device) {
  switch (Device) {
  case DeviceChoice::Auto:
    return "auto";
  case DeviceChoice::CPU:
    return "cpu";
  case DeviceChoice::CUDA:
    return "cuda";
  }
  return "auto";
}

MeasurementKey measurementKey(const clang::tooling::CompilationDatabase &DB,
                              const ProgramModel &Program,
                              llvm::StringRef TorchDir, DeviceChoice Device) {
  return keyWithFiles(DB, Program, Program.FileSha256, TorchDir, Device);
}

MeasurementKey
currentMeasurementKey(const clang::tooling::CompilationDatabase &DB,
                      const ProgramModel &Program, llvm::StringRef TorchDir,
                      DeviceChoice Device) {
  std::map<std::string, std::string> Now;
  for (const auto &[File, Digest] : Program.FileSha256) {
    (void)Digest;
    Now[File] = sha256OfFile(File).value_or("unreadable");
  }
  return keyWithFiles(DB, Program, Now, TorchDir, Device);
}

std::string keyName(const MeasurementKey &Key) {
  return CacheKey()
      .add("sources", Key.Sources)
      .add("compile flags", Key.Flags)
      .add("libtorch", Key.LibTorch)
      .add("device", Key.Device)
      .hex()
      .substr(0, 24);
}

std::string keptReportPath(llvm::StringRef WorkDir, const MeasurementKey &Key) {
  return (WorkDir + "/reports/" + keyName(Key) + ".yaml").str();
}

llvm::Error keepMeasurement(llvm::StringRef WorkDir, llvm::StringRef YAML,
                            const std::optional<MeasurementKey> &Key) {
  std::string Directory = (WorkDir + (Key ? "/reports" : "")).str();
  if (std::error_code EC = llvm::sys::fs::create_directories(Directory))
    return llvm::createStringError(EC, "cannot create %s: %s",
                                   Directory.c_str(), EC.message().c_str());
  if (Key) {
    std::string Kept = keptReportPath(WorkDir, *Key);
    if (llvm::Error E = writeFileAtomically(Kept, YAML))
      return E;
    std::vector<std::string> Reports = keptReports(Directory);
    llvm::erase(Reports, Kept); // the newest, whatever the clock says
    for (size_t I = KeptMeasurements - 1; I < Reports.size(); ++I)
      llvm::sys::fs::remove(Reports[I]);
  }
  return writeFileAtomically(latestReportPath(WorkDir), YAML);
}

std::vector<std::string> keyChanges(const MeasurementKey &Then,
                                    const MeasurementKey &Now) {
  std::vector<std::string> Changed;
  if (Then.Sources != Now.Sources)
    Changed.push_back("sources");
  if (Then.Flags != Now.Flags)
    Changed.push_back("compile flags");
  if (Then.LibTorch != Now.LibTorch)
    Changed.push_back("LibTorch");
  if (Then.Device != Now.Device)
    Changed.push_back("device");
  return Changed;
}

} // namespace skyline
