#include "ir/arith/int_set.h"

#include <algorithm>
#include <string>

#include "ir/arith/expr_compare.h"
#include "ir/arith/linear_sum.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"

namespace kiln::ir::arith {

namespace {

bool UsesDomain(const Expr& e, const IntSetMap& dom) {
  struct Finder : IRVisitor {
    const IntSetMap* dom;
    bool found = false;
    void VisitVar(const VarNode* v) override { found = found || dom->count(v) > 0; }
  } f;
  f.dom = &dom;
  f.VisitExpr(e);
  return f.found;
}

class SetEvaluator {
 public:
  SetEvaluator(const IntSetMap& dom, Analyzer* an) : dom_(dom), an_(an) {}

  // The bounds are simplified once, at the top: every decision below (signs,
  // periods, constant corners) asks the analyzer, which simplifies what it
  // is asked, so simplifying each sub-result as well would only repeat work.
  IntervalSet Eval(const Expr& e) {
    IntervalSet s = EvalNode(e);
    if (s.min.defined()) s.min = an_->Simplify(s.min);
    if (s.max.defined()) s.max = an_->Simplify(s.max);
    return s;
  }

 private:
  IntervalSet Part(const Expr& e) { return EvalNode(e); }

  IntervalSet EvalNode(const Expr& e) {
    if (const auto* v = e.as<VarNode>()) {
      auto it = dom_.find(v);
      return it == dom_.end() ? IntervalSet::SinglePoint(e) : it->second;
    }
    if (!UsesDomain(e, dom_)) return IntervalSet::SinglePoint(e);
    if (!e.dtype().is_integer() || !e.dtype().is_scalar()) return IntervalSet::Everything();
    if (const auto* b = e.as<BinaryNode>()) {
      switch (e.kind()) {
        case ExprKind::kAdd:
          return AddSets(Part(b->a), Part(b->b), false);
        case ExprKind::kSub:
          return AddSets(Part(b->a), Part(b->b), true);
        case ExprKind::kMul:
          return MulSets(Part(b->a), Part(b->b));
        case ExprKind::kFloorDiv:
        case ExprKind::kDiv:
          return DivSets(e.kind(), Part(b->a), Part(b->b));
        case ExprKind::kFloorMod:
        case ExprKind::kMod:
          return ModSets(e.kind(), Part(b->a), Part(b->b));
        case ExprKind::kMin:
        case ExprKind::kMax:
          return MinMaxSets(e.kind(), Part(b->a), Part(b->b));
        default:
          return IntervalSet::Everything();
      }
    }
    if (const auto* s = e.as<SelectNode>()) {
      return Union(Part(s->true_value), Part(s->false_value), an_);
    }
    if (const auto* c = e.as<CallNode>(); c && c->op == CallOp::kIfThenElse) {
      return Union(Part(c->args[1]), Part(c->args[2]), an_);
    }
    if (const auto* c = e.as<CastNode>()) {
      DataType from = c->value.dtype(), to = e.dtype();
      // Widening an integer keeps order; anything else may wrap.
      if (from.is_integer() && from.is_int() == to.is_int() && to.bits() >= from.bits()) {
        IntervalSet s = Part(c->value);
        return {s.min.defined() ? Cast(to, s.min) : Expr(),
                s.max.defined() ? Cast(to, s.max) : Expr()};
      }
    }
    return IntervalSet::Everything();
  }

  IntervalSet AddSets(const IntervalSet& a, const IntervalSet& b, bool sub) {
    const Expr& blo = sub ? b.max : b.min;
    const Expr& bhi = sub ? b.min : b.max;
    auto comb = [&](const Expr& x, const Expr& y) {
      if (!x.defined() || !y.defined()) return Expr();
      return sub ? Sub(x, y) : Add(x, y);
    };
    return {comb(a.min, blo), comb(a.max, bhi)};
  }

  // v >= k, read off a constant directly (most scales and divisors are) and
  // otherwise asked of the analyzer.
  bool ProveGE(const Expr& v, int64_t k) {
    int64_t c;
    if (AsConstInt(v, &c) && v.dtype().is_int()) return c >= k;
    return an_->CanProveGE(v, k);
  }

  // Sign of a point value: 1, -1, or 0 when it is not known.
  int Sign(const Expr& v) {
    int64_t c;
    if (AsConstInt(v, &c) && v.dtype().is_int()) return c >= 0 ? 1 : -1;
    if (an_->CanProveGE(v, 0)) return 1;
    if (an_->CanProveLT(v, 1)) return -1;
    return 0;
  }

