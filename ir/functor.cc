#include "ir/functor.h"

#include <cstddef>
#include <optional>

#include "ir/error.h"
#include "ir/op.h"

namespace kiln::ir {

// The kinds a BinaryNode holds (IsBinary in expr.h), spelled out so that
// the switches below list every kind and -Wswitch flags a new one.
#define KILN_BINARY_EXPR_CASES                                                              \
  case ExprKind::kAdd:                                                                      \
  case ExprKind::kSub:                                                                      \
  case ExprKind::kMul:                                                                      \
  case ExprKind::kDiv:                                                                      \
  case ExprKind::kMod:                                                                      \
  case ExprKind::kFloorDiv:                                                                 \
  case ExprKind::kFloorMod:                                                                 \
  case ExprKind::kMin:                                                                      \
  case ExprKind::kMax:                                                                      \
  case ExprKind::kEQ:                                                                       \
  case ExprKind::kNE:                                                                       \
  case ExprKind::kLT:                                                                       \
  case ExprKind::kLE:                                                                       \
  case ExprKind::kGT:                                                                       \
  case ExprKind::kGE:                                                                       \
  case ExprKind::kAnd:                                                                      \
  case ExprKind::kOr

// ---- IRVisitor -------------------------------------------------------------

void IRVisitor::VisitExpr(const Expr& e) {
  if (!e.defined()) return;
  const ExprNode* n = e.get();
  switch (n->kind) {
    case ExprKind::kIntImm: return VisitIntImm(static_cast<const IntImmNode*>(n));
    case ExprKind::kFloatImm: return VisitFloatImm(static_cast<const FloatImmNode*>(n));
    case ExprKind::kStringImm: return VisitStringImm(static_cast<const StringImmNode*>(n));
    case ExprKind::kVar: return VisitVar(static_cast<const VarNode*>(n));
    case ExprKind::kNot: return VisitNot(static_cast<const NotNode*>(n));
    case ExprKind::kSelect: return VisitSelect(static_cast<const SelectNode*>(n));
    case ExprKind::kCast: return VisitCast(static_cast<const CastNode*>(n));
    case ExprKind::kBufferLoad: return VisitBufferLoad(static_cast<const BufferLoadNode*>(n));
    case ExprKind::kCall: return VisitCall(static_cast<const CallNode*>(n));
    case ExprKind::kRamp: return VisitRamp(static_cast<const RampNode*>(n));
    case ExprKind::kBroadcast: return VisitBroadcast(static_cast<const BroadcastNode*>(n));
    KILN_BINARY_EXPR_CASES:
      return VisitBinary(static_cast<const BinaryNode*>(n));
  }
  throw IRError("IRVisitor: unknown expression kind");
}

void IRVisitor::VisitStmt(const Stmt& s) {
  if (!s.defined()) return;
  const StmtNode* n = s.get();
  switch (n->kind) {
    case StmtKind::kFor: return VisitFor(static_cast<const ForNode*>(n));
    case StmtKind::kBlockRealize:
      return VisitBlockRealize(static_cast<const BlockRealizeNode*>(n));
    case StmtKind::kBufferStore: return VisitBufferStore(static_cast<const BufferStoreNode*>(n));
    case StmtKind::kSeqStmt: return VisitSeqStmt(static_cast<const SeqStmtNode*>(n));
    case StmtKind::kIfThenElse: return VisitIfThenElse(static_cast<const IfThenElseNode*>(n));
    case StmtKind::kEvaluate: return VisitEvaluate(static_cast<const EvaluateNode*>(n));
  }
  throw IRError("IRVisitor: unknown statement kind");
}

void IRVisitor::VisitBinary(const BinaryNode* op) {
  VisitExpr(op->a);
  VisitExpr(op->b);
}
void IRVisitor::VisitNot(const NotNode* op) { VisitExpr(op->a); }
void IRVisitor::VisitSelect(const SelectNode* op) {
  VisitExpr(op->condition);
  VisitExpr(op->true_value);
  VisitExpr(op->false_value);
}
void IRVisitor::VisitCast(const CastNode* op) { VisitExpr(op->value); }
void IRVisitor::VisitBufferLoad(const BufferLoadNode* op) {
  for (const auto& i : op->indices) VisitExpr(i);
}
void IRVisitor::VisitCall(const CallNode* op) {
  for (const auto& a : op->args) VisitExpr(a);
}
void IRVisitor::VisitRamp(const RampNode* op) {
  VisitExpr(op->base);
  VisitExpr(op->stride);
}
void IRVisitor::VisitBroadcast(const BroadcastNode* op) { VisitExpr(op->value); }

void IRVisitor::VisitFor(const ForNode* op) {
  VisitExpr(op->min);
  VisitExpr(op->extent);
  VisitStmt(op->body);
}
void IRVisitor::VisitBlockRealize(const BlockRealizeNode* op) {
  for (const auto& v : op->iter_values) VisitExpr(v);
  VisitExpr(op->predicate);
  VisitBlock(op->block.get());
}
void IRVisitor::VisitBlock(const BlockNode* op) {
  for (const auto& iv : op->iter_vars) VisitRange(iv.dom);
  for (const auto& r : op->reads) VisitRegion(r);
  for (const auto& r : op->writes) VisitRegion(r);
  if (op->init) VisitStmt(*op->init);
  VisitStmt(op->body);
}
void IRVisitor::VisitBufferStore(const BufferStoreNode* op) {
  VisitExpr(op->value);
  for (const auto& i : op->indices) VisitExpr(i);
}
void IRVisitor::VisitSeqStmt(const SeqStmtNode* op) {
  for (const auto& s : op->seq) VisitStmt(s);
}
void IRVisitor::VisitIfThenElse(const IfThenElseNode* op) {
  VisitExpr(op->condition);
  VisitStmt(op->then_case);
  VisitStmt(op->else_case);
}
void IRVisitor::VisitEvaluate(const EvaluateNode* op) { VisitExpr(op->value); }

void IRVisitor::VisitRange(const Range& r) {
  VisitExpr(r.min);
  VisitExpr(r.extent);
}
void IRVisitor::VisitRegion(const BufferRegion& r) {
  for (const auto& range : r.region) VisitRange(range);
}

// ---- IRMutator -------------------------------------------------------------

namespace {

// Mutates each element; returns true if any changed. `out` is filled only
// then: mutators leave most lists (indices, bindings, statements) as they
// are, and an unchanged list costs no allocation.
template <typename T, typename F>
bool MutateAll(const std::vector<T>& in, std::vector<T>* out, F f) {
  out->clear();
  bool changed = false;
  for (size_t i = 0; i < in.size(); ++i) {
    T r = f(in[i]);
    if (!changed) {
      if (r.same_as(in[i])) continue;
      changed = true;
      out->reserve(in.size());
      out->assign(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(i));
    }
    out->push_back(std::move(r));
  }
  return changed;
}

bool SameRange(const Range& a, const Range& b) {
  return a.min.same_as(b.min) && a.extent.same_as(b.extent);
}

}  // namespace

Expr IRMutator::VisitExpr(const Expr& e) {
  if (!e.defined()) return e;
  const ExprNode* n = e.get();
  switch (n->kind) {
    case ExprKind::kIntImm: return VisitIntImm(e, static_cast<const IntImmNode*>(n));
    case ExprKind::kFloatImm: return VisitFloatImm(e, static_cast<const FloatImmNode*>(n));
    case ExprKind::kStringImm: return VisitStringImm(e, static_cast<const StringImmNode*>(n));
    case ExprKind::kVar: return VisitVar(e, static_cast<const VarNode*>(n));
    case ExprKind::kNot: return VisitNot(e, static_cast<const NotNode*>(n));
    case ExprKind::kSelect: return VisitSelect(e, static_cast<const SelectNode*>(n));
    case ExprKind::kCast: return VisitCast(e, static_cast<const CastNode*>(n));
    case ExprKind::kBufferLoad: return VisitBufferLoad(e, static_cast<const BufferLoadNode*>(n));
    case ExprKind::kCall: return VisitCall(e, static_cast<const CallNode*>(n));
    case ExprKind::kRamp: return VisitRamp(e, static_cast<const RampNode*>(n));
    case ExprKind::kBroadcast: return VisitBroadcast(e, static_cast<const BroadcastNode*>(n));
    KILN_BINARY_EXPR_CASES:
      return VisitBinary(e, static_cast<const BinaryNode*>(n));
  }
  throw IRError("IRMutator: unknown expression kind");
}

// Rebuilt nodes keep the original dtype: mutators substitute like for like.
// (Use the op.h constructors in an override when types may change.)
Expr IRMutator::VisitBinary(const Expr& e, const BinaryNode* op) {
  Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) return e;
  return Binary(op->kind, std::move(a), std::move(b));
}
Expr IRMutator::VisitNot(const Expr& e, const NotNode* op) {
  Expr a = VisitExpr(op->a);
  if (a.same_as(op->a)) return e;
  return Not(std::move(a));
}
Expr IRMutator::VisitSelect(const Expr& e, const SelectNode* op) {
  Expr c = VisitExpr(op->condition), t = VisitExpr(op->true_value),
       f = VisitExpr(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
    return e;
  }
  return Select(std::move(c), std::move(t), std::move(f));
}
Expr IRMutator::VisitCast(const Expr& e, const CastNode* op) {
  Expr v = VisitExpr(op->value);
  if (v.same_as(op->value)) return e;
  return Expr(MakeNode<CastNode>(op->dtype, std::move(v)));
}
Expr IRMutator::VisitBufferLoad(const Expr& e, const BufferLoadNode* op) {
  std::vector<Expr> idx;
  bool changed = MutateAll(op->indices, &idx, [this](const Expr& x) { return VisitExpr(x); });
  Buffer b = VisitBuffer(op->buffer);
  if (!changed && b.same_as(op->buffer)) return e;
  return BufferLoad(std::move(b), changed ? std::move(idx) : op->indices);
}
Expr IRMutator::VisitCall(const Expr& e, const CallNode* op) {
  std::vector<Expr> args;
  if (!MutateAll(op->args, &args, [this](const Expr& x) { return VisitExpr(x); })) return e;
  return Call(op->op, std::move(args));
}
Expr IRMutator::VisitRamp(const Expr& e, const RampNode* op) {
  Expr b = VisitExpr(op->base), s = VisitExpr(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return e;
  return Ramp(std::move(b), std::move(s), op->lanes);
}
Expr IRMutator::VisitBroadcast(const Expr& e, const BroadcastNode* op) {
  Expr v = VisitExpr(op->value);
  if (v.same_as(op->value)) return e;
  return Broadcast(std::move(v), op->lanes);
}

Stmt IRMutator::VisitStmt(const Stmt& s) {
  if (!s.defined()) return s;
  const StmtNode* n = s.get();
  switch (n->kind) {
    case StmtKind::kFor: return VisitFor(s, static_cast<const ForNode*>(n));
    case StmtKind::kBlockRealize:
      return VisitBlockRealize(s, static_cast<const BlockRealizeNode*>(n));
    case StmtKind::kBufferStore:
      return VisitBufferStore(s, static_cast<const BufferStoreNode*>(n));
    case StmtKind::kSeqStmt: return VisitSeqStmt(s, static_cast<const SeqStmtNode*>(n));
    case StmtKind::kIfThenElse: return VisitIfThenElse(s, static_cast<const IfThenElseNode*>(n));
    case StmtKind::kEvaluate: return VisitEvaluate(s, static_cast<const EvaluateNode*>(n));
  }
  throw IRError("IRMutator: unknown statement kind");
}

Stmt IRMutator::VisitFor(const Stmt& s, const ForNode* op) {
  Expr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
  Stmt body = VisitStmt(op->body);
  if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return s;
  auto n = MakeNode<ForNode>(*op);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->body = std::move(body);
  return Stmt(std::move(n));
}

Stmt IRMutator::VisitBlockRealize(const Stmt& s, const BlockRealizeNode* op) {
  std::vector<Expr> values;
  bool changed = MutateAll(op->iter_values, &values, [this](const Expr& x) { return VisitExpr(x); });
  Expr pred = VisitExpr(op->predicate);
  Block block = VisitBlock(op->block);
  if (!changed && pred.same_as(op->predicate) && block.same_as(op->block)) return s;
  auto n = MakeNode<BlockRealizeNode>(*op);
  if (changed) n->iter_values = std::move(values);
  n->predicate = std::move(pred);
  n->block = std::move(block);
  return Stmt(std::move(n));
}

Block IRMutator::VisitBlock(const Block& b) {
  const BlockNode* op = b.get();
  // Most blocks a mutator walks come back unchanged: copy the node (its
  // name, iterators, regions, buffers and annotations) only on the first
  // change. Fields not assigned below keep the original's values.
  std::optional<BlockNode> out;
  auto edit = [&]() -> BlockNode& {
    if (!out) out.emplace(*op);
    return *out;
  };
  for (size_t i = 0; i < op->iter_vars.size(); ++i) {
    Range r = VisitRange(op->iter_vars[i].dom);
    if (!SameRange(r, op->iter_vars[i].dom)) edit().iter_vars[i].dom = std::move(r);
  }
  auto regions = [&](const std::vector<BufferRegion>& rs,
                     std::vector<BufferRegion> BlockNode::*field) {
    // As VisitRegion, building a new range list only once a range changed.
    for (size_t i = 0; i < rs.size(); ++i) {
      const BufferRegion& r = rs[i];
      Buffer buffer = VisitBuffer(r.buffer);
      std::vector<Range> ranges;
      bool ranges_changed = false;
      for (size_t j = 0; j < r.region.size(); ++j) {
        Range x = VisitRange(r.region[j]);
        if (!ranges_changed) {
          if (SameRange(x, r.region[j])) continue;
          ranges_changed = true;
          ranges.reserve(r.region.size());
          ranges.assign(r.region.begin(), r.region.begin() + static_cast<std::ptrdiff_t>(j));
        }
        ranges.push_back(std::move(x));
      }
      if (!ranges_changed && buffer.same_as(r.buffer)) continue;
      (edit().*field)[i] =
          BufferRegion{std::move(buffer), ranges_changed ? std::move(ranges) : r.region};
    }
  };
  regions(op->reads, &BlockNode::reads);
  regions(op->writes, &BlockNode::writes);
  if (op->init) {
    Stmt init = VisitStmt(*op->init);
    if (!init.same_as(*op->init)) edit().init = std::move(init);
  }
  Stmt body = VisitStmt(op->body);
  if (!body.same_as(op->body)) edit().body = std::move(body);
  for (size_t i = 0; i < op->alloc_buffers.size(); ++i) {
    Buffer nb = VisitBuffer(op->alloc_buffers[i]);
    if (!nb.same_as(op->alloc_buffers[i])) edit().alloc_buffers[i] = std::move(nb);
  }
  if (!out) return b;
  return Block(MakeNode<BlockNode>(std::move(*out)));
}

Stmt IRMutator::VisitBufferStore(const Stmt& s, const BufferStoreNode* op) {
  Expr value = VisitExpr(op->value);
  std::vector<Expr> idx;
  bool changed = MutateAll(op->indices, &idx, [this](const Expr& x) { return VisitExpr(x); });
  Buffer b = VisitBuffer(op->buffer);
  if (!changed && value.same_as(op->value) && b.same_as(op->buffer)) return s;
  auto n = MakeNode<BufferStoreNode>();
  n->buffer = std::move(b);
  n->value = std::move(value);
  n->indices = changed ? std::move(idx) : op->indices;
  return Stmt(std::move(n));
}

Stmt IRMutator::VisitSeqStmt(const Stmt& s, const SeqStmtNode* op) {
  std::vector<Stmt> seq;
  if (!MutateAll(op->seq, &seq, [this](const Stmt& x) { return VisitStmt(x); })) return s;
  return SeqStmt(std::move(seq));
}

Stmt IRMutator::VisitIfThenElse(const Stmt& s, const IfThenElseNode* op) {
  Expr c = VisitExpr(op->condition);
  Stmt t = VisitStmt(op->then_case), e = VisitStmt(op->else_case);
  if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return s;
  auto n = MakeNode<IfThenElseNode>();
  n->condition = std::move(c);
  n->then_case = std::move(t);
  n->else_case = std::move(e);
  return Stmt(std::move(n));
}

Stmt IRMutator::VisitEvaluate(const Stmt& s, const EvaluateNode* op) {
  Expr v = VisitExpr(op->value);
  if (v.same_as(op->value)) return s;
  return Evaluate(std::move(v));
}

Range IRMutator::VisitRange(const Range& r) { return Range{VisitExpr(r.min), VisitExpr(r.extent)}; }

BufferRegion IRMutator::VisitRegion(const BufferRegion& r) {
  BufferRegion out;
  out.buffer = VisitBuffer(r.buffer);
  out.region.reserve(r.region.size());
  for (const auto& range : r.region) out.region.push_back(VisitRange(range));
  return out;
}

#undef KILN_BINARY_EXPR_CASES

}  // namespace kiln::ir
