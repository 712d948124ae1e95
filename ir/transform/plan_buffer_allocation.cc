// PlanBufferAllocation: every allocation moves to the lowest common ancestor
// (loop or block) of its buffer's uses, so that a buffer used only inside one
// iteration of a loop (a cache under a parallel loop, say) is allocated per
// iteration, and lives no longer than it is used.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/arith/analyzer.h"
#include "ir/arith/int_set.h"
#include "ir/arith/region_bound.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/substitute.h"
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

  // One block's access to an allocated buffer: its region in terms of loop
  // variables (block bindings substituted) and the loops enclosing it.
  struct RegionUse {
    std::vector<Range> region;
    std::vector<const ForNode*> loops;
    bool write = false;
    size_t block = 0;  // the block's position in the tree, in execution order
    Expr predicate;    // the block's predicate, bindings substituted
    bool has_init = false;
  };
  std::unordered_map<const BufferNode*, std::vector<RegionUse>> region_uses;

  void VisitStmt(const Stmt& s) override {
    if (!s.defined()) return;
    bool scope = s.kind() == StmtKind::kFor || s.kind() == StmtKind::kBlockRealize;
    if (scope) chain_.push_back(s.get());
    const auto* f = s.as<ForNode>();
    if (f) loops_.push_back(f);
    VarMap saved;
    if (const auto* r = s.as<BlockRealizeNode>()) {
      saved = bind_;
      const BlockNode& b = *r->block.get();
      for (size_t i = 0; i < b.iter_vars.size() && i < r->iter_values.size(); ++i) {
        bind_[b.iter_vars[i].var.get()] = Substitute(r->iter_values[i], saved);
      }
      size_t index = blocks_++;
      for (const auto* regions : {&b.reads, &b.writes}) {
        for (const auto& reg : *regions) {
          if (!allocated_.count(reg.buffer.get())) continue;
          RegionUse u;
          for (const auto& rg : reg.region) {
            u.region.push_back({Substitute(rg.min, bind_), Substitute(rg.extent, bind_)});
          }
          u.loops = loops_;
          u.write = regions == &b.writes;
          u.block = index;
          if (r->predicate.defined()) u.predicate = Substitute(r->predicate, saved);
          u.has_init = b.init.has_value();
          region_uses[reg.buffer.get()].push_back(std::move(u));
        }
      }
    }
    IRVisitor::VisitStmt(s);
    if (s.kind() == StmtKind::kBlockRealize) bind_ = std::move(saved);
    if (f) loops_.pop_back();
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
  std::vector<const ForNode*> loops_;
  VarMap bind_;
  size_t blocks_ = 0;
};

// Moving an allocation under loop `l` (allocating it per iteration) is safe
// when no element is touched by two different iterations of `l`: then no
// value can flow from one iteration to another. Checked by enumerating the
// iterations (with every loop above `l` in `outer` fixed to each of its
// values) and comparing each iteration's accessed boxes; anything that
// cannot be evaluated, or more than kBudget iterations, counts as unsafe.
// The same check with the loops above `l` kept symbolic (bound to their
// ranges): each pair of iterations must be provably apart in some dimension.
// Used when enumerating the outer loops would cost too much; `l` itself is
// still enumerated, so it must be short.
bool PerIterationSafeSymbolic(const std::vector<UseFinder::RegionUse>& uses,
                              const std::vector<const ForNode*>& outer, const ForNode* l) {
  constexpr int64_t kMaxIterations = 64;
  int64_t lo = 0, ext = 0;
  if (!AsConstInt(l->min, &lo) || !AsConstInt(l->extent, &ext) || ext > kMaxIterations) {
    return false;
  }
  if (ext <= 1) return true;
  arith::Analyzer an;
  for (const auto* f : outer) an.Bind(f->loop_var, Range{f->min, f->extent});
  using Box = std::vector<std::pair<Expr, Expr>>;
  std::vector<std::vector<Box>> per_iter(ext);
  for (int64_t it = 0; it < ext; ++it) {
    VarMap values{{l->loop_var.get(), IntImm(lo + it, l->loop_var.dtype())}};
    for (const auto& u : uses) {
      arith::IntSetMap dom;
      for (const auto* inner : u.loops) {
        if (inner == l || std::find(outer.begin(), outer.end(), inner) != outer.end()) continue;
        dom[inner->loop_var.get()] = arith::IntervalSet::FromRange(
            Range{Substitute(inner->min, values), Substitute(inner->extent, values)}, &an);
      }
      Box box;
      for (const auto& r : u.region) {
        arith::IntervalSet s = arith::EvalSet(Substitute(r.min, values), dom, &an);
        arith::IntervalSet e = arith::EvalSet(Substitute(r.extent, values), dom, &an);
        if (!s.is_bounded() || !e.is_bounded()) return false;
        box.push_back({s.min, an.Simplify(Sub(Add(s.max, e.max), IntImm(1, e.max.dtype())))});
      }
      per_iter[it].push_back(box);
    }
  }
  auto disjoint = [&](const Box& x, const Box& y) {
    for (size_t d = 0; d < x.size() && d < y.size(); ++d) {
      if (an.CanProve(LT(x[d].second, y[d].first)) || an.CanProve(LT(y[d].second, x[d].first))) {
        return true;
      }
    }
    return false;
  };
  for (int64_t i = 0; i < ext; ++i) {
    for (int64_t j = i + 1; j < ext; ++j) {
      for (const auto& x : per_iter[i]) {
        for (const auto& y : per_iter[j]) {
          if (!disjoint(x, y)) return false;
        }
      }
    }
  }
  return true;
}

