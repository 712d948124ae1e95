// The front door of integer arithmetic reasoning: variable domains, known
// values, simplification and proofs.
//
// Reasoning assumes, like TVM's, that index arithmetic does not overflow its
// type; constant folding itself wraps around exactly as the machine would.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

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

  // Facts that hold within a scope (an if branch, a block predicate); undone
  // when the scope object is destroyed. Scopes must end in reverse order.
  class ConstraintScope {
   public:
    ConstraintScope(ConstraintScope&& other) noexcept;
    ConstraintScope(const ConstraintScope&) = delete;
    ConstraintScope& operator=(const ConstraintScope&) = delete;
    ConstraintScope& operator=(ConstraintScope&&) = delete;
    ~ConstraintScope();

   private:
    friend class Analyzer;
    explicit ConstraintScope(Analyzer* an) : an_(an) {}
    Analyzer* an_;
    std::vector<std::pair<Var, std::optional<ConstIntBound>>> saved_;
    size_t facts_before_ = 0;
  };
  // Assumes cond. Conjuncts of the form `x < c`, `x <= c`, `x > c`, `x >= c`,
  // `x == c` (x a variable plus a constant, c constant after simplification)
  // tighten x's bound; every conjunct is also remembered for CanProve.
  [[nodiscard]] ConstraintScope EnterConstraint(const Expr& cond);

 private:
  void AssumeConjunct(const Expr& c, ConstraintScope* scope);

  struct Binding {
    Var var;
    Expr value;
  };
  std::unordered_map<const VarNode*, Binding> values_;
  std::vector<Expr> facts_;  // simplified assumed conditions
};

}  // namespace kiln::ir::arith
