// blockize: wrap the loops under a loop, and the one block they hold, into a
// new outer block "<block>_o", as TVM's blockize does (the step before
// tensorize).
//
// The inner block's bindings are divided (arith::SubspaceDivide) into a part
// over the loops outside `loop`, which become the outer block's iterators
// v_o, and a part over `loop` and the loops below it. Unlike TVM, which gives
// the inner block fresh iterators v_i and rewrites its body with
// v = v_o * extent + v_i, Kiln keeps the inner block's iterators and body and
// binds v = v_o * extent + (inner part): a block may only read its own
// iterators, so the outer values must come in through bindings. The regions,
// the init (moved to the outer block as a "<block>_init" block) and the
// iterator kinds follow TVM.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "ir/arith/int_set.h"
#include "ir/arith/iter_map.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/printer.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

constexpr const char* kPrim = "blockize";

// Substitutes variables and simplifies the integer expressions that changed.
class SimplifyingSubstituter : public IRMutator {
 public:
  SimplifyingSubstituter(const VarMap& map, arith::Analyzer* an) : map_(map), an_(an) {}

  Expr VisitExpr(const Expr& e) override {
    Expr r = IRMutator::VisitExpr(e);
    if (!r.same_as(e) && r.dtype().is_integer() && r.dtype().is_scalar()) return an_->Simplify(r);
    return r;
  }

 protected:
  Expr VisitVar(const Expr& e, const VarNode* v) override {
    auto it = map_.find(v);
    return it == map_.end() ? e : it->second;
  }

 private:
  const VarMap& map_;
  arith::Analyzer* an_;
};

bool UsesAny(const Expr& e, const std::unordered_set<const VarNode*>& vars) {
  return UsesVar(e, [&](const VarNode* v) { return vars.count(v) > 0; });
}

bool IsTrue(const Expr& e) { return !e.defined() || IsConstInt(e, 1); }

// One iterator's division: v = outer * inner_extent + inner + base, the
// outer and inner parts ranging over their domains.
struct IterDivision {
  Expr outer, inner, base;
  Range outer_dom, inner_dom;
};

Range FromZero(int64_t extent, DataType t) { return Range{IntImm(0, t), IntImm(extent, t)}; }

// The regions `regions` touch when the variables in dom range over it.
std::vector<BufferRegion> Relax(const std::vector<BufferRegion>& regions,
                                const arith::IntSetMap& dom, arith::Analyzer* an) {
  std::vector<BufferRegion> out;
  for (const BufferRegion& r : regions) {
    BufferRegion nr{r.buffer, {}};
    for (size_t k = 0; k < r.region.size(); ++k) {
      const Range& rg = r.region[k];
      arith::IntervalSet lo = arith::EvalSet(rg.min, dom, an);
      arith::IntervalSet hi = arith::EvalSet(an->Simplify(rg.min + rg.extent - 1), dom, an);
      if (!lo.has_lower_bound() || !hi.has_upper_bound()) {
        nr.region.push_back(Range{IntImm(0, r.buffer.shape()[k].dtype()), r.buffer.shape()[k]});
        continue;
      }
      nr.region.push_back(Range{lo.min, an->Simplify(hi.max - lo.min + 1)});
    }
    out.push_back(std::move(nr));
  }
  return out;
}

}  // namespace

