// LinearSum::ToExprEquals must agree exactly with building the expression
// (ToExpr) and comparing it with ExprEqual: the simplifier returns its input
// unchanged on the strength of it.
#include <gtest/gtest.h>

#include <climits>
#include <random>
#include <vector>

#include "ir/arith/analyzer.h"
#include "ir/arith/expr_compare.h"
#include "ir/arith/linear_sum.h"
#include "ir/op.h"

namespace kiln::ir::arith {
namespace {

LinearSum RandomSum(std::mt19937_64& rng, const std::vector<Expr>& atoms, DataType t) {
  LinearSum s = LinearSum::Const(t, 0);
  const int64_t coeffs[] = {-3, -1, 1, 1, 2, 4, 7};
  const int64_t consts[] = {0, 0, 1, -1, 5, -9, INT64_MIN};
  size_t n = rng() % 4;
  for (size_t i = 0; i < n; ++i) {
    s.AddTerm(atoms[rng() % atoms.size()], coeffs[rng() % 7]);
  }
  s.AddConst(t.bits() == 64 ? consts[rng() % 7] : consts[rng() % 6]);
  return s;
}

TEST(LinearSum, ToExprEqualsAgreesWithBuildingTheExpression) {
  for (DataType t : {DataType::Int32(), DataType::Int64()}) {
    Var x("x", t), y("y", t), z("z", t);
    Var x2("x", t);  // same name, another variable
    std::vector<Expr> atoms = {x, y, z, x2, FloorDiv(x, IntImm(4, t)), Mul(y, z)};
    std::mt19937_64 rng(7);
    int matched = 0, refused = 0;
    for (int round = 0; round < 3000; ++round) {
      LinearSum a = RandomSum(rng, atoms, t);
      LinearSum b = RandomSum(rng, atoms, t);
      Expr ea = a.ToExpr();
      // Its own expression always matches.
      ASSERT_TRUE(a.ToExprEquals(ea)) << round;
      // Any other expression matches exactly when it is equal.
      Expr eb = b.ToExpr();
      bool equal = ExprEqual(ea, eb);
      ASSERT_EQ(a.ToExprEquals(eb), equal) << round;
      (equal ? matched : refused)++;
    }
    EXPECT_GT(refused, 0);
    EXPECT_GT(matched, 0);
  }
}

TEST(LinearSum, ToExprEqualsLooksAtTypesVariablesAndLiterals) {
  Var x("x"), x2("x"), y("y");
  LinearSum s = LinearSum::Atom(x);
  s.AddTerm(y, 3);
  s.AddConst(-2);
  Expr built = s.ToExpr();  // x + y * 3 - 2
  EXPECT_TRUE(s.ToExprEquals(built));
  EXPECT_TRUE(s.ToExprEquals(Sub(Add(x, Mul(y, IntImm(3))), IntImm(2))));
  EXPECT_FALSE(s.ToExprEquals(Sub(Add(x2, Mul(y, IntImm(3))), IntImm(2))));  // another x
  EXPECT_FALSE(s.ToExprEquals(Sub(Add(x, Mul(y, IntImm(4))), IntImm(2))));
  EXPECT_FALSE(s.ToExprEquals(Add(Add(x, Mul(y, IntImm(3))), IntImm(-2))));  // not the form
  EXPECT_FALSE(s.ToExprEquals(Sub(Add(Mul(y, IntImm(3)), x), IntImm(2))));  // term order
  Var x64("x", DataType::Int64());
  EXPECT_FALSE(LinearSum::Atom(x).ToExprEquals(x64));
  EXPECT_TRUE(LinearSum::Const(DataType::Int32(), 5).ToExprEquals(IntImm(5)));
  EXPECT_FALSE(LinearSum::Const(DataType::Int32(), 5).ToExprEquals(IntImm(5, DataType::Int64())));
}

TEST(LinearSum, SimplifyHandsBackCanonicalInputs) {
  Var i("i"), j("j");
  Analyzer an;
  an.Bind(i, Range{IntImm(0), IntImm(8)});
  Expr canonical = Add(Mul(i, IntImm(4)), j);
  EXPECT_TRUE(an.Simplify(canonical).same_as(canonical));
  Expr other = Add(j, Mul(i, IntImm(4)));  // same value, not the canonical order
  Expr s = an.Simplify(other);
  EXPECT_FALSE(s.same_as(other));
  EXPECT_TRUE(ExprEqual(s, canonical));
}

}  // namespace
}  // namespace kiln::ir::arith
