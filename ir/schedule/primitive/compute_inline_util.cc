#include "ir/schedule/primitive/compute_inline_util.h"

#include <algorithm>
#include <unordered_set>

#include "ir/arith/analyzer.h"
#include "ir/arith/int_set.h"
#include "ir/op.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/schedule_error.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"

namespace kiln::ir::inline_util {

namespace {

class LoadCollector : public IRVisitor {
 public:
  std::vector<const BufferNode*> buffers;

 protected:
  void VisitBufferLoad(const BufferLoadNode* op) override {
    if (std::find(buffers.begin(), buffers.end(), op->buffer.get()) == buffers.end()) {
      buffers.push_back(op->buffer.get());
    }
    IRVisitor::VisitBufferLoad(op);
  }
};

// Accesses of one block, per buffer in first-access order, each access one
// interval per dimension (a single point kept as the index expression itself
// when no relaxed loop variable enters it).
class RegionDetector : public IRVisitor {
 public:
  struct Access {
    Buffer buffer;
    std::vector<std::vector<arith::IntervalSet>> boxes;
  };
  std::vector<Access> reads, writes;
  arith::Analyzer an;

  std::vector<BufferRegion> Regions(const std::vector<Access>& list) {
    std::vector<BufferRegion> out;
    for (const Access& acc : list) {
      BufferRegion r{acc.buffer, {}};
      for (size_t d = 0; d < acc.buffer.ndim(); ++d) {
        const arith::IntervalSet& first = acc.boxes[0][d];
        bool same_point = first.is_single_point();
        for (const auto& box : acc.boxes) {
          same_point =
              same_point && box[d].is_single_point() && StructuralEqual(box[d].min, first.min);
        }
        if (same_point) {
          r.region.push_back(Range{first.min, IntImm(1, first.min.dtype())});
          continue;
        }
        std::vector<arith::IntervalSet> sets;
        for (const auto& box : acc.boxes) sets.push_back(box[d]);
        arith::IntervalSet u = arith::Union(sets, &an);
        if (!u.is_bounded()) {
          // Unknown extent: the whole dimension is a safe cover.
          const Expr& extent = acc.buffer.shape()[d];
          r.region.push_back(Range{IntImm(0, extent.dtype()), extent});
        } else {
          r.region.push_back(arith::ToRange(u, &an, "access region"));
        }
      }
      out.push_back(std::move(r));
    }
    return out;
  }

 protected:
  void VisitFor(const ForNode* op) override {
    VisitExpr(op->min);
    VisitExpr(op->extent);
    Expr last = op->min + op->extent - 1;
    arith::IntervalSet lo = arith::EvalSet(op->min, dom_, &an);
    arith::IntervalSet hi = arith::EvalSet(last, dom_, &an);
    dom_[op->loop_var.get()] = arith::IntervalSet::Interval(lo.min, hi.max);
    VisitStmt(op->body);
    dom_.erase(op->loop_var.get());
  }

  void VisitBufferLoad(const BufferLoadNode* op) override {
    Note(&reads, op->buffer, PointBox(op->indices));
    IRVisitor::VisitBufferLoad(op);
  }

  void VisitBufferStore(const BufferStoreNode* op) override {
    Note(&writes, op->buffer, PointBox(op->indices));
    IRVisitor::VisitBufferStore(op);
  }

  void VisitBlockRealize(const BlockRealizeNode* op) override {
    const BlockNode* b = op->block.get();
    VarMap bind;
    for (size_t i = 0; i < b->iter_vars.size() && i < op->iter_values.size(); ++i) {
      bind[b->iter_vars[i].var.get()] = op->iter_values[i];
    }
    auto box_of = [&](const BufferRegion& r) {
      std::vector<arith::IntervalSet> box;
      for (const Range& rg : r.region) {
        Expr lo = Substitute(rg.min, bind);
        if (IsConstInt(rg.extent, 1) && !Relaxed(lo)) {
          box.push_back(arith::IntervalSet::SinglePoint(lo));
          continue;
        }
        Expr hi = Substitute(rg.min + rg.extent - 1, bind);
        box.push_back(arith::IntervalSet::Interval(arith::EvalSet(lo, dom_, &an).min,
                                                   arith::EvalSet(hi, dom_, &an).max));
      }
      return box;
    };
    for (const auto& r : b->reads) Note(&reads, r.buffer, box_of(r));
    for (const auto& r : b->writes) Note(&writes, r.buffer, box_of(r));
  }

