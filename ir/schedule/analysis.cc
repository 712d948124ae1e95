#include "ir/schedule/analysis.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/arith/analyzer.h"
#include "ir/arith/int_set.h"
#include "ir/arith/iter_map.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/printer.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

void SetWhy(std::string* why, const std::string& text) {
  if (why != nullptr) *why = text;
}

bool Touches(const std::vector<BufferRegion>& regions, const BufferNode* buffer) {
  return std::any_of(regions.begin(), regions.end(),
                     [&](const BufferRegion& r) { return r.buffer.get() == buffer; });
}

void CollectBlockPaths(const Stmt& s, StmtPath* path, std::vector<StmtPath>* out) {
  if (!s.defined()) return;
  path->push_back(s);
  switch (s.kind()) {
    case StmtKind::kFor:
      CollectBlockPaths(s.as<ForNode>()->body, path, out);
      break;
    case StmtKind::kBlockRealize:
      out->push_back(*path);
      break;
    case StmtKind::kSeqStmt:
      for (const auto& c : s.as<SeqStmtNode>()->seq) CollectBlockPaths(c, path, out);
      break;
    case StmtKind::kIfThenElse:
      CollectBlockPaths(s.as<IfThenElseNode>()->then_case, path, out);
      CollectBlockPaths(s.as<IfThenElseNode>()->else_case, path, out);
      break;
    default:
      break;
  }
  path->pop_back();
}

VarMap BindingMap(const BlockRealizeNode* realize) {
  VarMap map;
  const auto& ivs = realize->block->iter_vars;
  for (size_t i = 0; i < ivs.size() && i < realize->iter_values.size(); ++i) {
    map[ivs[i].var.get()] = realize->iter_values[i];
  }
  return map;
}

// The region with block iter vars replaced by their bindings, so that it is
// expressed over loop variables.
std::vector<Range> Unbind(const BufferRegion& region, const VarMap& binding) {
  std::vector<Range> out;
  out.reserve(region.region.size());
  for (const Range& r : region.region) {
    out.push_back({Substitute(r.min, binding), Substitute(r.extent, binding)});
  }
  return out;
}

// Loops of `path` at indices (lo, path.size() - 1): those strictly between
// path[lo] and the block at the end.
std::vector<std::pair<Var, Range>> LoopsBelow(const StmtPath& path, size_t lo) {
  std::vector<std::pair<Var, Range>> out;
  out.reserve(path.size());
  for (size_t i = lo + 1; i + 1 < path.size(); ++i) {
    if (const auto* l = path[i].as<ForNode>()) out.push_back({l->loop_var, {l->min, l->extent}});
  }
  return out;
}

arith::IntSetMap Domain(const std::vector<std::pair<Var, Range>>& loops, arith::Analyzer* an) {
  std::unordered_map<const VarNode*, Range> ranges;
  for (const auto& [v, r] : loops) ranges[v.get()] = r;
  return arith::DomainFromRanges(ranges, an);
}

struct Interval {
  Expr min, max;  // inclusive
};

// The region a producer certainly writes when the loops below the LCA run
// over their domains (a lower bound; nullopt when it cannot be shown to be a
// full box). Each dimension's start must be a single affine split of the
// relaxed loops whose stride does not exceed the written extent.
std::optional<std::vector<Interval>> ProducedLowerBound(
    const std::vector<Range>& region, const std::vector<std::pair<Var, Range>>& loops,
    const Expr& predicate, arith::Analyzer* an) {
  std::vector<Expr> mins;
  for (const Range& r : region) mins.push_back(r.min);
  Expr pred = predicate;
  if (pred.defined() && IsConstInt(pred, 1)) pred = Expr();
  if (loops.empty()) {
    if (pred.defined() && !an->CanProve(pred)) return std::nullopt;
    std::vector<Interval> out;
    for (const Range& r : region) {
      out.push_back({an->Simplify(r.min), an->Simplify(r.min + r.extent - 1)});
    }
    return out;
  }
  arith::IterMapResult res =
      arith::DetectIterMap(mins, loops, pred, arith::IterMapLevel::kSurjective, an);
  if (!res.ok()) return std::nullopt;
  std::vector<Interval> out;
  for (size_t i = 0; i < region.size(); ++i) {
    const arith::IterSumExpr& sum = res.indices[i];
    Expr ext = an->Simplify(region[i].extent);
    Expr base = an->Simplify(sum.base);
    if (sum.args.empty()) {
      out.push_back({base, an->Simplify(base + ext - 1)});
      continue;
    }
    if (sum.args.size() != 1) return std::nullopt;
    const arith::IterSplitExpr& s = sum.args[0];
    if (s.scale <= 0 || !an->CanProveGE(ext - s.scale, 0)) return std::nullopt;
    out.push_back(
        {base, an->Simplify(base + IntImm(s.extent * s.scale, ext.dtype()) + ext - (s.scale + 1))});
  }
  return out;
}

