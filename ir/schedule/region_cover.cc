// ir/schedule/analysis.h, dataflow in a scope: whether the producers of
// each buffer a block reads write all of it (TVM's region_cover) and
// whether a whole scope is a stage pipeline.
#include <algorithm>
#include <optional>

#include "ir/arith/analyzer.h"
#include "ir/arith/region_bound.h"
#include "ir/op.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/analysis_internal.h"
#include "ir/substitute.h"

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

size_t CommonPrefix(const StmtPath& a, const StmtPath& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n].same_as(b[n])) ++n;
  return n;
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
      arith::Box consumed = arith::ConsumedUpperBound(consumed_region, LoopsBelow(cpath, lca), &an);
      std::vector<arith::Box> boxes;
      // What each producer was found to write, turned into words only if
      // the check fails (printing regions costs more than the check).
      struct Written {
        const BlockNode* block;
        std::optional<arith::Box> box;
      };
      std::vector<Written> written;
      for (const auto& [ppath, plca] : producers) {
        if (plca != lca) continue;
        const auto* prealize = ppath->back().as<BlockRealizeNode>();
        VarMap pbinding = BindingMap(prealize);
        for (const BufferRegion& w : prealize->block->writes) {
          if (w.buffer.get() != read.buffer.get()) continue;
          auto produced = arith::ProducedLowerBound(Unbind(w, pbinding), LoopsBelow(*ppath, lca),
                                                    prealize->predicate, &an);
          written.push_back({prealize->block.get(), produced});
          if (produced) boxes.push_back(std::move(*produced));
        }
      }
      arith::MergeBoxes(&boxes, &an);
      bool covered = std::any_of(boxes.begin(), boxes.end(), [&](const arith::Box& b) {
        return arith::Covers(b, consumed, read.buffer, &an);
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
          produced_text += "block " + wr.block->name + " writes " + arith::BoxText(*wr.box);
        }
        SetWhy(why, "the region of buffer " + read.buffer.name() + " that block " + cblock->name +
                        " reads, " + arith::BoxText(consumed) +
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
