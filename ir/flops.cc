#include "ir/flops.h"

#include <algorithm>

#include "ir/buffer.h"
#include "ir/error.h"
#include "ir/op.h"

namespace kiln::ir {

namespace {

double CountExpr(const Expr& e);

double CountArgs(const std::vector<Expr>& args) {
  double n = 0;
  for (const auto& a : args) n += CountExpr(a);
  return n;
}

double CountExpr(const Expr& e) {
  if (!e.defined()) return 0;
  ExprKind k = e.kind();
  if (IsComparison(k)) return 0;
  if (k == ExprKind::kAnd || k == ExprKind::kOr) {
    const auto* b = e.as<BinaryNode>();
    return CountExpr(b->a) + CountExpr(b->b);
  }
  if (IsBinary(k)) {
    const auto* b = e.as<BinaryNode>();
    return CountExpr(b->a) + CountExpr(b->b) + 1;
  }
  switch (k) {
    case ExprKind::kNot:
      return CountExpr(e.as<NotNode>()->a);
    case ExprKind::kCast:
      return CountExpr(e.as<CastNode>()->value);
    case ExprKind::kSelect: {
      const auto* s = e.as<SelectNode>();
      return CountExpr(s->condition) +
             std::max(CountExpr(s->true_value), CountExpr(s->false_value));
    }
    case ExprKind::kCall: {
      // As in TVM, a call costs its arguments, if_then_else both branches.
      return CountArgs(e.as<CallNode>()->args);
    }
    case ExprKind::kRamp: {
      const auto* r = e.as<RampNode>();
      return CountExpr(r->base) + CountExpr(r->stride);
    }
    case ExprKind::kBroadcast:
      return CountExpr(e.as<BroadcastNode>()->value);
    default:
      return 0;  // constants, variables, loads
  }
}

double CountStmt(const Stmt& s) {
  if (!s.defined()) return 0;
  switch (s.kind()) {
    case StmtKind::kFor: {
      const auto* f = s.as<ForNode>();
      int64_t extent = 1;
      if (!AsConstInt(f->extent, &extent)) extent = 1;
      extent = std::max<int64_t>(extent, 0);
      return CountStmt(f->body) * static_cast<double>(extent);
    }
    case StmtKind::kBlockRealize:
      return CountStmt(s.as<BlockRealizeNode>()->block->body);
    case StmtKind::kBufferStore:
      return CountExpr(s.as<BufferStoreNode>()->value);
    case StmtKind::kSeqStmt: {
      double n = 0;
      for (const auto& x : s.as<SeqStmtNode>()->seq) n += CountStmt(x);
      return n;
    }
    case StmtKind::kIfThenElse: {
      const auto* i = s.as<IfThenElseNode>();
      double branch = CountStmt(i->then_case);
      if (i->else_case.defined()) branch = std::max(branch, CountStmt(i->else_case));
      return CountExpr(i->condition) + branch;
    }
    case StmtKind::kEvaluate:
      return 0;
  }
  throw IRError("EstimateFlops: unknown statement kind");
}

}  // namespace

double EstimateFlops(const Stmt& stmt) { return CountStmt(stmt); }

double EstimateFlops(const PrimFunc& func) { return CountStmt(func.body); }

}  // namespace kiln::ir
