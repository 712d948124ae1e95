// BlocksToLoops: the block form becomes plain loops. A block's semantics
// (bindings, predicate, init on the first reduction step) are spelled out
// with substitution and IfThenElse; what is left of a block is, at most, the
// allocation scope it opened.
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/substitute.h"
#include "ir/transform/alloc_dim_align.h"
#include "ir/transform/passes.h"

namespace kiln::ir::transform {
namespace {

bool IsTrueConst(const Expr& e) { return !e.defined() || IsConstInt(e, 1); }

class Converter : public IRMutator {
 protected:
  Stmt VisitBlockRealize(const Stmt& s, const BlockRealizeNode* op) override {
    (void)s;
    const BlockNode& b = *op->block.get();
    Stmt body = VisitStmt(b.body);
    if (b.init) {
      // Like TVM's LowerInitBlock: the init runs in the iteration where every
      // reduction iterator is at the start of its domain.
      Expr cond;
      for (const auto& iv : b.iter_vars) {
        if (iv.iter_type != IterType::kCommReduce) continue;
        Expr c = EQ(iv.var, iv.dom.min);
        cond = cond.defined() ? And(cond, c) : c;
      }
      Stmt init = VisitStmt(*b.init);
      body = SeqStmt({cond.defined() ? IfThenElseStmt(cond, init) : init, body});
    }
    if (b.iter_vars.size() != op->iter_values.size()) {
      throw IRError("blocks_to_loops: block '" + b.name + "' has " +
                    std::to_string(b.iter_vars.size()) + " iteration variables but " +
                    std::to_string(op->iter_values.size()) + " bindings");
    }
    VarMap map;
    for (size_t i = 0; i < b.iter_vars.size(); ++i) {
      map[b.iter_vars[i].var.get()] = op->iter_values[i];
    }
    if (!map.empty()) body = Substitute(body, map);
    if (!b.alloc_buffers.empty()) {
      BlockNode scope;
      scope.name = b.name;
      scope.body = body;
      scope.alloc_buffers = b.alloc_buffers;
      auto it = b.annotations.find(kAllocDimAlign);
      if (it != b.annotations.end()) scope.annotations[kAllocDimAlign] = it->second;
      body = BlockRealize({}, BoolImm(true), MakeBlock(std::move(scope)));
    }
    if (!IsTrueConst(op->predicate)) {
      Expr pred = map.empty() ? op->predicate : Substitute(op->predicate, map);
      body = IfThenElseStmt(pred, body);
    }
    return body;
  }
};

}  // namespace

PrimFunc BlocksToLoops(const PrimFunc& func) {
  const auto* root = func.body.as<BlockRealizeNode>();
  if (root == nullptr || !root->block.defined()) {
    throw IRError("blocks_to_loops: the body of function '" + func.name +
                  "' is not a root block");
  }
  BlockNode b = *root->block.get();
  Converter conv;
  b.body = conv.VisitStmt(b.body);
  if (b.init) throw IRError("blocks_to_loops: the root block of '" + func.name + "' has an init");
  b.reads.clear();
  b.writes.clear();
  PrimFunc out = func;
  out.body = BlockRealize({}, BoolImm(true), MakeBlock(std::move(b)));
  return out;
}

}  // namespace kiln::ir::transform
