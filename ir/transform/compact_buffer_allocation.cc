// CompactBufferAllocation: an allocated buffer holds only what its scope
// touches. After PlanBufferAllocation a cache allocated per iteration of a
// tile loop still has the full tensor's shape; here it shrinks to one tile
// and its indices are shifted by the tile's origin.
#include <unordered_map>
#include <unordered_set>

#include "ir/arith/analyzer.h"
#include "ir/arith/int_set.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/substitute.h"
#include "ir/transform/alloc_dim_align.h"
#include "ir/transform/passes.h"

namespace kiln::ir::transform {
namespace {

// Binds every loop variable of the function to its range, once.
class LoopBinder : public IRVisitor {
 public:
  explicit LoopBinder(arith::Analyzer* an) : an_(an) {}

 protected:
  void VisitFor(const ForNode* op) override {
    an_->Bind(op->loop_var, Range{op->min, op->extent});
    IRVisitor::VisitFor(op);
  }

 private:
  arith::Analyzer* an_;
};

// Loops relaxed to their whole ranges: those inside a scope.
struct Relaxed {
  arith::IntSetMap dom;
  std::unordered_set<const VarNode*> inner;
};

// The accesses to a set of buffers under one scope, with the loops inside
// the scope as relaxed domains.
class AccessCollector : public IRVisitor {
 public:
  AccessCollector(const std::unordered_set<const BufferNode*>& buffers, arith::Analyzer* an)
      : buffers_(buffers), an_(an) {}

  std::unordered_map<const BufferNode*, std::vector<std::vector<Expr>>> accesses;
  Relaxed relaxed;

 protected:
  void VisitFor(const ForNode* op) override {
    relaxed.dom[op->loop_var.get()] =
        arith::IntervalSet::FromRange(Range{op->min, op->extent}, an_);
    relaxed.inner.insert(op->loop_var.get());
    IRVisitor::VisitFor(op);
  }
  void VisitBufferLoad(const BufferLoadNode* op) override {
    if (buffers_.count(op->buffer.get())) accesses[op->buffer.get()].push_back(op->indices);
    IRVisitor::VisitBufferLoad(op);
  }
  void VisitBufferStore(const BufferStoreNode* op) override {
    if (buffers_.count(op->buffer.get())) accesses[op->buffer.get()].push_back(op->indices);
    IRVisitor::VisitBufferStore(op);
  }

 private:
  const std::unordered_set<const BufferNode*>& buffers_;
  arith::Analyzer* an_;
};

struct Remap {
  Buffer buffer;
  std::vector<Expr> offset;  // subtracted from each index
};

class IndexShifter : public IRMutator {
 public:
  explicit IndexShifter(const std::unordered_map<const BufferNode*, Remap>& remap)
      : remap_(remap) {}

 protected:
  Expr VisitBufferLoad(const Expr& e, const BufferLoadNode* op) override {
    Expr out = IRMutator::VisitBufferLoad(e, op);
    auto it = remap_.find(op->buffer.get());
    if (it == remap_.end()) return out;
    return BufferLoad(it->second.buffer, Shift(out.as<BufferLoadNode>()->indices, it->second));
  }
  Stmt VisitBufferStore(const Stmt& s, const BufferStoreNode* op) override {
    Stmt out = IRMutator::VisitBufferStore(s, op);
    auto it = remap_.find(op->buffer.get());
    if (it == remap_.end()) return out;
    const auto* st = out.as<BufferStoreNode>();
    return BufferStore(it->second.buffer, st->value, Shift(st->indices, it->second));
  }

 private:
  static std::vector<Expr> Shift(const std::vector<Expr>& idx, const Remap& r) {
    std::vector<Expr> out;
    for (size_t d = 0; d < idx.size(); ++d) {
      out.push_back(IsConstInt(r.offset[d], 0) ? idx[d] : Sub(idx[d], r.offset[d]));
    }
    return out;
  }
  const std::unordered_map<const BufferNode*, Remap>& remap_;
};

// Strides honoring storage-alignment requests: innermost stride 1, and each
// aligned dimension's stride padded until stride % factor == offset.
std::vector<Expr> AlignedStrides(const std::vector<Expr>& shape,
                                 const std::vector<DimAlign>& aligns, arith::Analyzer* an) {
  std::vector<Expr> strides(shape.size());
  Expr stride = IntImm(1);
  for (size_t k = shape.size(); k-- > 0;) {
    for (const auto& a : aligns) {
      if (a.axis != static_cast<int64_t>(k) || a.factor <= 0) continue;
      int64_t s = 0;
      if (!AsConstInt(an->Simplify(stride), &s)) continue;
      int64_t pad = ((a.offset - s % a.factor) % a.factor + a.factor) % a.factor;
      stride = IntImm(s + pad);
    }
    strides[k] = an->Simplify(stride);
    stride = Mul(stride, shape[k]);
  }
  return strides;
}

class Compactor : public IRMutator {
 public:
  explicit Compactor(arith::Analyzer* an) : an_(an) {}

 protected:
  // Only blocks change here (an expression holds no block): the walk need
  // not enter indices and values, which are most of the function.
  Expr VisitExpr(const Expr& e) override { return e; }

  // Shared memory allocated under threadIdx or vthread loops (GPU) is one
  // per thread block: it holds what every thread of the block touches, so
  // those enclosing loops are relaxed too (TVM's NeedRelaxThread).
  Stmt VisitFor(const Stmt& s, const ForNode* op) override {
    bool thread = op->for_kind == ForKind::kThreadBinding &&
                  op->thread_tag.rfind("blockIdx", 0) != 0;
    if (thread) thread_loops_.push_back(op);
    Stmt out = IRMutator::VisitFor(s, op);
    if (thread) thread_loops_.pop_back();
    return out;
  }

