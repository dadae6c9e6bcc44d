//===- InputFile.cpp - Reading files the user or CI hands in --------------===//

#include "skyline/InputFile.h"

#include "skyline/Units.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/MemoryBuffer.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace skyline {
namespace {

llvm::Error inputError(const llvm::Twine &Message) {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument), Message);
}

llvm::Error cannotRead(llvm::StringRef Path, llvm::StringRef What, int Errno) {
  std::string Why = Errno == ENOENT   ? "no such file"
                    : Errno == EACCES ? "permission denied"
                                      : std::strerror(Errno);
  return llvm::createStringError(
      std::error_code(Errno, std::generic_category()),
      "cannot read %s '%s': %s", What.str().c_str(), Path.str().c_str(),
      Why.c_str());
}

/// Why a file of this type is not read; empty for a regular file.
const char *notRegular(mode_t Mode) {
  if (S_ISREG(Mode))
    return "";
  if (S_ISDIR(Mode))
    return "it is a directory, not a file";
  if (S_ISFIFO(Mode))
    return "it is a FIFO (named pipe), not a regular file";
  if (S_ISCHR(Mode) || S_ISBLK(Mode))
    return "it is a device, not a regular file";
  if (S_ISSOCK(Mode))
    return "it is a socket, not a regular file";
  return "it is not a regular file";
}

llvm::Error checkStatus(const struct stat &Status, llvm::StringRef Path,
                        llvm::StringRef What, uint64_t MaxBytes) {
  if (const char *Why = notRegular(Status.st_mode); *Why)
    return inputError("cannot read " + What + " '" + Path + "': " + Why);
  if (uint64_t(Status.st_size) > MaxBytes)
    return inputError(What + " '" + Path + "' is " +
                      formatBytes(int64_t(Status.st_size)) +
                      "; skyline-check reads at most " +
                      formatBytes(int64_t(MaxBytes)) + " of a " + What);
  return llvm::Error::success();
}

/// Thrown by the counting pass to stop at the first thing refused.
struct Refused {
  std::string Why;
};

/// Counts a document's events before any node is built: an alias is
/// refused outright (skyline-check's writers never emit one, and each can
/// multiply what the next refers to), nodes and depth within the limits.
class CountingHandler : public YAML::EventHandler {
public:
  explicit CountingHandler(const YamlLimits &Limits) : Limits(Limits) {}

  void OnDocumentStart(const YAML::Mark &) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark &Mark, YAML::anchor_t) override { node(Mark); }
  void OnAlias(const YAML::Mark &Mark, YAML::anchor_t) override {
    throw Refused{"uses a YAML alias (*name) at line " +
                  std::to_string(Mark.line + 1) +
                  "; skyline-check's files have none, and an alias can "
                  "expand a small file into gigabytes"};
  }
  void OnScalar(const YAML::Mark &Mark, const std::string &, YAML::anchor_t,
                const std::string &) override {
    node(Mark);
  }
  void OnSequenceStart(const YAML::Mark &Mark, const std::string &,
                       YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(Mark);
  }
  void OnSequenceEnd() override { --Depth; }
  void OnMapStart(const YAML::Mark &Mark, const std::string &, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    open(Mark);
  }
  void OnMapEnd() override { --Depth; }

private:
  void node(const YAML::Mark &Mark) {
    if (++Nodes > Limits.MaxNodes)
      throw Refused{"holds more than " + std::to_string(Limits.MaxNodes) +
                    " YAML values (at line " + std::to_string(Mark.line + 1) +
                    "), more than any file skyline-check writes"};
  }
  void open(const YAML::Mark &Mark) {
    node(Mark);
    if (++Depth > Limits.MaxDepth)
      throw Refused{"nests more than " + std::to_string(Limits.MaxDepth) +
                    " levels deep (at line " + std::to_string(Mark.line + 1) +
                    "), deeper than any file skyline-check writes"};
  }

  const YamlLimits &Limits;
  uint64_t Nodes = 0;
  unsigned Depth = 0;
};

} // namespace

llvm::Error checkInputFile(llvm::StringRef Path, llvm::StringRef What,
                           uint64_t MaxBytes) {
  struct stat Status;
  if (::stat(Path.str().c_str(), &Status) != 0)
    return cannotRead(Path, What, errno);
  return checkStatus(Status, Path, What, MaxBytes);
}

llvm::Expected<std::string>
readInputFile(llvm::StringRef Path, llvm::StringRef What, uint64_t MaxBytes) {
  if (llvm::Error E = checkInputFile(Path, What, MaxBytes))
    return std::move(E);
  // O_NONBLOCK: were the file swapped for a FIFO after the check, opening
  // it still returns at once; the fstat below then refuses it.
  int FD = ::open(Path.str().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (FD < 0)
    return cannotRead(Path, What, errno);
  auto Close = llvm::make_scope_exit([FD] { ::close(FD); });
  struct stat Status;
  if (::fstat(FD, &Status) != 0)
    return cannotRead(Path, What, errno);
  if (llvm::Error E = checkStatus(Status, Path, What, MaxBytes))
    return std::move(E);
  std::string Text;
  Text.reserve(size_t(Status.st_size));
  char Buffer[1 << 16];
  for (;;) {
    ssize_t Read = ::read(FD, Buffer, sizeof Buffer);
    if (Read < 0 && errno == EINTR)
      continue;
    if (Read < 0)
      return cannotRead(Path, What, errno);
    if (Read == 0)
      return std::move(Text);
    // The file grew while it was read (or its size says 0, as in /proc).
    if (Text.size() + size_t(Read) > MaxBytes)
      return inputError(What + " '" + Path + "' is larger than " +
                        formatBytes(int64_t(MaxBytes)) +
                        ", the most skyline-check reads of a " + What);
    Text.append(Buffer, size_t(Read));
  }
}

std::unique_ptr<llvm::MemoryBuffer> readSourceBuffer(llvm::StringRef Path,
                                                     uint64_t MaxBytes) {
  auto Text = readInputFile(Path, "source", MaxBytes);
  if (!Text) {
    llvm::consumeError(Text.takeError());
    return nullptr;
  }
  return llvm::MemoryBuffer::getMemBufferCopy(*Text, Path);
}

llvm::Expected<YAML::Node> parseYamlInput(const std::string &Text,
                                          llvm::StringRef Path,
                                          llvm::StringRef What,
                                          const YamlLimits &Limits) {
  auto Problem = [&](const llvm::Twine &Why) {
    return inputError(What + " '" + Path + "' " + Why);
  };
  try {
    {
      std::istringstream Stream(Text);
      YAML::Parser Parser(Stream);
      CountingHandler Counter(Limits);
      Parser.HandleNextDocument(Counter); // YAML::Load reads the first only
    }
    return YAML::Load(Text);
  } catch (const Refused &R) {
    return Problem(R.Why);
  } catch (const YAML::Exception &E) {
    return Problem("is not valid YAML: " + llvm::Twine(E.what()));
  } catch (const std::bad_alloc &) {
    return Problem("needs more memory than there is to read");
  } catch (const std::exception &E) {
    return Problem("cannot be read: " + llvm::Twine(E.what()));
  }
}

llvm::Expected<YAML::Node> loadYamlInput(llvm::StringRef Path,
                                         llvm::StringRef What,
                                         const YamlLimits &Limits) {
  auto Text = readInputFile(Path, What, Limits.MaxBytes);
  if (!Text)
    return Text.takeError();
  return parseYamlInput(*Text, Path, What, Limits);
}

} // namespace skyline