// The region a consumer may read (an upper bound).
std::vector<Interval> ConsumedUpperBound(const std::vector<Range>& region,
                                         const std::vector<std::pair<Var, Range>>& loops,
                                         arith::Analyzer* an) {
  arith::IntSetMap dom = Domain(loops, an);
  std::vector<Interval> out;
  for (const Range& r : region) {
    arith::IntervalSet lo = arith::EvalSet(r.min, dom, an);
    // A point access (extent 1, the common case) ends where it starts.
    if (IsConstInt(r.extent, 1)) {
      out.push_back({lo.min, lo.max});
      continue;
    }
    arith::IntervalSet hi = arith::EvalSet(r.min + r.extent - 1, dom, an);
    out.push_back({lo.min, hi.max});
  }
  return out;
}

bool Covers(const std::vector<Interval>& produced, const std::vector<Interval>& consumed,
            const Buffer& buffer, arith::Analyzer* an) {
  for (size_t d = 0; d < produced.size(); ++d) {
    if (!consumed[d].min.defined() || !consumed[d].max.defined()) return false;
    // Clamping both sides to the buffer is monotone, so bounds that nest
    // unclamped nest clamped too: try that cheaper proof first.
    if (an->CanProve(LE(produced[d].min, consumed[d].min)) &&
        an->CanProve(LE(consumed[d].max, produced[d].max))) {
      continue;
    }
    Expr top = buffer.shape()[d] - 1;
    Expr zero = IntImm(0, top.dtype());
    Expr pmin = an->Simplify(Max(produced[d].min, zero));
    Expr pmax = an->Simplify(Min(produced[d].max, top));
    Expr cmin = an->Simplify(Max(consumed[d].min, zero));
    Expr cmax = an->Simplify(Min(consumed[d].max, top));
    if (!an->CanProve(LE(pmin, cmin)) || !an->CanProve(LE(cmax, pmax))) return false;
  }
  return true;
}

// Unites boxes that agree on every dimension but one, where they touch or
// overlap: the union is then itself a box (a sound lower bound of what the
// producers write together). Repeats until nothing merges.
void MergeBoxes(std::vector<std::vector<Interval>>* boxes, arith::Analyzer* an) {
  auto same = [&](const Expr& a, const Expr& b) { return an->CanProveEqual(a, b); };
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t x = 0; x < boxes->size() && !merged; ++x) {
      for (size_t y = 0; y < boxes->size() && !merged; ++y) {
        if (x == y) continue;
        std::vector<Interval>& a = (*boxes)[x];
        const std::vector<Interval>& b = (*boxes)[y];
        int differing = -1;
        bool ok = true;
        for (size_t d = 0; d < a.size() && ok; ++d) {
          if (same(a[d].min, b[d].min) && same(a[d].max, b[d].max)) continue;
          if (differing >= 0) ok = false;
          differing = static_cast<int>(d);
        }
        if (!ok || differing < 0) continue;
        Interval& ia = a[differing];
        const Interval& ib = b[differing];
        // a then b, with b starting at most one past the end of a.
        if (an->CanProve(LE(ia.min, ib.min)) && an->CanProve(LE(ib.min, ia.max + 1))) {
          if (an->CanProve(LT(ia.max, ib.max))) ia.max = ib.max;
          boxes->erase(boxes->begin() + y);
          merged = true;
        }
      }
    }
  }
}

size_t CommonPrefix(const StmtPath& a, const StmtPath& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n].same_as(b[n])) ++n;
  return n;
}

