#include "ir/tensor_intrin/tensor_intrin_match.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/arith/analyzer.h"
#include "ir/op.h"
#include "ir/substitute.h"
#include "ir/text/printer.h"

namespace kiln::ir {

namespace {

struct Mismatch {
  std::string why;
};

[[noreturn]] void Fail(const std::string& why) { throw Mismatch{why}; }

bool IsTrue(const Expr& e) { return !e.defined() || IsConstInt(e, 1); }

// A loop nest over one block: the loops (outermost first) and the block.
struct Nest {
  std::vector<const ForNode*> loops;
  const BlockRealizeNode* realize = nullptr;
};

Nest Peel(const Stmt& body, const std::string& what) {
  Nest n;
  Stmt cur = body;
  while (const auto* f = cur.as<ForNode>()) {
    n.loops.push_back(f);
    cur = f->body;
  }
  n.realize = cur.as<BlockRealizeNode>();
  if (n.realize == nullptr) Fail(what + " is not a chain of loops over a single block");
  return n;
}

class Matcher {
 public:
  Matcher(const BlockRealizeNode& outer, const TensorIntrin& intrin)
      : outer_(*outer.block.get()), intrin_(intrin) {}

  TensorIntrinMatch Run() {
    const std::string bname = "block '" + outer_.name + "'";
    if (outer_.init) {
      Fail(bname + " has an init; decompose the reduction first and tensorize the init block "
                   "and the update separately");
    }
    Nest t = Peel(outer_.body, "the body of " + bname);
    const BlockNode& tb = *t.realize->block.get();
    if (!IsTrue(t.realize->predicate)) {
      Fail("inner block '" + tb.name + "' has the predicate " + ToText(t.realize->predicate) +
           " (an imperfect tile)");
    }
    if (tb.init) Fail("inner block '" + tb.name + "' has an init");
    Nest d = Peel(intrin_.desc.root_block().body, "the description");
    const BlockNode& db = *d.realize->block.get();

    // Pair the non-unit loops; unit loops sit at their minimum.
    std::vector<const ForNode*> tl;
    for (const ForNode* f : t.loops) {
      int64_t e = 0;
      if (!AsConstInt(f->extent, &e)) {
        Fail("loop " + f->loop_var.name() + " in " + bname + " has the non-constant extent " +
             ToText(f->extent));
      }
      if (f->for_kind == ForKind::kThreadBinding) {
        Fail("loop " + f->loop_var.name() + " in " + bname + " is bound to " + f->thread_tag);
      }
      if (e == 1) {
        tsub_[f->loop_var.get()] = f->min;
      } else {
        tl.push_back(f);
      }
    }
    if (tl.size() != d.loops.size()) {
      Fail(bname + " has " + std::to_string(tl.size()) + " non-unit loops, the intrinsic " +
           std::to_string(d.loops.size()));
    }
    for (size_t a = 0; a < tl.size(); ++a) {
      int64_t te = 0, de = 0;
      AsConstInt(tl[a]->extent, &te);
      AsConstInt(d.loops[a]->extent, &de);
      if (te != de || !IsConstInt(tl[a]->min, 0)) {
        Fail("loop " + tl[a]->loop_var.name() + " of " + bname + " runs " +
             ToText(tl[a]->min) + ".." + std::to_string(te) + " times where the intrinsic's loop " +
             d.loops[a]->loop_var.name() + " has extent " + std::to_string(de));
      }
      loop_vars_.insert(tl[a]->loop_var.get());
      dsub_[d.loops[a]->loop_var.get()] = tl[a]->loop_var;
    }
    // Bindings: each side's iterators in terms of the shared loop variables.
    for (size_t i = 0; i < tb.iter_vars.size(); ++i) {
      tsub_[tb.iter_vars[i].var.get()] = Substitute(t.realize->iter_values[i], tsub_);
    }
    for (size_t i = 0; i < db.iter_vars.size(); ++i) {
      dsub_[db.iter_vars[i].var.get()] = Substitute(d.realize->iter_values[i], dsub_);
    }
    CheckIterKinds(tl, tb, db);

    operands_.resize(intrin_.desc.params.size());
    MatchStmt(tb.body, db.body);
    TensorIntrinMatch m;
    for (size_t p = 0; p < operands_.size(); ++p) {
      if (!operands_[p].buffer.defined()) {
        Fail("the intrinsic's operand " + intrin_.desc.params[p].name() + " has no counterpart in " +
             bname);
      }
      m.operands.push_back(operands_[p]);
    }
    return m;
  }

