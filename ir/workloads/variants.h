// Named workloads outside the suite: MakeWorkload and `kiln tune -w` know
// them (GMM_FP16:3, GMM_FP16(1, 256, 256, 256)), but SuiteConfigs and
// SuiteNames leave them out, so the suite's figures and goldens stay TVM's.
//
//   GMM_FP16  batch_matmul_nkkm with float16 X, Y and a float32 Z
//             accumulated in float32 (TVM's fp16 -> fp32 GEMM), at GMM's
//             four configs; GMM_FP16:3 is 1024^3. On sm_80+ CUDA targets its
//             design space runs on tensor cores
//             (search/schedule_rule/multi_level_tiling_tensor_core.cc).
#pragma once

#include <cstdint>

#include "ir/prim_func.h"

namespace kiln::ir {

// float16 inputs, float32 output and accumulation.
PrimFunc BatchMatmulNKKMFp16(int64_t B, int64_t N, int64_t M, int64_t K);

}  // namespace kiln::ir
