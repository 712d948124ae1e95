// Softmax workloads: SFM (softmax_mn) and ATTN_SFM (attention scores).
#include <vector>

#include "ir/compute/create_prim_func.h"
#include "ir/compute/nn.h"
#include "ir/workloads/builder_util.h"
#include "ir/workloads/suite.h"

namespace kiln::ir {

PrimFunc Softmax(const std::vector<int64_t>& shape, int axis) {
  workloads::Require(!shape.empty(), "softmax", "the input must have at least one dimension");
  for (int64_t d : shape) {
    workloads::Require(d > 0, "softmax", "dimensions must be positive, got " + std::to_string(d));
  }
  int ndim = static_cast<int>(shape.size());
  workloads::Require(
      axis >= -ndim && axis < ndim, "softmax",
      "axis " + std::to_string(axis) + " out of range for a " + std::to_string(ndim) + "-d input");
  compute::Tensor a = compute::placeholder(shape, DataType::Float32(), "A");
  return compute::CreatePrimFunc({a, compute::softmax(a, axis)});
}

PrimFunc SoftmaxMN(int64_t M, int64_t N) { return Softmax({M, N}, 1); }

}  // namespace kiln::ir
