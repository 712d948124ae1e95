#include "codegen/lane_analysis.h"

#include "ir/buffer.h"
#include "ir/functor.h"
#include "ir/substitute.h"

namespace kiln::codegen {

using ir::CallOp;
using ir::Expr;
using ir::ExprKind;
using ir::Stmt;

bool UsesVar(const Expr& e, const ir::VarNode* v) {
  return ir::UsesVar(e, [v](const ir::VarNode* u) { return u == v; });
}

namespace {

// Looks for what keeps a vectorized loop over lane_var scalar
// (NeedsScalarLoop in lane_analysis.h) and stops looking once found. Only
// what a widened body evaluates is walked: stores, loop bodies and the
// expressions in them; vector ramps and broadcasts are never widened
// further, and Evaluate nodes are dropped by the backend.
class ScalarLoopFinder : public ir::IRVisitor {
 public:
  explicit ScalarLoopFinder(const ir::VarNode* lane_var) : lane_var_(lane_var) {}
  bool found() const { return found_; }

  void VisitExpr(const Expr& e) override {
    if (!found_) IRVisitor::VisitExpr(e);
  }
  void VisitStmt(const Stmt& s) override {
    if (!found_) IRVisitor::VisitStmt(s);
  }

 protected:
  void VisitFor(const ir::ForNode* op) override { VisitStmt(op->body); }
  void VisitIfThenElse(const ir::IfThenElseNode*) override { found_ = true; }
  void VisitBlockRealize(const ir::BlockRealizeNode*) override { found_ = true; }
  void VisitEvaluate(const ir::EvaluateNode*) override {}
  void VisitCall(const ir::CallNode* op) override {
    if (op->op == CallOp::kIfThenElse && UsesVar(op->args[0], lane_var_)) {
      found_ = true;
      return;
    }
    IRVisitor::VisitCall(op);
  }
  void VisitRamp(const ir::RampNode*) override {}
  void VisitBroadcast(const ir::BroadcastNode*) override {}

 private:
  const ir::VarNode* lane_var_;
  bool found_ = false;
};

}  // namespace

bool NeedsScalarLoop(const Stmt& s, const ir::VarNode* lane_var) {
  ScalarLoopFinder finder(lane_var);
  finder.VisitStmt(s);
  return finder.found();
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
