//===- FileHash.cpp - What a file held when it was read -------------------===//

#include "skyline/FileHash.h"

#include "skyline/InputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

namespace skyline {

std::string sha256Hex(llvm::StringRef Text) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(Text)),
                     /*LowerCase=*/true);
}

std::optional<std::string> sha256OfFile(llvm::StringRef Path,
                                        uint64_t MaxBytes) {
  // Through InputFile: a report can name any path, and opening a FIFO
  // blocks, reading a device never ends.
  llvm::Expected<std::string> Text = readInputFile(Path, "file", MaxBytes);
  if (!Text) {
    llvm::consumeError(Text.takeError());
    return std::nullopt;
  }
  return sha256Hex(*Text);
}

CacheKey &CacheKey::add(llvm::StringRef Name, llvm::StringRef Value) {
  Inputs += Name.str() + "\n" + std::to_string(Value.size()) + "\n" +
            Value.str() + "\n";
  return *this;
}

} // namespace skyline
