// LegalizeLoopKinds: loop kinds the backends cannot honor are demoted to
// serial, so that every loop kind left in the lowered form means what it
// says. A vectorized loop must be a straight line of loads, stores and
// arithmetic with a constant trip count; parallelism is one level deep (the
// backend outlines each parallel loop into one closure on the thread pool).
// A parallel loop whose iterations write a buffer allocated outside it is
// demoted too: PlanBufferAllocation keeps a buffer above a loop when it
// cannot show that per-iteration copies are equivalent, and then all
// threads would share one copy (a data race, and wrong results at random).
#include <algorithm>
#include <vector>

#include "ir/functor.h"
#include "ir/op.h"
#include "ir/transform/passes.h"

namespace kiln::ir::transform {
namespace {

// True if the statement holds anything but stores and evaluations.
class HasControl : public IRVisitor {
 public:
  bool found = false;

 protected:
  void VisitFor(const ForNode*) override { found = true; }
  void VisitIfThenElse(const IfThenElseNode*) override { found = true; }
  void VisitBlockRealize(const BlockRealizeNode*) override { found = true; }
};

// True if the statement stores into one of `buffers`.
class StoresInto : public IRVisitor {
 public:
  explicit StoresInto(const std::vector<const BufferNode*>& buffers) : buffers_(buffers) {}
  bool found = false;

 protected:
  void VisitBufferStore(const BufferStoreNode* op) override {
    if (std::find(buffers_.begin(), buffers_.end(), op->buffer.get()) != buffers_.end()) found = true;
    IRVisitor::VisitBufferStore(op);
  }

 private:
  const std::vector<const BufferNode*>& buffers_;
};

class Legalizer : public IRMutator {
 protected:
  Stmt VisitBlockRealize(const Stmt& s, const BlockRealizeNode* op) override {
    const size_t mark = allocated_.size();
    for (const auto& b : op->block.get()->alloc_buffers) allocated_.push_back(b.get());
    Stmt out = IRMutator::VisitBlockRealize(s, op);
    allocated_.resize(mark);
    return out;
  }

  Stmt VisitFor(const Stmt& s, const ForNode* op) override {
    (void)s;
    ForKind kind = op->for_kind;
    if (kind == ForKind::kParallel && parallel_depth_ > 0) kind = ForKind::kSerial;
    if (kind == ForKind::kParallel) ++parallel_depth_;
    Stmt body = VisitStmt(op->body);
    if (op->for_kind == ForKind::kParallel && kind == ForKind::kParallel) {
      --parallel_depth_;
      StoresInto shared(allocated_);
      shared.VisitStmt(body);
      if (shared.found) kind = ForKind::kSerial;
    }
    if (kind == ForKind::kVectorized) {
      int64_t n = 0;
      HasControl hc;
      hc.VisitStmt(body);
      if (!AsConstInt(op->extent, &n) || n < 1 || hc.found) kind = ForKind::kSerial;
    }
    auto f = std::make_shared<ForNode>(*op);
    f->for_kind = kind;
    f->body = body;
    return Stmt(std::move(f));
  }

 private:
  int parallel_depth_ = 0;
  std::vector<const BufferNode*> allocated_;  // allocated by enclosing scopes
};

}  // namespace

PrimFunc LegalizeLoopKinds(const PrimFunc& func) {
  PrimFunc out = func;
  out.body = Legalizer().VisitStmt(func.body);
  return out;
}

}  // namespace kiln::ir::transform
