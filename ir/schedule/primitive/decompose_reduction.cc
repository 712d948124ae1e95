// decompose_reduction: moves a reduction block's init into a block of its own
// ("<name>_init") placed right before a loop, leaving the update ("<name>_update")
// without init, as TVM's DecomposeReduction does.
#include <algorithm>
#include <map>
#include <unordered_set>

#include "ir/arith/int_set.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/primitive/reduction_util.h"
#include "ir/schedule/schedule.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

constexpr const char* kPrimitive = "decompose_reduction";

// The regions an init statement reads: per buffer, the hull of its loads.
class LoadCollector : public IRVisitor {
 public:
  std::vector<const BufferNode*> order;
  std::map<const BufferNode*, std::pair<Buffer, std::vector<std::vector<Expr>>>> loads;

 protected:
  void VisitBufferLoad(const BufferLoadNode* op) override {
    auto [it, fresh] = loads.try_emplace(op->buffer.get());
    if (fresh) {
      order.push_back(op->buffer.get());
      it->second.first = op->buffer;
    }
    it->second.second.push_back(op->indices);
    IRVisitor::VisitBufferLoad(op);
  }
};

std::vector<BufferRegion> ReadRegionsOf(const Stmt& s) {
  LoadCollector collector;
  collector.VisitStmt(s);
  std::vector<BufferRegion> out;
  arith::Analyzer analyzer;
  for (const BufferNode* b : collector.order) {
    const auto& [buffer, accesses] = collector.loads.at(b);
    out.push_back({buffer, arith::CoverRegion(accesses, {}, &analyzer)});
  }
  return out;
}

Range SubstituteRange(const Range& r, const VarMap& map) {
  return Range{Substitute(r.min, map), Substitute(r.extent, map)};
}

}  // namespace