bool PerIterationSafe(const std::vector<UseFinder::RegionUse>& uses,
                      const std::vector<const ForNode*>& outer, const ForNode* l) {
  constexpr int64_t kBudget = 4096;
  std::vector<const ForNode*> fixed = outer;
  fixed.push_back(l);
  std::vector<int64_t> lo(fixed.size()), ext(fixed.size());
  int64_t total = 1;
  for (size_t i = 0; i < fixed.size(); ++i) {
    if (!AsConstInt(fixed[i]->min, &lo[i]) || !AsConstInt(fixed[i]->extent, &ext[i])) return false;
    if (ext[i] <= 0) return true;
    total *= ext[i];
    if (total > kBudget) return PerIterationSafeSymbolic(uses, outer, l);
  }
  if (ext.back() == 1) return true;
  arith::Analyzer an;
  using Box = std::vector<std::pair<int64_t, int64_t>>;
  const size_t nouter = outer.size();
  int64_t outer_count = total / ext.back();
  for (int64_t o = 0; o < outer_count; ++o) {
    VarMap values;
    int64_t rest = o;
    for (size_t i = nouter; i-- > 0;) {
      values[fixed[i]->loop_var.get()] = IntImm(lo[i] + rest % ext[i], fixed[i]->loop_var.dtype());
      rest /= ext[i];
    }
    std::vector<std::vector<Box>> per_iter(ext.back());
    for (int64_t it = 0; it < ext.back(); ++it) {
      values[l->loop_var.get()] = IntImm(lo.back() + it, l->loop_var.dtype());
      for (const auto& u : uses) {
        arith::IntSetMap dom;
        for (const auto* inner : u.loops) {
          if (std::find(fixed.begin(), fixed.end(), inner) != fixed.end()) continue;
          dom[inner->loop_var.get()] = arith::IntervalSet::FromRange(
              Range{Substitute(inner->min, values), Substitute(inner->extent, values)}, &an);
        }
        Box box;
        for (const auto& r : u.region) {
          int64_t a = 0, b = 0, e = 0;
          if (!AsConstInt(an.Simplify(Substitute(r.extent, values)), &e)) {
            // The extent may still depend on inner loops: bound it.
            arith::IntervalSet es = arith::EvalSet(Substitute(r.extent, values), dom, &an);
            if (!es.is_bounded() || !AsConstInt(es.max, &e)) return false;
          }
          arith::IntervalSet s = arith::EvalSet(Substitute(r.min, values), dom, &an);
          if (!s.is_bounded() || !AsConstInt(s.min, &a) || !AsConstInt(s.max, &b)) return false;
          if (e <= 0) {
            box.clear();
            break;
          }
          box.push_back({a, b + e - 1});
        }
        if (!box.empty() || u.region.empty()) per_iter[it].push_back(box);
      }
    }
    auto disjoint = [](const Box& x, const Box& y) {
      for (size_t d = 0; d < x.size() && d < y.size(); ++d) {
        if (x[d].second < y[d].first || y[d].second < x[d].first) return true;
      }
      return false;
    };
    for (size_t i = 0; i < per_iter.size(); ++i) {
      for (size_t j = i + 1; j < per_iter.size(); ++j) {
        for (const auto& x : per_iter[i]) {
          for (const auto& y : per_iter[j]) {
            if (!disjoint(x, y)) return false;
          }
        }
      }
    }
  }
  return true;
}