std::string RegionText(const std::vector<Interval>& r) {
  std::string s = "[";
  for (size_t i = 0; i < r.size(); ++i) {
    if (i) s += ", ";
    s += (r[i].min.defined() ? ToText(r[i].min) : "-inf") + " : " +
         (r[i].max.defined() ? ToText(r[i].max) : "inf");
  }
  return s + "]";
}

}  // namespace

// ---- Scopes -------------------------------------------------------------------

StmtPath ScopePathOf(const StmtPath& path) {
  int scope = ScopeIndex(path);
  if (scope < 0) return {};
  return StmtPath(path.begin(), path.begin() + scope + 1);
}

const BlockRealizeNode* ScopeBlockOf(const StmtPath& path) {
  int scope = ScopeIndex(path);
  return scope < 0 ? nullptr : path[scope].as<BlockRealizeNode>();
}

std::vector<const BlockRealizeNode*> BlocksInScope(const Stmt& scope) {
  // For a loop, ChildBlockRealizes walks the loop itself, so that a block
  // that is the loop's whole body counts (its body would give its children).
  return ChildBlockRealizes(scope);
}

std::vector<StmtPath> BlockPathsInScope(const Stmt& scope) {
  std::vector<StmtPath> out;
  StmtPath path{scope};
  if (const auto* r = scope.as<BlockRealizeNode>()) {
    if (r->block->init) CollectBlockPaths(*r->block->init, &path, &out);
    CollectBlockPaths(r->block->body, &path, &out);
  } else if (const auto* l = scope.as<ForNode>()) {
    CollectBlockPaths(l->body, &path, &out);
  }
  return out;
}

std::vector<const BlockRealizeNode*> WritersOf(const Stmt& scope, const BufferNode* buffer) {
  std::vector<const BlockRealizeNode*> out;
  for (const auto* r : BlocksInScope(scope)) {
    if (Touches(r->block->writes, buffer)) out.push_back(r);
  }
  return out;
}

std::vector<const BlockRealizeNode*> ReadersOf(const Stmt& scope, const BufferNode* buffer) {
  std::vector<const BlockRealizeNode*> out;
  for (const auto* r : BlocksInScope(scope)) {
    if (Touches(r->block->reads, buffer)) out.push_back(r);
  }
  return out;
}

std::vector<const BlockRealizeNode*> ProducersOf(const Stmt& scope, const BlockNode* block) {
  std::vector<const BlockRealizeNode*> out;
  for (const auto* r : BlocksInScope(scope)) {
    if (r->block.get() == block) continue;
    bool produces =
        std::any_of(r->block->writes.begin(), r->block->writes.end(),
                    [&](const BufferRegion& w) { return Touches(block->reads, w.buffer.get()); });
    if (produces) out.push_back(r);
  }
  return out;
}

std::vector<const BlockRealizeNode*> ConsumersOf(const Stmt& scope, const BlockNode* block) {
  std::vector<const BlockRealizeNode*> out;
  for (const auto* r : BlocksInScope(scope)) {
    if (r->block.get() == block) continue;
    bool consumes = std::any_of(
        block->writes.begin(), block->writes.end(),
        [&](const BufferRegion& w) { return Touches(r->block->reads, w.buffer.get()); });
    if (consumes) out.push_back(r);
  }
  return out;
}

bool IsOutputBlock(const Stmt& scope, const BlockNode* block) {
  const auto* realize = scope.as<BlockRealizeNode>();
  std::unordered_set<const BufferNode*> allocated;
  if (realize != nullptr) {
    for (const Buffer& b : realize->block->alloc_buffers) allocated.insert(b.get());
  }
  return std::any_of(block->writes.begin(), block->writes.end(),
                     [&](const BufferRegion& w) { return !allocated.count(w.buffer.get()); });
}

// ---- Bindings -----------------------------------------------------------------

std::vector<std::pair<Var, Range>> LoopDomainOf(const StmtPath& path) {
  std::vector<std::pair<Var, Range>> out;
  out.reserve(path.size());
  for (const ForNode* l : LoopsAbove(path)) out.push_back({l->loop_var, {l->min, l->extent}});
  return out;
}

