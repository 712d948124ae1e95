// The canonical linear form of a scalar integer expression:
//   constant + sum_i coeff_i * term_i
// where each term is an expression that is not itself a sum or a constant
// multiple (a variable, a division, a min, a non-linear product, ...).
//
// Terms are kept in the structural order of expr_compare.h, with like terms
// merged, so equal sums print the same. Coefficients and the constant wrap
// around at the type's width, which is exact for +, - and * in two's
// complement.
#pragma once

#include <cstdint>
#include <vector>

#include <absl/container/inlined_vector.h>

#include "ir/expr.h"

namespace kiln::ir::arith {

// v reduced to the value range of integer type t (two's complement).
// Inline: the simplifier calls it for every constant it touches.
inline int64_t WrapInt(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0;
  if (t.bits() >= 64) return v;
  uint64_t mask = (uint64_t{1} << t.bits()) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && (u >> (t.bits() - 1))) u |= ~mask;
  return static_cast<int64_t>(u);
}

struct LinearSum {
  struct Term {
    Expr expr;
    int64_t coeff;
  };

  // Index sums rarely have more than a few terms, and sums are made and
  // dropped at every step of simplification: keep short ones inline.
  using Terms = absl::InlinedVector<Term, 4>;

  DataType dtype;
  int64_t constant = 0;
  Terms terms;

  static LinearSum Const(DataType t, int64_t v);
  static LinearSum Atom(const Expr& e);  // 1 * e

  bool is_const() const { return terms.empty(); }
  // A single term with coefficient 1 and no constant: the atom itself.
  const Expr* as_atom() const;

  void AddTerm(const Expr& e, int64_t coeff);
  void AddConst(int64_t v);
  void Add(const LinearSum& other, int64_t scale = 1);
  void Scale(int64_t k);

  // A readable expression: positive terms first, then subtracted ones, then
  // the constant.
  Expr ToExpr() const;
  // Whether ToExpr() would build an expression equal to e (ExprEqual: same
  // structure, constants and variables), found without building it: the
  // simplifier then hands back e itself, and already canonical expressions,
  // the common case, cost no allocation.
  bool ToExprEquals(const Expr& e) const;
};

}  // namespace kiln::ir::arith
