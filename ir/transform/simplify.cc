// Simplify: index arithmetic left by substitution, compaction and flattening
// ((i*4 + j) - i*4, floordiv of fused loops, ...) is folded by the arith
// Analyzer, with every loop variable bound to its range and every if
// condition assumed inside its then branch.
#include "ir/arith/analyzer.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/transform/passes.h"

namespace kiln::ir::transform {
namespace {

bool IsNoOp(const Stmt& s) {
  const auto* e = s.as<EvaluateNode>();
  return e != nullptr && e->value.as<IntImmNode>() != nullptr;
}

class Simplifier : public IRMutator {
 public:
  // A scalar integer expression is simplified once, at its top: the
  // Analyzer simplifies the operands of arithmetic, comparisons and logic
  // itself (ir/arith/simplifier.cc), so simplifying each of them first, as
  // the walk goes up, did the same work again at every level. Below any
  // other node (a load, a call, a cast, a select) the walk starts afresh:
  // integer expressions there are simplified at their own tops.
  Expr VisitExpr(const Expr& e) override {
    if (!e.defined()) return e;
    DataType t = e.dtype();
    const bool integer = t.lanes() == 1 && (t.is_int() || t.is_uint() || t.is_bool());
    const bool top = integer && !under_arith_;
    const bool saved = under_arith_;
    under_arith_ = integer && (e.as<BinaryNode>() != nullptr || e.as<NotNode>() != nullptr);
    Expr out = IRMutator::VisitExpr(e);
    under_arith_ = saved;
    return top ? an_.Simplify(out) : out;
  }

 protected:
  Stmt VisitFor(const Stmt& s, const ForNode* op) override {
    (void)s;
    Expr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
    int64_t n = 0;
    if (AsConstInt(extent, &n) && n <= 0) return Evaluate(IntImm(0));
    if (n == 1 && op->annotations.empty() && op->for_kind != ForKind::kThreadBinding) {
      // A unit loop runs its body once with the variable at its start.
      an_.Bind(op->loop_var, min);
      return VisitStmt(op->body);
    }
    an_.Bind(op->loop_var, Range{min, extent});
    Stmt body = VisitStmt(op->body);
    auto f = std::make_shared<ForNode>(*op);
    f->min = min;
    f->extent = extent;
    f->body = body;
    return Stmt(std::move(f));
  }
  Stmt VisitSeqStmt(const Stmt& s, const SeqStmtNode* op) override {
    (void)s;
    std::vector<Stmt> seq;
    for (const auto& x : op->seq) {
      Stmt y = VisitStmt(x);
      if (!IsNoOp(y)) seq.push_back(y);
    }
    return seq.empty() ? Evaluate(IntImm(0)) : SeqStmt(std::move(seq));
  }
  Stmt VisitIfThenElse(const Stmt& s, const IfThenElseNode* op) override {
    (void)s;
    Expr cond = VisitExpr(op->condition);
    if (IsConstInt(cond, 1)) return VisitStmt(op->then_case);
    if (IsConstInt(cond, 0)) return op->else_case.defined() ? VisitStmt(op->else_case) : Evaluate(IntImm(0));
    Stmt then_case;
    {
      auto scope = an_.EnterConstraint(cond);
      then_case = VisitStmt(op->then_case);
    }
    Stmt else_case;
    if (op->else_case.defined()) {
      auto scope = an_.EnterConstraint(Not(cond));
      else_case = VisitStmt(op->else_case);
    }
    if (else_case.defined() && IsNoOp(else_case)) else_case = Stmt();
    if (IsNoOp(then_case) && !else_case.defined()) return then_case;
    return IfThenElseStmt(cond, then_case, else_case);
  }

 private:
  arith::Analyzer an_;
  bool under_arith_ = false;  // the parent is integer arithmetic, simplified as a whole
};

}  // namespace

PrimFunc Simplify(const PrimFunc& func) {
  PrimFunc out = func;
  out.body = Simplifier().VisitStmt(func.body);
  return out;
}

}  // namespace kiln::ir::transform