bool IsAffineBinding(const StmtPath& block_path, std::string* why) {
  const auto* realize = block_path.back().as<BlockRealizeNode>();
  if (realize == nullptr) {
    SetWhy(why, "the statement is not a block");
    return false;
  }
  if (realize->iter_values.empty()) return true;
  std::vector<std::pair<Var, Range>> loops = LoopDomainOf(block_path);
  if (loops.empty()) return true;
  arith::Analyzer an;
  Expr pred = realize->predicate;
  if (pred.defined() && IsConstInt(pred, 1)) pred = Expr();
  arith::IterMapResult res = arith::DetectIterMap(realize->iter_values, loops, pred,
                                                  arith::IterMapLevel::kSurjective, &an);
  const std::string& name = realize->block->name;
  if (!res.ok()) {
    SetWhy(why, "block " + name + " has a non-affine binding: " + res.errors.front());
    return false;
  }
  for (size_t i = 0; i < res.indices.size(); ++i) {
    const auto& args = res.indices[i].args;
    if (!args.empty() && args[0].scale != 1) {
      SetWhy(why, "block " + name + " has a non-affine binding: iter var " +
                      realize->block->iter_vars[i].var.name() + " = " +
                      ToText(realize->iter_values[i]) + " is not a single iterator of stride 1");
      return false;
    }
  }
  return true;
}

bool IsTrivialBinding(const StmtPath& block_path, std::string* why) {
  const auto* realize = block_path.back().as<BlockRealizeNode>();
  if (realize == nullptr) {
    SetWhy(why, "the statement is not a block");
    return false;
  }
  std::vector<const ForNode*> loops = LoopsAbove(block_path);
  const std::string& name = realize->block->name;
  if (loops.size() != realize->iter_values.size()) {
    SetWhy(why, "block " + name + " has " + std::to_string(realize->iter_values.size()) +
                    " iter vars under " + std::to_string(loops.size()) + " loops");
    return false;
  }
  for (size_t i = 0; i < loops.size(); ++i) {
    const auto* v = realize->iter_values[i].as<VarNode>();
    if (v != loops[i]->loop_var.get()) {
      SetWhy(why, "block " + name + " binds iter var " + realize->block->iter_vars[i].var.name() +
                      " to " + ToText(realize->iter_values[i]) + ", not to loop " +
                      loops[i]->loop_var.name());
      return false;
    }
  }
  return true;
}

// ---- Block kinds --------------------------------------------------------------

bool IsDataParallelBlock(const BlockNode& block, std::string* why) {
  for (const IterVar& iv : block.iter_vars) {
    if (iv.iter_type != IterType::kDataPar) {
      SetWhy(why, "block " + block.name + " has iter var " + iv.var.name() +
                      " that is not data-parallel");
      return false;
    }
  }
  return true;
}

bool IsDominantBlock(const Stmt& scope, const BlockNode& block, std::string* why) {
  for (const BufferRegion& w : block.writes) {
    for (const auto* other : WritersOf(scope, w.buffer.get())) {
      if (other->block.get() == &block) continue;
      SetWhy(why, "block " + block.name + " is not the only writer of buffer " + w.buffer.name() +
                      " in its scope (block " + other->block->name + " writes it too)");
      return false;
    }
  }
  return true;
}

bool IsCompleteBlock(const StmtPath& block_path, std::string* why) {
  const auto* realize = block_path.back().as<BlockRealizeNode>();
  if (realize == nullptr) {
    SetWhy(why, "the statement is not a block");
    return false;
  }
  const BlockNode& block = *realize->block.get();
  if (!IsDataParallelBlock(block, why)) {
    if (why) *why = "block " + block.name + " is not complete: " + *why;
    return false;
  }
  if (block.init) {
    SetWhy(why, "block " + block.name + " is not complete: it has an init statement");
    return false;
  }
  int scope = ScopeIndex(block_path);
  if (scope >= 0 && !IsDominantBlock(block_path[scope], block, why)) {
    if (why) *why = "block " + block.name + " is not complete: " + *why;
    return false;
  }
  for (const BufferRegion& w : block.writes) {
    if (Touches(block.reads, w.buffer.get())) {
      SetWhy(why, "block " + block.name + " is not complete: it reads buffer " + w.buffer.name() +
                      ", which it writes");
      return false;
    }
  }
  return true;
}

