//===- TerminalText.cpp - Text from outside made safe to print ------------===//

#include "skyline/TerminalText.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace skyline {
namespace {

std::string escape(llvm::StringRef Text, bool KeepNewlines) {
  std::string Escaped;
  Escaped.reserve(Text.size());
  llvm::raw_string_ostream Out(Escaped);
  for (size_t I = 0; I < Text.size(); ++I) {
    unsigned char C = Text[I];
    if (C == '\n') {
      Out << (KeepNewlines ? "\n" : "\\n");
    } else if (C == '\r') {
      Out << "\\r";
    } else if (C == '\t') {
      Out << '\t';
    } else if (C < 0x20 || C == 0x7f) {
      Out << llvm::format("\\x%02x", C);
    } else if (C == 0xc2 && I + 1 < Text.size() &&
               (unsigned char)Text[I + 1] >= 0x80 &&
               (unsigned char)Text[I + 1] <= 0x9f) {
      // A C1 control in UTF-8: U+0080 to U+009F.
      Out << llvm::format("\\u%04x", (unsigned char)Text[I + 1]);
      ++I;
    } else {
      Out << (char)C;
    }
  }
  return Escaped;
}

} // namespace

std::string escapeForTerminal(llvm::StringRef Text) {
  return escape(Text, /*KeepNewlines=*/false);
}

std::string escapeForTerminalKeepingLines(llvm::StringRef Text) {
  return escape(Text, /*KeepNewlines=*/true);
}

} // namespace skyline
