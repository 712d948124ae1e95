// rfactor: factorizes a reduction over one of its loops, as TVM's RFactor.
//
// The rfactor block "<name>_rf" reduces into a new buffer "<buffer>_rf" that
// has one more dimension (at factor_axis) indexed by the rfactor loop, which
// becomes data parallel there; it runs under copies of all the block's loops,
// before them. The original block, now the write-back block, keeps its name
// and reduces the rfactor buffer over the rfactor loop alone: its other
// reduction loops are removed.
#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "ir/op.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/primitive/reduction_util.h"
#include "ir/schedule/schedule.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

constexpr const char* kPrimitive = "rfactor";

std::vector<Range> SubstituteRegion(const std::vector<Range>& region, const VarMap& map) {
  std::vector<Range> out;
  for (const Range& r : region)
    out.push_back(Range{Substitute(r.min, map), Substitute(r.extent, map)});
  return out;
}

// The region of one element: [index, index + 1) per dimension.
BufferRegion PointRegion(const BufferLoadNode* load) {
  BufferRegion out{load->buffer, {}};
  for (const Expr& index : load->indices)
    out.region.push_back(Range{index, MakeConst(index.dtype(), 1)});
  return out;
}

// The blocks directly under a loop (ChildBlockRealizes of a BlockRealize
// would look inside it).
std::vector<const BlockRealizeNode*> BlocksUnder(const ForNode* loop) {
  if (const auto* r = loop->body.as<BlockRealizeNode>()) return {r};
  return ChildBlockRealizes(loop->body);
}

std::string VarNames(const std::vector<const VarNode*>& vars) {
  std::string out;
  for (const VarNode* v : vars) out += (out.empty() ? "" : ", ") + v->name;
  return out;
}

}  // namespace

