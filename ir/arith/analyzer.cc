#include "ir/arith/analyzer.h"

#include "ir/arith/expr_compare.h"
#include "ir/arith/simplifier.h"
#include "ir/error.h"
#include "ir/op.h"

namespace kiln::ir::arith {

void Analyzer::Bind(const Var& v, const Range& r) {
  if (!v.defined() || !r.min.defined() || !r.extent.defined()) {
    throw IRError("Analyzer::Bind: undefined variable or range");
  }
  Range simplified{Simplify(r.min), Simplify(r.extent)};
  const_int_bound.Bind(v, simplified);
}

void Analyzer::Bind(const Var& v, const Expr& value) {
  if (!v.defined() || !value.defined())
    throw IRError("Analyzer::Bind: undefined variable or value");
  if (value.dtype() != v.dtype()) {
    throw IRError("Analyzer::Bind: variable " + v.name() + " of type " + v.dtype().str() +
                  " bound to a value of type " + value.dtype().str());
  }
  values_.erase(v.get());  // simplify against the other facts, not v's old value
  Expr s = Simplify(value);
  ConstIntBound b = Bound(s);
  values_[v.get()] = Binding{v, s};
  const_int_bound.Update(v, b);
}

Expr Analyzer::LookupValue(const VarNode* v) const {
  auto it = values_.find(v);
  return it == values_.end() ? Expr() : it->second.value;
}

Expr Analyzer::Simplify(const Expr& e) { return Simplifier(*this).Simplify(e); }

ConstIntBound Analyzer::Bound(const Expr& e) {
  if (!e.defined()) throw IRError("Analyzer::Bound: undefined expression");
  Simplifier s(*this);
  if (e.dtype().is_int() && e.dtype().is_scalar()) return s.Bound(s.Sum(e));
  return const_int_bound(s.Simplify(e));
}

bool Analyzer::CanProve(const Expr& cond) {
  if (!cond.defined()) return false;
  int64_t v;
  return AsConstInt(Simplify(cond), &v) && v != 0;
}

bool Analyzer::CanProveEqual(const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined()) return false;
  if (a.dtype().is_int() && b.dtype().is_int() && a.dtype().is_scalar() && b.dtype().is_scalar()) {
    ConstIntBound d = Bound(Sub(a, b));
    return d.min_value == 0 && d.max_value == 0;
  }
  return ExprEqual(Simplify(a), Simplify(b));
}

bool Analyzer::CanProveGE(const Expr& a, int64_t v) {
  return a.defined() && Bound(a).min_value >= v;
}

bool Analyzer::CanProveLT(const Expr& a, int64_t v) {
  return a.defined() && Bound(a).max_value < v;
}

}  // namespace kiln::ir::arith
