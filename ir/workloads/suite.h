// The built-in benchmark suite: TVM MetaSchedule's te_workload configs plus a
// few LLM kernels, each built with the compute frontend and CreatePrimFunc.
//
// Names (config index 0..3 unless noted), with TVM's compute definitions:
//   C1D conv1d_nlc, C2D conv2d_nhwc, C3D conv3d_ndhwc, GMM batch_matmul_nkkm,
//   GRP conv2d_nhwc groups=4, DIL conv2d_nhwc dilation=2, DEP depthwise_conv2d_nhwc,
//   T2D conv2d_transpose_nhwc, CAP conv2d_capsule_nhwijc, NRM norm_bmn,
//   SFM softmax_mn, CBR conv2d_nhwc_bn_relu, TBG transpose_batch_matmul;
// extras (index 0 only):
//   matmul (1024^3), matmul_relu (1024^3), conv2d_nchw (1,56,56,64,64,3,3,1,1),
//   GEMV   decode GEMV in LLM (NT) layout: C[i, j] = sum_k A[i, k] * B[j, k],
//          A (1, 4096), B (4096, 4096) — the weight stored [out, in];
//   RMS    RMSNorm (1, 4096) with weight, eps 1e-5, as topi/relax build it:
//          sum of squares, rsqrt(sum / n + eps), x * rsqrt * w (fp32, so the
//          identity casts topi would add are left out);
//   ATTN_SFM softmax over attention scores (32 heads, 1 query, 4096 keys),
//          shape (32, 1, 4096), last axis.
// All are float32. Winograd (C2D_WIN_NHWC) is not part of the suite.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/prim_func.h"

namespace kiln::ir {

struct WorkloadConfig {
  std::string name;
  int index = 0;
  std::string params;  // the builder's arguments, e.g. "(1, 1024, 1024, 1024)"
};

struct WorkloadInfo {
  std::string name;
  int index = 0;
  std::string params;
  // Function parameters in order: buffer name and shape.
  std::vector<std::pair<std::string, std::vector<int64_t>>> args;
  double flops = 0;  // EstimateFlops of the function
};

// Every name × config, in a fixed order (TVM's CONFIGS order, then the extras).
std::vector<WorkloadConfig> SuiteConfigs();
// The distinct workload names in suite order.
std::vector<std::string> SuiteNames();

// Throws std::invalid_argument naming the valid names / indices.
PrimFunc MakeWorkload(const std::string& name, int index);
WorkloadInfo DescribeWorkload(const std::string& name, int index);
// A family at shapes of one's own, e.g. ("C2D", {1, 56, 56, 64, 256, 1, 1, 0})
// for a ResNet-50 layer the suite's configs do not hold: the parameters are
// the family's, in its configs' order (`kiln workloads` prints them). Throws
// std::invalid_argument naming the family when the name is unknown, the
// count is wrong, or the builder refuses the shape.
PrimFunc MakeWorkloadWithParams(const std::string& name, const std::vector<int64_t>& params);

// Parameterized builders (tests use them at reduced shapes). Arguments follow
// te_workload.py; invalid shapes throw std::invalid_argument.
PrimFunc Conv1dNLC(int64_t N, int64_t L, int64_t CI, int64_t CO, int64_t kernel, int64_t stride = 1,
                   int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1);
PrimFunc Conv2dNHWC(int64_t N, int64_t H, int64_t W, int64_t CI, int64_t CO, int64_t kernel,
                    int64_t stride = 1, int64_t padding = 0, int64_t dilation = 1,
                    int64_t groups = 1);
PrimFunc Conv3dNDHWC(int64_t N, int64_t D, int64_t H, int64_t W, int64_t CI, int64_t CO,
                     int64_t kernel, int64_t stride = 1, int64_t padding = 0, int64_t dilation = 1,
                     int64_t groups = 1);
// Channel multiplier 1 (TVM asserts the same).
PrimFunc DepthwiseConv2dNHWC(int64_t N, int64_t H, int64_t W, int64_t C, int64_t kernel,
                             int64_t stride = 1, int64_t padding = 0, int64_t dilation = 1);
PrimFunc Conv2dTransposeNHWC(int64_t N, int64_t H, int64_t W, int64_t CI, int64_t CO,
                             int64_t kernel, int64_t stride = 1, int64_t padding = 0);
PrimFunc Conv2dCapsuleNHWIJC(int64_t N, int64_t H, int64_t W, int64_t CI, int64_t CO,
                             int64_t kernel, int64_t stride = 1, int64_t padding = 0,
                             int64_t capsule_size = 4);
PrimFunc Conv2dNHWCBnRelu(int64_t N, int64_t H, int64_t W, int64_t CI, int64_t CO, int64_t kernel,
                          int64_t stride, int64_t padding, int64_t dilation = 1);
PrimFunc Conv2dNCHW(int64_t N, int64_t H, int64_t W, int64_t CI, int64_t CO, int64_t KH, int64_t KW,
                    int64_t stride, int64_t padding, int64_t dilation = 1);
PrimFunc BatchMatmulNKKM(int64_t B, int64_t N, int64_t M, int64_t K);
PrimFunc TransposeBatchMatmul(int64_t batch, int64_t seq_len, int64_t n_head, int64_t n_dim);
PrimFunc Matmul(int64_t N, int64_t M, int64_t K);
PrimFunc MatmulRelu(int64_t N, int64_t M, int64_t K);
// C (M, N) = A (M, K) · B (N, K)ᵀ.
PrimFunc GemvNT(int64_t M, int64_t N, int64_t K);
PrimFunc NormBMN(int64_t B, int64_t M, int64_t N);
PrimFunc RmsNorm(int64_t rows, int64_t hidden, double eps = 1e-5);
PrimFunc SoftmaxMN(int64_t M, int64_t N);
// Softmax of a tensor of any shape over one axis (negative counts from the end).
PrimFunc Softmax(const std::vector<int64_t>& shape, int axis = -1);

}  // namespace kiln::ir
