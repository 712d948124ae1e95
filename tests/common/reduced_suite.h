// One reduced instance of every operator family in the suite, shared by the
// tests that run many programs through the interpreter (schedule property
// test, lowering test, design-space test): extents with small factors so that
// splits and tiles have choices, outputs of a few hundred points.
#pragma once

#include <functional>
#include <vector>

#include "ir/workloads/suite.h"

namespace kiln::testing {

struct ReducedCase {
  const char* name;
  std::function<ir::PrimFunc()> make;
};

inline std::vector<ReducedCase> ReducedSuite() {
  using namespace ir;  // NOLINT: the suite builders
  return {
      {"C1D", [] { return Conv1dNLC(1, 8, 4, 6, 3, 2, 1); }},
      {"C2D", [] { return Conv2dNHWC(1, 6, 6, 4, 4, 3, 2, 1); }},
      {"C3D", [] { return Conv3dNDHWC(1, 4, 4, 4, 2, 4, 3, 2, 1); }},
      {"GMM", [] { return BatchMatmulNKKM(1, 8, 8, 8); }},
      {"GRP", [] { return Conv2dNHWC(1, 6, 6, 4, 4, 3, 2, 1, 1, 2); }},
      {"DIL", [] { return Conv2dNHWC(1, 8, 8, 2, 4, 3, 1, 1, 2); }},
      {"DEP", [] { return DepthwiseConv2dNHWC(1, 6, 6, 4, 3, 1, 1); }},
      {"T2D", [] { return Conv2dTransposeNHWC(1, 4, 4, 4, 2, 4, 2, 1); }},
      {"CAP", [] { return Conv2dCapsuleNHWIJC(1, 4, 4, 2, 2, 3, 2, 1, 2); }},
      {"NRM", [] { return NormBMN(1, 8, 8); }},
      {"SFM", [] { return SoftmaxMN(4, 8); }},
      {"CBR", [] { return Conv2dNHWCBnRelu(1, 6, 6, 2, 4, 3, 2, 1); }},
      {"TBG", [] { return TransposeBatchMatmul(1, 4, 2, 4); }},
      {"matmul_relu", [] { return MatmulRelu(8, 8, 8); }},
      {"conv2d_nchw", [] { return Conv2dNCHW(1, 6, 6, 4, 4, 3, 3, 1, 1); }},
      {"GEMV", [] { return GemvNT(1, 8, 16); }},
      {"RMS", [] { return RmsNorm(2, 16); }},
  };
}

}  // namespace kiln::testing