BlockRV Schedule::Blockize(LoopRV loop_rv, bool preserve_unit_iters) {
  StmtPath path = PathOf(loop_rv);
  const std::string loop_name = NameOf(loop_rv);

  // The subtree must be a chain of loops over exactly one block.
  std::vector<const ForNode*> chain;  // `loop` first, innermost last
  StmtPath block_path = path;
  Stmt cur = path.back();
  while (const auto* f = cur.as<ForNode>()) {
    chain.push_back(f);
    cur = f->body;
    if (cur.as<ForNode>() || cur.as<BlockRealizeNode>()) block_path.push_back(cur);
  }
  const auto* realize = cur.as<BlockRealizeNode>();
  if (realize == nullptr) {
    size_t blocks = ChildBlockRealizes(path.back()).size();
    throw ScheduleError(kPrim, "the loops under " + loop_name +
                                   " are not a single chain of loops over one block (it holds " +
                                   std::to_string(blocks) + " blocks" +
                                   (blocks == 1 ? " beside other statements" : "") + ")");
  }
  const BlockNode& block = *realize->block.get();
  const std::string outer_name = block.name + "_o";
  const std::string init_name = block.name + "_init";
  if (HasBlock(outer_name)) {
    throw ScheduleError(kPrim, "a block named " + outer_name + " already exists, so block " +
                                   block.name + " cannot be blockized");
  }
  if (block.init && HasBlock(init_name)) {
    throw ScheduleError(kPrim, "a block named " + init_name + " already exists, so block " +
                                   block.name + " cannot be blockized");
  }

  // Loops of the block's scope: those above `loop` are outer, the rest inner.
  std::vector<const ForNode*> all_loops = LoopsAbove(block_path);
  std::vector<std::pair<Var, Range>> iters;
  std::vector<Var> inner_vars;
  std::unordered_set<const VarNode*> inner_set, outer_set;
  bool inner = false;
  for (const ForNode* l : all_loops) {
    if (l == chain.front()) inner = true;
    iters.emplace_back(l->loop_var, Range{l->min, l->extent});
    if (inner) {
      inner_vars.push_back(l->loop_var);
      inner_set.insert(l->loop_var.get());
    } else {
      outer_set.insert(l->loop_var.get());
    }
  }

  Expr predicate = IsTrue(realize->predicate) ? Expr() : realize->predicate;
  Expr outer_pred, inner_pred;
  if (predicate.defined()) {
    bool uses_outer = UsesAny(predicate, outer_set), uses_inner = UsesAny(predicate, inner_set);
    if (uses_outer && uses_inner) {
      throw ScheduleError(kPrim, "the predicate " + ToText(predicate) + " of block " + block.name +
                                     " mixes loops outside and inside " + loop_name +
                                     ", so it cannot be split between the outer and inner block");
    }
    (uses_inner ? inner_pred : outer_pred) = predicate;
  }

  arith::Analyzer an;
  std::vector<IterDivision> division;
  arith::SubspaceDivision sd = arith::SubspaceDivide(
      realize->iter_values, iters, inner_vars, predicate.defined() ? predicate : BoolImm(true),
      arith::IterMapLevel::kSurjective, &an);
  if (sd.ok()) {
    for (size_t i = 0; i < sd.indices.size(); ++i) {
      const arith::DividedIndex& d = sd.indices[i];
      DataType t = block.iter_vars[i].var.dtype();
      Expr outer = d.outer;
      // The division drops unit loops; a binding that is such a loop keeps
      // it when unit iterators are preserved, as in TVM.
      const auto* v = realize->iter_values[i].as<VarNode>();
      if (preserve_unit_iters && d.outer_extent == 1 && v != nullptr && outer_set.count(v)) {
        outer = realize->iter_values[i];
      }
      division.push_back(
          {outer, d.inner, d.base, FromZero(d.outer_extent, t), FromZero(d.inner_extent, t)});
    }
  } else {
    // Bindings that are not affine still divide when each uses only outer or
    // only inner loops (TVM's trivial subspace division).
    for (size_t i = 0; i < realize->iter_values.size(); ++i) {
      const Expr& b = realize->iter_values[i];
      const IterVar& iv = block.iter_vars[i];
      DataType t = iv.var.dtype();
      bool uses_inner = UsesAny(b, inner_set);
      if (uses_inner && UsesAny(b, outer_set)) {
        throw ScheduleError(kPrim, "the bindings of block " + block.name +
                                       " cannot be divided at loop " + loop_name + ": " +
                                       sd.errors.front());
      }
      IterDivision d{IntImm(0, t), IntImm(0, t), IntImm(0, t), FromZero(1, t), FromZero(1, t)};
      (uses_inner ? d.inner : d.outer) = b;
      (uses_inner ? d.inner_dom : d.outer_dom) = iv.dom;
      division.push_back(d);
    }
  }

  // The outer block's iterators and bindings, and the inner block's new
  // bindings: v = v_o * inner_extent + (inner part) + base. The inner block
  // keeps its iterators and body, and receives the outer values through its
  // bindings (a block sees only its own iterators).
  std::vector<IterVar> outer_iters;
  std::vector<Expr> outer_bindings, inner_bindings;
  // For the outer block's regions: v in terms of v_o and a stand-in for the
  // inner part ranging over its domain.
  VarMap relax_subst;
  arith::IntSetMap inner_dom;
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    const IterVar& iv = block.iter_vars[i];
    const IterDivision& d = division[i];
    DataType t = iv.var.dtype();
    IterVar o{Var(iv.var.name() + "_o", t), d.outer_dom, iv.iter_type};
    outer_iters.push_back(o);
    outer_bindings.push_back(d.outer);
    bool unit_outer = IsConstInt(d.outer_dom.extent, 1);
    Expr binding, relaxed;
    if (IsConstInt(d.inner_dom.extent, 1)) {
      binding = unit_outer && !preserve_unit_iters ? IntImm(0, t) : Expr(o.var);
      relaxed = binding;
    } else {
      Var part(iv.var.name() + "_i", t);
      inner_dom[part.get()] = arith::IntervalSet::FromRange(d.inner_dom, &an);
      binding = unit_outer ? d.inner : o.var * d.inner_dom.extent + d.inner;
      relaxed = unit_outer ? Expr(part) : o.var * d.inner_dom.extent + part;
    }
    if (!IsConstInt(d.base, 0)) {
      binding = binding + d.base;
      relaxed = relaxed + d.base;
    }
    inner_bindings.push_back(binding);
    relax_subst[iv.var.get()] = relaxed;
  }

  // The inner block: no init (it moves to the outer block); if a reduction
  // iterator went outside, it also reads what it writes.
  bool outer_reduction =
      block.init && std::any_of(outer_iters.begin(), outer_iters.end(), [](const IterVar& v) {
        return v.iter_type == IterType::kCommReduce;
      });
  BlockNode inner_node = block;
  inner_node.init.reset();
  if (outer_reduction) {
    inner_node.reads = block.writes;
    inner_node.reads.insert(inner_node.reads.end(), block.reads.begin(), block.reads.end());
  }
  Expr inner_predicate = inner_pred.defined() ? inner_pred : BoolImm(true);
  Stmt inner_realize =
      BlockRealize(inner_bindings, inner_predicate, MakeBlock(std::move(inner_node)));
  Stmt outer_body = inner_realize;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const ForNode* l = *it;
    outer_body =
        For(l->loop_var, l->min, l->extent, l->for_kind, outer_body, l->thread_tag, l->annotations);
  }

  auto substitute_regions = [&](const std::vector<BufferRegion>& regions) {
    std::vector<BufferRegion> out;
    SimplifyingSubstituter sub(relax_subst, &an);
    for (const BufferRegion& r : regions) {
      BufferRegion nr{r.buffer, {}};
      for (const Range& rg : r.region)
        nr.region.push_back({sub.VisitExpr(rg.min), sub.VisitExpr(rg.extent)});
      out.push_back(std::move(nr));
    }
    return Relax(out, inner_dom, &an);
  };
  BlockNode outer_node;
  outer_node.name = outer_name;
  outer_node.iter_vars = outer_iters;
  outer_node.reads = substitute_regions(block.reads);
  outer_node.writes = substitute_regions(block.writes);
  outer_node.body = outer_body;
  if (block.init) {
    // The init runs over the spatial iterators it uses, bound as the inner
    // block binds them, under fresh copies of the loops those bindings use.
    VarMap init_subst;
    BlockNode init_node;
    init_node.name = init_name;
    std::vector<Expr> init_bindings;
    for (size_t i = 0; i < block.iter_vars.size(); ++i) {
      const IterVar& iv = block.iter_vars[i];
      if (iv.iter_type != IterType::kDataPar) continue;
      if (!UsesVar(*block.init, [&](const VarNode* v) { return v == iv.var.get(); })) continue;
      IterVar copy{Var(iv.var.name() + "_init", iv.var.dtype()), iv.dom, iv.iter_type};
      init_subst[iv.var.get()] = copy.var;
      init_node.iter_vars.push_back(copy);
      init_bindings.push_back(inner_bindings[i]);
    }
    init_node.writes = block.writes;
    init_node.body = *block.init;
    Stmt init = BlockRealize(init_bindings, inner_predicate, MakeBlock(std::move(init_node)));
    std::vector<const ForNode*> init_loops;
    for (const ForNode* l : chain) {
      auto uses_loop = [&](const Expr& e) {
        return UsesVar(e, [&](const VarNode* v) { return v == l->loop_var.get(); });
      };
      if (std::none_of(init_bindings.begin(), init_bindings.end(), uses_loop) &&
          !uses_loop(inner_predicate)) {
        continue;
      }
      init_loops.push_back(l);
      init_subst[l->loop_var.get()] = Var(l->loop_var.name(), l->loop_var.dtype());
    }
    init = Substitute(init, init_subst);
    for (auto it = init_loops.rbegin(); it != init_loops.rend(); ++it) {
      const ForNode* l = *it;
      Var fresh(std::static_pointer_cast<const VarNode>(init_subst.at(l->loop_var.get()).node()));
      init = For(fresh, l->min, l->extent, l->for_kind, init, l->thread_tag, l->annotations);
    }
    outer_node.init = init;
  }
  Stmt outer_realize =
      BlockRealize(outer_bindings, outer_pred.defined() ? outer_pred : BoolImm(true),
                   MakeBlock(std::move(outer_node)));
  SetBody(ReplaceAlongPath(path, outer_realize));

  BlockRV out = NewBlockRV(outer_name);
  Record(instruction_kinds::Blockize().name, {InstArg::Of(loop_rv.ref())},
         nlohmann::json::array({preserve_unit_iters ? 1 : 0}), {out.ref()});
  return out;
}

namespace instruction_kinds {

const InstructionKind& Blockize() {
  static const InstructionKind k = kind_definition::DefineKind(
      "Blockize", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        a.ExpectAttrs(1);
        if (a.inputs()[0].kind == InstArg::Kind::kList) {
          a.Fail("blockize of a list of blocks is not supported; pass a loop");
        }
        return {sch.Blockize(a.Loop(0), a.AttrBool(0)).ref()};
      },
      [](kind_definition::PyCall& py) {
        const nlohmann::json& p = py.attrs[0];
        bool preserve = p.is_boolean() ? p.get<bool>() : p.get<int64_t>() != 0;
        py.Arg("target", py.in[0]).Arg("preserve_unit_iters", kind_definition::PyBool(preserve));
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
