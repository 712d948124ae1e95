// VerifyGPUCode: whether a GPU-lowered function fits the target's limits, like
// TVM's VerifyGPUCode that MetaSchedule's postproc of that name runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/prim_func.h"
#include "ir/target.h"

namespace kiln::ir::transform {

struct GpuLimits {
  int64_t max_threads_per_block = 1024;
  int64_t max_shared_memory_per_block = 49152;  // bytes, static shared memory
  int64_t max_vthread = 8;                      // product of nested vthread extents
  int64_t max_vector_bytes = 16;                // one vectorized access
  // The target's limits (registers are not checked).
  static GpuLimits FromTarget(const Target& target);
};

// One line per problem, naming the kernel (by launch order) and the limit;
// empty when the function fits. Also reports a function that is not in the
// GPU lowered form (gpu_kernels.h).
std::vector<std::string> VerifyGPUCode(const PrimFunc& lowered, const GpuLimits& limits);

}  // namespace kiln::ir::transform
