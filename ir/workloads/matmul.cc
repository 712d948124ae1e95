// Matrix products of the suite: GMM, TBG, matmul, matmul_relu and GEMV; and
// GMM_FP16, GMM with half inputs and a float accumulator (variants.h).
#include <vector>

#include "ir/compute/compute.h"
#include "ir/compute/create_prim_func.h"
#include "ir/compute/nn.h"
#include "ir/op.h"
#include "ir/workloads/builder_util.h"
#include "ir/workloads/suite.h"
#include "ir/workloads/variants.h"

namespace kiln::ir {

using compute::Body;
using compute::Tensor;
using workloads::RequirePositive;

PrimFunc BatchMatmulNKKM(int64_t B, int64_t N, int64_t M, int64_t K) {
  RequirePositive("batch_matmul_nkkm", {{"B", B}, {"N", N}, {"M", M}, {"K", K}});
  Tensor x = compute::placeholder({B, N, K}, DataType::Float32(), "X");
  Tensor y = compute::placeholder({B, K, M}, DataType::Float32(), "Y");
  IterVar k = compute::reduce_axis(K, "k");
  Tensor z =
      compute::compute({B, N, M},
                       [&](const std::vector<Var>& i) -> Body {
                         return compute::sum(x(i[0], i[1], k.var) * y(i[0], k.var, i[2]), {k});
                       },
                       "Z", {"b", "i", "j"});
  return compute::CreatePrimFunc({x, y, z});
}

PrimFunc BatchMatmulNKKMFp16(int64_t B, int64_t N, int64_t M, int64_t K) {
  RequirePositive("batch_matmul_nkkm_fp16", {{"B", B}, {"N", N}, {"M", M}, {"K", K}});
  Tensor x = compute::placeholder({B, N, K}, DataType::Float(16), "X");
  Tensor y = compute::placeholder({B, K, M}, DataType::Float(16), "Y");
  IterVar k = compute::reduce_axis(K, "k");
  const DataType f32 = DataType::Float32();
  Tensor z = compute::compute(
      {B, N, M},
      [&](const std::vector<Var>& i) -> Body {
        return compute::sum(Cast(f32, x(i[0], i[1], k.var)) * Cast(f32, y(i[0], k.var, i[2])), {k});
      },
      "Z", {"b", "i", "j"});
  return compute::CreatePrimFunc({x, y, z});
}

PrimFunc TransposeBatchMatmul(int64_t batch, int64_t seq_len, int64_t n_head, int64_t n_dim) {
  RequirePositive("transpose_batch_matmul",
                  {{"batch", batch}, {"seq_len", seq_len}, {"n_head", n_head}, {"n_dim", n_dim}});
  Tensor query =
      compute::placeholder({batch, seq_len, n_head, n_dim}, DataType::Float32(), "query");
  Tensor value =
      compute::placeholder({batch, seq_len, n_head, n_dim}, DataType::Float32(), "value");
  Tensor query_t = compute::compute(
      {batch, n_head, seq_len, n_dim},
      [&](const std::vector<Var>& i) -> Body { return query(i[0], i[2], i[1], i[3]); }, "query_T",
      {"b", "h", "l", "d"});
  Tensor value_t = compute::compute(
      {batch, n_head, n_dim, seq_len},
      [&](const std::vector<Var>& i) -> Body { return value(i[0], i[3], i[1], i[2]); }, "value_T",
      {"b", "h", "d", "l"});
  IterVar k = compute::reduce_axis(n_dim, "k");
  Tensor out = compute::compute(
      {batch, n_head, seq_len, seq_len},
      [&](const std::vector<Var>& i) -> Body {
        return compute::sum(query_t(i[0], i[1], i[2], k.var) * value_t(i[0], i[1], k.var, i[3]),
                            {k});
      },
      "C", {"b", "h", "i", "j"});
  return compute::CreatePrimFunc({query, value, out});
}

namespace {

Tensor MatmulStage(const Tensor& a, const Tensor& b, int64_t N, int64_t M, int64_t K) {
  IterVar k = compute::reduce_axis(K, "k");
  return compute::compute({N, M},
                          [&](const std::vector<Var>& i) -> Body {
                            return compute::sum(a(i[0], k.var) * b(k.var, i[1]), {k});
                          },
                          "C", {"i", "j"});
}

}  // namespace

PrimFunc Matmul(int64_t N, int64_t M, int64_t K) {
  RequirePositive("matmul", {{"n", N}, {"m", M}, {"k", K}});
  Tensor a = compute::placeholder({N, K}, DataType::Float32(), "A");
  Tensor b = compute::placeholder({K, M}, DataType::Float32(), "B");
  return compute::CreatePrimFunc({a, b, MatmulStage(a, b, N, M, K)});
}

PrimFunc MatmulRelu(int64_t N, int64_t M, int64_t K) {
  RequirePositive("matmul_relu", {{"n", N}, {"m", M}, {"k", K}});
  Tensor a = compute::placeholder({N, K}, DataType::Float32(), "A");
  Tensor b = compute::placeholder({K, M}, DataType::Float32(), "B");
  Tensor d = compute::relu(MatmulStage(a, b, N, M, K));
  return compute::CreatePrimFunc({a, b, d});
}

PrimFunc GemvNT(int64_t M, int64_t N, int64_t K) {
  RequirePositive("gemv", {{"M", M}, {"N", N}, {"K", K}});
  Tensor a = compute::placeholder({M, K}, DataType::Float32(), "A");
  Tensor b = compute::placeholder({N, K}, DataType::Float32(), "B");
  IterVar k = compute::reduce_axis(K, "k");
  Tensor c = compute::compute({M, N},
                              [&](const std::vector<Var>& i) -> Body {
                                return compute::sum(a(i[0], k.var) * b(i[1], k.var), {k});
                              },
                              "NT_matmul", {"i0", "i1"});
  return compute::CreatePrimFunc({a, b, c});
}

}  // namespace kiln::ir
