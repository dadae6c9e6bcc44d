//===- ExitCodes.h - How an instrumented run ends ---------------*- C++ -*-===//
//
// Shared by the runtime (which exits with them) and Measure (which reads
// them); no dependencies, so Measure needs no LibTorch headers.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_EXITCODES_H
#define SKYLINE_RUNTIME_EXITCODES_H

namespace skyline::rt {

/// Distinct from a program's usual codes.
constexpr int ExitOutOfMemory = 86;      // the run crossed the memory budget
constexpr int ExitResultNotWritten = 87; // the result file could not be written

} // namespace skyline::rt

#endif // SKYLINE_RUNTIME_EXITCODES_H
