// Test only: faults the kiln-runner child executes in place of (or after) a
// candidate's kernel, so that tests can prove every failure kind is contained
// and reported. Not a schedule primitive and not reachable from the CLI; set
// only through LocalRunnerOptions::test_faults.
#pragma once

#include <cstdint>

namespace kiln::rpc {

enum class TestFault : uint8_t {
  kNone = 0,
  kSegfault,        // writes through a null pointer instead of the kernel
  kAbort,           // calls abort()
  kDivideByZero,    // integer division by zero (SIGFPE)
  kInfiniteLoop,    // spins forever (the parent's timeout must kill it)
  kUnboundedAlloc,  // allocates until the child's address-space limit stops it
  kWrongValues,     // runs the kernel, then corrupts one output element
};
constexpr uint8_t kMaxTestFault = static_cast<uint8_t>(TestFault::kWrongValues);

const char* TestFaultName(TestFault f);

// Executes a fault that replaces the kernel call (every fault but kNone and
// kWrongValues); does not return for those.
void ExecuteFault(TestFault f);

}  // namespace kiln::rpc
