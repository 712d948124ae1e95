#include "ir/arith/int_set.h"

#include <gtest/gtest.h>

#include "ir/arith/expr_compare.h"
#include "ir/error.h"
#include "ir/op.h"
#include "tests/arith/eval_util.h"

namespace kiln::ir::arith {
namespace {

using testing::Str;

Expr C(int64_t v) { return IntImm(v); }
Range R(int64_t min, int64_t extent) { return {C(min), C(extent)}; }

#define EXPECT_EXPR_EQ(got, want)                                                \
  do {                                                                           \
    Expr g_ = (got), w_ = (want);                                                \
    EXPECT_TRUE(ExprEqual(g_, w_)) << "got " << Str(g_) << ", want " << Str(w_); \
  } while (0)

TEST(IntSet, ConstantDomains) {
  Analyzer an;
  Var i("i"), j("j");
  IntSetMap dom = {{i.get(), IntervalSet::FromRange(R(0, 4), &an)},
                   {j.get(), IntervalSet::FromRange(R(0, 16), &an)}};
  IntervalSet s = EvalSet(i * 16 + j, dom, &an);
  EXPECT_EXPR_EQ(s.min, C(0));
  EXPECT_EXPR_EQ(s.max, C(63));
  s = EvalSet(C(10) - i * 2, dom, &an);
  EXPECT_EXPR_EQ(s.min, C(4));
  EXPECT_EXPR_EQ(s.max, C(10));
  s = EvalSet(FloorDiv(j, C(4)), dom, &an);
  EXPECT_EXPR_EQ(s.max, C(3));
  s = EvalSet(FloorMod(j + 3, C(8)), dom, &an);
  EXPECT_EXPR_EQ(s.min, C(0));
  EXPECT_EXPR_EQ(s.max, C(7));
  s = EvalSet(FloorMod(i, C(8)), dom, &an);  // one period: stays [0, 3]
  EXPECT_EXPR_EQ(s.max, C(3));
  s = EvalSet(Min(i, C(2)) + Max(j, C(5)), dom, &an);
  EXPECT_EXPR_EQ(s.min, C(5));
  EXPECT_EXPR_EQ(s.max, C(17));
  s = EvalSet(i * j, dom, &an);
  EXPECT_EXPR_EQ(s.max, C(45));
}

TEST(IntSet, SymbolicDomains) {
  Analyzer an;
  Var i("i"), n("n"), io("io"), ii("ii");
  an.Bind(n, R(1, 100));
  IntSetMap dom = {{i.get(), IntervalSet::FromRange({C(0), n}, &an)}};
  IntervalSet s = EvalSet(i * 4 + 3, dom, &an);
  EXPECT_EXPR_EQ(s.min, C(3));
  EXPECT_EXPR_EQ(s.max, n * 4 - 1);
  // A variable outside the domain is a fixed symbol.
  IntSetMap tile = {{ii.get(), IntervalSet::FromRange(R(0, 8), &an)}};
  Range r = ToRange(EvalSet(io * 8 + ii, tile, &an), &an);
  EXPECT_EXPR_EQ(r.min, io * 8);
  EXPECT_EXPR_EQ(r.extent, C(8));
  EXPECT_TRUE(EvalSet(io + 1, tile, &an).is_single_point());
  // Multiplying by a symbol of unknown sign gives up; by a positive one it does not.
  Var k("k");
  EXPECT_TRUE(EvalSet(ii * k, tile, &an).is_everything());
  EXPECT_EXPR_EQ(EvalSet(ii * n, tile, &an).max, n * 7);
}

TEST(IntSet, UnboundedEnds) {
  Analyzer an;
  Var i("i");
  IntSetMap dom = {{i.get(), IntervalSet::Interval(C(0), Expr())}};
  IntervalSet s = EvalSet(i + 2, dom, &an);
  EXPECT_EXPR_EQ(s.min, C(2));
  EXPECT_FALSE(s.has_upper_bound());
  s = EvalSet(Min(i, C(5)), dom, &an);
  EXPECT_EXPR_EQ(s.max, C(5));
  s = EvalSet(FloorMod(i, C(5)), dom, &an);
  EXPECT_EXPR_EQ(s.max, C(4));
  s = EvalSet(C(0) - i, dom, &an);
  EXPECT_FALSE(s.has_lower_bound());
  EXPECT_THROW(ToRange(s, &an, "index"), IRError);
  try {
    ToRange(s, &an, "index of A");
  } catch (const IRError& e) {
    EXPECT_NE(std::string(e.what()).find("index of A is unbounded below"), std::string::npos)
        << e.what();
  }
}

TEST(IntSet, UnionIntersectAndRegion) {
  Analyzer an;
  Var i("i"), j("j");
  IntSetMap dom = {{i.get(), IntervalSet::FromRange(R(0, 4), &an)},
                   {j.get(), IntervalSet::FromRange(R(0, 3), &an)}};
  IntervalSet u = Union(IntervalSet::Interval(C(0), C(3)), IntervalSet::Interval(C(2), C(9)), &an);
  EXPECT_EXPR_EQ(u.min, C(0));
  EXPECT_EXPR_EQ(u.max, C(9));
  IntervalSet x =
      Intersect(IntervalSet::Interval(C(0), C(3)), IntervalSet::Interval(C(2), C(9)), &an);
  EXPECT_EXPR_EQ(x.min, C(2));
  EXPECT_EXPR_EQ(x.max, C(3));
  // A 3-tap stencil read: A[i + j] and B[i, j * 2] style accesses.
  std::vector<Range> region = CoverRegion({{i + j, j * 2}, {i, C(7)}}, dom, &an);
  ASSERT_EQ(region.size(), 2u);
  EXPECT_EXPR_EQ(region[0].min, C(0));
  EXPECT_EXPR_EQ(region[0].extent, C(6));
  EXPECT_EXPR_EQ(region[1].min, C(0));
  EXPECT_EXPR_EQ(region[1].extent, C(8));
  EXPECT_THROW(CoverRegion({{i}, {i, j}}, dom, &an), IRError);
}

// Every value an expression takes lies in its evaluated set.
TEST(IntSet, RandomExpressionsAreContained) {
  Var x("x"), y("y"), z("z");
  std::vector<Var> vars = {x, y, z};
  std::vector<int64_t> lo = {0, -3, 1}, hi = {6, 2, 4};
  Analyzer an;
  IntSetMap dom;
  for (size_t i = 0; i < vars.size(); ++i) {
    dom[vars[i].get()] = IntervalSet::Interval(C(lo[i]), C(hi[i]));
  }
  testing::ExprGen gen(vars, 777);
  int bounded = 0;
  for (int iter = 0; iter < 300; ++iter) {
    Expr e = gen.Int(3);
    IntervalSet s = EvalSet(e, dom, &an);
    int64_t smin = INT64_MIN, smax = INT64_MAX;
    if (s.min.defined()) {
      ASSERT_TRUE(AsConstInt(s.min, &smin)) << Str(e) << ": " << Str(s.min);
    }
    if (s.max.defined()) {
      ASSERT_TRUE(AsConstInt(s.max, &smax)) << Str(e) << ": " << Str(s.max);
    }
    if (s.is_bounded()) ++bounded;
    testing::ForEachPoint(vars, lo, hi, [&](const testing::Env& env) {
      auto v = testing::Eval(e, env);
      if (!v) return;
      ASSERT_GE(*v, smin) << Str(e);
      ASSERT_LE(*v, smax) << Str(e);
    });
  }
  EXPECT_GT(bounded, 200);
}

}  // namespace
}  // namespace kiln::ir::arith
