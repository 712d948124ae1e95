// The GPU half of kiln-runner: loads a CUDA candidate (cubin, or PTX for the
// driver to compile) with the driver API, launches its kernels in program
// order with the launch description the code generator made, checks every
// argument against the reference (the unscheduled workload run on the CPU by
// the LLVM JIT in this same child, rpc/runner_main/runner_main.cc) and times
// the whole program with CUDA events under the CPU runner's protocol
// (rpc/timing.h).
#pragma once

#include <vector>

#include "ir/ndarray.h"
#include "rpc/protocol.h"

namespace kiln::rpc {

// `inputs` are the random arguments, `expected` every argument after the
// reference ran on them; both have args.size() entries. Returns the result
// to send; a candidate whose kernels fault (illegal address, launch failure)
// leaves the CUDA context unusable, which is why the parent replaces the
// child after any result but kOk.
ResultMessage RunCudaCandidate(const CudaCandidateMessage& c, const std::vector<ArgSpec>& args,
                               const std::vector<ir::NDArray>& inputs,
                               const std::vector<ir::NDArray>& expected,
                               const search::TimingConfig& timing);

}  // namespace kiln::rpc
