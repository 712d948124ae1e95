// The variables and buffers a statement mentions, in the order first met:
// what a parallel loop's outlined body must capture (llvm_emit_loops.cc).
#pragma once

#include <unordered_set>
#include <vector>

#include "ir/buffer.h"
#include "ir/functor.h"

namespace kiln::codegen {

// Visits a statement (CollectUses) and records every variable and buffer it
// mentions. A block contributes its allocations and its body only: lowered
// code has no block bindings, predicates or regions left to look at.
class UseCollector : public ir::IRVisitor {
 public:
  std::vector<const ir::VarNode*> vars;
  std::vector<ir::Buffer> buffers;

 protected:
  void VisitVar(const ir::VarNode* v) override {
    if (seen_vars_.insert(v).second) vars.push_back(v);
  }
  void VisitBufferLoad(const ir::BufferLoadNode* op) override {
    AddBuffer(op->buffer);
    IRVisitor::VisitBufferLoad(op);
  }
  void VisitBufferStore(const ir::BufferStoreNode* op) override {
    AddBuffer(op->buffer);
    IRVisitor::VisitBufferStore(op);
  }
  void VisitBlockRealize(const ir::BlockRealizeNode* op) override {
    for (const auto& b : op->block->alloc_buffers) AddBuffer(b);
    VisitStmt(op->block->body);
  }

 private:
  void AddBuffer(const ir::Buffer& b) {
    if (seen_buffers_.insert(b.get()).second) buffers.push_back(b);
  }

  std::unordered_set<const ir::VarNode*> seen_vars_;
  std::unordered_set<const ir::BufferNode*> seen_buffers_;
};

}  // namespace kiln::codegen
