// InjectStorageSync: a barrier (T.tvm_storage_sync("shared"), __syncthreads()
// in CUDA) wherever threads of a block may read shared memory that other
// threads wrote since the last barrier, or overwrite shared memory others may
// still be reading.
//
// The analysis is per buffer, not per element: a statement that reads a
// shared buffer after another statement wrote it is assumed to read what a
// different thread wrote (a cooperative fetch, whose point is exactly that).
// Walking the kernel body in program order, "pending" holds the shared
// buffers read and written since the last barrier; a statement that reads a
// pending write or writes a pending read gets a barrier before it. A loop's
// body starts with everything the body itself accesses pending too (the
// previous iteration's accesses), so the barrier that keeps iteration i+1's
// fetch from overwriting a tile iteration i still reads lands at the top of
// the body. A barrier may not sit where only some threads reach it: an `if`
// or a loop whose condition or bounds depend on threadIdx is handled as one
// statement, and one that needs a barrier inside is an error (dependences
// between iterations of such a loop are not looked at).
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/tensor_intrin/tensor_intrin.h"
#include "ir/substitute.h"
#include "ir/transform/passes.h"

namespace kiln::ir::transform {
namespace {

using BufferSet = std::unordered_set<const BufferNode*>;

bool IsShared(const Buffer& b) { return b.scope() == "shared" || b.scope() == "shared.dyn"; }

struct Access {
  BufferSet reads, writes;
  void Add(const Access& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
  void Clear() {
    reads.clear();
    writes.clear();
  }
  bool empty() const { return reads.empty() && writes.empty(); }
};

bool Intersects(const BufferSet& a, const BufferSet& b) {
  for (const auto* x : a) {
    if (b.count(x)) return true;
  }
  return false;
}

// True when running `next` after the accesses in `pending` without a barrier
// may race.
bool Conflicts(const Access& pending, const Access& next) {
  return Intersects(next.reads, pending.writes) || Intersects(next.writes, pending.reads);
}

class AccessOf : public IRVisitor {
 public:
  Access acc;

 protected:
  void VisitBufferLoad(const BufferLoadNode* op) override {
    if (IsShared(op->buffer)) acc.reads.insert(op->buffer.get());
    IRVisitor::VisitBufferLoad(op);
  }
  void VisitBufferStore(const BufferStoreNode* op) override {
    if (IsShared(op->buffer)) acc.writes.insert(op->buffer.get());
    IRVisitor::VisitBufferStore(op);
  }
  // A tensor-core store to shared memory writes the tile its operand loads
  // only name (ir/tensor_intrin/tensor_intrin.h).
  void VisitFor(const ForNode* op) override {
    if (auto t = AsLoweredTensorIntrin(*op)) {
      for (const auto& o : t->operands) {
        if (o.written && IsShared(o.buffer)) acc.writes.insert(o.buffer.get());
      }
    }
    IRVisitor::VisitFor(op);
  }
};

Stmt Barrier() { return Evaluate(Call(CallOp::kStorageSync, {StringImm("shared")})); }

class SyncInserter {
 public:
  explicit SyncInserter(std::unordered_set<const VarNode*> thread_vars)
      : thread_vars_(std::move(thread_vars)) {}

  // The code every thread of a kernel runs, with the barriers it needs.
  Stmt Run(const Stmt& body) {
    Access pending;
    std::vector<Stmt> seq;
    AppendSynced(body, &pending, &seq);
    return SeqStmt(std::move(seq));
  }

  // Rewrites `s` given the accesses pending before it; updates `pending` to
  // those pending after it.
  Stmt Visit(const Stmt& s, Access* pending) {
    const Access& acc = AccessesOf(s);
    if (acc.empty()) return s;
    switch (s.kind()) {
      case StmtKind::kSeqStmt: {
        std::vector<Stmt> seq;
        for (const auto& c : s.as<SeqStmtNode>()->seq) AppendSynced(c, pending, &seq);
        return SeqStmt(std::move(seq));
      }
      case StmtKind::kBlockRealize: {
        const auto* r = s.as<BlockRealizeNode>();
        BlockNode b = *r->block.get();
        std::vector<Stmt> seq;
        AppendSynced(b.body, pending, &seq);
        b.body = SeqStmt(std::move(seq));
        return BlockRealize(r->iter_values, r->predicate, MakeBlock(std::move(b)));
      }
      case StmtKind::kFor: {
        const auto* f = s.as<ForNode>();
        if (ThreadDependent(f->min) || ThreadDependent(f->extent)) return Leaf(s, pending);
        Access entry = *pending;
        Access in = entry;
        in.Add(acc);  // the previous iteration's accesses
        std::vector<Stmt> seq;
        AppendSynced(f->body, &in, &seq);
        int64_t n = 0;
        *pending = in;
        if (!AsConstInt(f->extent, &n) || n < 1) pending->Add(entry);  // may run no iteration
        auto out = std::make_shared<ForNode>(*f);
        out->body = SeqStmt(std::move(seq));
        return Stmt(std::move(out));
      }
      case StmtKind::kIfThenElse: {
        const auto* i = s.as<IfThenElseNode>();
        if (ThreadDependent(i->condition)) return Leaf(s, pending);
        Access p_then = *pending, p_else = *pending;
        std::vector<Stmt> then_seq, else_seq;
        AppendSynced(i->then_case, &p_then, &then_seq);
        if (i->else_case.defined()) AppendSynced(i->else_case, &p_else, &else_seq);
        *pending = p_then;
        pending->Add(p_else);
        return IfThenElseStmt(i->condition, SeqStmt(std::move(then_seq)),
                              i->else_case.defined() ? SeqStmt(std::move(else_seq)) : Stmt());
      }
      default:
        return Leaf(s, pending);
    }
  }

