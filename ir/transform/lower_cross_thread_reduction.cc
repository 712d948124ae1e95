// LowerCrossThreadReduction: a reduction whose reduce loop is bound to
// threadIdx (what MetaSchedule's CrossThreadReduction rule makes) becomes
// per-thread partial sums followed by a reduction of the partials across the
// threads, like TVM's LowerCrossThreadReduction + LowerThreadAllreduce.
//
// The loops from the first one used only by reduce iterators down to the
// block (a perfect nest, one of them bound to threadIdx.*) are replaced by
//
//   for t in T.thread_binding(T, thread=...):       # the bound loop
//       normal[0] = identity
//       for <the other reduce loops>:                 # serial, per thread
//           if <predicate>: normal[0] = normal[0] (op) <the block's value>
//       <the T partials combined into thread 0's normal[0] or red[0]>
//       if t == 0: C[...] = init (op) <total>         # C[...] (op) total without init
//
// with `normal` in local memory, and the partials combined one of two ways:
//
// - Warp shuffles, where the T threads are consecutive lanes of warps (t is
//   the fastest-varying thread axis of the kernel), no condition on the
//   threads encloses the reduction (every lane of a warp must take part) and
//   T is a power of two up to 32 or a multiple of 32:
//
//     for s in T/2, ..., 1:   (s in 16, ..., 1 if T > 32)
//         shfl[0] = T.tvm_warp_shuffle_down(normal[0], s, min(T, 32))
//         normal[0] = normal[0] (op) shfl[0]
//     # T > 32 only: one partial per warp goes through shared memory, and
//     # the first warp reduces them the same way (W = T/32 partials, lanes
//     # past W contribute the identity):
//     if t % 32 == 0: red[t // 32] = normal[0]
//     if t < 32:
//         normal[0] = T.if_then_else(t < W, red[t], identity)
//         <shuffles over the W partials>
//
//   Shuffling takes no shared memory and no barrier for T <= 32, and one
//   barrier instead of log2(T) for larger T.
// - Otherwise a tree in shared memory: red[t] = normal[0], then
//   `if t < s: red[t] = red[t] (op) red[t + s]` for s = P/2, ..., 1 (P: T
//   rounded up to a power of two), the total in red[0].
//
// `red` is allocated by an opaque block around the nest; InjectStorageSync
// later puts the barriers between its writes and reads. When the kernel
// binds other threadIdx axes too, every thread of them runs the reduction,
// so each of their threads gets its own part of `red`; they must then bind
// loops around the reduction (a reduction they do not enclose would be run
// by all of them at once, with no index to tell them apart: that is an
// error). Supported reducers: +, *, min, max.
#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <unordered_set>

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

// Extents of the threadIdx axes a kernel binds ("threadIdx.x" -> 64).
std::map<std::string, int64_t> ThreadAxesOf(const Stmt& kernel) {
  struct Collector : IRVisitor {
    std::map<std::string, int64_t> axes;
    void VisitFor(const ForNode* op) override {
      int64_t n = 0;
      if (IsThreadIdx(*op) && AsConstInt(op->extent, &n)) {
        axes[op->thread_tag] = std::max(axes[op->thread_tag], n);
      }
      IRVisitor::VisitFor(op);
    }
  } c;
  c.VisitStmt(kernel);
  return c.axes;
}

// Types CUDA's __shfl_down_sync moves as they are.
bool Shufflable(DataType t) {
  if (!t.is_scalar()) return false;
  if (t.is_float()) return true;  // half, float, double
  return t.is_integer() && (t.bits() == 32 || t.bits() == 64);
}

class Lowerer : public IRMutator {
 protected:
  Stmt VisitFor(const Stmt& s, const ForNode* op) override {
    // The first thread-bound loop from the top starts a kernel.
    const bool kernel_start = op->for_kind == ForKind::kThreadBinding && !in_kernel_;
    if (kernel_start) {
      in_kernel_ = true;
      kernel_axes_ = ThreadAxesOf(s);
    }
    Stmt out = LowerFor(s, op);
    if (kernel_start) {
      in_kernel_ = false;
      kernel_axes_.clear();
    }
    return out;
  }

  Stmt VisitIfThenElse(const Stmt& s, const IfThenElseNode* op) override {
    const bool div = UsesThreads(op->condition);
    divergent_ += div;
    Stmt out = IRMutator::VisitIfThenElse(s, op);
    divergent_ -= div;
    return out;
  }

