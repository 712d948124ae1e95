#include "rpc/test_fault.h"

#include <cstdlib>
#include <new>
#include <vector>

namespace kiln::rpc {

const char* TestFaultName(TestFault f) {
  switch (f) {
    case TestFault::kNone: return "none";
    case TestFault::kSegfault: return "segfault";
    case TestFault::kAbort: return "abort";
    case TestFault::kDivideByZero: return "divide_by_zero";
    case TestFault::kInfiniteLoop: return "infinite_loop";
    case TestFault::kUnboundedAlloc: return "unbounded_alloc";
    case TestFault::kWrongValues: return "wrong_values";
  }
  return "invalid";
}

void ExecuteFault(TestFault f) {
  switch (f) {
    case TestFault::kNone:
    case TestFault::kWrongValues:
      return;
    case TestFault::kSegfault: {
      // volatile: the compiler must emit the store instead of folding the UB away.
      int* volatile p = nullptr;
      *p = 1;
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
      // uncaught bad_alloc then terminates the child (SIGABRT).
      std::vector<char*> blocks;
      for (;;) blocks.push_back(new char[size_t{1} << 28]);
    }
  }
  std::abort();  // a fault that did not fire must still not look like success
}

}  // namespace kiln::rpc