  IntervalSet Scale(const IntervalSet& a, const Expr& k) {
    int s = Sign(k);
    auto mul = [&](const Expr& x) { return x.defined() ? Mul(x, k) : Expr(); };
    if (s > 0) return {mul(a.min), mul(a.max)};
    if (s < 0) return {mul(a.max), mul(a.min)};
    return IntervalSet::Everything();
  }

  IntervalSet MulSets(const IntervalSet& a, const IntervalSet& b) {
    if (a.is_single_point() && b.is_single_point())
      return IntervalSet::SinglePoint(Mul(a.min, b.min));
    if (b.is_single_point()) return Scale(a, b.min);
    if (a.is_single_point()) return Scale(b, a.min);
    return ConstCorners(a, b, [](const Expr& x, const Expr& y) { return Mul(x, y); });
  }

  // Interval from the four corner values when all ends are constants.
  template <typename F>
  IntervalSet ConstCorners(const IntervalSet& a, const IntervalSet& b, F f) {
    if (!a.is_bounded() || !b.is_bounded()) return IntervalSet::Everything();
    int64_t v[4];
    Expr corners[4] = {f(a.min, b.min), f(a.min, b.max), f(a.max, b.min), f(a.max, b.max)};
    for (int i = 0; i < 4; ++i) {
      if (!AsConstInt(an_->Simplify(corners[i]), &v[i])) return IntervalSet::Everything();
    }
    int64_t lo = std::min({v[0], v[1], v[2], v[3]}), hi = std::max({v[0], v[1], v[2], v[3]});
    DataType t = a.min.dtype();
    return {IntImm(lo, t), IntImm(hi, t)};
  }

  IntervalSet DivSets(ExprKind kind, const IntervalSet& a, const IntervalSet& b) {
    if (a.is_single_point() && b.is_single_point()) {
      return IntervalSet::SinglePoint(Binary(kind, a.min, b.min));
    }
    if (!b.is_single_point()) return IntervalSet::Everything();
    // Both floor and truncating division are monotone in the dividend.
    int s = ProveGE(b.min, 1) ? 1 : (an_->CanProveLT(b.min, 0) ? -1 : 0);
    auto div = [&](const Expr& x) { return x.defined() ? Binary(kind, x, b.min) : Expr(); };
    if (s > 0) return {div(a.min), div(a.max)};
    if (s < 0) return {div(a.max), div(a.min)};
    return IntervalSet::Everything();
  }

  IntervalSet ModSets(ExprKind kind, const IntervalSet& a, const IntervalSet& b) {
    if (a.is_single_point() && b.is_single_point()) {
      return IntervalSet::SinglePoint(Binary(kind, a.min, b.min));
    }
    if (!b.is_single_point() || !ProveGE(b.min, 1)) return IntervalSet::Everything();
    const Expr& c = b.min;
    DataType t = c.dtype();
    bool nonneg = a.has_lower_bound() && ProveGE(a.min, 0);
    if (kind == ExprKind::kMod && !nonneg) {
      // Truncating remainder of a possibly negative value: |r| < c.
      return {Sub(IntImm(1, t), c), Sub(c, IntImm(1, t))};
    }
    // Within one period the remainder moves with the dividend.
    if (a.is_bounded() && an_->CanProveEqual(FloorDiv(a.min, c), FloorDiv(a.max, c))) {
      return {FloorMod(a.min, c), FloorMod(a.max, c)};
    }
    return {IntImm(0, t), Sub(c, IntImm(1, t))};
  }

  IntervalSet MinMaxSets(ExprKind kind, const IntervalSet& a, const IntervalSet& b) {
    bool is_min = kind == ExprKind::kMin;
    // For min, an unbounded low end stays unbounded and an unbounded high end
    // yields to the other side; dually for max.
    auto strict = [&](const Expr& x, const Expr& y) {
      return x.defined() && y.defined() ? Binary(kind, x, y) : Expr();
    };
    auto lenient = [&](const Expr& x, const Expr& y) {
      if (!x.defined()) return y;
      if (!y.defined()) return x;
      return Binary(kind, x, y);
    };
    if (is_min) return {strict(a.min, b.min), lenient(a.max, b.max)};
    return {lenient(a.min, b.min), strict(a.max, b.max)};
  }