  Stmt VisitBlockRealize(const Stmt& s, const BlockRealizeNode* op) override {
    const bool div = op->predicate.defined() && UsesThreads(op->predicate);
    // A condition inside the block on one of its iteration variables is a
    // condition on the threads its binding uses.
    std::vector<const VarNode*> added;
    const BlockNode& b = *op->block.get();
    for (size_t i = 0; i < b.iter_vars.size() && i < op->iter_values.size(); ++i) {
      if (UsesThreads(op->iter_values[i]) && thread_vars_.insert(b.iter_vars[i].var.get()).second) {
        added.push_back(b.iter_vars[i].var.get());
      }
    }
    divergent_ += div;
    Stmt out = IRMutator::VisitBlockRealize(s, op);
    divergent_ -= div;
    for (const VarNode* v : added) thread_vars_.erase(v);
    return out;
  }

 private:
  Stmt LowerFor(const Stmt& s, const ForNode* op) {
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
    if (realize != nullptr && StartsCrossThreadReduction(nest, *realize)) {
      return Rewrite(nest, *realize);
    }
    const bool thread = IsThreadIdx(*op);
    const bool div = UsesThreads(op->min) || UsesThreads(op->extent);
    if (thread) {
      enclosing_threads_.push_back(op);
      thread_vars_.insert(op->loop_var.get());
    }
    divergent_ += div;
    Stmt out = IRMutator::VisitFor(s, op);
    divergent_ -= div;
    if (thread) {
      enclosing_threads_.pop_back();
      thread_vars_.erase(op->loop_var.get());
    }
    return out;
  }

  // True if e depends on the index of an enclosing threadIdx loop.
  bool UsesThreads(const Expr& e) const {
    return UsesVar(e, [this](const VarNode* v) { return thread_vars_.count(v) > 0; });
  }

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
    const DataType it = tv.dtype();
    auto c = [&](int64_t v) { return IntImm(v, it); };

    // The kernel's other thread axes: each of their threads reduces on its
    // own, in its own part of the shared buffer (group index g of G).
    Expr group = c(0);
    int64_t groups = 1;
    bool lanes_consecutive = true;  // no thread axis varies faster than t's
    for (const auto& [tag, n] : kernel_axes_) {
      if (tag == t->thread_tag || n == 1) continue;
      if (tag < t->thread_tag) lanes_consecutive = false;
      const ForNode* outer = nullptr;
      for (const ForNode* f : enclosing_threads_) {
        if (f->thread_tag == tag) outer = f;
      }
      if (outer == nullptr) {
        throw IRError(where + ": the kernel also binds " + tag + " (extent " + std::to_string(n) +
                      ") to loops that do not enclose this reduction; every thread of that axis "
                      "would run it at once");
      }
      group = groups == 1 ? Expr(outer->loop_var) : Add(group, Mul(outer->loop_var, c(groups)));
      groups *= n;
    }
    const bool shuffle = lanes_consecutive && divergent_ == 0 && Shufflable(dt) &&
                         ((std::has_single_bit(static_cast<uint64_t>(extent)) && extent <= 32) ||
                          extent % 32 == 0);

    Buffer normal(b.name + "_normal", dt, {IntImm(1)}, "local");
    auto combine = [&](Expr a, Expr e) { return Binary(red.kind, std::move(a), std::move(e)); };
    auto at = [&](const Expr& e) { return std::vector<Expr>{e}; };
    const Expr partial = BufferLoad(normal, {IntImm(0)});
    std::vector<Buffer> allocs = {normal};