BlockRV Schedule::DecomposeReduction(BlockRV block_rv, LoopRV loop_rv) {
  const StmtPath path = PathOf(block_rv);
  const StmtPath loop_path = PathOf(loop_rv);
  const auto* realize = path.back().as<BlockRealizeNode>();
  const BlockNode& block = *realize->block.get();
  const ForNode* target = loop_path.back().as<ForNode>();
  const std::string loop_name = NameOf(loop_rv);

  // The loop must enclose the block within the block's scope.
  const std::vector<const ForNode*> loops = LoopsAbove(path);
  auto it = std::find(loops.begin(), loops.end(), target);
  if (it == loops.end()) {
    throw ScheduleError(kPrimitive, "loop " + loop_name + " is not an ancestor of block " +
                                        block.name + " (within the block's scope)");
  }
  const size_t target_index = static_cast<size_t>(it - loops.begin());
  CheckReductionBlock(path, kPrimitive);

  // Every loop a reduction iter var is bound to must be `loop` or inside it:
  // the init then runs once per spatial point before any update.
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    if (block.iter_vars[i].iter_type != IterType::kCommReduce) continue;
    for (size_t l = 0; l < target_index; ++l) {
      const VarNode* v = loops[l]->loop_var.get();
      if (UsesVar(realize->iter_values[i], [v](const VarNode* u) { return u == v; })) {
        throw ScheduleError(kPrimitive, "loop " + loop_name +
                                            " must enclose every loop bound to a reduction iter "
                                            "var of block " +
                                            block.name + ", but loop " + loops[l]->loop_var.name() +
                                            " (outside it) feeds " + block.iter_vars[i].var.name());
      }
    }
  }

  // Position of the loop in the block's path; nothing but loops and sequences
  // may lie between, since the init block drops any guard in between.
  size_t loop_at = 0;
  while (path[loop_at].get() != target) ++loop_at;
  for (size_t i = loop_at + 1; i + 1 < path.size(); ++i) {
    if (path[i].kind() == StmtKind::kIfThenElse) {
      throw ScheduleError(kPrimitive, "an if statement lies between loop " + loop_name +
                                          " and block " + block.name +
                                          "; the init block could not keep its condition");
    }
  }

  // Step 1. The init block: the spatial iter vars, fresh, with their bindings.
  BlockNode init_block;
  const std::string init_name = UniqueBlockName(func_, block.name + "_init");
  init_block.name = init_name;
  init_block.annotations = block.annotations;
  std::vector<Expr> init_values;
  VarMap block_var_map;
  std::unordered_set<const VarNode*> reduce_vars;
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    const IterVar& iv = block.iter_vars[i];
    if (iv.iter_type != IterType::kDataPar) {
      reduce_vars.insert(iv.var.get());
      continue;
    }
    Var copy(iv.var.name(), iv.var.dtype());
    init_block.iter_vars.push_back(IterVar{copy, iv.dom, IterType::kDataPar});
    init_values.push_back(realize->iter_values[i]);
    block_var_map[iv.var.get()] = copy;
  }
  init_block.body = Substitute(*block.init, block_var_map);
  auto uses_reduce_var = [&](const VarNode* v) { return reduce_vars.count(v) > 0; };
  for (const BufferRegion& w : block.writes) {
    BufferRegion region{w.buffer, {}};
    for (const Range& r : w.region) {
      if (UsesVar(r.min, uses_reduce_var) || UsesVar(r.extent, uses_reduce_var)) {
        throw ScheduleError(kPrimitive, "the write region of block " + block.name + " on " +
                                            w.buffer.name() +
                                            " depends on its reduction iter vars");
      }
      region.region.push_back(SubstituteRange(r, block_var_map));
    }
    init_block.writes.push_back(std::move(region));
  }
  init_block.reads = ReadRegionsOf(init_block.body);

  // Step 2. Of the loops from `loop` inward, the init keeps those its bindings
  // use, each with a fresh "<var>_init"; the others are discarded.
  std::vector<size_t> chosen;  // innermost first
  std::unordered_set<const VarNode*> discarded;
  for (size_t l = loops.size(); l-- > target_index;) {
    const VarNode* v = loops[l]->loop_var.get();
    bool used = std::any_of(init_values.begin(), init_values.end(), [v](const Expr& e) {
      return UsesVar(e, [v](const VarNode* u) { return u == v; });
    });
    if (used) {
      chosen.push_back(l);
    } else {
      discarded.insert(v);
    }
  }
  auto uses_discarded = [&](const VarNode* v) { return discarded.count(v) > 0; };
  std::vector<Expr> kept_conditions;
  for (const Expr& c : SplitConjuncts(realize->predicate)) {
    if (!UsesVar(c, uses_discarded)) kept_conditions.push_back(c);
  }
  Stmt init_nest =
      BlockRealize(init_values, JoinConjuncts(kept_conditions), MakeBlock(std::move(init_block)));
  VarMap loop_var_map;
  for (size_t l : chosen) {
    auto n = MakeNode<ForNode>(*loops[l]);
    n->loop_var = Var(loops[l]->loop_var.name() + "_init", loops[l]->loop_var.dtype());
    n->body = init_nest;
    loop_var_map[loops[l]->loop_var.get()] = n->loop_var;
    init_nest = Stmt(std::move(n));
  }
  init_nest = Substitute(init_nest, loop_var_map);
  if (UsesVar(init_nest, uses_discarded)) {
    throw ScheduleError(kPrimitive, "the loops kept for the init block of " + block.name +
                                        " depend on loops it does not iterate");
  }

  // Step 3. The update block: no init, and it now reads what it writes.
  BlockNode update = block;
  const std::string update_name = UniqueBlockName(func_, block.name + "_update");
  update.name = update_name;
  update.init.reset();
  std::vector<BufferRegion> reads;
  for (const BufferRegion& w : block.writes) {
    bool read = std::any_of(block.reads.begin(), block.reads.end(),
                            [&](const BufferRegion& r) { return r.buffer.same_as(w.buffer); });
    if (!read) reads.push_back(w);
  }
  reads.insert(reads.end(), block.reads.begin(), block.reads.end());
  update.reads = std::move(reads);
  auto new_realize = MakeNode<BlockRealizeNode>(*realize);
  new_realize->block = MakeBlock(std::move(update));

  // Step 4. Rebuild: the loop with the new update inside, preceded by the init.
  const StmtPath below(path.begin() + static_cast<std::ptrdiff_t>(loop_at), path.end());
  Stmt new_loop = ReplaceAlongPath(below, Stmt(std::move(new_realize)));
  const StmtPath above(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(loop_at) + 1);
  SetBody(ReplaceAlongPath(above, SeqStmt({init_nest, new_loop})));

  RenameBlockHandles(block.name, update_name);
  BlockRV out = NewBlockRV(init_name);
  Record(instruction_kinds::DecomposeReduction().name,
         {InstArg::Of(block_rv.ref()), InstArg::Of(loop_rv.ref())}, nlohmann::json::array(),
         {out.ref()});
  return out;
}

namespace instruction_kinds {

const InstructionKind& DecomposeReduction() {
  static const InstructionKind k = kind_definition::DefineKind(
      "DecomposeReduction", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(2);
        a.ExpectAttrs(0);
        return {sch.DecomposeReduction(a.Block(0), a.Loop(1)).ref()};
      },
      [](kind_definition::PyCall& py) { py.Arg("block", py.in[0]).Arg("loop", py.in[1]); });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
