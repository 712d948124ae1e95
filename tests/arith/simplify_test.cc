#include <gtest/gtest.h>

#include <climits>
#include <functional>
#include <random>

#include "ir/arith/analyzer.h"
#include "ir/arith/expr_compare.h"
#include "ir/op.h"
#include "tests/arith/eval_util.h"

namespace kiln::ir::arith {
namespace {

using testing::Str;

Range R(int64_t min, int64_t extent) { return {IntImm(min), IntImm(extent)}; }
Expr C(int64_t v) { return IntImm(v); }

#define EXPECT_SIMPLIFIES(an, e, expected)                                                 \
  do {                                                                                     \
    Expr got_ = (an).Simplify(e);                                                          \
    Expr want_ = (expected);                                                               \
    EXPECT_TRUE(ExprEqual(got_, want_))                                                    \
        << "simplify " << Str(e) << "\n  got  " << Str(got_) << "\n  want " << Str(want_); \
  } while (0)

int64_t ConstOf(const Expr& e) {
  int64_t v = 0;
  EXPECT_TRUE(AsConstInt(e, &v)) << "not a constant: " << Str(e);
  return v;
}

TEST(Simplify, FoldsIntegerConstants) {
  Analyzer an;
  EXPECT_EQ(ConstOf(an.Simplify(C(3) + C(4) * C(5))), 23);
  EXPECT_EQ(ConstOf(an.Simplify(FloorDiv(C(-7), C(2)))), -4);
  EXPECT_EQ(ConstOf(an.Simplify(FloorMod(C(-7), C(2)))), 1);
  EXPECT_EQ(ConstOf(an.Simplify(Div(C(-7), C(2)))), -3);
  EXPECT_EQ(ConstOf(an.Simplify(TruncMod(C(-7), C(2)))), -1);
  EXPECT_EQ(ConstOf(an.Simplify(Min(C(-7), C(2)))), -7);
  EXPECT_EQ(ConstOf(an.Simplify(Max(C(-7), C(2)))), 2);
  // Wraparound at the type's width.
  DataType i8 = DataType::Int(8), u8 = DataType::UInt(8);
  Expr s8 = an.Simplify(IntImm(100, i8) + IntImm(100, i8));
  EXPECT_EQ(s8.dtype(), i8);
  EXPECT_EQ(ConstOf(s8), -56);
  EXPECT_EQ(ConstOf(an.Simplify(IntImm(200, u8) + IntImm(100, u8))), 44);
  EXPECT_EQ(ConstOf(an.Simplify(C(INT32_MAX) + C(1))), INT32_MIN);
  Expr m64 = IntImm(INT64_MIN, DataType::Int64());
  EXPECT_EQ(ConstOf(an.Simplify(Div(m64, IntImm(-1, DataType::Int64())))), INT64_MIN);
  EXPECT_EQ(ConstOf(an.Simplify(Cast(DataType::Int(8), C(300)))), 44);
  EXPECT_EQ(ConstOf(an.Simplify(Cast(DataType::Int32(), FloatImm(-2.75)))), -2);
}

TEST(Simplify, FoldsFloatConstants) {
  Analyzer an;
  double v = 0;
  ASSERT_TRUE(AsConstFloat(an.Simplify(FloatImm(1.5) + FloatImm(2.25)), &v));
  EXPECT_EQ(v, 3.75);
  ASSERT_TRUE(AsConstFloat(an.Simplify(FloatImm(0.1) * FloatImm(3.0)), &v));
  EXPECT_EQ(v, static_cast<double>(0.1f * 3.0f));  // rounded like float32
  ASSERT_TRUE(AsConstFloat(an.Simplify(Cast(DataType::Float32(), C(7))), &v));
  EXPECT_EQ(v, 7.0);
  EXPECT_TRUE(an.CanProve(LT(FloatImm(1.0), FloatImm(2.0))));
}

TEST(Simplify, NeverFoldsDivisionByZero) {
  Analyzer an;
  Var x("x");
  for (ExprKind k : {ExprKind::kDiv, ExprKind::kMod, ExprKind::kFloorDiv, ExprKind::kFloorMod}) {
    Expr e = an.Simplify(Binary(k, C(5), C(0)));
    EXPECT_EQ(e.kind(), k) << Str(e);
    EXPECT_EQ(an.Simplify(Binary(k, x, C(0))).kind(), k);
  }
  Expr f = an.Simplify(Div(FloatImm(1.0), FloatImm(0.0)));
  EXPECT_EQ(f.kind(), ExprKind::kDiv);
}

TEST(Simplify, KeepsDataTypes) {
  Analyzer an;
  Var i("i", DataType::Int64()), j("j", DataType::Int64());
  an.Bind(i, Range{IntImm(0, DataType::Int64()), IntImm(8, DataType::Int64())});
  Expr e = an.Simplify(FloorDiv(i * 4 + j - j, IntImm(2, DataType::Int64())) + 1);
  EXPECT_EQ(e.dtype(), DataType::Int64());
  EXPECT_SIMPLIFIES(an, i * 4 - i * 4, IntImm(0, DataType::Int64()));
  EXPECT_EQ(an.Simplify(LT(i, j)).dtype(), DataType::Bool());
}

TEST(Simplify, CanonicalLinearForm) {
  Analyzer an;
  Var x("x"), y("y"), z("z");
  EXPECT_SIMPLIFIES(an, x - x, C(0));
  EXPECT_SIMPLIFIES(an, (x + y) - (y + x), C(0));
  EXPECT_SIMPLIFIES(an, x * 2 + x * 3, x * 5);
  EXPECT_SIMPLIFIES(an, (x + 3) * 2 - 6, x * 2);
  EXPECT_SIMPLIFIES(an, 1 + x + 2, x + 3);
  EXPECT_SIMPLIFIES(an, x - 5 + 2, x - 3);
  EXPECT_SIMPLIFIES(an, 0 - x, x * -1);
  EXPECT_SIMPLIFIES(an, C(4) - x, C(4) - x);
  // Term order is structural, so permutations meet in one form.
  EXPECT_TRUE(ExprEqual(an.Simplify(z + y + x), an.Simplify(x + (y + z))));
  EXPECT_SIMPLIFIES(an, z + y + x, x + y + z);
  EXPECT_SIMPLIFIES(an, x - y + z, x + z - y);
  // Products: constants are pulled out of non-linear terms.
  EXPECT_SIMPLIFIES(an, (x * 2) * y + (y * 3) * x, (x * y) * 5);
}

TEST(Simplify, DeterministicAcrossRuns) {
  // Same-named variables are ordered as they came, never by address.
  for (int round = 0; round < 5; ++round) {
    Analyzer an;
    Var a("v"), b("v"), c("w");
    Expr s = an.Simplify(c + b + a);
    Expr expected = (b + a) + c;
    EXPECT_TRUE(ExprEqual(s, expected)) << Str(s);
  }
}

TEST(Simplify, FloorDivOfSplitSum) {
  Analyzer an;
  Var x("x"), y("y");
  an.Bind(x, R(0, 16));
  an.Bind(y, R(0, 4));
  EXPECT_SIMPLIFIES(an, FloorDiv(x * 4 + y, C(4)), x);
  EXPECT_SIMPLIFIES(an, FloorMod(x * 4 + y, C(4)), y);
  EXPECT_SIMPLIFIES(an, FloorDiv(x * 8 + y * 2 + 1, C(8)), x);
  EXPECT_SIMPLIFIES(an, FloorMod(x * 8 + y * 2 + 1, C(8)), y * 2 + 1);
  EXPECT_SIMPLIFIES(an, FloorDiv(x * 6, C(3)), x * 2);
  EXPECT_SIMPLIFIES(an, FloorMod(x * 6, C(3)), C(0));
  EXPECT_SIMPLIFIES(an, FloorDiv(x * 2, C(4)), FloorDiv(x, C(2)));
  EXPECT_SIMPLIFIES(an, FloorMod(x * 2, C(4)), FloorMod(x, C(2)) * 2);
  EXPECT_SIMPLIFIES(an, FloorMod(x + 8, C(4)), FloorMod(x, C(4)));
}

TEST(Simplify, FloorDivRulesRespectBounds) {
  Analyzer an;
  Var x("x"), y("y");
  an.Bind(x, R(0, 16));
  an.Bind(y, R(0, 8));  // y may reach 4: the remainder is not just y
  EXPECT_SIMPLIFIES(an, FloorDiv(x * 4 + y, C(4)), x + FloorDiv(y, C(4)));
  EXPECT_SIMPLIFIES(an, FloorMod(x * 4 + y, C(4)), FloorMod(y, C(4)));
  Var u("u");  // unbounded
  EXPECT_SIMPLIFIES(an, FloorMod(x * 4 + u, C(4)), FloorMod(u, C(4)));
  EXPECT_SIMPLIFIES(an, FloorDiv(u, C(4)), FloorDiv(u, C(4)));
  // A shifted range within one bucket still folds.
  Var w("w");
  an.Bind(w, R(4, 4));  // [4, 7]
  EXPECT_SIMPLIFIES(an, FloorDiv(w, C(4)), C(1));
  EXPECT_SIMPLIFIES(an, FloorMod(w, C(4)), w - 4);
}

TEST(Simplify, TruncatingDivisionNeedsNonNegative) {
  Analyzer an;
  Var x("x"), y("y"), n("n");
  an.Bind(x, R(0, 16));
  an.Bind(y, R(0, 4));
  an.Bind(n, R(-3, 7));  // may be negative
  EXPECT_SIMPLIFIES(an, Div(x * 4 + y, C(4)), x);
  EXPECT_SIMPLIFIES(an, TruncMod(x * 4 + y, C(4)), y);
  // truncdiv(4x + n, 4) != x + truncdiv(n, 4) when n < 0 < 4x + n.
  Expr e = an.Simplify(Div(x * 4 + n, C(4)));
  EXPECT_EQ(e.kind(), ExprKind::kDiv) << Str(e);
  EXPECT_EQ(an.Simplify(TruncMod(x * 4 + n, C(4))).kind(), ExprKind::kMod);
  EXPECT_SIMPLIFIES(an, Div(n, C(4)), C(0));  // |n| < 4
  EXPECT_SIMPLIFIES(an, TruncMod(n, C(4)), n);
}

TEST(Simplify, NestedDivMod) {
  Analyzer an;
  Var x("x");
  EXPECT_SIMPLIFIES(an, FloorDiv(FloorDiv(x, C(4)), C(8)), FloorDiv(x, C(32)));
  EXPECT_SIMPLIFIES(an, FloorMod(FloorMod(x, C(32)), C(8)), FloorMod(x, C(8)));
  // Not when the outer modulus does not divide the inner one.
  EXPECT_SIMPLIFIES(an, FloorMod(FloorMod(x, C(12)), C(8)), FloorMod(FloorMod(x, C(12)), C(8)));
  // Nor for truncating division of a value that may be negative.
  EXPECT_EQ(an.Simplify(Div(Div(x, C(4)), C(8))).kind(), ExprKind::kDiv);
}

TEST(Simplify, DivModPairsRecombine) {
  Analyzer an;
  Var x("x"), y("y");
  EXPECT_SIMPLIFIES(an, FloorDiv(x, C(4)) * 4 + FloorMod(x, C(4)), x);
  EXPECT_SIMPLIFIES(an, FloorMod(x + y, C(8)) * 3 + FloorDiv(x + y, C(8)) * 24, x * 3 + y * 3);
  EXPECT_SIMPLIFIES(an, Div(x, C(4)) * 4 + TruncMod(x, C(4)), x);
  EXPECT_SIMPLIFIES(an, x - FloorDiv(x, C(4)) * 4, FloorMod(x, C(4)));
  EXPECT_SIMPLIFIES(an, (x + y) * 2 - FloorDiv(x + y, C(4)) * 8 + 1, FloorMod(x + y, C(4)) * 2 + 1);
  EXPECT_SIMPLIFIES(an, x - FloorDiv(x + y, C(4)) * 4, x - FloorDiv(x + y, C(4)) * 4);
  // The digits of a split of a split: (x // 2) // 7 folds to x // 14, and
  // pairs with (x // 2) % 7 back into x // 2.
  EXPECT_SIMPLIFIES(an, FloorDiv(x, C(14)) * 112 + FloorMod(FloorDiv(x, C(2)), C(7)) * 16,
                    FloorDiv(x, C(2)) * 16);
  EXPECT_TRUE(an.CanProveEqual(FloorDiv(x, C(2)) * 16,
                               FloorDiv(x, C(14)) * 112 + FloorMod(FloorDiv(x, C(2)), C(7)) * 16));
  EXPECT_SIMPLIFIES(an, FloorDiv(x + y, C(12)) * 3 + FloorMod(FloorDiv(x + y, C(4)), C(3)),
                    FloorDiv(x + y, C(4)));
  // And the low digits: x % 16 + ((x // 16) % 2) * 16 is x % 32.
  EXPECT_SIMPLIFIES(an, FloorMod(x, C(16)) * 32 + FloorMod(FloorDiv(x, C(16)), C(2)) * 512,
                    FloorMod(x, C(32)) * 32);
  EXPECT_TRUE(an.CanProveEqual(FloorMod(x, C(32)) * 32,
                               FloorMod(x, C(16)) * 32 + FloorMod(FloorDiv(x, C(16)), C(2)) * 512));
  // Digits above the lowest: (x // 2) % 2 and (x // 4) % 4 are (x // 2) % 8.
  EXPECT_SIMPLIFIES(an,
                    FloorMod(FloorDiv(x, C(2)), C(2)) * 28 + FloorMod(FloorDiv(x, C(4)), C(4)) * 56,
                    FloorMod(FloorDiv(x, C(2)), C(8)) * 28);
  // All three digits of x % 60 (4, 3, 5) fuse back into x.
  EXPECT_SIMPLIFIES(an,
                    FloorMod(x, C(4)) + FloorMod(FloorDiv(x, C(4)), C(3)) * 4 +
                        FloorMod(FloorDiv(x, C(12)), C(5)) * 12 + FloorDiv(x, C(60)) * 60,
                    x);
  // Mismatched pieces stay apart.
  EXPECT_SIMPLIFIES(an, FloorMod(x, C(16)) * 32 + FloorMod(FloorDiv(x, C(16)), C(2)) * 256,
                    FloorMod(x, C(16)) * 32 + FloorMod(FloorDiv(x, C(16)), C(2)) * 256);
  EXPECT_SIMPLIFIES(an, FloorDiv(x, C(14)) * 112 + FloorMod(FloorDiv(x, C(2)), C(7)) * 8,
                    FloorDiv(x, C(14)) * 112 + FloorMod(FloorDiv(x, C(2)), C(7)) * 8);
  EXPECT_SIMPLIFIES(an, FloorDiv(x, C(4)) * 2 + FloorMod(x, C(4)),
                    FloorDiv(x, C(4)) * 2 + FloorMod(x, C(4)));
  EXPECT_SIMPLIFIES(an, FloorDiv(x, C(4)) * 4 + FloorMod(y, C(4)),
                    FloorDiv(x, C(4)) * 4 + FloorMod(y, C(4)));
  // Split then fuse back through bound values.
  Var io("io"), ii("ii"), f("f");
  an.Bind(f, R(0, 32));
  an.Bind(io, FloorDiv(f, C(4)));
  an.Bind(ii, FloorMod(f, C(4)));
  EXPECT_SIMPLIFIES(an, io * 4 + ii, f);
  Var s("s");
  an.Bind(s, R(0, 4));
  EXPECT_SIMPLIFIES(an, s - FloorDiv(s, C(4)) * 4, s);
}

// The digit-fusion rules against brute force: for every small radix b, d, c
// and scale k, both sums of two digits of x (floor semantics, x negative
// too) keep their value, and fuse into a single term.
TEST(Simplify, SplitDigitsFuseExactly) {
  Analyzer an;
  Var x("x");
  int checked = 0;
  for (int64_t b : {1, 2, 3}) {
    for (int64_t d : {2, 3, 4}) {
      for (int64_t c : {2, 5}) {
        for (int64_t k : {1, 3, -2}) {
          Expr low = b == 1 ? FloorMod(x, C(d)) : FloorMod(FloorDiv(x, C(b)), C(d));
          Expr mid = FloorMod(FloorDiv(x, C(b * d)), C(c));
          Expr high = FloorDiv(x, C(b * d * c));
          for (Expr e : {low * k + mid * (k * d), mid * k + high * (k * c)}) {
            Expr got = an.Simplify(e);
            EXPECT_NE(got.kind(), ExprKind::kAdd) << Str(e) << " -> " << Str(got);
            testing::ForEachPoint({x}, {-70}, {70}, [&](const testing::Env& env) {
              ASSERT_EQ(testing::Eval(got, env), testing::Eval(e, env))
                  << Str(e) << " -> " << Str(got) << " at x=" << env.at(x.get());
            });
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 3 * 3 * 2 * 3 * 2);
}

TEST(Simplify, MinMaxWithProvableOrder) {
  Analyzer an;
  Var x("x"), y("y");
  an.Bind(x, R(0, 8));
  an.Bind(y, R(8, 8));
  EXPECT_SIMPLIFIES(an, Min(x, y), x);
  EXPECT_SIMPLIFIES(an, Max(x, y), y);
  EXPECT_SIMPLIFIES(an, Min(x + 1, x + 3), x + 1);
  EXPECT_SIMPLIFIES(an, Max(x - 1, x), x);
  EXPECT_SIMPLIFIES(an, Min(x, x), x);
  Var z("z");
  an.Bind(z, R(4, 8));  // overlaps x: no order
  EXPECT_SIMPLIFIES(an, Min(z, x), Min(x, z));
  EXPECT_SIMPLIFIES(an, Max(x, z), Max(x, z));
}

TEST(Simplify, ComparisonsFromBounds) {
  Analyzer an;
  Var i("i"), j("j"), n("n");
  an.Bind(i, R(0, 16));
  an.Bind(j, R(0, 4));
  EXPECT_TRUE(an.CanProve(i < C(16)));
  EXPECT_TRUE(an.CanProve(i * 4 + j < C(64)));
  EXPECT_TRUE(an.CanProve(i >= C(0)));
  EXPECT_TRUE(an.CanProve(NE(i + 16, i)));
  EXPECT_TRUE(an.CanProve(EQ(i + j - i, j)));
  EXPECT_FALSE(an.CanProve(i < C(15)));
  EXPECT_FALSE(an.CanProve(i * 4 + j < C(63)));
  EXPECT_SIMPLIFIES(an, i < C(20), BoolImm(true));
  EXPECT_SIMPLIFIES(an, i > C(20), BoolImm(false));
  EXPECT_SIMPLIFIES(an, i + 2 < C(5), i < C(3));
  EXPECT_SIMPLIFIES(an, LT(n, n + 1), BoolImm(true));
  // Comparisons come out with common parts cancelled.
  EXPECT_SIMPLIFIES(an, LT(n + 1, j + 1), LT(n, j));
  EXPECT_SIMPLIFIES(an, LT(i * 4 + n, i * 4 + C(8)), LT(n, C(8)));
  EXPECT_SIMPLIFIES(an, LE(C(3) - n, C(0)), LE(C(3), n));
  EXPECT_SIMPLIFIES(an, EQ(n * 2, j + 1), EQ(n * 2, j + 1));
  EXPECT_SIMPLIFIES(an, LT(n, n), BoolImm(false));
  EXPECT_FALSE(an.CanProve(n < C(100)));
  Var u("u", DataType::UInt(8));
  EXPECT_TRUE(an.CanProve(LT(u, IntImm(256, DataType::Int32()))));
  EXPECT_TRUE(an.CanProveGE(i * 4 + j, 0));
  EXPECT_TRUE(an.CanProveLT(i * 4 + j, 64));
  EXPECT_FALSE(an.CanProveLT(i * 4 + j, 63));
  EXPECT_TRUE(an.CanProveEqual(FloorDiv(i * 4 + j, C(4)), i));
  EXPECT_FALSE(an.CanProveEqual(FloorDiv(i * 4 + j, C(2)), i));
}

TEST(Simplify, SelectAndLogic) {
  Analyzer an;
  Var x("x"), y("y");
  Var p("p", DataType::Bool());
  an.Bind(x, R(0, 8));
  EXPECT_SIMPLIFIES(an, Select(x < C(8), x, y), x);
  EXPECT_SIMPLIFIES(an, Select(x >= C(8), x, y), y);
  EXPECT_SIMPLIFIES(an, Select(p, x + 1, 1 + x), x + 1);
  EXPECT_SIMPLIFIES(an, IfThenElse(BoolImm(false), x, y + 1), y + 1);
  EXPECT_SIMPLIFIES(an, And(p, BoolImm(true)), p);
  EXPECT_SIMPLIFIES(an, And(p, BoolImm(false)), BoolImm(false));
  EXPECT_SIMPLIFIES(an, Or(BoolImm(true), p), BoolImm(true));
  EXPECT_SIMPLIFIES(an, Or(BoolImm(false), p), p);
  EXPECT_SIMPLIFIES(an, Not(Not(p)), p);
  EXPECT_SIMPLIFIES(an, Not(BoolImm(true)), BoolImm(false));
  EXPECT_SIMPLIFIES(an, Not(y < C(3)), y >= C(3));
  EXPECT_SIMPLIFIES(an, And(x < C(8), y < C(3)), y < C(3));
  // Not of a float comparison stays: NaN.
  Var f("f", DataType::Float32());
  EXPECT_EQ(an.Simplify(Not(f < FloatImm(1.0))).kind(), ExprKind::kNot);
}

TEST(Simplify, BoundValuesAreSubstituted) {
  Analyzer an;
  Var i("i"), io("io"), ii("ii");
  an.Bind(io, R(0, 4));
  an.Bind(ii, R(0, 8));
  an.Bind(i, io * 8 + ii);
  EXPECT_SIMPLIFIES(an, FloorDiv(i, C(8)), io);
  EXPECT_SIMPLIFIES(an, FloorMod(i, C(8)), ii);
  EXPECT_TRUE(an.CanProve(i < C(32)));
  EXPECT_EQ(an.const_int_bound(i), ConstIntBound::Make(0, 31));
  // A value mentioning its own variable does not loop.
  Var k("k");
  an.Bind(k, k + 1);
  EXPECT_SIMPLIFIES(an, k - 1, k);
}

TEST(Simplify, ConstraintScopes) {
  Analyzer an;
  Var i("i"), j("j");
  Var p("p", DataType::Bool());
  an.Bind(i, R(0, 16));
  EXPECT_FALSE(an.CanProve(i < C(8)));
  {
    auto scope = an.EnterConstraint(And(i < C(8), C(2) <= j));
    EXPECT_TRUE(an.CanProve(i < C(8)));
    EXPECT_TRUE(an.CanProve(i * 2 < C(15)));
    EXPECT_TRUE(an.CanProve(j >= C(2)));
    EXPECT_SIMPLIFIES(an, FloorDiv(i, C(8)), C(0));
    {
      auto inner = an.EnterConstraint(EQ(i + 1, C(5)));
      EXPECT_SIMPLIFIES(an, i, i);  // a fact, not a substitution
      EXPECT_TRUE(an.CanProve(EQ(i, C(4))));
    }
    EXPECT_FALSE(an.CanProve(EQ(i, C(4))));
    auto other = an.EnterConstraint(p);
    EXPECT_TRUE(an.CanProve(p));
    EXPECT_TRUE(an.CanProve(And(p, i < C(8))));
  }
  EXPECT_FALSE(an.CanProve(i < C(8)));
  EXPECT_FALSE(an.CanProve(j >= C(2)));
  EXPECT_FALSE(an.CanProve(p));
  EXPECT_EQ(an.const_int_bound(i), ConstIntBound::Make(0, 15));
  EXPECT_TRUE(an.const_int_bound(j).is_everything() ||
              an.const_int_bound(j) == ConstIntBound::OfType(DataType::Int32()));
}

// Simplify must not change the value anywhere on the domain.
void CheckRandom(uint64_t seed, bool boolean) {
  Var x("x"), y("y"), z("z");
  std::vector<Var> vars = {x, y, z};
  std::vector<int64_t> lo = {0, -3, 1}, hi = {7, 2, 4};
  Analyzer an;
  for (size_t i = 0; i < vars.size(); ++i) an.Bind(vars[i], R(lo[i], hi[i] - lo[i] + 1));
  testing::ExprGen gen(vars, seed);
  int points = 0;
  for (int iter = 0; iter < 300; ++iter) {
    Expr e = boolean ? gen.Bool(3) : gen.Int(4);
    Expr s = an.Simplify(e);
    ASSERT_EQ(s.dtype(), e.dtype());
    Expr s2 = an.Simplify(s);
    testing::ForEachPoint(vars, lo, hi, [&](const testing::Env& env) {
      auto want = testing::Eval(e, env);
      if (!want) return;
      auto got = testing::Eval(s, env), again = testing::Eval(s2, env);
      ++points;
      ASSERT_TRUE(got.has_value() && again.has_value()) << Str(e) << " -> " << Str(s);
      ASSERT_EQ(*got, *want) << Str(e) << "\n  simplified to " << Str(s)
                             << "\n  at x=" << env.at(x.get()) << " y=" << env.at(y.get())
                             << " z=" << env.at(z.get());
      ASSERT_EQ(*again, *want) << Str(s) << " -> " << Str(s2);
    });
  }
  EXPECT_GT(points, 10000);
}

TEST(Simplify, RandomIntegerExpressionsKeepTheirValue) {
  for (uint64_t seed : {1, 2, 3, 4}) CheckRandom(seed, false);
}

TEST(Simplify, RandomBoolExpressionsKeepTheirValue) {
  for (uint64_t seed : {5, 6}) CheckRandom(seed, true);
}

// Constant expressions at the edges of each type fold exactly as the machine
// computes them, and division by zero is never folded.
TEST(Simplify, RandomConstantFoldingWraps) {
  std::mt19937_64 rng(2024);
  for (DataType t : {DataType::Int(8), DataType::Int32(), DataType::Int64()}) {
    int64_t lo = ConstIntBound::OfType(t).min_value, hi = ConstIntBound::OfType(t).max_value;
    const int64_t pool[] = {lo, hi, lo + 1, hi - 1, -1, 0, 1, 2, 3, -7, 100};
    std::function<Expr(int)> gen = [&](int depth) -> Expr {
      if (depth == 0 || rng() % 4 == 0) return IntImm(pool[rng() % 11], t);
      static const ExprKind kinds[] = {ExprKind::kAdd,      ExprKind::kSub, ExprKind::kMul,
                                       ExprKind::kDiv,      ExprKind::kMod, ExprKind::kFloorDiv,
                                       ExprKind::kFloorMod, ExprKind::kMin, ExprKind::kMax};
      return Binary(kinds[rng() % 9], gen(depth - 1), gen(depth - 1));
    };
    Analyzer an;
    int folded = 0, kept = 0;
    for (int iter = 0; iter < 2000; ++iter) {
      Expr e = gen(3);
      auto want = testing::Eval(e, {});
      Expr s = an.Simplify(e);
      ASSERT_EQ(s.dtype(), t);
      int64_t v;
      if (want) {
        ASSERT_TRUE(AsConstInt(s, &v)) << Str(e) << " -> " << Str(s);
        ASSERT_EQ(v, *want) << Str(e);
        ++folded;
      } else {
        // A division by zero at the top must survive (below a `* 0` it may
        // vanish: the program's behaviour is undefined there anyway).
        Expr top = Binary(ExprKind::kFloorDiv, e, IntImm(0, t) * IntImm(pool[rng() % 11], t));
        ASSERT_FALSE(AsConstInt(an.Simplify(top), &v)) << "folded a division by zero: " << Str(top);
        ++kept;
      }
    }
    EXPECT_GT(folded, 500);
    EXPECT_GT(kept, 50);
  }
}

TEST(Simplify, RandomResultsAreStable) {
  // Simplifying twice gives the same structure as simplifying once.
  Var x("x"), y("y");
  Analyzer an;
  an.Bind(x, R(0, 8));
  an.Bind(y, R(0, 4));
  testing::ExprGen gen({x, y}, 99);
  int stable = 0;
  const int total = 200;
  for (int iter = 0; iter < total; ++iter) {
    Expr s = an.Simplify(gen.Int(3));
    if (ExprEqual(an.Simplify(s), s)) ++stable;
  }
  EXPECT_EQ(stable, total);
}

}  // namespace
}  // namespace kiln::ir::arith
