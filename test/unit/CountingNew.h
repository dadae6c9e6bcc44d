//===- CountingNew.h - Heap allocations of the calling thread ---*- C++ -*-===//
//
// Replaces the global operator new, so a test can check that a hot path
// allocates nothing. Include it in one file of a test binary only.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_TEST_UNIT_COUNTINGNEW_H
#define SKYLINE_TEST_UNIT_COUNTINGNEW_H

#include <cstdint>
#include <cstdlib>
#include <new>

namespace counting_new {
/// operator new calls made by the calling thread so far.
inline thread_local uint64_t AllocationsOnThread = 0;
} // namespace counting_new

void *operator new(std::size_t Size) {
  ++counting_new::AllocationsOnThread;
  if (void *P = std::malloc(Size ? Size : 1))
    return P;
  throw std::bad_alloc();
}
void operator delete(void *P) noexcept { std::free(P); }
void operator delete(void *P, std::size_t) noexcept { std::free(P); }

#endif // SKYLINE_TEST_UNIT_COUNTINGNEW_H