 private:
  // Visits `s` and appends it to `seq`, with a barrier in front when any of
  // its accesses conflicts with what is pending (so a loop whose body reads
  // a tile fetched just before it gets one barrier before the loop, not one
  // per iteration). Compound statements place the barriers their own parts
  // need inside.
  void AppendSynced(const Stmt& s, Access* pending, std::vector<Stmt>* seq) {
    if (const auto* q = s.as<SeqStmtNode>()) {
      for (const auto& c : q->seq) AppendSynced(c, pending, seq);
      return;
    }
    if (Conflicts(*pending, AccessesOf(s))) {
      seq->push_back(Barrier());
      pending->Clear();
    }
    seq->push_back(Visit(s, pending));
  }

  // A statement that runs as a whole: its accesses join the pending set. A
  // thread-dependent one must not need a barrier inside.
  Stmt Leaf(const Stmt& s, Access* pending) {
    std::vector<Stmt> parts;
    if (const auto* f = s.as<ForNode>()) parts = {f->body};
    if (const auto* i = s.as<IfThenElseNode>()) parts = {i->then_case, i->else_case};
    for (const Stmt& part : parts) {
      if (!part.defined()) continue;
      Access inner;
      std::vector<Stmt> probe;
      SyncInserter(thread_vars_).AppendSynced(part, &inner, &probe);
      bool needs = false;
      for (const auto& p : probe) needs = needs || IsBarrier(p);
      if (needs) {
        throw IRError(
            "threads of a block need a barrier (__syncthreads) inside a loop or if whose "
            "bounds or condition depend on threadIdx, where not every thread would reach it");
      }
    }
    pending->Add(AccessesOf(s));
    return s;
  }

  static bool IsBarrier(const Stmt& s) {
    const auto* e = s.as<EvaluateNode>();
    const auto* c = e ? e->value.as<CallNode>() : nullptr;
    return c != nullptr && c->op == CallOp::kStorageSync;
  }

  bool ThreadDependent(const Expr& e) const {
    return UsesVar(e, [this](const VarNode* v) { return thread_vars_.count(v) > 0; });
  }

  const Access& AccessesOf(const Stmt& s) {
    auto it = memo_.find(s.get());
    if (it != memo_.end()) return it->second;
    AccessOf a;
    a.VisitStmt(s);
    return memo_.emplace(s.get(), std::move(a.acc)).first->second;
  }

  std::unordered_set<const VarNode*> thread_vars_;
  std::unordered_map<const StmtNode*, Access> memo_;
};

// Finds each kernel's launch nest and rewrites the code inside it.
class KernelVisitor : public IRMutator {
 protected:
  Stmt VisitFor(const Stmt& s, const ForNode* op) override {
    if (op->for_kind != ForKind::kThreadBinding) return s;  // not a kernel: nothing shared
    std::unordered_set<const VarNode*> thread_vars;
    const ForNode* inner = op;
    std::vector<const ForNode*> nest;
    while (true) {
      nest.push_back(inner);
      if (inner->thread_tag.rfind("threadIdx", 0) == 0) thread_vars.insert(inner->loop_var.get());
      const auto* next = inner->body.as<ForNode>();
      if (next == nullptr || next->for_kind != ForKind::kThreadBinding) break;
      inner = next;
    }
    Stmt body = SyncInserter(std::move(thread_vars)).Run(inner->body);
    for (size_t i = nest.size(); i-- > 0;) {
      auto n = std::make_shared<ForNode>(*nest[i]);
      n->body = body;
      body = Stmt(std::move(n));
    }
    return body;
  }
};

}  // namespace

PrimFunc InjectStorageSync(const PrimFunc& func) {
  PrimFunc out = func;
  out.body = KernelVisitor().VisitStmt(func.body);
  return out;
}

}  // namespace kiln::ir::transform
