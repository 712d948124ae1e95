// ir/schedule/analysis.h, dataflow in a scope: whether the producers of
// each buffer a block reads write all of it (TVM's region_cover) and
// whether a whole scope is a stage pipeline.
#include "ir/schedule/analysis.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "ir/arith/analyzer.h"
#include "ir/arith/int_set.h"
#include "ir/arith/iter_map.h"
#include "ir/op.h"
#include "ir/schedule/analysis_internal.h"
#include "ir/substitute.h"
#include "ir/text/printer.h"

namespace kiln::ir {

using analysis_internal::SetWhy;
using analysis_internal::Touches;

namespace {

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

// ---- Dataflow in a scope ---------------------------------------------------------

bool IsRegionCovered(const StmtPath& scope_path, const BlockRealizeNode* consumer, std::string* why,
                     const StmtNode* within, const std::vector<StmtPath>* scope_block_paths) {
  std::vector<StmtPath> own;
  if (scope_block_paths == nullptr) own = BlockPathsInScope(scope_path.back());
  const std::vector<StmtPath>& paths = scope_block_paths ? *scope_block_paths : own;
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
      if (within != nullptr && std::none_of(it->begin(), it->end(), [&](const Stmt& s) {
            return s.get() == within;
          })) {
        continue;
      }
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
  const std::vector<StmtPath> paths = BlockPathsInScope(scope_path.back());
  for (const BlockRealizeNode* child : BlocksInScope(scope_path.back())) {
    if (!IsRegionCovered(scope_path, child, why, nullptr, &paths)) return false;
  }
  return true;
}

}  // namespace kiln::ir
