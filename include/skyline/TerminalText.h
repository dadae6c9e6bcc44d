//===- TerminalText.h - Text from outside made safe to print ----*- C++ -*-===//
//
// Names from a program's source or a saved report (a module registered as
// "conv\x1b]8;;...", a layer named "a\n::error file=x::...") must not drive
// the terminal or start a line that CI reads as a command (GitHub Actions'
// "::error"). They are printed escaped, as C writes them.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_TERMINALTEXT_H
#define SKYLINE_TERMINALTEXT_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace skyline {

/// Text with its control characters written out: a newline as `\n`, a
/// carriage return as `\r`, ESC as `\x1b`, DEL as `\x7f`, and the C1
/// controls (U+0080 to U+009F, which some terminals obey) as `\u009b`.
/// Tabs stay (a source line keeps its indentation); so does every other
/// character, UTF-8 included.
std::string escapeForTerminal(llvm::StringRef Text);

/// The same, but keeping newlines: for messages that are several lines by
/// design (a log's tail), whose names were escaped when they were put in.
std::string escapeForTerminalKeepingLines(llvm::StringRef Text);

} // namespace skyline

#endif // SKYLINE_TERMINALTEXT_H
