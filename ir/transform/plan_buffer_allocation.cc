// PlanBufferAllocation: every allocation moves to the lowest common ancestor
// (loop or block) of its buffer's uses, so that a buffer used only inside one
// iteration of a loop (a cache under a parallel loop, say) is allocated per
// iteration, and lives no longer than it is used.
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/functor.h"
#include "ir/op.h"
#include "ir/transform/alloc_dim_align.h"
#include "ir/transform/passes.h"

namespace kiln::ir::transform {
namespace {

// The loops and blocks enclosing a point of the tree, outermost first.
using Chain = std::vector<const StmtNode*>;

class UseFinder : public IRVisitor {
 public:
  explicit UseFinder(const std::unordered_set<const BufferNode*>& allocated)
      : allocated_(allocated) {}

  // For each allocated buffer: the common prefix of the chains of its uses.
  std::unordered_map<const BufferNode*, Chain> lca;
  // Storage-alignment requests per allocated buffer, from its writers.
  std::unordered_map<const BufferNode*, std::vector<DimAlign>> aligns;
  // Allocated buffers in first-allocation order (deterministic output).
  std::vector<Buffer> order;

  void VisitStmt(const Stmt& s) override {
    if (!s.defined()) return;
    bool scope = s.kind() == StmtKind::kFor || s.kind() == StmtKind::kBlockRealize;
    if (scope) chain_.push_back(s.get());
    IRVisitor::VisitStmt(s);
    if (scope) chain_.pop_back();
  }

 protected:
  void VisitBlock(const BlockNode* op) override {
    for (const auto& b : op->alloc_buffers) order.push_back(b);
    for (const auto& r : op->reads) Use(r.buffer);
    for (const auto& r : op->writes) Use(r.buffer);
    for (const auto& a : ReadDimAligns(*op, "buffer_dim_align")) {
      if (a.index < 0 || a.index >= static_cast<int64_t>(op->writes.size())) continue;
      const Buffer& b = op->writes[a.index].buffer;
      if (allocated_.count(b.get())) aligns[b.get()].push_back({0, a.axis, a.factor, a.offset});
    }
    IRVisitor::VisitBlock(op);
  }
  void VisitBufferLoad(const BufferLoadNode* op) override {
    Use(op->buffer);
    IRVisitor::VisitBufferLoad(op);
  }
  void VisitBufferStore(const BufferStoreNode* op) override {
    Use(op->buffer);
    IRVisitor::VisitBufferStore(op);
  }

 private:
  void Use(const Buffer& b) {
    if (!allocated_.count(b.get())) return;
    auto it = lca.find(b.get());
    if (it == lca.end()) {
      lca.emplace(b.get(), chain_);
      return;
    }
    Chain& c = it->second;
    size_t n = 0;
    while (n < c.size() && n < chain_.size() && c[n] == chain_[n]) ++n;
    c.resize(n);
  }

  const std::unordered_set<const BufferNode*>& allocated_;
  Chain chain_;
};

class AllocCollector : public IRVisitor {
 public:
  std::unordered_set<const BufferNode*> allocated;
  std::set<std::string> names;

 protected:
  void VisitBlock(const BlockNode* op) override {
    names.insert(op->name);
    for (const auto& b : op->alloc_buffers) allocated.insert(b.get());
    IRVisitor::VisitBlock(op);
  }
};

class Placer : public IRMutator {
 public:
  Placer(std::unordered_map<const StmtNode*, std::vector<Buffer>> at,
         std::unordered_map<const BufferNode*, std::vector<DimAlign>> aligns,
         std::set<std::string> names)
      : at_(std::move(at)), aligns_(std::move(aligns)), names_(std::move(names)) {}

 protected:
  Stmt VisitFor(const Stmt& s, const ForNode* op) override {
    Stmt out = IRMutator::VisitFor(s, op);
    auto it = at_.find(op);
    if (it == at_.end()) return out;
    auto n = std::make_shared<ForNode>(*out.as<ForNode>());
    BlockNode scope;
    scope.name = FreshName(op->loop_var.name() + "_alloc");
    scope.body = n->body;
    SetAllocs(&scope, it->second);
    n->body = BlockRealize({}, BoolImm(true), MakeBlock(std::move(scope)));
    return Stmt(std::move(n));
  }

  Stmt VisitBlockRealize(const Stmt& s, const BlockRealizeNode* op) override {
    const StmtNode* key = op;
    std::vector<Expr> values;
    for (const auto& v : op->iter_values) values.push_back(VisitExpr(v));
    BlockNode b = *op->block.get();
    if (b.init) b.init = VisitStmt(*b.init);
    b.body = VisitStmt(b.body);
    b.alloc_buffers.clear();
    b.annotations.erase(kAllocDimAlign);
    auto it = at_.find(key);
    if (it != at_.end()) SetAllocs(&b, it->second);
    (void)s;
    return BlockRealize(std::move(values), op->predicate, MakeBlock(std::move(b)));
  }

 private:
  void SetAllocs(BlockNode* b, const std::vector<Buffer>& buffers) {
    std::vector<DimAlign> aligns;
    for (size_t i = 0; i < buffers.size(); ++i) {
      b->alloc_buffers.push_back(buffers[i]);
      auto it = aligns_.find(buffers[i].get());
      if (it == aligns_.end()) continue;
      for (DimAlign a : it->second) {
        a.index = static_cast<int64_t>(i);
        aligns.push_back(a);
      }
    }
    if (!aligns.empty()) b->annotations[kAllocDimAlign] = StringImm(DimAlignsText(aligns));
  }

  std::string FreshName(const std::string& base) {
    std::string name = base;
    for (int i = 1; names_.count(name); ++i) name = base + "_" + std::to_string(i);
    names_.insert(name);
    return name;
  }

  std::unordered_map<const StmtNode*, std::vector<Buffer>> at_;
  std::unordered_map<const BufferNode*, std::vector<DimAlign>> aligns_;
  std::set<std::string> names_;
};

}  // namespace

PrimFunc PlanBufferAllocation(const PrimFunc& func) {
  AllocCollector collect;
  collect.VisitStmt(func.body);
  UseFinder uses(collect.allocated);
  uses.VisitStmt(func.body);
  std::unordered_map<const StmtNode*, std::vector<Buffer>> at;
  for (const Buffer& b : uses.order) {
    auto it = uses.lca.find(b.get());
    if (it == uses.lca.end()) continue;  // never used: dropped
    // The chain always starts with the root block realize.
    const StmtNode* where = it->second.empty() ? func.body.get() : it->second.back();
    at[where].push_back(b);
  }
  PrimFunc out = func;
  out.body = Placer(std::move(at), std::move(uses.aligns), std::move(collect.names))
                 .VisitStmt(func.body);
  return out;
}

}  // namespace kiln::ir::transform
