// What conditions tell the verifier about the values of variables.
//
// TVM pads by reading `A[v - 3]` only under `T.if_then_else(3 <= v, A[v - 3],
// 0)`; the access is in bounds because the branch runs only when the guard
// holds. So accesses are bounded with the variable ranges narrowed by the
// guards around them: block predicates, if statements and T.if_then_else.
// Select evaluates both of its operands whatever the condition, so it narrows
// nothing.
//
// A guard on a sum (`1 <= v_h + v_rh`, left by inlining a padding) says
// nothing about either variable alone, so it is kept as a fact on the whole
// expression, and bounds every index that differs from it by a constant.
#include <algorithm>

#include "ir/op.h"
#include "ir/structural_equal.h"
#include "ir/verify/verifier.h"

namespace kiln::ir::verify_internal {

namespace {

// The comparison with its operands swapped: a < b is b > a.
ExprKind Mirrored(ExprKind k) {
  switch (k) {
    case ExprKind::kLT:
      return ExprKind::kGT;
    case ExprKind::kGT:
      return ExprKind::kLT;
    case ExprKind::kLE:
      return ExprKind::kGE;
    case ExprKind::kGE:
      return ExprKind::kLE;
    default:
      return k;
  }
}

// The comparison that holds exactly when k does not: !(a < b) is a >= b.
ExprKind Negated(ExprKind k) {
  switch (k) {
    case ExprKind::kLT:
      return ExprKind::kGE;
    case ExprKind::kGE:
      return ExprKind::kLT;
    case ExprKind::kLE:
      return ExprKind::kGT;
    case ExprKind::kGT:
      return ExprKind::kLE;
    case ExprKind::kEQ:
      return ExprKind::kNE;
    default:
      return ExprKind::kEQ;  // only kNE is left
  }
}

// Narrows r, the range of some value x, by "x k o" where o lies in `o`.
void ApplyComparison(ExprKind k, const ConstIntBound& o, ConstIntBound* r) {
  switch (k) {
    case ExprKind::kLT:
      r->max_value = std::min(r->max_value, o.max_value - 1);
      break;
    case ExprKind::kLE:
      r->max_value = std::min(r->max_value, o.max_value);
      break;
    case ExprKind::kGT:
      r->min_value = std::max(r->min_value, o.min_value + 1);
      break;
    case ExprKind::kGE:
      r->min_value = std::max(r->min_value, o.min_value);
      break;
    case ExprKind::kEQ:
      r->min_value = std::max(r->min_value, o.min_value);
      r->max_value = std::min(r->max_value, o.max_value);
      break;
    default:
      break;
  }
}

// Matches e as `var + offset` with a constant offset (var, var + c, c + var,
// var - c), the forms of the guards that te.create_prim_func writes; returns
// the variable's sub-expression, or null.
const Expr* AsShiftedVar(const Expr& e, int64_t* offset) {
  if (e.as<VarNode>()) {
    *offset = 0;
    return &e;
  }
  const auto* bin = e.as<BinaryNode>();
  if (bin == nullptr || (bin->kind != ExprKind::kAdd && bin->kind != ExprKind::kSub)) {
    return nullptr;
  }
  int64_t c;
  if (bin->a.as<VarNode>() && AsConstInt(bin->b, &c)) {
    if (bin->kind == ExprKind::kAdd) {
      *offset = c;
    } else if (__builtin_sub_overflow(int64_t{0}, c, offset)) {
      return nullptr;
    }
    return &bin->a;
  }
  if (bin->b.as<VarNode>() && bin->kind == ExprKind::kAdd && AsConstInt(bin->a, &c)) {
    *offset = c;
    return &bin->b;
  }
  return nullptr;
}

}  // namespace

void Verifier::ApplyPredicate(const Expr& pred, const Expr& value, ConstIntBound* r) const {
  const auto* bin = pred.as<BinaryNode>();
  if (bin == nullptr) return;
  if (bin->kind == ExprKind::kAnd) {
    ApplyPredicate(bin->a, value, r);
    ApplyPredicate(bin->b, value, r);
    return;
  }
  if (!IsComparison(bin->kind)) return;
  ExprKind k = bin->kind;
  const Expr* other = nullptr;
  if (StructuralEqual(bin->a, value)) {
    other = &bin->b;
  } else if (StructuralEqual(bin->b, value)) {
    other = &bin->a;
    k = Mirrored(k);  // so that it reads "value k other"
  }
  if (other == nullptr || !Boundable(*other)) return;
  ConstIntBound o = analyzer_(*other);
  if (Finite(o)) ApplyComparison(k, o, r);
}

void Verifier::Narrow(const Expr& cond, bool holds, std::vector<Narrowing>* undo) {
  if (!cond.defined()) return;
  if (const auto* n = cond.as<NotNode>()) {
    Narrow(n->a, !holds, undo);
    return;
  }
  const auto* bin = cond.as<BinaryNode>();
  if (bin == nullptr) return;
  // Only a conjunction of facts narrows: a and b holding, or a or b failing.
  if ((bin->kind == ExprKind::kAnd && holds) || (bin->kind == ExprKind::kOr && !holds)) {
    Narrow(bin->a, holds, undo);
    Narrow(bin->b, holds, undo);
    return;
  }
  if (!IsComparison(bin->kind)) return;
  ExprKind k = holds ? bin->kind : Negated(bin->kind);
  NarrowBy(bin->a, k, bin->b, undo);
  NarrowBy(bin->b, Mirrored(k), bin->a, undo);
}

void Verifier::NarrowBy(const Expr& target, ExprKind k, const Expr& other,
                        std::vector<Narrowing>* undo) {
  int64_t offset;
  const Expr* ve = AsShiftedVar(target, &offset);
  if (ve == nullptr) {
    int64_t c;
    if (!target.defined() || AsConstInt(target, &c) || !target.dtype().is_integer() ||
        !target.dtype().is_scalar() || !Boundable(target)) {
      return;
    }
    if (!other.defined() || !Boundable(other)) return;
    ConstIntBound o = analyzer_(other);
    if (!Finite(o)) return;
    ConstIntBound fact = ConstIntBound::Everything();
    ApplyComparison(k, o, &fact);
    if (fact == ConstIntBound::Everything() || fact.min_value > fact.max_value) return;
    facts_.push_back(ExprFact{target, fact});
    undo->push_back(Narrowing{Var(), ConstIntBound::Everything(), /*fact=*/true});
    return;
  }
  const VarNode* v = ve->as<VarNode>();
  ConstIntBound old;
  if (!v->dtype.is_integer() || !analyzer_.Lookup(v, &old)) return;
  if (!other.defined() || !Boundable(other)) return;
  ConstIntBound o = analyzer_(other);
  if (!Finite(o)) return;
  ConstIntBound shifted = ConstIntBound::Everything();  // of var + offset
  ApplyComparison(k, o, &shifted);
  ConstIntBound now = old;
  int64_t end;
  if (shifted.min_value != ConstIntBound::kNegInf &&
      !__builtin_sub_overflow(shifted.min_value, offset, &end)) {
    now.min_value = std::max(now.min_value, end);
  }
  if (shifted.max_value != ConstIntBound::kPosInf &&
      !__builtin_sub_overflow(shifted.max_value, offset, &end)) {
    now.max_value = std::min(now.max_value, end);
  }
  // An empty range means the guarded code never runs; keeping the old range
  // checks it as if it did, which can only report more, never less.
  if (now == old || now.min_value > now.max_value) return;
  Var var(std::static_pointer_cast<const VarNode>(ve->node()));
  undo->push_back(Narrowing{var, old});
  analyzer_.Update(var, now);
}

void Verifier::VisitGuarded(const Expr& cond, bool holds, const Expr& e) {
  std::vector<Narrowing> undo;
  Narrow(cond, holds, &undo);
  VisitExpr(e);
  Restore(&undo);
}

void Verifier::Restore(std::vector<Narrowing>* undo) {
  for (auto it = undo->rbegin(); it != undo->rend(); ++it) {
    if (it->fact) {
      facts_.pop_back();
    } else {
      analyzer_.Update(it->var, it->old);
    }
  }
  undo->clear();
}

ConstIntBound Verifier::BoundOf(const Expr& e) const {
  ConstIntBound b = analyzer_(e);
  for (const ExprFact& f : facts_) {
    if (f.expr.dtype() != e.dtype()) continue;
    int64_t k;
    if (!AsConstInt(simplifier_.Simplify(e - f.expr), &k)) continue;
    ConstIntBound now = b;
    int64_t end;
    if (f.bound.min_value != ConstIntBound::kNegInf &&
        !__builtin_add_overflow(f.bound.min_value, k, &end)) {
      now.min_value = std::max(now.min_value, end);
    }
    if (f.bound.max_value != ConstIntBound::kPosInf &&
        !__builtin_add_overflow(f.bound.max_value, k, &end)) {
      now.max_value = std::min(now.max_value, end);
    }
    // As for variables: an empty range is checked as if the code ran.
    if (now.min_value <= now.max_value) b = now;
  }
  return b;
}

}  // namespace kiln::ir::verify_internal
