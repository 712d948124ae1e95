// kiln compile --target cuda: the tuned (or given) GPU program as PTX, a cubin
// for the target's arch and a C header that describes how to launch it
// (buffers, then each kernel's grid, block, dynamic shared memory and
// argument order), for a host program that loads the module with the CUDA
// driver or runtime API itself.
#pragma once

#include <string>

#include "codegen/cuda/cuda_codegen.h"
#include "ir/prim_func.h"
#include "ir/target.h"

namespace kiln::tools {

struct CudaCompileOutputs {
  std::string ptx_path;    // required
  std::string cubin_path;  // empty: no cubin
  std::string header_path;  // empty: no header
};

// Builds `func` (named as the symbol prefix) for the cuda `target` and writes
// the outputs. Throws codegen::BuildError (e.g. an unscheduled program: no
// thread binding) or std::runtime_error for a file that cannot be written.
// Returns the module, for the caller's summary.
codegen::CudaModule CompileCudaOutputs(const ir::PrimFunc& func, const ir::Target& target,
                                       const CudaCompileOutputs& out, const std::string& provenance);

// The launch header's text (exposed for tests).
std::string CudaLaunchHeader(const ir::PrimFunc& func, const codegen::CudaModule& m,
                             const ir::Target& target, const std::string& provenance);

}  // namespace kiln::tools