  Stmt VisitBlockRealize(const Stmt& s, const BlockRealizeNode* op) override {
    Stmt visited = IRMutator::VisitBlockRealize(s, op);  // inner scopes first
    const auto* r = visited.as<BlockRealizeNode>();
    const BlockNode& b = *r->block.get();
    if (b.alloc_buffers.empty()) return visited;
    std::unordered_set<const BufferNode*> bufs;
    for (const auto& buf : b.alloc_buffers) bufs.insert(buf.get());
    AccessCollector acc(bufs, an_);
    acc.VisitStmt(b.body);
    std::vector<DimAlign> aligns = ReadDimAligns(b, kAllocDimAlign);
    std::unordered_map<const BufferNode*, Remap> remap;
    BlockNode nb = b;
    nb.annotations.erase(kAllocDimAlign);
    for (size_t i = 0; i < nb.alloc_buffers.size(); ++i) {
      const Buffer& buf = nb.alloc_buffers[i];
      std::vector<DimAlign> mine;
      for (const auto& a : aligns) {
        if (a.index == static_cast<int64_t>(i)) mine.push_back(a);
      }
      std::vector<Expr> shape = buf.shape(), offset(buf.ndim(), IntImm(0));
      bool changed = false;
      auto it = acc.accesses.find(buf.get());
      // Copied only to add the thread loops (copying the whole collector
      // for every buffer cost more than the rest of this pass).
      const Relaxed* relaxed = &acc.relaxed;
      Relaxed block_wide;
      if ((buf.scope() == "shared" || buf.scope() == "shared.dyn") && !thread_loops_.empty()) {
        block_wide = acc.relaxed;
        for (const ForNode* f : thread_loops_) {
          block_wide.dom[f->loop_var.get()] =
              arith::IntervalSet::FromRange(Range{f->min, f->extent}, an_);
          block_wide.inner.insert(f->loop_var.get());
        }
        relaxed = &block_wide;
      }
      if (it != acc.accesses.end()) {
        for (size_t d = 0; d < buf.ndim(); ++d) {
          Expr lo, extent;
          if (DimRegion(it->second, d, *relaxed, &lo, &extent) &&
              Smaller(extent, buf.shape()[d])) {
            shape[d] = extent;
            offset[d] = lo;
            changed = true;
          }
        }
      }
      if (!changed && mine.empty()) continue;
      auto n = std::make_shared<BufferNode>(*buf.get());
      n->shape = shape;
      if (!mine.empty()) n->strides = AlignedStrides(shape, mine, an_);
      Buffer nbuf(std::move(n));
      remap[buf.get()] = Remap{nbuf, offset};
      nb.alloc_buffers[i] = nbuf;
    }
    if (remap.empty() && nb.annotations.size() == b.annotations.size()) return visited;
    nb.body = IndexShifter(remap).VisitStmt(b.body);
    return BlockRealize({}, r->predicate, MakeBlock(std::move(nb)));
  }

 private:
  // The accessed interval of dimension d, as (min, constant extent), when
  // its ends do not depend on loops inside the scope.
  bool DimRegion(const std::vector<std::vector<Expr>>& accesses, size_t d,
                 const Relaxed& acc, Expr* lo, Expr* extent) {
    std::vector<arith::IntervalSet> sets;
    for (const auto& idx : accesses) {
      if (d >= idx.size()) return false;
      arith::IntervalSet s = arith::EvalSet(idx[d], acc.dom, an_);
      // Loop ranges may mention enclosing inner loops: relax again.
      for (int round = 0; round < 4 && s.is_bounded(); ++round) {
        if (!Inner(s.min, acc) && !Inner(s.max, acc)) break;
        s = arith::IntervalSet{arith::EvalSet(s.min, acc.dom, an_).min,
                               arith::EvalSet(s.max, acc.dom, an_).max};
      }
      if (!s.is_bounded() || Inner(s.min, acc) || Inner(s.max, acc)) return false;
      sets.push_back(s);
    }
    if (sets.empty()) return false;
    arith::IntervalSet u = arith::Union(sets, an_);
    if (!u.is_bounded()) return false;
    Expr ext = an_->Simplify(Add(Sub(u.max, u.min), IntImm(1, u.min.dtype())));
    int64_t c = 0;
    if (!AsConstInt(ext, &c)) {
      // The extent varies with enclosing loops: use its largest value.
      arith::ConstIntBound bound = an_->Bound(ext);
      if (bound.max_value >= arith::ConstIntBound::kPosInf) return false;
      c = bound.max_value;
    }
    if (c <= 0) return false;
    *lo = an_->Simplify(u.min);
    *extent = IntImm(c, u.min.dtype());
    return true;
  }
  static bool Inner(const Expr& e, const Relaxed& acc) {
    return UsesVar(e, [&](const VarNode* v) { return acc.inner.count(v) > 0; });
  }
  bool Smaller(const Expr& extent, const Expr& shape) {
    int64_t e = 0, s = 0;
    if (!AsConstInt(extent, &e)) return false;
    if (!AsConstInt(an_->Simplify(shape), &s)) return false;
    return e < s;
  }

  arith::Analyzer* an_;
  std::vector<const ForNode*> thread_loops_;
};

}  // namespace

PrimFunc CompactBufferAllocation(const PrimFunc& func) {
  arith::Analyzer an;
  LoopBinder(&an).VisitStmt(func.body);
  PrimFunc out = func;
  out.body = Compactor(&an).VisitStmt(func.body);
  return out;
}

}  // namespace kiln::ir::transform
