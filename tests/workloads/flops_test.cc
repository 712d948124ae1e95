#include "ir/flops.h"

#include <gtest/gtest.h>

#include "ir/compute/compute.h"
#include "ir/compute/create_prim_func.h"
#include "ir/op.h"
#include "ir/workloads/suite.h"

namespace kiln::ir {
namespace {

// for i in range(extent): B[i] = value(A[i], i)
double LoopFlops(Expr extent, const std::function<Expr(const Expr& a, const Var& i)>& value) {
  Buffer a("A", DataType::Float32(), {IntImm(16)});
  Buffer b("B", DataType::Float32(), {IntImm(16)});
  Var i("i");
  Stmt store = BufferStore(b, value(BufferLoad(a, {i}), i), {i});
  return EstimateFlops(For(i, IntImm(0), std::move(extent), ForKind::kSerial, store));
}

TEST(EstimateFlops, CountsArithmeticTimesLoopExtents) {
  EXPECT_EQ(LoopFlops(IntImm(10), [](const Expr& a, const Var&) { return a * a + a; }), 20);
  EXPECT_EQ(LoopFlops(IntImm(10),
                      [](const Expr& a, const Var&) {
                        return Min(a, FloatImm(1.0)) - Max(a, FloatImm(0.0)) / a;
                      }),
            40);
  // A loop whose extent is not a constant counts once, as in TVM.
  EXPECT_EQ(LoopFlops(Var("n"), [](const Expr& a, const Var&) { return a * a; }), 1);
}

TEST(EstimateFlops, SkipsIndicesComparisonsCallsAndCasts) {
  Buffer c("C", DataType::Float32(), {IntImm(16)});
  // Index arithmetic inside a load is free.
  EXPECT_EQ(
      LoopFlops(IntImm(4), [&](const Expr&, const Var& i) { return BufferLoad(c, {i * 2 + 1}); }),
      0);
  // A call costs only its arguments.
  EXPECT_EQ(
      LoopFlops(IntImm(4),
                [](const Expr& a, const Var&) { return Call(CallOp::kExp, {a - FloatImm(1.0)}); }),
      4);
  EXPECT_EQ(LoopFlops(IntImm(4),
                      [](const Expr& a, const Var&) {
                        return Cast(DataType::Float32(), Cast(DataType::Float64(), a) *
                                                             FloatImm(2.0, DataType::Float64()));
                      }),
            4);
  // Comparisons are free, with their operands.
  EXPECT_EQ(
      LoopFlops(IntImm(4), [](const Expr& a,
                              const Var&) { return Select(LT(a + a, a * a), a, FloatImm(0.0)); }),
      0);
  // Select: the costlier branch; if_then_else (a call): every argument.
  EXPECT_EQ(
      LoopFlops(IntImm(4), [](const Expr& a,
                              const Var&) { return Select(LT(a, FloatImm(0.0)), a * a + a, a); }),
      8);
  EXPECT_EQ(LoopFlops(IntImm(4),
                      [](const Expr& a, const Var&) {
                        return IfThenElse(LT(a, FloatImm(0.0)), a * a + a, a - a);
                      }),
            12);
}

TEST(EstimateFlops, ReductionInitIsNotCounted) {
  // Init C = 0 is free; the update C = C + A * B costs 2 per iteration.
  EXPECT_EQ(EstimateFlops(Matmul(2, 3, 4)), 2.0 * 2 * 3 * 4);
  EXPECT_EQ(EstimateFlops(BatchMatmulNKKM(1, 1024, 1024, 1024)), 2147483648.0);
  // A max reduction: one T.max per step.
  compute::Tensor a = compute::placeholder({5, 6}, DataType::Float32(), "A");
  IterVar k = compute::reduce_axis(6, "k");
  compute::Tensor m = compute::compute(
      {5},
      [&](const std::vector<Var>& i) -> compute::Body { return compute::max(a(i[0], k.var), {k}); },
      "M");
  EXPECT_EQ(EstimateFlops(compute::CreatePrimFunc({a, m})), 30);
}

}  // namespace
}  // namespace kiln::ir
