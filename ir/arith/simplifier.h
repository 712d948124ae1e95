// The rewriting engine behind Analyzer::Simplify (internal to ir/arith).
#pragma once

#include "ir/arith/const_int_bound.h"
#include "ir/arith/linear_sum.h"
#include "ir/expr.h"

namespace kiln::ir::arith {

class Analyzer;

class Simplifier {
 public:
  explicit Simplifier(const Analyzer& analyzer) : an_(analyzer) {}

  Expr Simplify(const Expr& e);
  // Canonical form of a scalar signed-integer expression.
  LinearSum Sum(const Expr& e);
  // Bound of a canonical sum: each term bounded on its own.
  ConstIntBound Bound(const LinearSum& s) const;

 private:
  Expr SimplifyBinary(const Expr& e, const BinaryNode* op);
  Expr SimplifyCompare(ExprKind kind, const Expr& a, const Expr& b);
  Expr SimplifyLogic(ExprKind kind, const Expr& a, const Expr& b);
  Expr SimplifyNot(const Expr& a);
  Expr SimplifyOther(const Expr& e);

  void MergeDivModPairs(LinearSum* s);
  LinearSum SumMul(LinearSum a, LinearSum b);
  LinearSum SumFloorDiv(LinearSum a, int64_t c);
  LinearSum SumFloorMod(LinearSum a, int64_t c);
  LinearSum SumTrunc(ExprKind kind, LinearSum a, int64_t c);
  LinearSum SumMinMax(ExprKind kind, LinearSum a, LinearSum b);
  LinearSum SumDivision(ExprKind kind, const BinaryNode* op);

  const Analyzer& an_;
  // Bound values are already simplified; expanding one must not substitute
  // again (a value may mention its own variable).
  int expanding_ = 0;
};

}  // namespace kiln::ir::arith
