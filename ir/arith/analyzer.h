// The front door of integer arithmetic reasoning: variable domains, known
// values, simplification and proofs.
//
// Reasoning assumes, like TVM's, that index arithmetic does not overflow its
// type; constant folding itself wraps around exactly as the machine would.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "ir/arith/const_int_bound.h"
#include "ir/expr.h"

namespace kiln::ir::arith {

class Analyzer {
 public:
  ConstIntBoundAnalyzer const_int_bound;

  // v ranges over [r.min, r.min + r.extent).
  void Bind(const Var& v, const Range& r);
  // v is known to equal value: Simplify substitutes it. Replaces an earlier
  // binding; value is simplified against what is known now.
  void Bind(const Var& v, const Expr& value);

  // Constant folding, canonical linear form of signed integer expressions,
  // division / modulo rules and bound-based folding of min, max, comparisons
  // and selects. Deterministic; keeps the data type of e.
  Expr Simplify(const Expr& e);
  // The constant bound of e after simplification (tighter than
  // const_int_bound on the raw expression, e.g. for x - x).
  ConstIntBound Bound(const Expr& e);

  // True only if cond is provably true for every value of the variables.
  bool CanProve(const Expr& cond);
  bool CanProveEqual(const Expr& a, const Expr& b);
  bool CanProveGE(const Expr& a, int64_t v);
  bool CanProveLT(const Expr& a, int64_t v);

  // The value v was bound to, or an undefined Expr.
  Expr LookupValue(const VarNode* v) const;

 private:
  struct Binding {
    Var var;
    Expr value;
  };
  std::unordered_map<const VarNode*, Binding> values_;
};

}  // namespace kiln::ir::arith
