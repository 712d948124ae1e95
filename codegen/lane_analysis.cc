#include "codegen/lane_analysis.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "ir/buffer.h"
#include "ir/substitute.h"

namespace kiln::codegen {

using ir::CallOp;
using ir::Expr;
using ir::ExprKind;
using ir::Stmt;

bool UsesVar(const Expr& e, const ir::VarNode* v) {
  return ir::UsesVar(e, [v](const ir::VarNode* u) { return u == v; });
}

// Whether a vectorized loop over `lane_var` must stay a scalar loop: its
// body has a statement the widened form cannot express (an if, an
// allocation scope), or a T.if_then_else whose condition differs between
// lanes (each lane may evaluate only its own branch: padding guards loads
// that would be out of bounds). A condition that is the same for every lane
// (the usual padding test on a spatial index, with the lanes over channels)
// becomes one branch per group of lanes.
bool NeedsScalarLoop(const Expr& e, const ir::VarNode* lane_var);
bool NeedsScalarLoop(const Stmt& s, const ir::VarNode* lane_var) {
  bool found = false;
  std::function<void(const Stmt&)> walk = [&](const Stmt& st) {
    if (!st.defined() || found) return;
    if (const auto* store = st.as<ir::BufferStoreNode>()) {
      found = NeedsScalarLoop(store->value, lane_var);
      for (const auto& i : store->indices) found = found || NeedsScalarLoop(i, lane_var);
    } else if (const auto* q = st.as<ir::SeqStmtNode>()) {
      for (const auto& x : q->seq) walk(x);
    } else if (const auto* f = st.as<ir::ForNode>()) {
      walk(f->body);
    } else if (st.as<ir::IfThenElseNode>() || st.as<ir::BlockRealizeNode>()) {
      found = true;
    }
  };
  walk(s);
  return found;
}
bool NeedsScalarLoop(const Expr& e, const ir::VarNode* lane_var) {
  if (!e.defined()) return false;
  auto any = [&](const std::vector<Expr>& v) {
    return std::any_of(v.begin(), v.end(), [&](const Expr& a) { return NeedsScalarLoop(a, lane_var); });
  };
  if (const auto* c = e.as<ir::CallNode>()) {
    if (c->op == CallOp::kIfThenElse && UsesVar(c->args[0], lane_var)) return true;
    return any(c->args);
  }
  if (const auto* b = e.as<ir::BinaryNode>())
    return NeedsScalarLoop(b->a, lane_var) || NeedsScalarLoop(b->b, lane_var);
  if (const auto* n = e.as<ir::NotNode>()) return NeedsScalarLoop(n->a, lane_var);
  if (const auto* s = e.as<ir::SelectNode>())
    return NeedsScalarLoop(s->condition, lane_var) || NeedsScalarLoop(s->true_value, lane_var) ||
           NeedsScalarLoop(s->false_value, lane_var);
  if (const auto* c = e.as<ir::CastNode>()) return NeedsScalarLoop(c->value, lane_var);
  if (const auto* l = e.as<ir::BufferLoadNode>()) return any(l->indices);
  return false;
}

// The constant per-lane step of `index` in `v` when index is affine in v
// with a constant coefficient; nullopt otherwise (the index needs a gather).
std::optional<int64_t> LaneStride(const Expr& e, const ir::VarNode* v) {
  switch (e.kind()) {
    case ExprKind::kVar:
      return e.get() == v ? 1 : 0;
    case ExprKind::kIntImm:
      return 0;
    case ExprKind::kAdd:
    case ExprKind::kSub: {
      const auto* b = e.as<ir::BinaryNode>();
      auto x = LaneStride(b->a, v), y = LaneStride(b->b, v);
      if (!x || !y) return std::nullopt;
      return e.kind() == ExprKind::kAdd ? *x + *y : *x - *y;
    }
    case ExprKind::kMul: {
      const auto* b = e.as<ir::BinaryNode>();
      auto x = LaneStride(b->a, v), y = LaneStride(b->b, v);
      if (!x || !y) return std::nullopt;
      if (*x == 0 && *y == 0) return 0;
      if (const auto* c = b->b.as<ir::IntImmNode>(); c && *y == 0) return *x * c->value;
      if (const auto* c = b->a.as<ir::IntImmNode>(); c && *x == 0) return *y * c->value;
      return std::nullopt;
    }
    case ExprKind::kCast: {
      const auto* c = e.as<ir::CastNode>();
      if (!c->dtype.is_integer() || !c->value.dtype().is_integer()) return std::nullopt;
      auto x = LaneStride(c->value, v);
      if (x && *x == 0) return 0;
      // Widening keeps the stride (indices do not wrap in valid programs).
      if (x && c->dtype.bits() >= c->value.dtype().bits()) return x;
      return std::nullopt;
    }
    default:
      if (!UsesVar(e, v)) return 0;
      return std::nullopt;
  }
}

}  // namespace kiln::codegen