 private:
  // Each paired loop must drive iterators of the kind the intrinsic's loop
  // drives: a spatial loop of the description cannot stand for a reduction.
  void CheckIterKinds(const std::vector<const ForNode*>& tl, const BlockNode& tb, const BlockNode& db) {
    for (size_t a = 0; a < tl.size(); ++a) {
      auto kinds_of = [](const BlockNode& b, const std::vector<Expr>& bindings, const VarNode* v) {
        std::unordered_set<int> kinds;
        for (size_t i = 0; i < b.iter_vars.size(); ++i) {
          if (UsesVar(bindings[i], [&](const VarNode* x) { return x == v; })) {
            kinds.insert(static_cast<int>(b.iter_vars[i].iter_type));
          }
        }
        return kinds;
      };
      std::vector<Expr> tbind, dbind;
      for (const auto& iv : tb.iter_vars) tbind.push_back(tsub_.at(iv.var.get()));
      for (const auto& iv : db.iter_vars) dbind.push_back(dsub_.at(iv.var.get()));
      auto tk = kinds_of(tb, tbind, tl[a]->loop_var.get());
      auto dk = kinds_of(db, dbind, tl[a]->loop_var.get());
      if (tk != dk) {
        Fail("loop " + tl[a]->loop_var.name() + " drives " + (tk.empty() ? "no" : KindText(tk)) +
             " iterators of block '" + tb.name + "' where the intrinsic's loop drives " +
             KindText(dk) + " ones");
      }
    }
  }

  static std::string KindText(const std::unordered_set<int>& k) {
    std::string s;
    if (k.count(static_cast<int>(IterType::kDataPar))) s += "spatial";
    if (k.count(static_cast<int>(IterType::kCommReduce))) s += s.empty() ? "reduction" : "+reduction";
    if (s.empty()) s = "other";
    return s;
  }

  bool UsesLoops(const Expr& e) const {
    return UsesVar(e, [&](const VarNode* v) { return loop_vars_.count(v) > 0; });
  }

  void MatchStmt(const Stmt& t, const Stmt& d) {
    const auto* ts = t.as<BufferStoreNode>();
    const auto* ds = d.as<BufferStoreNode>();
    if (ts == nullptr || ds == nullptr) {
      Fail("the inner block's body is not a single buffer store as the intrinsic's is");
    }
    MatchAccess(ts->buffer, ts->indices, ds->buffer, ds->indices);
    MatchExpr(ts->value, ds->value);
  }

  void MatchAccess(const Buffer& tb, const std::vector<Expr>& ti, const Buffer& db,
                   const std::vector<Expr>& di) {
    size_t p = 0;
    while (p < intrin_.desc.params.size() && !intrin_.desc.params[p].same_as(db)) ++p;
    if (p == intrin_.desc.params.size()) Fail("the description accesses a non-parameter buffer");
    const std::string opname = "operand " + db.name();
    if (tb.dtype() != db.dtype()) {
      Fail("buffer " + tb.name() + " is " + tb.dtype().str() + " where the intrinsic's " + opname +
           " is " + db.dtype().str());
    }
    if (tb.scope() != db.scope()) {
      Fail("buffer " + tb.name() + " is in scope \"" + tb.scope() + "\" where the intrinsic's " +
           opname + " needs \"" + db.scope() + "\"");
    }
    if (tb.ndim() < db.ndim()) {
      Fail("buffer " + tb.name() + " has " + std::to_string(tb.ndim()) +
           " dimensions, fewer than the intrinsic's " + opname);
    }
    TensorIntrinOperand& op = operands_[p];
    if (op.buffer.defined() && !op.buffer.same_as(tb)) {
      Fail("the intrinsic's " + opname + " stands for both " + op.buffer.name() + " and " +
           tb.name());
    }
    for (size_t q = 0; q < operands_.size(); ++q) {
      if (q != p && operands_[q].buffer.same_as(tb)) {
        Fail("buffer " + tb.name() + " stands for two operands of the intrinsic");
      }
    }
    std::string access = tb.name() + "[";
    for (size_t k = 0; k < ti.size(); ++k) access += (k ? ", " : "") + ToText(ti[k]);
    access += "]";
    std::vector<Expr> origin;
    std::vector<int64_t> extent;
    const size_t lead = tb.ndim() - db.ndim();
    for (size_t k = 0; k < tb.ndim(); ++k) {
      Expr tk = an_.Simplify(Substitute(ti[k], tsub_));
      Expr off = tk;
      int64_t ext = 1;
      if (k >= lead) {
        off = an_.Simplify(Sub(tk, Substitute(di[k - lead], dsub_)));
        AsConstInt(db.shape()[k - lead], &ext);
      }
      if (UsesLoops(off)) {
        Fail("the index pattern of " + access + " does not match the intrinsic's " + opname +
             " (dimension " + std::to_string(k) + " is " + ToText(tk) +
             (k >= lead ? ", not the operand's index plus an offset"
                        : ", which moves with the tile's loops") +
             ")");
      }
      origin.push_back(off);
      extent.push_back(ext);
    }
    if (op.buffer.defined()) {
      for (size_t k = 0; k < origin.size(); ++k) {
        if (!an_.CanProveEqual(origin[k], op.origin[k])) {
          Fail("buffer " + tb.name() + " is accessed at two different tiles (" +
               ToText(origin[k]) + " and " + ToText(op.origin[k]) + " in dimension " +
               std::to_string(k) + ")");
        }
      }
      return;
    }
    op = {tb, origin, extent};
  }