    // The per-thread partial over the serial reduce loops, under the whole
    // predicate; the write-back only under its conjuncts that use none of
    // the reduce loops (an uneven split of a spatial loop leaves groups of
    // threads whose output lies past the buffer).
    Stmt step = BufferStore(normal, combine(partial, Substitute(red.rhs, bind)), {IntImm(0)});
    std::optional<Expr> spatial_pred;
    if (r.predicate.defined() && !IsConstInt(r.predicate, 1)) {
      step = IfThenElseStmt(Substitute(r.predicate, bind), step);
      std::vector<Expr> conjuncts = {r.predicate};
      for (size_t i = 0; i < conjuncts.size();) {
        if (conjuncts[i].kind() == ExprKind::kAnd) {
          const auto* a = conjuncts[i].as<BinaryNode>();
          Expr lhs = a->a, rhs = a->b;
          conjuncts[i] = lhs;
          conjuncts.push_back(rhs);
          continue;
        }
        ++i;
      }
      for (const Expr& e : conjuncts) {
        const bool reduce = UsesVar(e, [&](const VarNode* v) {
          for (const ForNode* f : nest) {
            if (f->loop_var.get() == v) return true;
          }
          return false;
        });
        if (!reduce) spatial_pred = spatial_pred ? And(*spatial_pred, e) : e;
      }
    }
    for (size_t i = nest.size(); i-- > 0;) {
      const ForNode* f = nest[i];
      if (f == t) continue;
      step = For(f->loop_var, f->min, f->extent, f->for_kind, step, "", f->annotations);
    }
    std::vector<Stmt> seq;
    seq.push_back(BufferStore(normal, Identity(red.kind, dt), {IntImm(0)}));
    seq.push_back(step);
    Expr total;
    if (shuffle) {
      Buffer shfl(b.name + "_shfl", dt, {IntImm(1)}, "local");
      allocs.push_back(shfl);
      // normal[0] gathers the partials of `width` consecutive lanes into the
      // first of them.
      auto shuffles = [&](int64_t width, std::vector<Stmt>* out) {
        for (int64_t s = width / 2; s >= 1; s /= 2) {
          out->push_back(BufferStore(
              shfl, Call(CallOp::kWarpShuffleDown, {partial, c(s), c(width)}), {IntImm(0)}));
          out->push_back(
              BufferStore(normal, combine(partial, BufferLoad(shfl, {IntImm(0)})), {IntImm(0)}));
        }
      };
      shuffles(std::min<int64_t>(extent, 32), &seq);
      if (extent > 32) {
        const int64_t warps = extent / 32;
        Buffer shared(b.name + "_red", dt, {IntImm(warps * groups)}, "shared");
        allocs.push_back(shared);
        auto slot = [&](Expr i) { return groups == 1 ? i : Add(std::move(i), Mul(group, c(warps))); };
        seq.push_back(IfThenElseStmt(EQ(FloorMod(tv, c(32)), c(0)),
                                     BufferStore(shared, partial, at(slot(FloorDiv(tv, c(32)))))));
        std::vector<Stmt> first_warp;
        first_warp.push_back(BufferStore(
            normal,
            IfThenElse(LT(tv, c(warps)), BufferLoad(shared, at(slot(tv))), Identity(red.kind, dt)),
            {IntImm(0)}));
        shuffles(static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(warps))), &first_warp);
        seq.push_back(IfThenElseStmt(LT(tv, c(32)), SeqStmt(std::move(first_warp))));
      }
      total = partial;
    } else {
      Buffer shared(b.name + "_red", dt, {IntImm(extent * groups)}, "shared");
      allocs.push_back(shared);
      auto slot = [&](Expr i) { return groups == 1 ? i : Add(std::move(i), Mul(group, c(extent))); };
      seq.push_back(BufferStore(shared, partial, at(slot(tv))));
      const auto pow2 = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(extent)));
      for (int64_t s = pow2 / 2; s >= 1; s /= 2) {
        Expr cond = LT(tv, c(s));
        if (pow2 != extent) cond = And(cond, LT(Add(tv, c(s)), c(extent)));
        Expr other = BufferLoad(shared, at(slot(Add(tv, c(s)))));
        seq.push_back(IfThenElseStmt(
            cond, BufferStore(shared, combine(BufferLoad(shared, at(slot(tv))), other), at(slot(tv)))));
      }
      total = BufferLoad(shared, at(slot(c(0))));
    }
    std::vector<Expr> out_idx;
    for (const auto& e : st->indices) out_idx.push_back(Substitute(e, bind));
    Expr value = init ? (StructuralEqual(*init, Identity(red.kind, dt))
                             ? total
                             : combine(Substitute(*init, bind), total))
                      : combine(BufferLoad(st->buffer, out_idx), total);
    Expr write_back = EQ(tv, c(0));
    if (spatial_pred) write_back = And(write_back, Substitute(*spatial_pred, bind));
    seq.push_back(IfThenElseStmt(write_back, BufferStore(st->buffer, value, out_idx)));
    Stmt loop = For(tv, t->min, t->extent, ForKind::kThreadBinding, SeqStmt(std::move(seq)),
                    t->thread_tag, t->annotations);
    BlockNode scope;
    scope.name = b.name + "_cross_thread";
    scope.body = loop;
    scope.alloc_buffers = std::move(allocs);
    return BlockRealize({}, BoolImm(true), MakeBlock(std::move(scope)));
  }

  bool in_kernel_ = false;
  std::map<std::string, int64_t> kernel_axes_;
  std::vector<const ForNode*> enclosing_threads_;
  std::unordered_set<const VarNode*> thread_vars_;  // theirs, and block iterators bound to them
  int divergent_ = 0;  // enclosing conditions or loop bounds that depend on threadIdx
};

}  // namespace

PrimFunc LowerCrossThreadReduction(const PrimFunc& func) {
  PrimFunc out = func;
  out.body = Lowerer().VisitStmt(func.body);
  return out;
}

}  // namespace kiln::ir::transform
