// The kernels of a function lowered for a GPU (LowerForTarget with a cuda
// target, lower.h): what the CUDA backend emits and VerifyGPUCode checks.
//
// The GPU lowered form is the lowered form of lower.h plus: the root block's
// body is a sequence of kernels, possibly inside allocation scopes of global
// buffers (the workspace the host allocates); each kernel is a nest of
// thread-bound loops, one per launch axis in the order blockIdx.x/y/z,
// threadIdx.x/y/z, with constant extents, around code every thread runs and
// that holds no further thread-bound loop. Buffers allocated inside a kernel
// are "shared"/"shared.dyn" (one per thread block) or "local" (one per
// thread); T.tvm_storage_sync("shared") is __syncthreads().
#pragma once

#include <array>
#include <string>
#include <vector>

#include "ir/prim_func.h"

namespace kiln::ir::transform {

struct LaunchAxis {
  std::string tag;  // "blockIdx.x", ..., "threadIdx.z"
  Var var;
  int64_t extent = 1;
};

struct GpuKernel {
  std::vector<LaunchAxis> launch;  // outermost first
  Stmt body;                       // inside the launch nest
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  std::vector<Buffer> shared;  // allocated in the kernel with a shared scope
};

struct GpuKernels {
  std::vector<GpuKernel> kernels;  // in launch order
  std::vector<Buffer> workspace;   // global buffers the host allocates
};

// Splits a GPU-lowered function into its kernels. Throws IRError naming what
// breaks the form above.
GpuKernels SplitKernels(const PrimFunc& lowered);

}  // namespace kiln::ir::transform
