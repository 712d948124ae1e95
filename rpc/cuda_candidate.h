// Building a CUDA candidate for the GPU runner (rpc/local_runner.h with a
// cuda target): the scheduled function lowered, emitted as CUDA C++ and
// compiled by NVRTC to PTX and a cubin for the target's arch, with the launch
// description (buffers, launches in order) the child needs to run it.
#pragma once

#include "ir/prim_func.h"
#include "ir/target.h"
#include "rpc/protocol.h"

namespace kiln::rpc {

// Throws codegen::BuildError naming what failed (lowering, the GPU limits of
// the target, NVRTC, nvJitLink).
CudaCandidateMessage BuildCudaCandidate(const ir::PrimFunc& scheduled, const ir::Target& target);

// The CPU target the GPU runner builds the reference (the unscheduled
// workload) for: this machine, as "host" resolves it.
ir::Target ReferenceTargetFor(const ir::Target& target);

}  // namespace kiln::rpc
