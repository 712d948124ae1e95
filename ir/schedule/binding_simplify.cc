// ir/schedule/analysis.h, rewriting: block bindings and predicates
// simplified after loop primitives substituted loop variables.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/arith/analyzer.h"
#include "ir/arith/iter_map.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/analysis_internal.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"

namespace kiln::ir {

using analysis_internal::SetWhy;
using analysis_internal::Touches;

// ---- Rewriting --------------------------------------------------------------------

namespace {

class BindingSimplifier : public IRMutator {
 public:
  BindingSimplifier(const std::vector<std::pair<Var, Range>>& outer, bool preserve_unit_iters,
                    std::vector<std::string>* affine_blocks)
      : preserve_(preserve_unit_iters), affine_blocks_(affine_blocks) {
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
    bool affine = false;
    std::vector<Expr> values = SimplifyValues(r->iter_values, pred, &affine);
    if (affine && affine_blocks_ != nullptr) affine_blocks_->push_back(r->block->name);
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
  // `affine` is set when the iteration map was built and passes
  // IsAffineBinding's test (every index a single iterator of stride 1): the
  // new bindings are an exact rewrite of the same map.
  std::vector<Expr> SimplifyValues(const std::vector<Expr>& values, const Expr& pred,
                                   bool* affine) {
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
      *affine = map.ok() && std::all_of(map.indices.begin(), map.indices.end(), [](const auto& m) {
                  return m.args.empty() || m.args[0].scale == 1;
                });
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
  std::vector<std::string>* affine_blocks_;
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
                           bool preserve_unit_iters, std::vector<std::string>* affine_blocks) {
  BindingSimplifier simplifier(outer_loops, preserve_unit_iters, affine_blocks);
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