  const IntSetMap& dom_;
  Analyzer* an_;
};

}  // namespace

bool IntervalSet::is_single_point() const {
  return min.defined() && max.defined() && (min.same_as(max) || ExprEqual(min, max));
}

IntervalSet IntervalSet::FromRange(const Range& r, Analyzer* an) {
  if (!r.min.defined() || !r.extent.defined())
    throw IRError("IntervalSet::FromRange: undefined range");
  // Loop ranges are mostly constants: their last value is computed here
  // rather than built as min + extent - 1 and simplified (same result).
  const auto* mn = r.min.as<IntImmNode>();
  const auto* ext = r.extent.as<IntImmNode>();
  DataType t = r.min.dtype();
  int64_t last;
  if (mn != nullptr && ext != nullptr && t == r.extent.dtype() && t.is_int() && t.is_scalar() &&
      WrapInt(t, mn->value) == mn->value && ext->value >= 0 &&
      WrapInt(t, ext->value) == ext->value &&
      !__builtin_add_overflow(mn->value, ext->value - 1, &last) && WrapInt(t, last) == last) {
    return {r.min, IntImm(last, t)};
  }
  Expr lo = an->Simplify(r.min);
  return {lo, an->Simplify(Sub(Add(r.min, r.extent), IntImm(1, r.extent.dtype())))};
}

IntervalSet EvalSet(const Expr& e, const IntSetMap& dom, Analyzer* an) {
  if (!e.defined()) throw IRError("EvalSet: undefined expression");
  return SetEvaluator(dom, an).Eval(e);
}

IntSetMap DomainFromRanges(const std::unordered_map<const VarNode*, Range>& ranges, Analyzer* an) {
  IntSetMap dom;
  for (const auto& [v, r] : ranges) dom[v] = IntervalSet::FromRange(r, an);
  return dom;
}

IntervalSet Union(const IntervalSet& a, const IntervalSet& b, Analyzer* an) {
  auto join = [&](const Expr& x, const Expr& y, bool lo) {
    if (!x.defined() || !y.defined()) return Expr();
    return an->Simplify(lo ? Min(x, y) : Max(x, y));
  };
  return {join(a.min, b.min, true), join(a.max, b.max, false)};
}

IntervalSet Union(const std::vector<IntervalSet>& sets, Analyzer* an) {
  if (sets.empty()) throw IRError("Union: no sets");
  IntervalSet r = sets[0];
  for (size_t i = 1; i < sets.size(); ++i) r = Union(r, sets[i], an);
  return r;
}

IntervalSet Intersect(const IntervalSet& a, const IntervalSet& b, Analyzer* an) {
  auto meet = [&](const Expr& x, const Expr& y, bool lo) {
    if (!x.defined()) return y;
    if (!y.defined()) return x;
    return an->Simplify(lo ? Max(x, y) : Min(x, y));
  };
  return {meet(a.min, b.min, true), meet(a.max, b.max, false)};
}

Range ToRange(const IntervalSet& s, Analyzer* an, const char* what) {
  if (!s.is_bounded()) {
    throw IRError(
        std::string(what) + " is unbounded " +
        (s.has_lower_bound() ? "above" : (s.has_upper_bound() ? "below" : "on both sides")) +
        "; it has no finite range");
  }
  Expr extent = an->Simplify(Add(Sub(s.max, s.min), IntImm(1, s.max.dtype())));
  return {s.min, extent};
}

std::vector<Range> CoverRegion(const std::vector<std::vector<Expr>>& accesses, const IntSetMap& dom,
                               Analyzer* an) {
  if (accesses.empty()) throw IRError("CoverRegion: no accesses");
  size_t rank = accesses[0].size();
  std::vector<Range> region;
  for (size_t d = 0; d < rank; ++d) {
    std::vector<IntervalSet> sets;
    for (const auto& idx : accesses) {
      if (idx.size() != rank) {
        throw IRError("CoverRegion: accesses of rank " + std::to_string(rank) + " and " +
                      std::to_string(idx.size()) + " mixed");
      }
      sets.push_back(EvalSet(idx[d], dom, an));
    }
    std::string what = "access region of dimension " + std::to_string(d);
    region.push_back(ToRange(Union(sets, an), an, what.c_str()));
  }
  return region;
}

}  // namespace kiln::ir::arith
