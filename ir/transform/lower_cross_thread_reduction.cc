// LowerCrossThreadReduction: a reduction whose reduce loop is bound to
// threadIdx (what MetaSchedule's CrossThreadReduction rule makes) becomes
// per-thread partial sums followed by a tree reduction of the partials in
// shared memory, like TVM's LowerCrossThreadReduction + LowerThreadAllreduce.
//
// The loops from the first one used only by reduce iterators down to the
// block (a perfect nest, one of them bound to threadIdx.*) are replaced by
//
//   for t in T.thread_binding(T, thread=...):       # the bound loop
//       normal[0] = identity
//       for <the other reduce loops>:                 # serial, per thread
//           if <predicate>: normal[0] = normal[0] (op) <the block's value>
//       red[t] = normal[0]
//       if t < s: red[t] = red[t] (op) red[t + s]     # s = P/2, P/4, ..., 1
//       ...                                           # P: T rounded up to 2^k
//       if t == 0: C[...] = init (op) red[0]          # C[...] (op) red[0] without init
//
// with `normal` in local and `red` in shared memory, allocated by an opaque
// block around the nest. InjectStorageSync later puts a barrier between the
// steps of the tree. Supported reducers: +, *, min, max. The tree uses
// shared memory only; warp shuffles (a faster last five steps) are not used
// yet.
#include <optional>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/printer.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"
#include "ir/transform/passes.h"

namespace kiln::ir::transform {
namespace {

bool IsThreadIdx(const ForNode& f) {
  return f.for_kind == ForKind::kThreadBinding && f.thread_tag.rfind("threadIdx", 0) == 0;
}

struct Reducer {
  ExprKind kind;
  Expr rhs;  // the value combined into the accumulator
};

// Matches C[I] = C[I] op rhs (or rhs op C[I]).
bool MatchReducer(const BufferStoreNode& st, Reducer* out) {
  const auto* bin = st.value.as<BinaryNode>();
  if (bin == nullptr) return false;
  ExprKind k = st.value.kind();
  if (k != ExprKind::kAdd && k != ExprKind::kMul && k != ExprKind::kMin && k != ExprKind::kMax) {
    return false;
  }
  auto is_self = [&](const Expr& e) {
    const auto* l = e.as<BufferLoadNode>();
    if (l == nullptr || !l->buffer.same_as(st.buffer) || l->indices.size() != st.indices.size()) {
      return false;
    }
    for (size_t i = 0; i < st.indices.size(); ++i) {
      if (!StructuralEqual(l->indices[i], st.indices[i])) return false;
    }
    return true;
  };
  if (is_self(bin->a)) {
    *out = {k, bin->b};
  } else if (is_self(bin->b)) {
    *out = {k, bin->a};
  } else {
    return false;
  }
  return true;
}

Expr Identity(ExprKind k, DataType t) {
  switch (k) {
    case ExprKind::kAdd: return MakeConst(t, 0);
    case ExprKind::kMul: return MakeConst(t, 1);
    case ExprKind::kMin: return MaxValue(t);
    default: return MinValue(t);
  }
}

class Lowerer : public IRMutator {
 protected:
  Stmt VisitFor(const Stmt& s, const ForNode* op) override {
    // The perfect nest below this loop, down to a block.
    std::vector<const ForNode*> nest{op};
    const BlockRealizeNode* realize = nullptr;
    for (Stmt cur = op->body;;) {
      if (const auto* f = cur.as<ForNode>()) {
        nest.push_back(f);
        cur = f->body;
        continue;
      }
      realize = cur.as<BlockRealizeNode>();
      break;
    }
    if (realize == nullptr || !StartsCrossThreadReduction(nest, *realize)) {
      return IRMutator::VisitFor(s, op);
    }
    return Rewrite(nest, *realize);
  }

 private:
  // True if every loop of `nest` serves only reduce iterators of the block
  // and one of them is bound to threadIdx.
  static bool StartsCrossThreadReduction(const std::vector<const ForNode*>& nest,
                                         const BlockRealizeNode& r) {
    const BlockNode& b = *r.block.get();
    if (b.iter_vars.size() != r.iter_values.size()) return false;
    bool thread = false;
    for (const ForNode* f : nest) {
      bool in_reduce = false, in_spatial = false;
      for (size_t i = 0; i < b.iter_vars.size(); ++i) {
        bool uses = UsesVar(r.iter_values[i],
                            [f](const VarNode* v) { return v == f->loop_var.get(); });
        if (!uses) continue;
        (b.iter_vars[i].iter_type == IterType::kCommReduce ? in_reduce : in_spatial) = true;
      }
      if (in_spatial || (!in_reduce && !IsConstInt(f->extent, 1))) return false;
      thread = thread || IsThreadIdx(*f);
    }
    return thread;
  }