bool IsReductionBlock(const StmtPath& block_path, std::string* why, bool binding_known_affine) {
  const auto* realize = block_path.back().as<BlockRealizeNode>();
  if (realize == nullptr) {
    SetWhy(why, "the statement is not a block");
    return false;
  }
  const BlockNode& block = *realize->block.get();
  const std::string prefix = "block " + block.name + " is not a reduction block: ";
  if (!block.init) {
    SetWhy(why, prefix + "it has no init statement");
    return false;
  }
  std::string inner;
  if (!binding_known_affine && !IsAffineBinding(block_path, &inner)) {
    SetWhy(why, prefix + inner);
    return false;
  }
  std::unordered_set<const VarNode*> reduce_vars;
  for (const IterVar& iv : block.iter_vars) {
    if (iv.iter_type == IterType::kCommReduce) {
      reduce_vars.insert(iv.var.get());
    } else if (iv.iter_type != IterType::kDataPar) {
      SetWhy(why,
             prefix + "iter var " + iv.var.name() + " is neither data-parallel nor a reduction");
      return false;
    }
  }
  int scope = ScopeIndex(block_path);
  if (scope >= 0 && !IsDominantBlock(block_path[scope], block, &inner)) {
    SetWhy(why, prefix + inner);
    return false;
  }
  // The stores that write the block's outputs must not be indexed by a
  // reduction iter var (each output element is reduced in place).
  struct StoreChecker : IRVisitor {
    const BlockNode* block;
    const std::unordered_set<const VarNode*>* reduce_vars;
    std::string bad;
    void VisitBufferStore(const BufferStoreNode* op) override {
      if (bad.empty() && Touches(block->writes, op->buffer.get())) {
        for (const Expr& idx : op->indices) {
          if (UsesVar(idx, [&](const VarNode* v) { return reduce_vars->count(v) > 0; })) {
            bad = "the reduction iter vars index the output buffer " + op->buffer.name() +
                  " (index " + ToText(idx) + ")";
            break;
          }
        }
      }
      IRVisitor::VisitBufferStore(op);
    }
  } checker;
  checker.block = &block;
  checker.reduce_vars = &reduce_vars;
  checker.VisitStmt(*block.init);
  checker.VisitStmt(block.body);
  if (!checker.bad.empty()) {
    SetWhy(why, prefix + checker.bad);
    return false;
  }
  return true;
}

// ---- Dataflow in a scope ---------------------------------------------------------

