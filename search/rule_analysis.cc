#include "search/rule_analysis.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/functor.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/stmt_path.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"
#include "search/annotations.h"

namespace kiln::search {

using namespace ir;  // NOLINT: this file is all IR inspection

namespace {

const int64_t* ConstInt(const Expr& e) {
  const auto* imm = e.as<IntImmNode>();
  return imm ? &imm->value : nullptr;
}

void FirstLevelBlocks(const Stmt& s, std::vector<const BlockRealizeNode*>* out) {
  if (!s.defined()) return;
  if (const auto* r = s.as<BlockRealizeNode>()) {
    out->push_back(r);
  } else if (const auto* l = s.as<ForNode>()) {
    FirstLevelBlocks(l->body, out);
  } else if (const auto* seq = s.as<SeqStmtNode>()) {
    for (const auto& c : seq->seq) FirstLevelBlocks(c, out);
  } else if (const auto* ite = s.as<IfThenElseNode>()) {
    FirstLevelBlocks(ite->then_case, out);
    FirstLevelBlocks(ite->else_case, out);
  }
}

class OpFinder : public IRVisitor {
 public:
  void Run(const BlockNode* b) { VisitBlock(b); }
  std::vector<CallOp> ops;
  bool found = false;
  bool want_if = false;

 protected:
  void VisitCall(const CallNode* op) override {
    if (want_if ? op->op == CallOp::kIfThenElse
                : std::find(ops.begin(), ops.end(), op->op) != ops.end()) {
      found = true;
    }
    IRVisitor::VisitCall(op);
  }
  void VisitSelect(const SelectNode* op) override {
    if (want_if) found = true;
    IRVisitor::VisitSelect(op);
  }
  void VisitIfThenElse(const IfThenElseNode* op) override {
    if (want_if) found = true;
    IRVisitor::VisitIfThenElse(op);
  }
};

}  // namespace

IterType LoopIterType(const ForNode* loop) {
  int n_spatial = 0, n_reduce = 0, n_other = 0;
  const VarNode* var = loop->loop_var.get();
  auto is_var = [var](const VarNode* v) { return v == var; };
  std::vector<const BlockRealizeNode*> blocks;
  FirstLevelBlocks(loop->body, &blocks);
  for (const BlockRealizeNode* r : blocks) {
    const BlockNode* b = r->block.get();
    for (size_t i = 0; i < b->iter_vars.size() && i < r->iter_values.size(); ++i) {
      if (!UsesVar(r->iter_values[i], is_var)) continue;
      switch (b->iter_vars[i].iter_type) {
        case IterType::kDataPar: ++n_spatial; break;
        case IterType::kCommReduce: ++n_reduce; break;
        default: ++n_other; break;
      }
    }
  }
  if (n_other || (n_spatial && n_reduce)) return IterType::kOpaque;
  return n_reduce ? IterType::kCommReduce : IterType::kDataPar;
}

bool IsSpatialBlock(const BlockNode& block) {
  return std::all_of(block.iter_vars.begin(), block.iter_vars.end(),
                     [](const IterVar& iv) { return iv.iter_type == IterType::kDataPar; });
}

bool IsSpatialFunc(const PrimFunc& func) {
  for (const auto* r : AllBlockRealizes(func)) {
    if (!IsSpatialBlock(*r->block.get())) return false;
  }
  return true;
}

bool HasAnn(const BlockNode& block, const std::string& key) {
  return block.annotations.count(key) > 0;
}

std::optional<int64_t> IntAnn(const Annotations& anns, const std::string& key) {
  auto it = anns.find(key);
  if (it == anns.end()) return std::nullopt;
  if (const int64_t* v = ConstInt(it->second)) return *v;
  return std::nullopt;
}

bool IsRootBlock(const Schedule& sch, BlockRV block) { return sch.PathOf(block).size() == 1; }

std::vector<const VarNode*> NonUnitSpatialVars(const BlockNode& block) {
  std::vector<const VarNode*> spatial;
  for (const IterVar& iv : block.iter_vars) {
    const int64_t* mn = ConstInt(iv.dom.min);
    const int64_t* ext = ConstInt(iv.dom.extent);
    bool unit = mn && ext && *mn == 0 && *ext == 1;
    if (iv.iter_type == IterType::kDataPar && !unit) spatial.push_back(iv.var.get());
  }
  return spatial;
}

bool NeedsMultiLevelTiling(const Schedule& sch, BlockRV block_rv) {
  const BlockNode& block = sch.Get(block_rv);
  if (HasAnn(block, ann::kTilingStructure)) return false;
  if (block.writes.size() != 1 || block.reads.empty() || IsSpatialBlock(block)) return false;
  if (!IsTrivialBinding(sch.PathOf(block_rv))) return false;
  const BufferNode* write_buffer = block.writes[0].buffer.get();
  // Unit spatial iter vars would count as "unused" and fake reuse.
  const std::vector<const VarNode*> spatial = NonUnitSpatialVars(block);
  int unused = 0;
  std::set<const BufferNode*> seen;
  for (const BufferRegion& read : block.reads) {
    if (!seen.insert(read.buffer.get()).second) return false;
    if (read.buffer.get() == write_buffer) continue;
    std::set<const VarNode*> vars;
    for (const Range& r : read.region) {
      if (!ConstInt(r.extent)) return false;
      for (const VarNode* v : FreeVars(r.min)) vars.insert(v);
    }
    for (const VarNode* v : spatial) unused += vars.count(v) ? 0 : 1;
  }
  return unused >= 1;
}

std::pair<int64_t, int64_t> CumulativeSpaceAndReductionLength(const Schedule& sch,
                                                               BlockRV block) {
  int64_t space = 1, reduce = 1;
  for (const ForNode* loop : LoopsAbove(sch.PathOf(block))) {
    const int64_t* ext = ConstInt(loop->extent);
    if (!ext) return {-1, -1};
    switch (LoopIterType(loop)) {
      case IterType::kDataPar: space *= *ext; break;
      case IterType::kCommReduce: reduce *= *ext; break;
      default: return {-1, -1};
    }
  }
  return {space, reduce};
}

bool NeedsRFactor(const Schedule& sch, BlockRV block_rv, int64_t max_parallel_extent,
                  int64_t max_parallel_basic) {
  const BlockNode& block = sch.Get(block_rv);
  if (block.writes.empty()) return false;
  StmtPath path = sch.PathOf(block_rv);
  if (!IsReductionBlock(path) || !IsTrivialBinding(path) || HasAnn(block, ann::kTilingStructure)) {
    return false;
  }
  std::vector<const ForNode*> loops = LoopsAbove(path);
  bool has_reduction = false;
  for (size_t i = 0; i < loops.size(); ++i) {
    IterType t = LoopIterType(loops[i]);
    if (t != IterType::kDataPar && t != IterType::kCommReduce) return false;
    has_reduction |= t == IterType::kCommReduce;
    const Stmt& body = loops[i]->body;
    if (i + 1 < loops.size()) {
      if (body.get() != loops[i + 1]) return false;
    } else {
      const auto* r = body.as<BlockRealizeNode>();
      if (!r || r->block.get() != &block) return false;
    }
  }
  if (!has_reduction) return false;
  auto [space, reduce] = CumulativeSpaceAndReductionLength(sch, block_rv);
  if (space == -1 || reduce == -1) return false;
  if (NeedsMultiLevelTiling(sch, block_rv)) {
    // Enough spatial parallelism already: tiling is the better use of it.
    return !(space >= reduce || space > max_parallel_extent);
  }
  return reduce > 1 && reduce > max_parallel_basic;
}

bool HasOp(const BlockRealizeNode& realize, const std::vector<std::string>& ops) {
  OpFinder f;
  for (const std::string& name : ops) {
    CallOp op;
    if (CallOpFromName(name, &op)) f.ops.push_back(op);
  }
  if (f.ops.empty()) return false;
  f.Run(realize.block.get());
  return f.found;
}

bool HasIfThenElse(const BlockRealizeNode& realize) {
  OpFinder f;
  f.want_if = true;
  f.Run(realize.block.get());
  return f.found;
}

ReadWritePattern AnalyzeReadWritePattern(const BufferRegion& read, const BufferRegion& write) {
  ReadWritePattern none;
  std::map<const VarNode*, int> var_to_dim;
  const int w_dim = static_cast<int>(write.region.size());
  for (int i = 0; i < w_dim; ++i) {
    if (!ConstInt(write.region[i].extent)) return none;
    const auto* v = write.region[i].min.as<VarNode>();
    if (!v) return none;
    var_to_dim.emplace(v, i);
  }
  std::vector<int> mapped;
  for (const Range& r : read.region) {
    if (!ConstInt(r.extent)) return none;
    if (ConstInt(r.min)) continue;  // a constant index maps to nothing
    Expr base = r.min;
    if (const auto* bin = base.as<BinaryNode>()) {
      if ((bin->kind == ExprKind::kAdd || bin->kind == ExprKind::kSub) && ConstInt(bin->b)) {
        base = bin->a;
      } else if (bin->kind == ExprKind::kAdd && ConstInt(bin->a)) {
        base = bin->b;
      }
    }
    const auto* v = base.as<VarNode>();
    if (!v) return none;
    auto it = var_to_dim.find(v);
    if (it == var_to_dim.end()) return none;
    mapped.push_back(it->second);
  }
  ReadWritePattern p;
  p.exists = true;
  p.ordered = std::is_sorted(mapped.begin(), mapped.end());
  std::vector<int> count(w_dim, 0);
  for (int d : mapped) ++count[d];
  p.surjective = std::all_of(count.begin(), count.end(), [](int c) { return c > 0; });
  p.injective = std::all_of(count.begin(), count.end(), [](int c) { return c < 2; });
  return p;
}

bool IsWriteCache(const BlockNode& block) {
  if (block.writes.size() != 1 || block.reads.size() != 1) return false;
  const BufferRegion& w = block.writes[0];
  const BufferRegion& r = block.reads[0];
  if (w.region.size() != r.region.size()) return false;
  for (size_t i = 0; i < w.region.size(); ++i) {
    if (!StructuralEqual(w.region[i].min, r.region[i].min) ||
        !StructuralEqual(w.region[i].extent, r.region[i].extent)) {
      return false;
    }
  }
  return true;
}

int64_t StrideOf(const Expr& e, const VarNode* var) {
  if (const auto* v = e.as<VarNode>()) return v == var ? 1 : 0;
  const auto* bin = e.as<BinaryNode>();
  if (!bin) return 0;
  if (bin->kind == ExprKind::kMul) {
    if (const int64_t* c = ConstInt(bin->a)) return StrideOf(bin->b, var) * *c;
    if (const int64_t* c = ConstInt(bin->b)) return StrideOf(bin->a, var) * *c;
    return 0;
  }
  if (bin->kind == ExprKind::kAdd) {
    int64_t a = StrideOf(bin->a, var), b = StrideOf(bin->b, var);
    if (a == 0) return b;
    if (b == 0) return a;
    return std::min(a, b);
  }
  return 0;
}

}  // namespace kiln::search
