// The variables and buffers a statement mentions, in the order first met:
// what a parallel loop's outlined body must capture (llvm_emit_loops.cc).
#pragma once

#include <unordered_set>
#include <vector>

#include "ir/buffer.h"
#include "ir/expr.h"
#include "ir/stmt.h"

namespace kiln::codegen {

// Visits every variable and buffer an expression or statement mentions.
struct UseCollector {
  std::vector<const ir::VarNode*> vars;
  std::vector<ir::Buffer> buffers;
  std::unordered_set<const ir::VarNode*> seen_vars;
  std::unordered_set<const ir::BufferNode*> seen_buffers;

  void AddBuffer(const ir::Buffer& b) {
    if (seen_buffers.insert(b.get()).second) buffers.push_back(b);
  }
  void Visit(const ir::Expr& e) {
    if (!e.defined()) return;
    switch (e.kind()) {
      case ir::ExprKind::kVar: {
        const auto* v = e.as<ir::VarNode>();
        if (seen_vars.insert(v).second) vars.push_back(v);
        return;
      }
      case ir::ExprKind::kNot:
        return Visit(e.as<ir::NotNode>()->a);
      case ir::ExprKind::kSelect: {
        const auto* s = e.as<ir::SelectNode>();
        Visit(s->condition);
        Visit(s->true_value);
        return Visit(s->false_value);
      }
      case ir::ExprKind::kCast:
        return Visit(e.as<ir::CastNode>()->value);
      case ir::ExprKind::kBufferLoad: {
        const auto* l = e.as<ir::BufferLoadNode>();
        AddBuffer(l->buffer);
        for (const auto& i : l->indices) Visit(i);
        return;
      }
      case ir::ExprKind::kCall:
        for (const auto& a : e.as<ir::CallNode>()->args) Visit(a);
        return;
      case ir::ExprKind::kRamp:
        Visit(e.as<ir::RampNode>()->base);
        return Visit(e.as<ir::RampNode>()->stride);
      case ir::ExprKind::kBroadcast:
        return Visit(e.as<ir::BroadcastNode>()->value);
      default:
        if (const auto* b = e.as<ir::BinaryNode>()) {
          Visit(b->a);
          Visit(b->b);
        }
        return;
    }
  }
  void Visit(const ir::Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case ir::StmtKind::kFor: {
        const auto* f = s.as<ir::ForNode>();
        Visit(f->min);
        Visit(f->extent);
        return Visit(f->body);
      }
      case ir::StmtKind::kBlockRealize: {
        const auto* r = s.as<ir::BlockRealizeNode>();
        for (const auto& b : r->block->alloc_buffers) AddBuffer(b);
        return Visit(r->block->body);
      }
      case ir::StmtKind::kBufferStore: {
        const auto* st = s.as<ir::BufferStoreNode>();
        AddBuffer(st->buffer);
        Visit(st->value);
        for (const auto& i : st->indices) Visit(i);
        return;
      }
      case ir::StmtKind::kSeqStmt:
        for (const auto& x : s.as<ir::SeqStmtNode>()->seq) Visit(x);
        return;
      case ir::StmtKind::kIfThenElse: {
        const auto* i = s.as<ir::IfThenElseNode>();
        Visit(i->condition);
        Visit(i->then_case);
        return Visit(i->else_case);
      }
      case ir::StmtKind::kEvaluate:
        return Visit(s.as<ir::EvaluateNode>()->value);
    }
  }
};

}  // namespace kiln::codegen