bool IsRegionCovered(const StmtPath& scope_path, const BlockRealizeNode* consumer,
                     std::string* why) {
  const Stmt& scope = scope_path.back();
  std::vector<StmtPath> paths = BlockPathsInScope(scope);
  auto cit = std::find_if(paths.begin(), paths.end(),
                          [&](const StmtPath& p) { return p.back().get() == consumer; });
  if (cit == paths.end()) {
    SetWhy(why, "block " + consumer->block->name + " is not a child block of the scope");
    return false;
  }
  const StmtPath& cpath = *cit;
  const BlockNode* cblock = consumer->block.get();
  VarMap cbinding = BindingMap(consumer);

  arith::Analyzer an;
  // Every loop enclosing the consumer is bound, so that proofs about regions
  // that depend on loops above the LCA can use their ranges; only once a
  // read has producers (a block reading only inputs needs no proof).
  bool bound = false;
  auto bind_loops = [&] {
    if (bound) return;
    bound = true;
    for (const Stmt& s : scope_path) {
      if (const auto* l = s.as<ForNode>()) an.Bind(l->loop_var, Range{l->min, l->extent});
    }
    for (const Stmt& s : cpath) {
      if (const auto* l = s.as<ForNode>()) an.Bind(l->loop_var, Range{l->min, l->extent});
    }
  };

  for (const BufferRegion& read : cblock->reads) {
    // Producers are the earlier writers of the buffer (a RAW dependency).
    std::vector<std::pair<const StmtPath*, size_t>> producers;  // path, LCA index
    for (auto it = paths.begin(); it != cit; ++it) {
      const auto* p = it->back().as<BlockRealizeNode>();
      if (!Touches(p->block->writes, read.buffer.get())) continue;
      producers.push_back({&*it, CommonPrefix(*it, cpath) - 1});
    }
    if (producers.empty()) continue;
    bind_loops();
    std::vector<Range> consumed_region = Unbind(read, cbinding);
    // Each LCA position is checked on its own, innermost first, as TVM does.
    std::vector<size_t> lcas;
    for (const auto& [p, lca] : producers) lcas.push_back(lca);
    std::sort(lcas.begin(), lcas.end());
    lcas.erase(std::unique(lcas.begin(), lcas.end()), lcas.end());
    std::reverse(lcas.begin(), lcas.end());
    for (size_t lca : lcas) {
      std::vector<Interval> consumed =
          ConsumedUpperBound(consumed_region, LoopsBelow(cpath, lca), &an);
      std::vector<std::vector<Interval>> boxes;
      // What each producer was found to write, turned into words only if
      // the check fails (printing regions costs more than the check).
      struct Written {
        const BlockNode* block;
        std::optional<std::vector<Interval>> box;
      };
      std::vector<Written> written;
      for (const auto& [ppath, plca] : producers) {
        if (plca != lca) continue;
        const auto* prealize = ppath->back().as<BlockRealizeNode>();
        VarMap pbinding = BindingMap(prealize);
        for (const BufferRegion& w : prealize->block->writes) {
          if (w.buffer.get() != read.buffer.get()) continue;
          auto produced = ProducedLowerBound(Unbind(w, pbinding), LoopsBelow(*ppath, lca),
                                             prealize->predicate, &an);
          written.push_back({prealize->block.get(), produced});
          if (produced) boxes.push_back(std::move(*produced));
        }
      }
      MergeBoxes(&boxes, &an);
      bool covered = std::any_of(boxes.begin(), boxes.end(), [&](const std::vector<Interval>& b) {
        return Covers(b, consumed, read.buffer, &an);
      });
      if (!covered) {
        // A producer whose region is not a box restarts the list.
        std::string produced_text;
        for (const Written& wr : written) {
          if (!wr.box) {
            produced_text =
                "block " + wr.block->name + " writes a region that cannot be shown to be a full box";
            continue;
          }
          if (!produced_text.empty()) produced_text += "; ";
          produced_text += "block " + wr.block->name + " writes " + RegionText(*wr.box);
        }
        SetWhy(why, "the region of buffer " + read.buffer.name() + " that block " + cblock->name +
                        " reads, " + RegionText(consumed) +
                        ", is not covered by what its producers write (" + produced_text + ")");
        return false;
      }
    }
  }
  return true;
}

bool IsStagePipeline(const StmtPath& scope_path, std::string* why) {
  for (const BlockRealizeNode* child : BlocksInScope(scope_path.back())) {
    if (!IsRegionCovered(scope_path, child, why)) return false;
  }
  return true;
}

// ---- Loop chains -------------------------------------------------------------------

bool IsPerfectlyNested(const std::vector<const ForNode*>& loops, std::string* why) {
  for (size_t i = 0; i + 1 < loops.size(); ++i) {
    if (loops[i]->body.as<ForNode>() != loops[i + 1]) {
      SetWhy(why, "loop " + loops[i + 1]->loop_var.name() +
                      " is not the only statement in the body of loop " +
                      loops[i]->loop_var.name());
      return false;
    }
  }
  return true;
}

bool IsSingleChain(const Stmt& s, std::string* why) {
  Stmt cur = s;
  std::string where = "the statement";
  while (cur.defined()) {
    if (const auto* l = cur.as<ForNode>()) {
      where = "loop " + l->loop_var.name();
      cur = l->body;
      continue;
    }
    if (cur.kind() == StmtKind::kSeqStmt) {
      SetWhy(why, "the body of " + where + " has several statements");
      return false;
    }
    if (cur.kind() == StmtKind::kIfThenElse) {
      SetWhy(why, "the body of " + where + " is an if-then-else");
      return false;
    }
    return true;
  }
  return true;
}

bool IsAncestorLoop(const ForNode* outer, const StmtPath& inner_path) {
  for (size_t i = 0; i + 1 < inner_path.size(); ++i) {
    if (inner_path[i].get() == outer) return true;
  }
  return false;
}

// ---- Rewriting --------------------------------------------------------------------

namespace {

class BindingSimplifier : public IRMutator {
 public:
  BindingSimplifier(const std::vector<std::pair<Var, Range>>& outer, bool preserve_unit_iters)
      : preserve_(preserve_unit_iters) {
    entered_.reserve(16);
    scope_loops_.reserve(16);
    for (const auto& [v, r] : outer) Enter(v, r);
  }

