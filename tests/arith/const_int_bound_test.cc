#include "ir/arith/const_int_bound.h"

#include <gtest/gtest.h>

#include "ir/op.h"
#include "tests/arith/eval_util.h"

namespace kiln::ir::arith {
namespace {

using B = ConstIntBound;

Range R(int64_t min, int64_t extent) { return {IntImm(min), IntImm(extent)}; }

TEST(ConstIntBound, ConstantsAndUnboundVars) {
  ConstIntBoundAnalyzer an;
  EXPECT_EQ(an(IntImm(5)), B::Single(5));
  Var x("x");
  EXPECT_EQ(an(x), B::OfType(DataType::Int32()));
  Var y("y", DataType::Int64());
  EXPECT_TRUE(an(y).is_everything());
  Var u("u", DataType::UInt(8));
  EXPECT_EQ(an(u), B::Make(0, 255));
  EXPECT_EQ(an(BoolImm(true)), B::Single(1));
  EXPECT_EQ(an(LT(x, IntImm(3))), B::Make(0, 1));
  EXPECT_TRUE(an(FloatImm(1.5)).is_everything());
}

TEST(ConstIntBound, Arithmetic) {
  ConstIntBoundAnalyzer an;
  Var x("x"), y("y");
  an.Bind(x, R(0, 8));   // [0, 7]
  an.Bind(y, R(-3, 5));  // [-3, 1]
  EXPECT_EQ(an(x), B::Make(0, 7));
  EXPECT_EQ(an(x + y), B::Make(-3, 8));
  EXPECT_EQ(an(x - y), B::Make(-1, 10));
  EXPECT_EQ(an(x * y), B::Make(-21, 7));
  EXPECT_EQ(an(x * 4 + 3), B::Make(3, 31));
  EXPECT_EQ(an(Min(x, y)), B::Make(-3, 1));
  EXPECT_EQ(an(Max(x, y)), B::Make(0, 7));
  EXPECT_EQ(an(Select(LT(x, y), x, y)), B::Make(-3, 7));
  EXPECT_EQ(an(IfThenElse(LT(x, y), x + 10, y)), B::Make(-3, 17));
}

TEST(ConstIntBound, DivisionAndModulo) {
  ConstIntBoundAnalyzer an;
  Var x("x"), y("y"), d("d");
  an.Bind(x, R(0, 64));   // [0, 63]
  an.Bind(y, R(-9, 19));  // [-9, 9]
  an.Bind(d, R(2, 3));    // [2, 4]
  EXPECT_EQ(an(FloorDiv(x, IntImm(8))), B::Make(0, 7));
  EXPECT_EQ(an(FloorMod(x, IntImm(8))), B::Make(0, 7));
  EXPECT_EQ(an(FloorMod(x, IntImm(100))), B::Make(0, 63));  // smaller than the divisor
  EXPECT_EQ(an(FloorDiv(y, IntImm(4))), B::Make(-3, 2));
  EXPECT_EQ(an(Div(y, IntImm(4))), B::Make(-2, 2));
  EXPECT_EQ(an(FloorMod(y, IntImm(4))), B::Make(0, 3));
  EXPECT_EQ(an(TruncMod(y, IntImm(4))), B::Make(-3, 3));
  EXPECT_EQ(an(FloorDiv(x, d)), B::Make(0, 31));
  EXPECT_EQ(an(FloorMod(x, d)), B::Make(0, 3));
  EXPECT_EQ(an(FloorMod(y, IntImm(-4))), B::Make(-3, 0));
}

TEST(ConstIntBound, DivisionByZeroDoesNotCrash) {
  ConstIntBoundAnalyzer an;
  Var x("x"), z("z");
  an.Bind(x, R(0, 8));
  an.Bind(z, R(-1, 3));  // [-1, 1] contains 0
  EXPECT_TRUE(an(FloorDiv(x, IntImm(0))).contains(0));
  EXPECT_TRUE(an(FloorMod(x, IntImm(0))).contains(0));
  B q = an(FloorDiv(x, z));
  EXPECT_LE(q.min_value, -7);
  EXPECT_GE(q.max_value, 7);
}

TEST(ConstIntBound, CastsAndTypes) {
  ConstIntBoundAnalyzer an;
  Var x("x");
  an.Bind(x, R(0, 300));
  EXPECT_EQ(an(Cast(DataType::Int64(), x)), B::Make(0, 299));
  EXPECT_EQ(an(Cast(DataType::Int(8), x)), B::Make(-128, 127));  // may wrap
  EXPECT_EQ(an(Cast(DataType::UInt(16), x)), B::Make(0, 299));
  EXPECT_EQ(an(Cast(DataType::Int32(), FloatImm(2.5))), B::OfType(DataType::Int32()));
  // Unsigned subtraction may wrap to the top of the range.
  Var u("u", DataType::UInt(8));
  an.Update(u, B::Make(0, 10));
  EXPECT_EQ(an(u - IntImm(1, DataType::UInt(8))), B::Make(0, 255));
  EXPECT_EQ(an(u + IntImm(1, DataType::UInt(8))), B::Make(1, 11));
  Var big("big", DataType::Int64());
  an.Bind(big, {IntImm(0, DataType::Int64()), IntImm(int64_t{1} << 40, DataType::Int64())});
  EXPECT_EQ(an(big * 2), B::Make(0, (int64_t{1} << 41) - 2));
}

TEST(ConstIntBound, SymbolicRangeAndSaturation) {
  ConstIntBoundAnalyzer an;
  Var n("n"), i("i");
  an.Bind(n, R(1, 16));        // n in [1, 16]
  an.Bind(i, {IntImm(0), n});  // i in [0, n) => [0, 15]
  EXPECT_EQ(an(i), B::Make(0, 15));
  Var w("w", DataType::Int64());
  B b = an(w * 4 + 1);
  EXPECT_TRUE(b.is_everything());
  an.Update(w, B::Make(0, B::kPosInf));
  EXPECT_EQ(an(w * -2), B::Make(B::kNegInf, 0));
  EXPECT_EQ(an(FloorDiv(w, IntImm(4, DataType::Int64()))), B::Make(0, B::kPosInf));
  an.Unbind(w);
  EXPECT_TRUE(an(w).is_everything());
  EXPECT_EQ(B::Make(3, 3).str(), "[3, 3]");
  EXPECT_EQ(B::Everything().str(), "[-inf, +inf]");
}

// Brute force: the bound must contain every value the expression takes.
TEST(ConstIntBound, RandomExpressionsAreContained) {
  Var x("x"), y("y"), z("z");
  std::vector<Var> vars = {x, y, z};
  std::vector<int64_t> lo = {0, -3, 1}, hi = {5, 2, 4};
  ConstIntBoundAnalyzer an;
  for (size_t i = 0; i < vars.size(); ++i) an.Update(vars[i], B::Make(lo[i], hi[i]));
  testing::ExprGen gen(vars, 12345);
  int checked = 0;
  for (int iter = 0; iter < 400; ++iter) {
    Expr e = gen.Int(4);
    B b = an(e);
    testing::ForEachPoint(vars, lo, hi, [&](const testing::Env& env) {
      auto v = testing::Eval(e, env);
      if (!v) return;
      ++checked;
      ASSERT_TRUE(b.contains(*v)) << "value " << *v << " outside " << b.str()
                                  << " at x=" << env.at(x.get()) << " y=" << env.at(y.get())
                                  << " z=" << env.at(z.get());
    });
  }
  EXPECT_GT(checked, 10000);
}

}  // namespace
}  // namespace kiln::ir::arith
