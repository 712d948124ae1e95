// Norms of the suite: NRM (norm_bmn) and RMS (RMSNorm as topi builds it).
#include <vector>

#include "ir/compute/compute.h"
#include "ir/compute/create_prim_func.h"
#include "ir/op.h"
#include "ir/workloads/builder_util.h"
#include "ir/workloads/suite.h"

namespace kiln::ir {

using compute::Body;
using compute::Tensor;
using workloads::Require;
using workloads::RequirePositive;

PrimFunc NormBMN(int64_t B, int64_t M, int64_t N) {
  RequirePositive("norm_bmn", {{"B", B}, {"M", M}, {"N", N}});
  Tensor a = compute::placeholder({B, M, N}, DataType::Float32(), "A");
  IterVar i = compute::reduce_axis(M, "i");
  IterVar j = compute::reduce_axis(N, "j");
  Tensor c =
      compute::compute(std::vector<int64_t>{B},
                       [&](const std::vector<Var>& b) -> Body {
                         return compute::sum(a(b[0], i.var, j.var) * a(b[0], i.var, j.var), {i, j});
                       },
                       "C", {"b"});
  Tensor d = compute::compute(
      std::vector<int64_t>{B},
      [&](const std::vector<Var>& b) -> Body { return Call(CallOp::kSqrt, {c(b[0])}); }, "D",
      {"b"});
  return compute::CreatePrimFunc({a, d});
}

PrimFunc RmsNorm(int64_t rows, int64_t hidden, double eps) {
  RequirePositive("rms_norm", {{"rows", rows}, {"hidden", hidden}});
  Require(eps >= 0, "rms_norm", "epsilon must not be negative");
  Tensor data = compute::placeholder({rows, hidden}, DataType::Float32(), "data");
  Tensor weight = compute::placeholder(std::vector<int64_t>{hidden}, DataType::Float32(), "weight");
  // topi names the reduction of x*x over axis 1 "T_multiply_red" with axis
  // ax0 and reduce axis k1.
  IterVar k1 = compute::reduce_axis(hidden, "k1");
  Tensor square_sum =
      compute::compute(std::vector<int64_t>{rows},
                       [&](const std::vector<Var>& i) -> Body {
                         return compute::sum(data(i[0], k1.var) * data(i[0], k1.var), {k1});
                       },
                       "T_multiply_red", {"ax0"});
  Tensor rsqrt = compute::compute(std::vector<int64_t>{rows},
                                  [&](const std::vector<Var>& i) -> Body {
                                    Expr mean =
                                        square_sum(i[0]) / FloatImm(static_cast<double>(hidden));
                                    return Call(CallOp::kRsqrt, {mean + FloatImm(eps)});
                                  },
                                  "rsqrt", {"ax0"});
  Tensor out = compute::compute({rows, hidden},
                                [&](const std::vector<Var>& i) -> Body {
                                  return rsqrt(i[0]) * data(i[0], i[1]) * weight(i[1]);
                                },
                                "T_rms_norm", {"ax0", "ax1"});
  return compute::CreatePrimFunc({data, weight, out});
}

}  // namespace kiln::ir