 protected:
  // Only block bindings and predicates change, and VisitBlockRealize
  // rewrites those itself: the other expressions (indices, stored values,
  // regions) need not be walked.
  Expr VisitExpr(const Expr& e) override { return e; }

  // Likewise only the statements of a block can hold blocks; its regions
  // and buffers stay, and the block is copied only if a nested one changed.
  Block VisitBlock(const Block& b) override {
    const BlockNode* op = b.get();
    Stmt init = op->init ? VisitStmt(*op->init) : Stmt();
    Stmt body = VisitStmt(op->body);
    if ((!op->init || init.same_as(*op->init)) && body.same_as(op->body)) return b;
    BlockNode out = *op;
    if (op->init) out.init = std::move(init);
    out.body = std::move(body);
    return Block(MakeNode<BlockNode>(std::move(out)));
  }

  Stmt VisitFor(const Stmt& s, const ForNode* op) override {
    Enter(op->loop_var, {op->min, op->extent});
    Stmt out = IRMutator::VisitFor(s, op);
    scope_loops_.pop_back();
    return out;
  }

  Stmt VisitBlockRealize(const Stmt& s, const BlockRealizeNode* op) override {
    // Loops inside the block belong to its own scope.
    size_t outer_begin = scope_begin_;
    scope_begin_ = scope_loops_.size();
    Stmt visited = IRMutator::VisitBlockRealize(s, op);
    scope_begin_ = outer_begin;

    const auto* r = visited.as<BlockRealizeNode>();
    Expr pred = r->predicate.defined() ? SimplifyPredicate(r->predicate) : r->predicate;
    std::vector<Expr> values = SimplifyValues(r->iter_values, pred);
    bool changed = !pred.same_as(r->predicate);
    for (size_t i = 0; i < values.size(); ++i)
      changed = changed || !values[i].same_as(r->iter_values[i]);
    if (!changed) return visited;
    auto n = MakeNode<BlockRealizeNode>(*r);
    n->iter_values = std::move(values);
    n->predicate = std::move(pred);
    return Stmt(std::move(n));
  }

 private:
  // As TVM's IterMapSimplify: when the bindings form an affine iteration map
  // of the scope's loops, each is rewritten to its normal form (which folds
  // the floordiv / floormod chains fuse-after-split leaves); otherwise each
  // is simplified on its own.
  //
  // Bindings made only of + - and * need no iteration map: the map is an
  // exact rewrite of each index, so when it is found the simplified normal
  // form is the canonical linear form Simplify gives the binding itself, and
  // when it is not, Simplify is what is used anyway. (Equal linear forms
  // print alike unless two variables share a name; then the map is built.)
  std::vector<Expr> SimplifyValues(const std::vector<Expr>& values, const Expr& pred) {
    std::vector<Expr> in;
    in.reserve(values.size());
    for (const Expr& v : values) in.push_back(preserve_ ? v : Substitute(v, unit_));
    std::vector<Expr> out;
    out.reserve(in.size());
    if (AllPlainLinear(in)) {
      for (size_t i = 0; i < in.size(); ++i) {
        Expr nv = an_.Simplify(in[i]);
        out.push_back(nv.same_as(values[i]) || StructuralEqual(nv, values[i]) ? values[i] : nv);
      }
      return out;
    }
    BindPending();
    Expr p = pred.defined() && !IsConstInt(pred, 1) ? pred : Expr();
    arith::IterMapResult map;
    if (!in.empty() && scope_loops_.size() > scope_begin_) {
      std::vector<std::pair<Var, Range>> loops(
          scope_loops_.begin() + static_cast<std::ptrdiff_t>(scope_begin_), scope_loops_.end());
      map = arith::DetectIterMap(in, loops, p, arith::IterMapLevel::kSurjective, &an_);
    }
    for (size_t i = 0; i < in.size(); ++i) {
      Expr nv;
      // The normal form drops unit iterators, which preserve_unit_iters keeps.
      bool uses_unit = UsesVar(in[i], [&](const VarNode* v) { return unit_.count(v) > 0; });
      if (map.ok() && !map.indices.empty() && !uses_unit) {
        nv = an_.Simplify(arith::NormalizeIterMapToExpr(map.indices[i], in[i].dtype()));
      } else {
        nv = an_.Simplify(in[i]);
      }
      out.push_back(StructuralEqual(nv, values[i]) ? values[i] : nv);
    }
    return out;
  }

