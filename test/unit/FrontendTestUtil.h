// Shared by the front-end unit tests: analyze an in-memory program against
// the mock LibTorch headers in test/lit/Inputs/mock.
#ifndef SKYLINE_TEST_UNIT_FRONTENDTESTUTIL_H
#define SKYLINE_TEST_UNIT_FRONTENDTESTUTIL_H

#include "skyline/Frontend.h"

#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <algorithm>

namespace skyline::test {

inline ProgramModel analyze(llvm::StringRef Code, FrontendOptions Options = {}) {
  std::vector<std::string> Args = {"-std=c++17", "-isystem",
                                   SKYLINE_TEST_INPUTS "/mock"};
  auto Model = analyzeCode(Code, Args, "train.cpp", Options);
  if (!Model) {
    ADD_FAILURE() << llvm::toString(Model.takeError());
    return {};
  }
  return std::move(*Model);
}

/// The 1-based line of the first occurrence of Needle in Code.
inline unsigned lineOf(llvm::StringRef Code, llvm::StringRef Needle) {
  size_t Pos = Code.find(Needle);
  EXPECT_NE(Pos, llvm::StringRef::npos) << Needle.str();
  return Code.take_front(Pos).count('\n') + 1;
}

inline const ModuleSite *findModule(const ProgramModel &Model, llvm::StringRef Name) {
  auto It = std::find_if(Model.Modules.begin(), Model.Modules.end(),
                         [&](const ModuleSite &M) { return M.Name == Name; });
  return It == Model.Modules.end() ? nullptr : &*It;
}

} // namespace skyline::test

#endif
