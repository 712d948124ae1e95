// LegalizeLoopKinds: loop kinds the backends cannot honor are demoted to
// serial, so that every loop kind left in the lowered form means what it
// says. A vectorized loop must be a straight line of loads, stores and
// arithmetic with a constant trip count; parallelism is one level deep (the
// backend outlines each parallel loop into one closure on the thread pool).
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

class Legalizer : public IRMutator {
 protected:
  Stmt VisitFor(const Stmt& s, const ForNode* op) override {
    (void)s;
    ForKind kind = op->for_kind;
    if (kind == ForKind::kParallel && parallel_depth_ > 0) kind = ForKind::kSerial;
    if (kind == ForKind::kParallel) ++parallel_depth_;
    Stmt body = VisitStmt(op->body);
    if (op->for_kind == ForKind::kParallel && kind == ForKind::kParallel) --parallel_depth_;
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
};

}  // namespace

PrimFunc LegalizeLoopKinds(const PrimFunc& func) {
  PrimFunc out = func;
  out.body = Legalizer().VisitStmt(func.body);
  return out;
}

}  // namespace kiln::ir::transform
