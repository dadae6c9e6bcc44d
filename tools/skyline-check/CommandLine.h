//===- CommandLine.h - argv to CommandLineOptions ---------------*- C++ -*-===//
#ifndef SKYLINE_TOOLS_COMMANDLINE_H
#define SKYLINE_TOOLS_COMMANDLINE_H

#include "skyline/Driver.h"

#include <iosfwd>
#include <string>
#include <variant>

namespace skyline {

/// What the command line asks for: run, or print help or the version.
struct HelpRequest {
  std::string Text;
};
struct UsageError {
  std::string Message;
};
using ParsedCommandLine = std::variant<CommandLineOptions, HelpRequest, UsageError>;

ParsedCommandLine parseCommandLine(int Argc, const char *const *Argv);

} // namespace skyline

#endif // SKYLINE_TOOLS_COMMANDLINE_H
