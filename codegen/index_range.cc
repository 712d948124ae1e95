#include "codegen/index_range.h"

#include <algorithm>

namespace kiln::codegen {

using ir::ExprKind;
using ir::arith::BoundAdd;
using ir::arith::BoundMul;
using Bound = ir::arith::ConstIntBound;

namespace {

bool Inside(const Bound& b, ir::DataType t) {
  const Bound type = Bound::OfType(t);
  // Saturated ends stand for "unknown", never for a real value.
  return !b.is_everything() && b.min_value != Bound::kNegInf && b.max_value != Bound::kPosInf &&
         type.min_value <= b.min_value && b.max_value <= type.max_value;
}

Bound Negate(const Bound& b) { return BoundMul(b, Bound::Single(-1)); }

}  // namespace

std::optional<Bound> IndexRanges::NoWrapRange(const ir::Expr& e) const {
  if (!e.defined() || !e.dtype().is_int() || e.dtype().is_vector()) return std::nullopt;
  std::optional<Bound> out;
  switch (e.kind()) {
    case ExprKind::kIntImm:
      out = Bound::Single(e.as<ir::IntImmNode>()->value);
      break;
    case ExprKind::kVar: {
      auto it = bounds_.find(e.as<ir::VarNode>());
      out = it != bounds_.end() ? it->second : Bound::OfType(e.dtype());
      break;
    }
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
    case ExprKind::kMin:
    case ExprKind::kMax:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: {
      const auto* n = e.as<ir::BinaryNode>();
      if (n->a.dtype() != e.dtype() || n->b.dtype() != e.dtype()) return std::nullopt;
      auto a = NoWrapRange(n->a), b = NoWrapRange(n->b);
      if (!a || !b) return std::nullopt;
      switch (e.kind()) {
        case ExprKind::kAdd: out = BoundAdd(*a, *b); break;
        case ExprKind::kSub: out = BoundAdd(*a, Negate(*b)); break;
        case ExprKind::kMul: out = BoundMul(*a, *b); break;
        case ExprKind::kMin:
          out = Bound::Make(std::min(a->min_value, b->min_value), std::min(a->max_value, b->max_value));
          break;
        case ExprKind::kMax:
          out = Bound::Make(std::max(a->min_value, b->min_value), std::max(a->max_value, b->max_value));
          break;
        default: {  // floor division / modulo
          const auto* c = n->b.as<ir::IntImmNode>();
          if (!c || c->value <= 0 || !a->is_non_negative()) return std::nullopt;
          if (e.kind() == ExprKind::kFloorDiv) {
            out = Bound::Make(a->min_value / c->value, a->max_value / c->value);
          } else {
            out = a->max_value < c->value ? *a : Bound::Make(0, c->value - 1);
          }
        }
      }
      break;
    }
    default:
      return std::nullopt;
  }
  if (!out || !Inside(*out, e.dtype())) return std::nullopt;
  return out;
}

std::optional<Bound> IndexRanges::LoopRange(const ir::Expr& min, const ir::Expr& extent,
                                            ir::DataType var_type) const {
  if (min.dtype() != var_type || extent.dtype() != var_type) return std::nullopt;
  auto lo = NoWrapRange(min), n = NoWrapRange(extent);
  if (!lo || !n || n->max_value < 1) return std::nullopt;
  // The loop test compares with min + extent, computed in var_type: that
  // end must not wrap either.
  const Bound end = BoundAdd(*lo, *n);
  if (!Inside(end, var_type)) return std::nullopt;
  return Bound::Make(lo->min_value, end.max_value - 1);
}

}  // namespace kiln::codegen
