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
  kStackOverflow,   // recurses until the stack runs out (SIGSEGV)
  kStrayWrite,      // runs the kernel, then writes into an input argument
};
constexpr uint8_t kMaxTestFault = static_cast<uint8_t>(TestFault::kStrayWrite);

// Whether the child runs the candidate's kernel for this fault (the fault
// then corrupts what the kernel computed) rather than the fault instead of it.
inline bool FaultRunsKernel(TestFault f) {
  return f == TestFault::kNone || f == TestFault::kWrongValues || f == TestFault::kStrayWrite;
}

const char* TestFaultName(TestFault f);

// Executes a fault that replaces the kernel call (those for which
// FaultRunsKernel is false); does not return for those.
void ExecuteFault(TestFault f);

}  // namespace kiln::rpc