BlockRV Schedule::RFactor(LoopRV loop_rv, int factor_axis) {
  const std::string loop_name = NameOf(loop_rv);
  const StmtPath loop_path = PathOf(loop_rv);
  const ForNode* rf_loop = loop_path.back().as<ForNode>();

  // Step 1. The loop has exactly one block beneath it, a reduction block.
  std::vector<const BlockRealizeNode*> children = BlocksUnder(rf_loop);
  if (children.size() != 1) {
    throw ScheduleError(kPrimitive, "loop " + loop_name + " has " +
                                        std::to_string(children.size()) +
                                        " child blocks; rfactor needs exactly one, the "
                                        "reduction block");
  }
  const BlockRealizeNode* realize = children.front();
  const BlockNode& block = *realize->block.get();
  const StmtPath path = *FindBlockPath(func_, block.name);
  CheckReductionBlock(path, kPrimitive);
  if (std::string why; !IsStagePipeline(ScopePathOf(path), &why)) {
    throw ScheduleError(kPrimitive,
                        "the scope of block " + block.name + " is not a stage pipeline: " + why);
  }
  if (rf_loop->for_kind != ForKind::kSerial) {
    throw ScheduleError(kPrimitive, "loop " + loop_name + " must be serial, but it is " +
                                        ForKindName(rf_loop->for_kind));
  }
  if (!IsConstInt(rf_loop->min, 0)) {
    throw ScheduleError(kPrimitive,
                        "loop " + loop_name + " must start at 0 to index the rfactor buffer");
  }

  // Step 2. Which loops the spatial and the reduction iter vars are bound to.
  std::unordered_set<const VarNode*> spatial_loop_vars, reduce_loop_vars;
  std::vector<const VarNode*> spatial_on_rf_loop;
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    const bool reduce = block.iter_vars[i].iter_type == IterType::kCommReduce;
    for (const VarNode* v : FreeVars(realize->iter_values[i])) {
      (reduce ? reduce_loop_vars : spatial_loop_vars).insert(v);
      if (!reduce && v == rf_loop->loop_var.get()) {
        spatial_on_rf_loop.push_back(block.iter_vars[i].var.get());
      }
    }
  }
  if (!spatial_on_rf_loop.empty()) {
    throw ScheduleError(kPrimitive, "loop " + loop_name +
                                        " is not a reduction loop: the spatial iter var(s) " +
                                        VarNames(spatial_on_rf_loop) + " of block " + block.name +
                                        " are bound to it");
  }
  if (!reduce_loop_vars.count(rf_loop->loop_var.get())) {
    throw ScheduleError(kPrimitive, "loop " + loop_name +
                                        " is not a reduction loop: no reduction iter var of "
                                        "block " +
                                        block.name + " is bound to it");
  }

  // Step 3. The loops around the block, as TVM requires them: the block comes
  // first under the outermost one, no loop feeds both kinds of iter var, the
  // outermost reduction loop holds this block alone, and every loop below it
  // either feeds an iter var or has extent 1.
  const std::vector<const ForNode*> loops = LoopsAbove(path);
  if (BlocksUnder(loops.front()).front() != realize) {
    throw ScheduleError(kPrimitive, "block " + block.name +
                                        " must be the first block under its outermost loop " +
                                        loops.front()->loop_var.name());
  }
  bool met_reduction_loop = false;
  std::string outermost_reduction_loop;
  for (const ForNode* loop : loops) {
    const VarNode* v = loop->loop_var.get();
    const bool spatial = spatial_loop_vars.count(v) > 0;
    const bool reduce = reduce_loop_vars.count(v) > 0;
    if (spatial && reduce) {
      throw ScheduleError(
          kPrimitive,
          "loop " + v->name + " feeds both spatial and reduction iter vars of block " + block.name);
    }
    if (reduce) {
      if (!met_reduction_loop && BlocksUnder(loop).size() != 1) {
        throw ScheduleError(kPrimitive, "the outermost reduction loop " + v->name + " of block " +
                                            block.name + " must hold no other block");
      }
      if (!met_reduction_loop) outermost_reduction_loop = v->name;
      met_reduction_loop = true;
    } else if (!spatial && met_reduction_loop && !IsConstInt(loop->extent, 1)) {
      throw ScheduleError(kPrimitive, "loop " + v->name + " feeds no iter var of block " +
                                          block.name +
                                          " but lies, with extent above 1, under "
                                          "its reduction loop " +
                                          outermost_reduction_loop);
    }
  }
  // The rfactor block runs before the outermost loop: no block after the
  // reduction under that loop may write what the reduction reads, and
  // nothing but loops and sequences may lie between that loop and the block.
  size_t outer_at = 0;
  while (path[outer_at].get() != loops.front()) ++outer_at;
  for (size_t i = outer_at + 1; i + 1 < path.size(); ++i) {
    if (path[i].kind() == StmtKind::kIfThenElse) {
      throw ScheduleError(kPrimitive, "an if statement lies between loop " +
                                          loops.front()->loop_var.name() + " and block " +
                                          block.name);
    }
  }
  for (const BlockRealizeNode* other : BlocksUnder(loops.front())) {
    if (other == realize) continue;
    for (const BufferRegion& w : other->block->writes) {
      for (const BufferRegion& r : block.reads) {
        if (r.buffer.same_as(w.buffer)) {
          throw ScheduleError(kPrimitive, "block " + other->block->name + " under loop " +
                                              loops.front()->loop_var.name() + " writes " +
                                              w.buffer.name() + ", which block " + block.name +
                                              " reads; the rfactor block could not run first");
        }
      }
    }
  }

  // Step 4. The reducer, and the factor axis.
  ReducerMatch match = MatchReducer(block);
  if (!match.parts) {
    throw ScheduleError(kPrimitive, "the reduction of block " + block.name +
                                        " is not a recognised reducer: " + match.why_not);
  }
  const ReductionParts& parts = *match.parts;
  const Buffer& buffer = parts.update->buffer;
  for (const BufferRegion& w : block.writes) {
    if (!w.buffer.same_as(buffer)) {
      throw ScheduleError(kPrimitive, "block " + block.name + " writes " + w.buffer.name() +
                                          " besides the buffer it reduces into, " + buffer.name());
    }
  }
  const int ndim = static_cast<int>(buffer.ndim());
  if (factor_axis < -(ndim + 1) || factor_axis > ndim) {
    throw ScheduleError(kPrimitive,
                        "factor_axis " + std::to_string(factor_axis) +
                            " is out of range: the output buffer " + buffer.name() + " has " +
                            std::to_string(ndim) + " dimension(s), so factor_axis must be in [" +
                            std::to_string(-(ndim + 1)) + ", " + std::to_string(ndim) + "]");
  }
  const size_t axis = static_cast<size_t>(factor_axis < 0 ? factor_axis + ndim + 1 : factor_axis);

  // Step 5. The rfactor buffer: the output with the rfactor loop's extent
  // inserted at the factor axis (compact layout).
  BufferNode rf_node = *buffer.get();
  rf_node.name = buffer.name() + "_rf";
  rf_node.shape.insert(rf_node.shape.begin() + static_cast<std::ptrdiff_t>(axis), rf_loop->extent);
  rf_node.strides.clear();
  const Buffer rf_buffer(MakeNode<BufferNode>(std::move(rf_node)));

  // Step 6. The rfactor block. A new spatial iter var stands for the rfactor
  // loop; a reduction iter var bound to the rfactor loop is replaced by one
  // new reduction iter var per other loop of its binding.
  std::unordered_map<const VarNode*, const ForNode*> loop_of;
  for (const ForNode* loop : loops) loop_of[loop->loop_var.get()] = loop;
  const VarNode* rf_var = rf_loop->loop_var.get();
  BlockNode rf_block;
  rf_block.name = UniqueBlockName(func_, block.name + "_rf");
  rf_block.annotations = block.annotations;
  std::vector<Expr> rf_values;
  const IterVar rf_iter{Var("v" + rf_loop->loop_var.name(), rf_loop->loop_var.dtype()),
                        Range{rf_loop->min, rf_loop->extent}, IterType::kDataPar};
  rf_block.iter_vars.push_back(rf_iter);
  rf_values.push_back(rf_loop->loop_var);
  VarMap loop_to_iter{{rf_var, rf_iter.var}};
  // Which reduction iter vars are replaced: those bound to the rfactor loop
  // and (unlike TVM, which keeps them and leaves two iter vars on one loop)
  // those sharing a loop with a replaced one, so the binding stays affine.
  std::vector<bool> replaced(block.iter_vars.size(), false);
  std::unordered_set<const VarNode*> replaced_loops{rf_var};
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < block.iter_vars.size(); ++i) {
      if (replaced[i] || block.iter_vars[i].iter_type != IterType::kCommReduce) continue;
      std::vector<const VarNode*> vars = FreeVars(realize->iter_values[i]);
      if (std::none_of(vars.begin(), vars.end(),
                       [&](const VarNode* v) { return replaced_loops.count(v) > 0; })) {
        continue;
      }
      replaced[i] = grew = true;
      replaced_loops.insert(vars.begin(), vars.end());
    }
  }
  VarMap rf_map;  // old iter var -> its value in the rfactor block
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    const IterVar& iv = block.iter_vars[i];
    const Expr& binding = realize->iter_values[i];
    if (!replaced[i]) {
      rf_block.iter_vars.push_back(iv);
      rf_values.push_back(binding);
      continue;
    }
    for (const VarNode* v : FreeVars(binding)) {
      auto loop = loop_of.find(v);
      if (loop == loop_of.end() || loop_to_iter.count(v)) continue;
      const ForNode* l = loop->second;
      IterVar fresh{Var("v" + l->loop_var.name(), l->loop_var.dtype()), Range{l->min, l->extent},
                    IterType::kCommReduce};
      loop_to_iter[v] = fresh.var;
      rf_block.iter_vars.push_back(fresh);
      rf_values.push_back(l->loop_var);
    }
    rf_map[iv.var.get()] = Substitute(binding, loop_to_iter);
  }
  std::vector<Expr> rf_indices = parts.update->indices;
  rf_indices.insert(rf_indices.begin() + static_cast<std::ptrdiff_t>(axis), rf_iter.var);
  const bool rf_reduces =
      std::any_of(rf_block.iter_vars.begin(), rf_block.iter_vars.end(),
                  [](const IterVar& iv) { return iv.iter_type == IterType::kCommReduce; });
  if (rf_reduces) {
    rf_block.body = Substitute(
        BufferStore(rf_buffer, parts.reducer.Combine(BufferLoad(rf_buffer, rf_indices), parts.rhs),
                    rf_indices),
        rf_map);
    rf_block.init =
        Substitute(BufferStore(rf_buffer, parts.reducer.Identity(), rf_indices), rf_map);
  } else {
    // Each rfactor element gets exactly one value: no reduction left to run.
    rf_block.body = Substitute(BufferStore(rf_buffer, parts.rhs, rf_indices), rf_map);
  }
  auto with_rf_axis = [&](const BufferRegion& r) {
    std::vector<Range> region = r.region;
    region.insert(region.begin() + static_cast<std::ptrdiff_t>(axis),
                  Range{rf_iter.var, MakeConst(rf_iter.var.dtype(), 1)});
    return BufferRegion{rf_buffer, SubstituteRegion(region, rf_map)};
  };
  for (const BufferRegion& r : block.reads) {
    rf_block.reads.push_back(r.buffer.same_as(buffer)
                                 ? with_rf_axis(r)
                                 : BufferRegion{r.buffer, SubstituteRegion(r.region, rf_map)});
  }
  for (const BufferRegion& w : block.writes) rf_block.writes.push_back(with_rf_axis(w));
  const std::string rf_name = rf_block.name;

  // Its loops: copies of every loop around the block, with fresh variables.
  VarMap new_loop_vars;
  for (const ForNode* loop : loops) {
    new_loop_vars[loop->loop_var.get()] = Var(loop->loop_var.name(), loop->loop_var.dtype());
  }
  std::vector<Expr> rf_bindings;
  for (const Expr& e : rf_values) rf_bindings.push_back(Substitute(e, new_loop_vars));
  Stmt rf_nest = BlockRealize(std::move(rf_bindings), Substitute(realize->predicate, new_loop_vars),
                              MakeBlock(std::move(rf_block)));
  for (size_t l = loops.size(); l-- > 0;) {
    auto n = MakeNode<ForNode>(*loops[l]);
    n->loop_var = Var(
        std::static_pointer_cast<const VarNode>(new_loop_vars.at(loops[l]->loop_var.get()).node()));
    n->min = Substitute(loops[l]->min, new_loop_vars);
    n->extent = Substitute(loops[l]->extent, new_loop_vars);
    n->body = rf_nest;
    rf_nest = Stmt(std::move(n));
  }

  // Step 7. The write-back block: a reduction over the rfactor loop of the
  // rfactor buffer into the output, with fresh copies of the spatial iter vars.
  BlockNode wb = block;
  wb.iter_vars.clear();
  wb.reads.clear();
  wb.writes.clear();
  std::vector<Expr> wb_values;
  const IterVar wb_rf_iter{Var("v" + rf_loop->loop_var.name(), rf_loop->loop_var.dtype()),
                           Range{rf_loop->min, rf_loop->extent}, IterType::kCommReduce};
  wb.iter_vars.push_back(wb_rf_iter);
  wb_values.push_back(rf_loop->loop_var);
  VarMap wb_map{{rf_iter.var.get(), wb_rf_iter.var}};
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    const IterVar& iv = block.iter_vars[i];
    if (iv.iter_type != IterType::kDataPar) continue;
    IterVar copy{Var(iv.var.name(), iv.var.dtype()), iv.dom, IterType::kDataPar};
    wb_map[iv.var.get()] = copy.var;
    wb.iter_vars.push_back(copy);
    wb_values.push_back(realize->iter_values[i]);
  }
  const Expr wb_lhs = Substitute(parts.lhs, wb_map);
  const Expr wb_rhs = Substitute(BufferLoad(rf_buffer, rf_indices), wb_map);
  std::vector<Expr> wb_indices;
  for (const Expr& e : parts.update->indices) wb_indices.push_back(Substitute(e, wb_map));
  wb.body = BufferStore(buffer, parts.reducer.Combine(wb_lhs, wb_rhs), wb_indices);
  wb.init = BufferStore(buffer, parts.reducer.Identity(), wb_indices);
  wb.reads.push_back(PointRegion(wb_rhs.as<BufferLoadNode>()));
  wb.writes.push_back(PointRegion(wb_lhs.as<BufferLoadNode>()));
  // The write-back keeps the spatial loops and the rfactor loop; conditions
  // on those still select which outputs exist, the rest are dropped with the
  // loops they test.
  std::unordered_set<const VarNode*> removed;
  for (const ForNode* loop : loops) {
    const VarNode* v = loop->loop_var.get();
    if (v != rf_var && reduce_loop_vars.count(v)) removed.insert(v);
  }
  auto uses_removed = [&](const VarNode* v) { return removed.count(v) > 0; };
  std::vector<Expr> wb_conditions;
  for (const Expr& c : SplitConjuncts(realize->predicate)) {
    if (!UsesVar(c, uses_removed)) wb_conditions.push_back(c);
  }
  auto wb_realize = MakeNode<BlockRealizeNode>();
  wb_realize->iter_values = std::move(wb_values);
  wb_realize->predicate = JoinConjuncts(wb_conditions);
  wb_realize->block = MakeBlock(std::move(wb));

  // Step 8. Rebuild from the outermost loop down: the removed loops go, the
  // rfactor nest comes first, and the scope block allocates the new buffer.
  Stmt rebuilt = Stmt(std::move(wb_realize));
  for (size_t i = path.size() - 1; i-- > outer_at;) {
    const Stmt& s = path[i];
    if (const auto* loop = s.as<ForNode>()) {
      if (removed.count(loop->loop_var.get())) continue;
      auto n = MakeNode<ForNode>(*loop);
      n->body = rebuilt;
      rebuilt = Stmt(std::move(n));
    } else {
      const auto* seq = s.as<SeqStmtNode>();
      std::vector<Stmt> items;
      for (const Stmt& c : seq->seq) items.push_back(c.same_as(path[i + 1]) ? rebuilt : c);
      rebuilt = SeqStmt(std::move(items));
    }
  }
  const int scope = ScopeIndex(path);
  const StmtPath in_scope(path.begin() + scope,
                          path.begin() + static_cast<std::ptrdiff_t>(outer_at) + 1);
  Stmt scope_realize = ReplaceAlongPath(in_scope, SeqStmt({rf_nest, rebuilt}));
  const auto* sr = scope_realize.as<BlockRealizeNode>();
  BlockNode scope_block = *sr->block.get();
  scope_block.alloc_buffers.push_back(rf_buffer);
  auto new_scope = MakeNode<BlockRealizeNode>(*sr);
  new_scope->block = MakeBlock(std::move(scope_block));
  const StmtPath to_scope(path.begin(), path.begin() + scope + 1);
  SetBody(ReplaceAlongPath(to_scope, Stmt(std::move(new_scope))));

  BlockRV out = NewBlockRV(rf_name);
  Record(instruction_kinds::RFactor().name, {InstArg::Of(loop_rv.ref())},
         nlohmann::json::array({factor_axis}), {out.ref()});
  return out;
}

namespace instruction_kinds {

const InstructionKind& RFactor() {
  static const InstructionKind k = kind_definition::DefineKind(
      "RFactor", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        a.ExpectAttrs(1);
        const int64_t axis = a.AttrInt(0);
        if (axis < std::numeric_limits<int>::min() || axis > std::numeric_limits<int>::max()) {
          a.Fail("factor_axis " + std::to_string(axis) + " does not fit an int");
        }
        return {sch.RFactor(a.Loop(0), static_cast<int>(axis)).ref()};
      },
      [](kind_definition::PyCall& py) {
        py.Arg("loop", py.in[0]).Arg("factor_axis", py.attrs[0].dump());
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