  // Var, IntImm, + - * only; collects the variables.
  static bool PlainLinear(const Expr& e, std::vector<const VarNode*>* vars) {
    switch (e.kind()) {
      case ExprKind::kVar:
        vars->push_back(e.as<VarNode>());
        return true;
      case ExprKind::kIntImm:
        return true;
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul: {
        const auto* b = e.as<BinaryNode>();
        return PlainLinear(b->a, vars) && PlainLinear(b->b, vars);
      }
      default:
        return false;
    }
  }

  // Every binding is plain linear, and no two of the variables they use
  // share a name (they would tie in the canonical term order).
  static bool AllPlainLinear(const std::vector<Expr>& es) {
    std::vector<const VarNode*> vars;
    for (const Expr& e : es) {
      if (!e.dtype().is_int() || !e.dtype().is_scalar() || !PlainLinear(e, &vars)) return false;
    }
    for (size_t i = 0; i < vars.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (vars[i] != vars[j] && vars[i]->name == vars[j]->name) return false;
      }
    }
    return true;
  }

  // Each side of each compared conjunct is simplified as the bindings are,
  // so that a guard `binding < extent` stays literally about the binding.
  Expr SimplifyPredicate(const Expr& e) {
    const auto* b = e.as<BinaryNode>();
    if (b == nullptr || (e.kind() != ExprKind::kAnd && !IsComparison(e.kind()))) return e;
    BindPending();
    Expr x = e.kind() == ExprKind::kAnd ? SimplifyPredicate(b->a) : SimplifySide(b->a);
    Expr y = e.kind() == ExprKind::kAnd ? SimplifyPredicate(b->b) : SimplifySide(b->b);
    if (x.same_as(b->a) && y.same_as(b->b)) return e;
    return Binary(e.kind(), x, y);
  }

  Expr SimplifySide(const Expr& v) {
    Expr nv = an_.Simplify(preserve_ ? v : Substitute(v, unit_));
    return StructuralEqual(nv, v) ? v : nv;
  }

  // Loop ranges reach the analyzer only once something asks it about
  // ranges: bindings of + - * alone (all that split leaves) simplify alike
  // without them, and binding every loop of a deep nest costs more than
  // simplifying its bindings. Ranges are bound in the order the loops were
  // entered, so the analyzer ends up as if each was bound on entry.
  void BindPending() {
    for (; bound_ < entered_.size(); ++bound_) {
      an_.Bind(entered_[bound_].first, entered_[bound_].second);
    }
  }

  void Enter(const Var& v, const Range& r) {
    entered_.push_back({v, r});
    // A constant extent simplifies to itself whatever the analyzer knows;
    // anything else is simplified with every range entered so far.
    if (!r.min.defined() || r.extent.as<IntImmNode>() == nullptr) BindPending();
    if (IsConstInt(an_.Simplify(r.extent), 1)) unit_[v.get()] = r.min;
    scope_loops_.push_back({v, r});
  }

  bool preserve_;
  arith::Analyzer an_;
  std::vector<std::pair<Var, Range>> entered_;  // every loop entered, in order
  size_t bound_ = 0;                            // how many of them an_ has
  VarMap unit_;
  // The loops from the root of the walk to the current statement; those of
  // the current block scope start at scope_begin_.
  std::vector<std::pair<Var, Range>> scope_loops_;
  size_t scope_begin_ = 0;
};

}  // namespace

Stmt SimplifyBlockBindings(const Stmt& s, const std::vector<std::pair<Var, Range>>& outer_loops,
                           bool preserve_unit_iters) {
  BindingSimplifier simplifier(outer_loops, preserve_unit_iters);
  return simplifier.VisitStmt(s);
}

std::vector<std::pair<Var, Range>> AllLoopsAbove(const StmtPath& path) {
  std::vector<std::pair<Var, Range>> out;
  out.reserve(path.size());
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (const auto* l = path[i].as<ForNode>()) out.push_back({l->loop_var, {l->min, l->extent}});
  }
  return out;
}

}  // namespace kiln::ir