  Stmt Rewrite(const std::vector<const ForNode*>& nest, const BlockRealizeNode& r) {
    const BlockNode& b = *r.block.get();
    const std::string where = "block '" + b.name + "' (a reduction across threads)";
    const ForNode* t = nullptr;
    for (const ForNode* f : nest) {
      if (IsThreadIdx(*f)) {
        if (t != nullptr) throw IRError(where + ": more than one reduce loop is bound to threads");
        t = f;
      } else if (f->for_kind == ForKind::kThreadBinding || f->for_kind == ForKind::kParallel ||
                 f->for_kind == ForKind::kVectorized) {
        throw IRError(where + ": reduce loop " + f->loop_var.name() + " is " +
                      ForKindName(f->for_kind) + "; only serial loops may join a threadIdx one");
      }
    }
    int64_t extent = 0;
    if (!AsConstInt(t->extent, &extent) || !IsConstInt(t->min, 0)) {
      throw IRError(where + ": the thread loop " + t->loop_var.name() +
                    " needs a constant extent starting at 0");
    }
    const auto* st = b.body.as<BufferStoreNode>();
    Reducer red;
    if (st == nullptr || !MatchReducer(*st, &red)) {
      throw IRError(where + ": the body is not C[...] = C[...] op value with op one of +, *, "
                    "min, max");
    }
    std::optional<Expr> init;
    if (b.init) {
      const auto* is = b.init->as<BufferStoreNode>();
      if (is == nullptr || !is->buffer.same_as(st->buffer)) {
        throw IRError(where + ": the init does not store to the reduction's buffer");
      }
      init = is->value;
    }
    VarMap bind;
    for (size_t i = 0; i < b.iter_vars.size(); ++i) bind[b.iter_vars[i].var.get()] = r.iter_values[i];
    const DataType dt = st->buffer.dtype();
    const Var tv = t->loop_var;
    Buffer normal(b.name + "_normal", dt, {IntImm(1)}, "local");
    Buffer shared(b.name + "_red", dt, {IntImm(extent)}, "shared");
    auto combine = [&](Expr a, Expr c) { return Binary(red.kind, std::move(a), std::move(c)); };
    Expr zero = IntImm(0, tv.dtype());
    auto at = [&](const Expr& e) { return std::vector<Expr>{e}; };

    // The per-thread partial over the serial reduce loops.
    Stmt step = BufferStore(normal, combine(BufferLoad(normal, {IntImm(0)}),
                                            Substitute(red.rhs, bind)),
                            {IntImm(0)});
    if (r.predicate.defined() && !IsConstInt(r.predicate, 1)) {
      step = IfThenElseStmt(Substitute(r.predicate, bind), step);
    }
    for (size_t i = nest.size(); i-- > 0;) {
      const ForNode* f = nest[i];
      if (f == t) continue;
      step = For(f->loop_var, f->min, f->extent, f->for_kind, step, "", f->annotations);
    }
    std::vector<Stmt> seq;
    seq.push_back(BufferStore(normal, Identity(red.kind, dt), {IntImm(0)}));
    seq.push_back(step);
    seq.push_back(BufferStore(shared, BufferLoad(normal, {IntImm(0)}), at(tv)));
    int64_t pow2 = 1;
    while (pow2 < extent) pow2 *= 2;
    for (int64_t s = pow2 / 2; s >= 1; s /= 2) {
      Expr cond = LT(tv, IntImm(s, tv.dtype()));
      if (pow2 != extent) cond = And(cond, LT(Add(tv, IntImm(s, tv.dtype())), IntImm(extent, tv.dtype())));
      Expr other = BufferLoad(shared, at(Add(tv, IntImm(s, tv.dtype()))));
      seq.push_back(IfThenElseStmt(
          cond, BufferStore(shared, combine(BufferLoad(shared, at(tv)), other), at(tv))));
    }
    std::vector<Expr> out_idx;
    for (const auto& e : st->indices) out_idx.push_back(Substitute(e, bind));
    Expr total = BufferLoad(shared, {IntImm(0, tv.dtype())});
    Expr value = init ? (StructuralEqual(*init, Identity(red.kind, dt))
                             ? total
                             : combine(Substitute(*init, bind), total))
                      : combine(BufferLoad(st->buffer, out_idx), total);
    seq.push_back(IfThenElseStmt(EQ(tv, zero), BufferStore(st->buffer, value, out_idx)));
    Stmt loop = For(tv, t->min, t->extent, ForKind::kThreadBinding, SeqStmt(std::move(seq)),
                    t->thread_tag, t->annotations);
    BlockNode scope;
    scope.name = b.name + "_cross_thread";
    scope.body = loop;
    scope.alloc_buffers = {normal, shared};
    return BlockRealize({}, BoolImm(true), MakeBlock(std::move(scope)));
  }
};

}  // namespace

PrimFunc LowerCrossThreadReduction(const PrimFunc& func) {
  PrimFunc out = func;
  out.body = Lowerer().VisitStmt(func.body);
  return out;
}

}  // namespace kiln::ir::transform
