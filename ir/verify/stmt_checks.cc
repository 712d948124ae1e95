#include <algorithm>
#include <utility>

#include "ir/op.h"
#include "ir/substitute.h"
#include "ir/verify/verifier.h"

namespace kiln::ir::verify_internal {

void Verifier::CheckStmt(const Stmt& s, const std::string& what) {
  if (!s.defined()) {
    Report(what + " is null");
    return;
  }
  VisitStmt(s);
}

void Verifier::VisitBufferStore(const BufferStoreNode* op) {
  std::string name = Q(BufName(op->buffer));
  std::string what = "the store to buffer " + name;
  bool declared = UseBuffer(op->buffer, what);
  bool value_ok = false;
  if (!op->value.defined()) {
    Report(what + " has no value (null)");
  } else {
    value_ok = CheckExpr(op->value, "the value stored to buffer " + name);
  }
  bool ok = CheckIndices(op->buffer, op->indices, what);
  if (!declared) return;
  if (value_ok && op->value.dtype().element_of() != op->buffer.dtype()) {
    Report(what + " writes a value of type " + op->value.dtype().str() + " but the buffer holds " +
           op->buffer.dtype().str() + "; cast the value");
  }
  if (value_ok && ok) {
    int lanes = 1;
    for (const auto& i : op->indices) lanes = std::max(lanes, i.dtype().lanes());
    if (op->value.dtype().lanes() != lanes) {
      Report(what + " writes " + std::to_string(op->value.dtype().lanes()) +
             " lane(s) at indices of " + std::to_string(lanes) + " lane(s)");
    }
  }
  if (in_init_ != nullptr) {
    bool listed = std::any_of(in_init_->writes.begin(), in_init_->writes.end(),
                              [&](const BufferRegion& r) { return r.buffer == op->buffer; });
    if (!listed) {
      Report("the init writes buffer " + name +
             ", which is not among the block's writes; add it to T.writes");
      return;
    }
  }
  if (ok) CheckAccess(op->buffer, op->indices, /*is_store=*/true);
}

void Verifier::VisitSeqStmt(const SeqStmtNode* op) {
  if (op->seq.empty()) Report("a statement sequence is empty");
  for (const auto& s : op->seq) CheckStmt(s, "a statement in a sequence");
}

void Verifier::VisitIfThenElse(const IfThenElseNode* op) {
  bool guard = CheckExpr(op->condition, "the condition of an if statement");
  if (guard && !op->condition.dtype().is_bool()) {
    Report("the condition of an if statement has type " + op->condition.dtype().str() +
           "; it must be bool");
    guard = false;
  }
  std::vector<Narrowing> undo;
  if (guard) Narrow(op->condition, /*holds=*/true, &undo);
  CheckStmt(op->then_case, "the then-branch of an if statement");
  Restore(&undo);
  if (op->else_case.defined()) {
    if (guard) Narrow(op->condition, /*holds=*/false, &undo);
    VisitStmt(op->else_case);
    Restore(&undo);
  }
}

void Verifier::VisitEvaluate(const EvaluateNode* op) {
  CheckExpr(op->value, "an evaluate statement");
}

void Verifier::VisitFor(const ForNode* op) {
  std::string name = Q(VarName(op->loop_var));
  std::string loop = "loop " + VarName(op->loop_var);
  where_override_ = loop + " in " + Where();
  DataType vt = op->loop_var.defined() ? op->loop_var.dtype() : DataType::Int32();
  if (!op->loop_var.defined()) {
    Report("the loop has no loop variable (null)");
  } else if (!vt.is_integer() || !vt.is_scalar()) {
    Report("loop variable " + name + " has type " + vt.str() +
           "; loop variables must be scalar integers");
  }
  bool range_ok = true;
  for (auto [e, part] : {std::pair{&op->min, "start"}, std::pair{&op->extent, "extent"}}) {
    std::string what = std::string("the ") + part + " of loop " + name;
    if (!CheckIntExpr(*e, what)) {
      range_ok = false;
    } else if (e->dtype() != vt) {
      Report(what + " has type " + e->dtype().str() + " but the loop variable is " + vt.str());
    }
  }
  int64_t extent = 0;
  bool const_extent = range_ok && AsConstInt(op->extent, &extent);
  if (const_extent && extent <= 0) {
    Report("loop " + name + " has extent " + std::to_string(extent) +
           "; loop extents must be positive");
  }
  if (op->for_kind == ForKind::kVectorized && range_ok && !const_extent) {
    Report("vectorized loop " + name + " has a non-constant extent; vector lanes are fixed");
  }
  bool bound_thread = false;
  if (op->for_kind == ForKind::kThreadBinding) {
    static const std::set<std::string> kTags = {
        "blockIdx.x",  "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y",
        "threadIdx.z", "vthread",    "vthread.x",  "vthread.y",   "vthread.z"};
    if (op->thread_tag.empty()) {
      Report("thread-bound loop " + name + " has no thread tag (e.g. \"threadIdx.x\")");
    } else if (!kTags.count(op->thread_tag)) {
      Report("thread-bound loop " + name + " has unknown thread tag " + Q(op->thread_tag));
    } else if (auto it = active_threads_.find(op->thread_tag); it != active_threads_.end()) {
      // A threadIdx loop inside one with the same axis and extent whose body
      // does not depend on the outer loop names the same threads (a
      // cooperative fetch under a compute's thread loop, as MetaSchedule's
      // GPU schedules make); anything else cannot be launched.
      const ForNode* outer = it->second;
      int64_t outer_extent = 0;
      bool same_extent = op->thread_tag.rfind("threadIdx", 0) == 0 && const_extent &&
                         AsConstInt(outer->extent, &outer_extent) && outer_extent == extent;
      const VarNode* outer_var = outer->loop_var.get();
      if (!same_extent) {
        Report("loop " + name + " binds " + op->thread_tag +
               ", which an enclosing loop already binds" +
               (op->thread_tag.rfind("threadIdx", 0) == 0 ? " with another extent" : ""));
      } else if (UsesVar(op->body, [outer_var](const VarNode* v) { return v == outer_var; })) {
        Report("loop " + name + " binds " + op->thread_tag + " inside loop " +
               outer->loop_var.name() + ", which binds it too, and uses that loop's variable");
      }
    } else {
      active_threads_[op->thread_tag] = op;
      bound_thread = true;
    }
  } else if (!op->thread_tag.empty()) {
    Report("loop " + name + " is " + ForKindName(op->for_kind) + " but carries thread tag " +
           Q(op->thread_tag));
  }
  std::string owner = loop + " in block " + Q(frames_.back().name);
  bool fresh = Define(op->loop_var, VarKind::kLoop, owner);
  where_override_.clear();
  if (fresh && range_ok && Boundable(op->min) && Boundable(op->extent)) {
    analyzer_.Bind(op->loop_var, Range{op->min, op->extent});
    loops_[op->loop_var.get()] = LoopDef{op->min, op->extent, loop_order_++};
  }
  CheckStmt(op->body, "the body of loop " + name);
  if (fresh) {
    Undefine(op->loop_var);
    loops_.erase(op->loop_var.get());
  }
  if (bound_thread) active_threads_.erase(op->thread_tag);
}

void Verifier::VisitBlockRealize(const BlockRealizeNode* op) { VisitRealize(op, false); }

void Verifier::VisitRealize(const BlockRealizeNode* op, bool is_root) {
  if (!op->block.defined()) {
    Report("a block realize has no block (null)");
    return;
  }
  const BlockNode* b = op->block.get();
  where_override_ = "block " + Q(b->name);
  if (op->iter_values.size() != b->iter_vars.size()) {
    Report("the block has " + std::to_string(b->iter_vars.size()) + " iter var(s) but " +
           std::to_string(op->iter_values.size()) + " binding(s)");
  }
  // Bindings and the predicate are evaluated outside the block.
  binding_block_ = b;
  size_t n = std::min(op->iter_values.size(), b->iter_vars.size());
  std::vector<bool> binding_ok(n);
  for (size_t i = 0; i < n; ++i) {
    const Expr& v = op->iter_values[i];
    const IterVar& iv = b->iter_vars[i];
    std::string what = "the binding of iter var " + Q(VarName(iv.var));
    binding_ok[i] = CheckExpr(v, what);
    if (binding_ok[i] && iv.var.defined() && v.dtype() != iv.var.dtype()) {
      Report(what + " has type " + v.dtype().str() + " but the iter var is " +
             iv.var.dtype().str());
      binding_ok[i] = false;
    }
  }
  bool pred_ok = false;
  if (!op->predicate.defined()) {
    Report("the block predicate is null (use T.bool(True) for none)");
  } else if ((pred_ok = CheckExpr(op->predicate, "the block predicate")) &&
             !op->predicate.dtype().is_bool()) {
    Report("the block predicate has type " + op->predicate.dtype().str() + "; it must be bool");
    pred_ok = false;
  }
  binding_block_ = nullptr;
  // The iter vars take only the values their bindings reach where the
  // predicate holds; a predicated block (`T.where(i < 8)`) may rely on that
  // to stay inside its buffers.
  std::vector<ConstIntBound> binding_ranges(n, ConstIntBound::Everything());
  for (size_t i = 0; i < n; ++i) {
    if (binding_ok[i]) binding_ranges[i] = CheckBindingRange(op, i, pred_ok);
  }
  where_override_.clear();
  VisitBlockBody(b, is_root, binding_ranges);
}

ConstIntBound Verifier::CheckBindingRange(const BlockRealizeNode* op, size_t i, bool pred_ok) {
  const Expr& v = op->iter_values[i];
  const IterVar& iv = op->block->iter_vars[i];
  if (!Boundable(v)) return ConstIntBound::Everything();
  std::vector<Narrowing> undo;
  if (pred_ok) Narrow(op->predicate, /*holds=*/true, &undo);
  ConstIntBound r = BoundOf(v);
  Restore(&undo);
  if (!Finite(r)) return ConstIntBound::Everything();
  if (pred_ok) ApplyPredicate(op->predicate, v, &r);
  int64_t dmin, dext, dlast;
  if (!AsConstInt(iv.dom.min, &dmin) || !AsConstInt(iv.dom.extent, &dext) || dext <= 0 ||
      !LastOf(dmin, dext, &dlast)) {
    return r;
  }
  ConstIntBound dom = ConstIntBound::Make(dmin, dlast);
  // A predicate coupling several loops, or a loop extent depending on an
  // outer loop, is beyond interval arithmetic; the exact range also tightens
  // the iter var's bound for the access checks.
  int64_t always;
  bool guarded = pred_ok && !(AsConstInt(op->predicate, &always) && always != 0);
  if (guarded || r.min_value < dom.min_value || r.max_value > dom.max_value) {
    ConstIntBound exact;
    if (EnumeratedRange(v, pred_ok ? op->predicate : Expr(), &exact)) {
      r = ConstIntBound::Make(std::max(r.min_value, exact.min_value),
                              std::min(r.max_value, exact.max_value));
    }
  }
  if (r.min_value < dom.min_value || r.max_value > dom.max_value) {
    Report("the binding of iter var " + Q(VarName(iv.var)) + " ranges over " + r.str() +
           " under the enclosing loops, outside its domain " + dom.str() +
           "; shrink the loops or guard the block with a predicate");
  }
  return r;
}

bool Verifier::CheckIterVar(const IterVar& iv) {
  std::string name = Q(VarName(iv.var));
  if (!iv.var.defined()) {
    Report("an iter var is null");
    return false;
  }
  bool ok = true;
  DataType t = iv.var.dtype();
  if (!t.is_integer() || !t.is_scalar()) {
    Report("iter var " + name + " has type " + t.str() + "; iter vars must be scalar integers");
  }
  for (auto [e, part] : {std::pair{&iv.dom.min, "start"}, std::pair{&iv.dom.extent, "extent"}}) {
    std::string what = std::string("the ") + part + " of the domain of iter var " + name;
    if (!CheckIntExpr(*e, what)) {
      ok = false;
      continue;
    }
    if (e->dtype() != t) {
      Report(what + " has type " + e->dtype().str() + " but the iter var is " + t.str());
    }
    int64_t v;
    if (e == &iv.dom.extent && AsConstInt(*e, &v) && v <= 0) {
      Report("iter var " + name + " has extent " + std::to_string(v) +
             "; domains must be non-empty");
    }
  }
  return ok;
}

void Verifier::VisitBlockBody(const BlockNode* b, bool is_root,
                              const std::vector<ConstIntBound>& binding_ranges) {
  std::string name = Q(b->name);
  Frame& frame = frames_.emplace_back();
  frame.name = b->name;
  frame.opaque = b->iter_vars.empty();
  frame.check_accesses = !is_root;
  frame.has_init = b->init.has_value();
  if (!block_names_.insert(b->name).second) {
    Report("block name " + name +
           " is used by more than one block; block names must be unique in a function");
  }
  if (is_root) {
    if (b->name != "root") Report("the root block must be named \"root\", not " + name);
    if (!b->iter_vars.empty()) {
      Report("the root block must have no iter vars, it has " +
             std::to_string(b->iter_vars.size()));
    }
  }
  for (const Buffer& buf : b->alloc_buffers) {
    if (!buf.defined()) {
      Report("an allocated buffer is null");
      continue;
    }
    if (auto it = ever_declared_.find(buf.get()); it != ever_declared_.end()) {
      Report("buffer " + Q(buf.name()) + " is allocated again (it is already declared by " +
             it->second + ")");
      continue;
    }
    CheckBufferDecl(buf, /*alloc=*/true);
    Declare(buf, "block " + name);
    frame.allocs.insert(buf.get());
  }
  // Domains first: they must not depend on the block's own iter vars.
  std::vector<bool> dom_ok;
  for (const IterVar& iv : b->iter_vars) dom_ok.push_back(CheckIterVar(iv));
  std::vector<Var> fresh;
  bool has_reduce = false;
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    const IterVar& iv = b->iter_vars[i];
    if (iv.iter_type == IterType::kCommReduce) has_reduce = true;
    if (!Define(iv.var, VarKind::kIter, "block " + name)) continue;
    fresh.push_back(iv.var);
    if (dom_ok[i] && Boundable(iv.dom.min) && Boundable(iv.dom.extent)) {
      analyzer_.Bind(iv.var, iv.dom);
      ConstIntBound dom;
      if (i < binding_ranges.size() && Finite(binding_ranges[i]) &&
          analyzer_.Lookup(iv.var.get(), &dom)) {
        ConstIntBound both =
            ConstIntBound::Make(std::max(dom.min_value, binding_ranges[i].min_value),
                                std::min(dom.max_value, binding_ranges[i].max_value));
        // Disjoint ranges were reported with the binding; keep the domain.
        if (both.min_value <= both.max_value) analyzer_.Update(iv.var, both);
      }
    }
  }
  for (const auto& r : b->reads) CheckRegion(r, "read", &frame.reads);
  for (const auto& r : b->writes) CheckRegion(r, "write", &frame.writes);
  // `frame` must not be used below: visiting the body grows frames_.
  CheckInit(b, has_reduce);
  if (b->init) {
    in_init_ = b;
    CheckStmt(*b->init, "the init of block " + name);
    in_init_ = nullptr;
  }
  CheckStmt(b->body, "the body of block " + name);
  for (const Var& v : fresh) Undefine(v);
  for (const BufferNode* buf : frames_.back().allocs) declared_.erase(buf);
  frames_.pop_back();
  for (const auto& w : b->writes) {
    if (w.buffer.defined()) frames_.back().child_writes.insert(w.buffer.get());
  }
}

void Verifier::CheckInit(const BlockNode* b, bool has_reduce) {
  if (b->init && !has_reduce) {
    Report(
        "the block has an init but no reduction iter vars; an init only makes sense for a "
        "reduction");
  }
  if (b->init || !has_reduce) return;
  // frames_.back() is b's own frame; its parent holds b's earlier siblings,
  // and the frames above it those of the enclosing blocks (the inner block
  // of a blockized reduction is initialised by its outer block's init
  // block, a sibling of the outer block).
  auto initialised = [&](const BufferNode* buf) {
    for (size_t f = frames_.size() - 1; f-- > 0;) {
      if (frames_[f].child_writes.count(buf)) return true;
    }
    return false;
  };
  for (const auto& w : b->writes) {
    if (initialised(w.buffer.get())) continue;  // initialised by an earlier block
    for (const auto& r : b->reads) {
      if (w.buffer.defined() && w.buffer == r.buffer) {
        Report("the block reduces into buffer " + Q(w.buffer.name()) +
               " (which it also reads) over reduction iter vars but has no init; add T.init");
        return;
      }
    }
  }
}

}  // namespace kiln::ir::verify_internal
