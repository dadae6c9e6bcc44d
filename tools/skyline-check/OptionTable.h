//===- OptionTable.h - skyline-check's options, declared once ---*- C++ -*-===//
//
// Each option is one declaration: Boost parses it and --help prints it from
// its names, value type, default and help, and its Store checks the value and
// puts it into CommandLineOptions. Adding an option means one entry in
// OptionTable.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_TOOLS_OPTIONTABLE_H
#define SKYLINE_TOOLS_OPTIONTABLE_H

#include "skyline/Driver.h"

#include "llvm/Support/Error.h"

#include <boost/program_options.hpp>

#include <functional>
#include <string>
#include <vector>

namespace skyline {

/// What the rest of the command line needs to know about an option.
enum OptionTraits : unsigned {
  NoTraits = 0,
  /// It names a file to write, which an implicitly found config file may not
  /// name (it could overwrite anything).
  NamesOutput = 1 << 0,
  /// It cannot go with --analyze-only.
  NeedsMeasurements = 1 << 1,
};

struct OptionDecl {
  /// Names ("build-path,p"), value type, default, value name and help.
  boost::shared_ptr<boost::program_options::option_description> Description;
  /// Checks the value Boost parsed and stores it; called when the option was
  /// given or has a default. Empty for the options the parser itself reads
  /// (--help, --version, --config).
  std::function<llvm::Error(const boost::program_options::variable_value &,
                            CommandLineOptions &)>
      Store;
  unsigned Traits = NoTraits;

  /// The key Boost files the value under.
  const std::string &name() const { return Description->long_name(); }
};

/// The options under one --help heading.
struct OptionGroup {
  const char *Caption;
  std::vector<OptionDecl> Options;
};

/// A bad command line or config file, as the user is told it.
llvm::Error usageError(const llvm::Twine &Message);

/// Every option of skyline-check, in --help's order; the first group's
/// caption heads the whole list.
std::vector<OptionGroup> declareOptions();

/// The options for Boost to parse and to print as --help.
boost::program_options::options_description
describeOptions(const std::vector<OptionGroup> &Groups);

} // namespace skyline

#endif // SKYLINE_TOOLS_OPTIONTABLE_H