// Iterations of `l` may also share elements, as long as each iteration
// writes every element it reads before reading it: then no value flows from
// one iteration to another, and per-iteration copies compute the same
// values. That is the case of a convolution's padding computed under the
// parallel loop: neighbouring iterations each pad the halo rows they share.
// The proof is the schedule's region cover (ir/arith/region_bound.h): for
// every read, the writes of the earlier blocks that share a loop with it at
// some depth at or below `l` certainly cover, in each iteration of that
// loop, what the read may touch. A writer with an init reads its own
// output on every reduction step after the first, which its signature does
// not list: such writers are refused.
bool IterationsWriteWhatTheyRead(const std::vector<UseFinder::RegionUse>& uses, const ForNode* l,
                                 const Buffer& buffer) {
  arith::Analyzer an;
  std::unordered_set<const ForNode*> bound;
  for (const auto& u : uses) {
    if (u.write && u.has_init) return false;
    for (const auto* f : u.loops) {
      if (bound.insert(f).second) an.Bind(f->loop_var, Range{f->min, f->extent});
    }
  }
  auto below = [](const UseFinder::RegionUse& u, size_t depth) {
    std::vector<std::pair<Var, Range>> out;
    for (size_t i = depth; i < u.loops.size(); ++i) {
      out.push_back({u.loops[i]->loop_var, Range{u.loops[i]->min, u.loops[i]->extent}});
    }
    return out;
  };
  for (const auto& read : uses) {
    if (read.write) continue;
    auto at = std::find(read.loops.begin(), read.loops.end(), l);
    if (at == read.loops.end()) return false;
    const size_t min_depth = static_cast<size_t>(at - read.loops.begin()) + 1;
    // Earlier writers by depth of the loop they share with the read.
    std::map<size_t, std::vector<const UseFinder::RegionUse*>, std::greater<>> writers;
    for (const auto& w : uses) {
      if (!w.write || w.block >= read.block) continue;
      size_t n = 0;
      while (n < w.loops.size() && n < read.loops.size() && w.loops[n] == read.loops[n]) ++n;
      if (n >= min_depth) writers[n].push_back(&w);
    }
    bool covered = false;
    for (const auto& [depth, group] : writers) {
      arith::Box consumed = arith::ConsumedUpperBound(read.region, below(read, depth), &an);
      std::vector<arith::Box> boxes;
      for (const auto* w : group) {
        auto box = arith::ProducedLowerBound(w->region, below(*w, depth), w->predicate, &an);
        if (box) boxes.push_back(std::move(*box));
      }
      arith::MergeBoxes(&boxes, &an);
      covered = std::any_of(boxes.begin(), boxes.end(), [&](const arith::Box& b) {
        return arith::Covers(b, consumed, buffer, &an);
      });
      if (covered) break;
    }
    if (!covered) return false;
  }
  return true;
}

// GPU programs (a thread-bound loop between the allocation and its uses)
// follow TVM: shared and local buffers are allocated at the lowest common
// ancestor of their uses, without the per-iteration check (a kernel's
// shared memory is one per thread block whatever loop it sits in, and
// CompactBufferAllocation sizes it for all threads of the block); global
// buffers are allocated by the host, so they stay above every thread-bound
// loop. Programs for a CPU have no thread-bound loops: nothing changes there.
// Tensor-core fragments (wmma.*) are one per warp, like local memory.
bool IsGpuLocalScope(const std::string& scope) {
  return scope == "shared" || scope == "shared.dyn" || scope == "local" ||
         scope.rfind("wmma.", 0) == 0;
}

class AllocCollector : public IRVisitor {
 public:
  std::unordered_set<const BufferNode*> allocated;
  std::unordered_map<const BufferNode*, const StmtNode*> site;  // allocating realize
  std::set<std::string> names;

 protected:
  void VisitBlockRealize(const BlockRealizeNode* op) override {
    for (const auto& b : op->block->alloc_buffers) site[b.get()] = op;
    IRVisitor::VisitBlockRealize(op);
  }
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

namespace {

PrimFunc Plan(const PrimFunc& func, bool check_iterations) {
  AllocCollector collect;
  collect.VisitStmt(func.body);
  UseFinder uses(collect.allocated);
  uses.VisitStmt(func.body);
  std::unordered_map<const StmtNode*, std::vector<Buffer>> at;
  for (const Buffer& b : uses.order) {
    auto it = uses.lca.find(b.get());
    if (it == uses.lca.end()) continue;  // never used: dropped
    // The chain always starts with the root block realize. Walk down from
    // the original allocation site and stop above the first loop whose
    // iterations share elements of the buffer.
    const Chain& chain = it->second;
    const StmtNode* where = chain.empty() ? func.body.get() : chain.back();
    auto site = std::find(chain.begin(), chain.end(), collect.site[b.get()]);
    if (site != chain.end()) {
      std::vector<const ForNode*> outer;
      for (auto c = chain.begin(); c != site; ++c) {
        if ((*c)->kind == StmtKind::kFor) outer.push_back(static_cast<const ForNode*>(*c));
      }
      const StmtNode* last_ok = *site;
      for (auto c = site + 1; c != chain.end(); ++c) {
        if ((*c)->kind == StmtKind::kFor && check_iterations) {
          const auto* f = static_cast<const ForNode*>(*c);
          if (f->for_kind == ForKind::kThreadBinding) {
            if (!IsGpuLocalScope(b.scope())) break;
            last_ok = chain.back();
            break;
          }
          const auto& region_uses = uses.region_uses[b.get()];
          if (!PerIterationSafe(region_uses, outer, f) &&
              !IterationsWriteWhatTheyRead(region_uses, f, b)) {
            break;
          }
          outer.push_back(f);
        }
        last_ok = *c;
      }
      where = last_ok;
    }
    at[where].push_back(b);
  }
  PrimFunc out = func;
  out.body = Placer(std::move(at), std::move(uses.aligns), std::move(collect.names))
                 .VisitStmt(func.body);
  return out;
}

}  // namespace

PrimFunc PlanBufferAllocation(const PrimFunc& func) { return Plan(func, /*check_iterations=*/true); }

PrimFunc PlanBufferAllocationAtLca(const PrimFunc& func) {
  return Plan(func, /*check_iterations=*/false);
}

}  // namespace kiln::ir::transform
