//===- FileHash.cpp - What a file held when it was read -------------------===//

#include "skyline/FileHash.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"

namespace skyline {

std::string sha256Hex(llvm::StringRef Text) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(Text)),
                     /*LowerCase=*/true);
}

std::optional<std::string> sha256OfFile(llvm::StringRef Path,
                                        uint64_t MaxBytes) {
  // From its status first: a report can name any path, and opening a FIFO
  // blocks, reading a device never ends.
  llvm::sys::fs::file_status Status;
  if (llvm::sys::fs::status(Path, Status) ||
      Status.type() != llvm::sys::fs::file_type::regular_file ||
      Status.getSize() > MaxBytes)
    return std::nullopt;
  auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!Buffer)
    return std::nullopt;
  return sha256Hex((*Buffer)->getBuffer());
}

} // namespace skyline
