#include "rpc/test_fault.h"

#include <cstdlib>
#include <new>
#include <vector>

namespace kiln::rpc {
namespace {

// Never equal to a depth, but the compiler cannot know: the recursion below
// must neither be proven infinite (GCC's -Winfinite-recursion) nor be turned
// into a loop.
volatile int g_never_depth = -1;

[[gnu::noinline]] int Recurse(int depth) {
  volatile char frame[512];
  frame[0] = static_cast<char>(depth);
  if (depth == g_never_depth) return frame[0];
  return Recurse(depth + 1) + frame[0];
}

}  // namespace

const char* TestFaultName(TestFault f) {
  switch (f) {
    case TestFault::kNone: return "none";
    case TestFault::kSegfault: return "segfault";
    case TestFault::kAbort: return "abort";
    case TestFault::kDivideByZero: return "divide_by_zero";
    case TestFault::kInfiniteLoop: return "infinite_loop";
    case TestFault::kUnboundedAlloc: return "unbounded_alloc";
    case TestFault::kWrongValues: return "wrong_values";
    case TestFault::kStackOverflow: return "stack_overflow";
    case TestFault::kStrayWrite: return "stray_write";
  }
  return "invalid";
}

void ExecuteFault(TestFault f) {
  switch (f) {
    case TestFault::kNone:
    case TestFault::kWrongValues:
    case TestFault::kStrayWrite:
      return;
    case TestFault::kStackOverflow:
      Recurse(0);
      break;
    case TestFault::kSegfault: {
      // The empty asm hides the null from the optimizer (a volatile pointer
      // to null was not enough: GCC dropped the store and kept only the
      // abort below), and the volatile store must be emitted.
      int* p = nullptr;
      asm volatile("" : "+r"(p));
      *static_cast<volatile int*>(p) = 1;
      break;
    }
    case TestFault::kAbort:
      std::abort();
    case TestFault::kDivideByZero: {
      volatile int zero = 0;
      volatile int one = 1;
      volatile int r = one / zero;
      (void)r;
      break;
    }
    case TestFault::kInfiniteLoop: {
      volatile uint64_t spin = 0;
      for (;;) spin = spin + 1;
    }
    case TestFault::kUnboundedAlloc: {
      // Reserve 256 MiB blocks until the address-space limit refuses one; the
      // runner reports the bad_alloc as out of memory, and the parent replaces
      // the child (the blocks are never freed, as with a real runaway kernel).
      std::vector<char*> blocks;
      for (;;) blocks.push_back(new char[size_t{1} << 28]);
    }
  }
  std::abort();  // a fault that did not fire must still not look like success
}

}  // namespace kiln::rpc
