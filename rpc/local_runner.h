// Measures candidates on this machine: compiles them on parallel threads in
// this process, then runs each one in an isolated kiln-runner child process
// that checks its outputs against the unscheduled workload and times it
// (docs/ARCHITECTURE.md §10). A crash, hang or runaway allocation of a candidate
// kills only the child, which is restarted for the next candidate; the new
// child is handed the reference outputs the first one computed, so the
// unscheduled program runs once per workload, not once per crash.
//
// A cuda target makes it the GPU runner: candidates are built to PTX and a
// cubin (rpc/cuda_candidate.h) and the child launches them on device 0
// (rpc/runner_main/cuda_run.h), checked against the reference computed on
// this machine's CPU. Without a usable GPU every candidate of the batch is an
// infra_error saying why (codegen::CudaUnavailable's message), before
// anything is built.
//
// Cores: candidates are compiled first (on build_threads threads), then run
// one at a time in the single child, whose kernel thread pool has the
// target's -num-cores threads, capped at this machine's hardware threads
// (every core when the target leaves it open). Nothing else of the runner
// runs while a kernel is timed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rpc/test_fault.h"
#include "search/measure.h"

namespace kiln::rpc {

struct LocalRunnerOptions {
  int build_threads = 0;      // 0: every core; candidates are compiled on this many threads
  std::string runner_path;    // empty: find kiln-runner (env KILN_RUNNER, then next to /proc/self/exe, then the build tree)
  // Address-space limit of the child in MiB; 0: three quarters of physical memory.
  int64_t memory_limit_mb = 0;
  // Test only: test_faults[i] is executed by the child for the i-th candidate
  // of every batch (instead of its kernel, or after it for kWrongValues).
  std::vector<TestFault> test_faults;
};

// Where the time of Measure went, summed over every batch so far.
struct LocalRunnerStats {
  double build_wall_secs = 0;  // compiling candidates (parallel), wall time
  double run_wall_secs = 0;    // reference and child set-up, running and checking candidates
  double run_cpu_secs = 0;     // CPU time of this process's calling thread in those runs
  int64_t children_started = 0;  // kiln-runner processes spawned (one more after each crash)
  int64_t references_built = 0;  // reference objects compiled (once per workload)
  int64_t references_run = 0;    // reference runs in a child (once per workload, not per child)
};

class LocalRunner : public search::Runner {
 public:
  explicit LocalRunner(LocalRunnerOptions options = {});
  ~LocalRunner() override;
  std::vector<search::MeasureResult> Measure(const search::MeasureTask& task,
                                             const std::vector<search::MeasureCandidate>& batch) override;
  const LocalRunnerStats& stats() const;
  // Test only: replaces LocalRunnerOptions::test_faults for the next batches
  // (bench/fault_soak.cc draws new faults for every batch of one runner).
  void set_test_faults(std::vector<TestFault> faults);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Where LocalRunner finds kiln-runner for these options; throws
// std::runtime_error listing the places tried when there is none.
std::string FindRunnerExecutable(const LocalRunnerOptions& options);

}  // namespace kiln::rpc