  void MatchExpr(const Expr& t, const Expr& d) {
    auto differ = [&](const std::string& what) {
      Fail("the inner block computes " + ToText(t) + " where the intrinsic computes " + ToText(d) +
           " (" + what + ")");
    };
    if (t.kind() != d.kind()) differ("different operations");
    if (t.dtype() != d.dtype()) differ(t.dtype().str() + " vs " + d.dtype().str());
    switch (t.kind()) {
      case ExprKind::kIntImm:
        if (t.as<IntImmNode>()->value != d.as<IntImmNode>()->value) differ("different constants");
        return;
      case ExprKind::kFloatImm:
        if (t.as<FloatImmNode>()->value != d.as<FloatImmNode>()->value) {
          differ("different constants");
        }
        return;
      case ExprKind::kBufferLoad: {
        const auto* tl = t.as<BufferLoadNode>();
        const auto* dl = d.as<BufferLoadNode>();
        MatchAccess(tl->buffer, tl->indices, dl->buffer, dl->indices);
        return;
      }
      case ExprKind::kCast:
        MatchExpr(t.as<CastNode>()->value, d.as<CastNode>()->value);
        return;
      case ExprKind::kNot:
        MatchExpr(t.as<NotNode>()->a, d.as<NotNode>()->a);
        return;
      case ExprKind::kSelect: {
        const auto* ts = t.as<SelectNode>();
        const auto* ds = d.as<SelectNode>();
        MatchExpr(ts->condition, ds->condition);
        MatchExpr(ts->true_value, ds->true_value);
        MatchExpr(ts->false_value, ds->false_value);
        return;
      }
      case ExprKind::kCall: {
        const auto* tc = t.as<CallNode>();
        const auto* dc = d.as<CallNode>();
        if (tc->op != dc->op || tc->args.size() != dc->args.size()) differ("different calls");
        for (size_t i = 0; i < tc->args.size(); ++i) MatchExpr(tc->args[i], dc->args[i]);
        return;
      }
      case ExprKind::kVar:
        if (!an_.CanProveEqual(Substitute(t, tsub_), Substitute(d, dsub_))) {
          differ("different variables");
        }
        return;
      default:
        break;
    }
    if (IsBinary(t.kind())) {
      const auto* tb = t.as<BinaryNode>();
      const auto* db = d.as<BinaryNode>();
      MatchExpr(tb->a, db->a);
      MatchExpr(tb->b, db->b);
      return;
    }
    differ("an operation tensorize does not match");
  }

  const BlockNode& outer_;
  const TensorIntrin& intrin_;
  arith::Analyzer an_;
  VarMap tsub_, dsub_;
  std::unordered_set<const VarNode*> loop_vars_;
  std::vector<TensorIntrinOperand> operands_;
};

}  // namespace

std::optional<TensorIntrinMatch> MatchTensorIntrin(const BlockRealizeNode& outer,
                                                   const TensorIntrin& intrin, std::string* why) {
  try {
    return Matcher(outer, intrin).Run();
  } catch (const Mismatch& m) {
    if (why != nullptr) *why = m.why;
    return std::nullopt;
  }
}

}  // namespace kiln::ir