 private:
  bool Relaxed(const Expr& e) const {
    return UsesVar(e, [this](const VarNode* v) { return dom_.count(v) > 0; });
  }

  std::vector<arith::IntervalSet> PointBox(const std::vector<Expr>& indices) {
    std::vector<arith::IntervalSet> box;
    for (const Expr& idx : indices) {
      box.push_back(Relaxed(idx) ? arith::EvalSet(idx, dom_, &an)
                                 : arith::IntervalSet::SinglePoint(idx));
    }
    return box;
  }

  static void Note(std::vector<Access>* list, const Buffer& b,
                   std::vector<arith::IntervalSet> box) {
    for (Access& acc : *list) {
      if (acc.buffer.same_as(b)) {
        acc.boxes.push_back(std::move(box));
        return;
      }
    }
    list->push_back(Access{b, {std::move(box)}});
  }

  arith::IntSetMap dom_;
};

}  // namespace

Site LocateSite(const std::string& primitive, const StmtPath& path) {
  Site site;
  site.path = path;
  site.realize = path.empty() ? nullptr : path.back().as<BlockRealizeNode>();
  if (site.realize == nullptr) throw ScheduleError(primitive, "the target is not a block");
  site.block = site.realize->block.get();
  site.scope_index = ScopeIndex(path);
  if (site.scope_index < 0) {
    throw ScheduleError(primitive, "block " + site.block->name + " is the root block");
  }
  site.scope = path[site.scope_index].as<BlockRealizeNode>()->block.get();
  site.siblings = ChildBlockRealizes(path[site.scope_index]);
  for (size_t i = 0; i < site.siblings.size(); ++i) {
    if (site.siblings[i] == site.realize) site.position = static_cast<int>(i);
  }
  return site;
}

bool Touches(const std::vector<BufferRegion>& regions, const BufferNode* buffer) {
  return std::any_of(regions.begin(), regions.end(),
                     [&](const BufferRegion& r) { return r.buffer.get() == buffer; });
}

std::vector<const BufferNode*> LoadedBuffers(const Expr& e) {
  LoadCollector c;
  c.VisitExpr(e);
  return c.buffers;
}

bool LoadsFrom(const Expr& e, const BufferNode* buffer) {
  auto bs = LoadedBuffers(e);
  return std::find(bs.begin(), bs.end(), buffer) != bs.end();
}

void CheckComplete(const std::string& primitive, const Site& site, const BlockRealizeNode* realize,
                   const std::string& role) {
  StmtPath path(site.path.begin(), site.path.begin() + site.scope_index);
  for (const StmtPath& p : BlockPathsInScope(site.path[site.scope_index])) {
    if (p.back().get() != realize) continue;
    path.insert(path.end(), p.begin(), p.end());
    std::string why;
    if (!IsCompleteBlock(path, &why)) throw ScheduleError(primitive, role + why);
    return;
  }
  throw ScheduleError(
      primitive, role + "block " + realize->block->name + " is not a child block of its scope");
}

void CheckStagePipeline(const std::string& primitive, const Site& site) {
  StmtPath scope_path(site.path.begin(), site.path.begin() + site.scope_index + 1);
  std::string why;
  if (!IsStagePipeline(scope_path, &why)) {
    throw ScheduleError(primitive, "the scope of block " + site.block->name + " (block " +
                                       site.scope->name + ") is not a stage pipeline: " + why);
  }
}

bool IsOutput(const Site& site, const BlockNode* block) {
  return IsOutputBlock(site.path[site.scope_index], block);
}

Stmt RemovalRoot(const std::string& primitive, const Site& site) {
  const StmtPath& path = site.path;
  size_t i = path.size() - 1;
  while (i > 0) {
    const Stmt& parent = path[i - 1];
    if (const auto* seq = parent.as<SeqStmtNode>()) {
      if (seq->seq.size() > 1) return path[i];
    } else if (const auto* guard = parent.as<IfThenElseNode>()) {
      if (guard->else_case.defined()) break;
    } else if (parent.kind() != StmtKind::kFor) {
      break;
    }
    --i;
  }
  throw ScheduleError(primitive, "block " + site.block->name +
                                     " is the only statement of its scope (block " +
                                     site.scope->name + "), which cannot be left empty");
}

std::pair<std::vector<BufferRegion>, std::vector<BufferRegion>> DetectRegions(
    const BlockNode& block) {
  RegionDetector d;
  if (block.init) d.VisitStmt(*block.init);
  d.VisitStmt(block.body);
  std::vector<BufferRegion> writes = d.Regions(d.writes);
  std::vector<BufferRegion> reads;
  for (BufferRegion& r : d.Regions(d.reads)) {
    if (block.init && Touches(writes, r.buffer.get())) continue;
    reads.push_back(std::move(r));
  }
  return {std::move(reads), std::move(writes)};
}

Stmt ScopeRewriter::Run(const Site& site) {
  Stmt scope = site.path[site.scope_index];
  Stmt rewritten = VisitStmt(scope);
  StmtPath prefix(site.path.begin(), site.path.begin() + site.scope_index + 1);
  return ReplaceAlongPath(prefix, rewritten);
}

Stmt ScopeRewriter::VisitSeqStmt(const Stmt& s, const SeqStmtNode* op) {
  std::vector<Stmt> seq;
  bool changed = false;
  for (const Stmt& c : op->seq) {
    if (c.same_as(removed_)) {
      changed = true;
      continue;
    }
    Stmt nc = VisitStmt(c);
    changed = changed || !nc.same_as(c);
    seq.push_back(std::move(nc));
  }
  if (!changed) return s;
  return SeqStmt(std::move(seq));
}

Block ScopeRewriter::VisitBlock(const Block& b) {
  Block visited = IRMutator::VisitBlock(b);
  BlockNode n = *visited.get();
  if (b.get() == scope_) {
    std::erase_if(n.alloc_buffers, [&](const Buffer& a) { return a.same_as(buffer_); });
  } else if (Touches(b->reads, buffer_.get()) || Touches(b->writes, buffer_.get())) {
    auto [reads, writes] = DetectRegions(n);
    n.reads = std::move(reads);
    n.writes = std::move(writes);
  } else {
    return visited;
  }
  return MakeBlock(std::move(n));
}

bool Feasible(InlineImpl impl, const StmtPath& block_path, std::string* why) {
  try {
    impl(block_path, /*check_only=*/true);
  } catch (const ScheduleError& e) {
    if (why != nullptr) *why = e.what();
    return false;
  }
  return true;
}

bool Feasible(InlineImpl impl, const Schedule& sch, BlockRV block, std::string* why) {
  StmtPath path;
  try {
    path = sch.PathOf(block);
  } catch (const ScheduleError& e) {
    if (why != nullptr) *why = e.what();
    return false;
  }
  return Feasible(impl, path, why);
}

InstructionKind InlineKind(const std::string& name, void (Schedule::*fn)(BlockRV)) {
  return kind_definition::DefineKind(
      name, {},
      [fn](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        a.ExpectAttrs(0);
        (sch.*fn)(a.Block(0));
        return {};
      },
      [](kind_definition::PyCall& py) { py.Arg("block", py.in[0]); });
}

}  // namespace kiln::ir::inline_util
