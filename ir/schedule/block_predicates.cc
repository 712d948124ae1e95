// ir/schedule/analysis.h, predicates: bindings (affine, trivial), block
// kinds (data-parallel, dominant, complete, reduction) and loop chains.
#include "ir/schedule/analysis.h"

#include <algorithm>
#include <unordered_set>

#include "ir/arith/analyzer.h"
#include "ir/arith/iter_map.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/schedule/analysis_internal.h"
#include "ir/substitute.h"
#include "ir/text/printer.h"

namespace kiln::ir {

using analysis_internal::SetWhy;
using analysis_internal::Touches;

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

}  // namespace kiln::ir
