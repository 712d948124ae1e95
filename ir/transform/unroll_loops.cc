// UnrollLoops: unrolled loops are replicated, and loops under TVM's
// auto-unroll annotation ("pragma_auto_unroll_max_step", set by
// MetaSchedule's unroll rule) are unrolled when their whole subtree runs at
// most that many steps.
#include <algorithm>

#include "ir/functor.h"
#include "ir/op.h"
#include "ir/substitute.h"
#include "ir/transform/passes.h"

namespace kiln::ir::transform {
namespace {

constexpr const char* kAutoUnrollMaxStep = "pragma_auto_unroll_max_step";
constexpr const char* kUnrollExplicit = "pragma_unroll_explicit";
// Replication beyond this many copies is left to the backend's unroller.
constexpr int64_t kMaxExplicitCopies = 1024;

class HasAlloc : public IRVisitor {
 public:
  bool found = false;

 protected:
  void VisitBlockRealize(const BlockRealizeNode*) override { found = true; }
};

class Unroller : public IRMutator {
 protected:
  Stmt VisitFor(const Stmt& s, const ForNode* op) override {
    (void)s;
    int64_t saved_max = max_step_, saved_explicit = explicit_;
    Annotations ann = op->annotations;
    if (auto it = ann.find(kAutoUnrollMaxStep); it != ann.end()) {
      AsConstInt(it->second, &max_step_);
      ann.erase(it);
    }
    if (auto it = ann.find(kUnrollExplicit); it != ann.end()) {
      AsConstInt(it->second, &explicit_);
      ann.erase(it);
    }
    int64_t saved_steps = steps_;
    steps_ = 0;
    Stmt body = VisitStmt(op->body);
    int64_t body_steps = std::max<int64_t>(steps_, 1);
    int64_t n = -1;
    bool const_extent = AsConstInt(op->extent, &n);
    ForKind kind = op->for_kind;
    bool explicit_unroll = kind == ForKind::kUnrolled;
    if (kind == ForKind::kSerial && const_extent && max_step_ > 0 &&
        static_cast<double>(n) * static_cast<double>(body_steps) <=
            static_cast<double>(max_step_)) {
      kind = ForKind::kUnrolled;
      explicit_unroll = explicit_ != 0;
    }
    if (kind == ForKind::kUnrolled && !const_extent) kind = ForKind::kSerial;
    max_step_ = saved_max;
    explicit_ = saved_explicit;
    // Saturating: step counts only need to be compared with small limits. A
    // vectorized loop becomes one vector instruction per store.
    double loop_steps = kind == ForKind::kVectorized ? static_cast<double>(body_steps)
                        : const_extent ? static_cast<double>(std::max<int64_t>(n, 1)) * body_steps
                                       : static_cast<double>(kBig);
    double total = static_cast<double>(saved_steps) + loop_steps;
    steps_ = total >= static_cast<double>(kBig) ? kBig : static_cast<int64_t>(total);
    if (kind == ForKind::kUnrolled && explicit_unroll && n <= kMaxExplicitCopies &&
        ann.empty()) {
      HasAlloc ha;
      ha.VisitStmt(body);
      if (!ha.found) return Replicate(op, body, n);
    }
    auto f = std::make_shared<ForNode>(*op);
    f->for_kind = kind;
    f->body = body;
    f->annotations = ann;
    return Stmt(std::move(f));
  }

  // A step is one store executed (TVM's UnrollLoop counts the same).
  Stmt VisitBufferStore(const Stmt& s, const BufferStoreNode* op) override {
    steps_ = std::min(steps_ + 1, kBig);
    return IRMutator::VisitBufferStore(s, op);
  }

 private:
  static constexpr int64_t kBig = int64_t{1} << 40;

  static Stmt Replicate(const ForNode* op, const Stmt& body, int64_t n) {
    if (n <= 0) return Evaluate(IntImm(0));
    std::vector<Stmt> copies;
    for (int64_t i = 0; i < n; ++i) {
      VarMap map;
      int64_t lo = 0;
      map[op->loop_var.get()] = AsConstInt(op->min, &lo)
                                    ? IntImm(lo + i, op->loop_var.dtype())
                                    : Add(op->min, IntImm(i, op->loop_var.dtype()));
      copies.push_back(Substitute(body, map));
    }
    return SeqStmt(std::move(copies));
  }

  int64_t max_step_ = 0;
  int64_t explicit_ = 1;
  int64_t steps_ = 1;
};

}  // namespace

PrimFunc UnrollLoops(const PrimFunc& func) {
  PrimFunc out = func;
  out.body = Unroller().VisitStmt(func.body);
  return out;
}

}  // namespace kiln::ir::transform
