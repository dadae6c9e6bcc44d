//===- FileHash.h - What a file held when it was read -----------*- C++ -*-===//
//
// A report's offsets and lines hold only for the text they were found in:
// the program model records each file's SHA-256, and whatever later acts on
// those offsets (fix-its, the gate) first checks the file still has it.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_FILEHASH_H
#define SKYLINE_FILEHASH_H

#include "skyline/InputFile.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace skyline {

/// The SHA-256 of Text, as 64 lowercase hex digits.
std::string sha256Hex(llvm::StringRef Text);

/// The SHA-256 of the file's contents; none unless it is a regular file of
/// at most MaxBytes that reads.
std::optional<std::string> sha256OfFile(llvm::StringRef Path,
                                        uint64_t MaxBytes = MaxSourceBytes);

/// The caches' one key scheme (the runtime's, the front end's model, the
/// measurements): named values, each with its length, so that no two lists
/// of values give the same text, and the SHA-256 of that text.
class CacheKey {
public:
  CacheKey &add(llvm::StringRef Name, llvm::StringRef Value);
  /// The SHA-256 of what was added, as 64 lowercase hex digits.
  std::string hex() const { return sha256Hex(Inputs); }

private:
  std::string Inputs;
};

} // namespace skyline

#endif // SKYLINE_FILEHASH_H
