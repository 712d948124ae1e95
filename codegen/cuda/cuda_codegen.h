// The CUDA backend's first half: a GPU-lowered function (ir::transform::Lower
// with a cuda target; ir/transform/gpu_kernels.h) becomes CUDA C++ source,
// one __global__ function per kernel, plus the launch description the host
// needs to run them.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/prim_func.h"
#include "ir/target.h"

namespace kiln::codegen {

// One device buffer the host passes to kernels.
struct CudaBuffer {
  std::string name;   // as in the function (parameters) or the program
  std::string dtype;  // element type, "float32"
  int64_t elements = 0;  // 0 when not constant
  bool workspace = false;  // allocated by the host for intermediate results
};

// One kernel launch, in program order.
struct CudaLaunch {
  std::string kernel;                       // the __global__ function's name
  std::array<int64_t, 3> grid = {1, 1, 1};  // blocks
  std::array<int64_t, 3> block = {1, 1, 1};  // threads per block
  int64_t dynamic_shared_bytes = 0;
  int64_t static_shared_bytes = 0;
  std::vector<int> args;  // indices into CudaModule::buffers, in argument order
};

struct CudaModule {
  std::string source;               // CUDA C++ for NVRTC
  std::vector<CudaBuffer> buffers;  // the function's parameters, then the workspace
  std::vector<CudaLaunch> launches;
  // The launch description as readable comment lines ("// launch ...").
  std::string LaunchText() const;
};

// Emits CUDA C++ for a GPU-lowered function. Kernels are named
// "<func name>_kernel<i>". Throws BuildError (llvm_backend.h) naming what it
// cannot emit.
CudaModule EmitCudaSource(const ir::PrimFunc& lowered);

// Lowers `func` for `target` (which must be a cuda target), verifies the
// result against the target's limits (ir/transform/verify_gpu_code.h) and
// emits it. Throws BuildError.
CudaModule BuildCudaSource(const ir::PrimFunc& func, const ir::Target& target);

}  // namespace kiln::codegen
