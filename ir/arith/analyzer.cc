#include "ir/arith/analyzer.h"

#include <algorithm>

#include "ir/arith/expr_compare.h"
#include "ir/arith/linear_sum.h"
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
  if (values_.empty()) return Expr();  // the common case: no value bindings
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
  Expr s = Simplify(cond);
  int64_t v;
  if (AsConstInt(s, &v)) return v != 0;
  // A conjunction is proved when each part is an assumed fact.
  std::vector<Expr> pending = {s};
  while (!pending.empty()) {
    Expr c = pending.back();
    pending.pop_back();
    if (c.kind() == ExprKind::kAnd) {
      pending.push_back(c.as<BinaryNode>()->a);
      pending.push_back(c.as<BinaryNode>()->b);
      continue;
    }
    bool known = false;
    for (const auto& f : facts_) known = known || ExprEqual(f, c);
    if (!known) return false;
  }
  return true;
}

Analyzer::ConstraintScope::ConstraintScope(ConstraintScope&& other) noexcept
    : an_(other.an_), saved_(std::move(other.saved_)), facts_before_(other.facts_before_) {
  other.an_ = nullptr;
}

Analyzer::ConstraintScope::~ConstraintScope() {
  if (an_ == nullptr) return;
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    if (it->second) {
      an_->const_int_bound.Update(it->first, *it->second);
    } else {
      an_->const_int_bound.Unbind(it->first);
    }
  }
  an_->facts_.resize(facts_before_);
}

Analyzer::ConstraintScope Analyzer::EnterConstraint(const Expr& cond) {
  if (!cond.defined() || !cond.dtype().is_bool()) {
    throw IRError("Analyzer::EnterConstraint: the condition must be a defined bool expression");
  }
  ConstraintScope scope(this);
  scope.facts_before_ = facts_.size();
  std::vector<Expr> pending = {Simplify(cond)};
  while (!pending.empty()) {
    Expr c = pending.back();
    pending.pop_back();
    if (c.kind() == ExprKind::kAnd) {
      pending.push_back(c.as<BinaryNode>()->b);
      pending.push_back(c.as<BinaryNode>()->a);
      continue;
    }
    AssumeConjunct(c, &scope);
  }
  return scope;
}

void Analyzer::AssumeConjunct(const Expr& c, ConstraintScope* scope) {
  facts_.push_back(c);
  const auto* cmp = c.as<BinaryNode>();
  if (cmp == nullptr || !IsComparison(c.kind()) || c.kind() == ExprKind::kNE) return;
  if (!cmp->a.dtype().is_int() || !cmp->a.dtype().is_scalar()) return;
  Simplifier simp(*this);
  // Bring it to `x + k  op  rhs` with x a variable and rhs constant.
  LinearSum lhs = simp.Sum(cmp->a), rhs = simp.Sum(cmp->b);
  ExprKind kind = c.kind();
  if (lhs.is_const() && !rhs.is_const()) {
    std::swap(lhs, rhs);
    switch (kind) {
      case ExprKind::kLT:
        kind = ExprKind::kGT;
        break;
      case ExprKind::kLE:
        kind = ExprKind::kGE;
        break;
      case ExprKind::kGT:
        kind = ExprKind::kLT;
        break;
      case ExprKind::kGE:
        kind = ExprKind::kLE;
        break;
      default:
        break;
    }
  }
  if (!rhs.is_const() || lhs.terms.size() != 1 || lhs.terms[0].coeff != 1) return;
  const auto* var = lhs.terms[0].expr.as<VarNode>();
  if (var == nullptr) return;
  int64_t bound;  // x op bound
  if (__builtin_sub_overflow(rhs.constant, lhs.constant, &bound) || bound == INT64_MIN ||
      bound == INT64_MAX) {
    return;
  }
  ConstIntBound old;
  bool had = const_int_bound.Lookup(var, &old);
  ConstIntBound b = had ? old : ConstIntBound::OfType(lhs.terms[0].expr.dtype());
  switch (kind) {
    case ExprKind::kLT:
      b.max_value = std::min(b.max_value, bound - 1);
      break;
    case ExprKind::kLE:
      b.max_value = std::min(b.max_value, bound);
      break;
    case ExprKind::kGT:
      b.min_value = std::max(b.min_value, bound + 1);
      break;
    case ExprKind::kGE:
      b.min_value = std::max(b.min_value, bound);
      break;
    case ExprKind::kEQ:
      b.min_value = std::max(b.min_value, bound);
      b.max_value = std::min(b.max_value, bound);
      break;
    default:
      return;
  }
  if (b.min_value > b.max_value) return;  // contradictory: assume nothing more
  Var handle(std::static_pointer_cast<const VarNode>(lhs.terms[0].expr.node()));
  scope->saved_.emplace_back(handle, had ? std::optional<ConstIntBound>(old) : std::nullopt);
  const_int_bound.Update(handle, b);
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
