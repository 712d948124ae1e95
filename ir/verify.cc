#include "ir/verify.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>

#include "ir/arith/const_int_bound.h"
#include "ir/functor.h"
#include "ir/op.h"

namespace kiln::ir {

namespace {

using arith::ConstIntBound;

std::string Q(const std::string& s) { return "'" + s + "'"; }
std::string VarName(const Var& v) { return v.defined() ? v.name() : "?"; }
std::string BufName(const Buffer& b) { return b.defined() ? b.name() : "?"; }

bool Finite(const ConstIntBound& b) {
  return b.min_value != ConstIntBound::kNegInf && b.max_value != ConstIntBound::kPosInf;
}

// "A[0:128, 4:8]": half-open slices, as T.reads / T.writes spell regions.
std::string Slices(const std::string& buffer, const std::vector<ConstIntBound>& dims) {
  auto end = [](int64_t v) { return v == ConstIntBound::kNegInf ? "" : std::to_string(v); };
  std::string s = buffer + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    const ConstIntBound& d = dims[i];
    s += (i ? ", " : "") + end(d.min_value) + ":" +
         (d.max_value == ConstIntBound::kPosInf ? "" : std::to_string(d.max_value + 1));
  }
  return s + "]";
}

// Structural equality with variables compared by identity. Only what block
// predicates written by split actually contain is compared; anything else is
// reported as different, which only makes the predicate less useful.
bool SameExpr(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  if (const auto* x = a.as<IntImmNode>()) return x->value == b.as<IntImmNode>()->value;
  if (const auto* x = a.as<BinaryNode>()) {
    const auto* y = b.as<BinaryNode>();
    return SameExpr(x->a, y->a) && SameExpr(x->b, y->b);
  }
  if (const auto* x = a.as<CastNode>()) return SameExpr(x->value, b.as<CastNode>()->value);
  return false;
}

// Whether the bound analyzer can say something exact-enough about e: every
// variable has a recorded bound and no value depends on buffer contents.
class BoundableChecker : public IRVisitor {
 public:
  explicit BoundableChecker(const arith::ConstIntBoundAnalyzer& a) : analyzer_(a) {}
  bool ok = true;

 protected:
  void VisitVar(const VarNode* v) override {
    ConstIntBound b;
    if (!analyzer_.Lookup(v, &b)) ok = false;
  }
  void VisitBufferLoad(const BufferLoadNode*) override { ok = false; }

 private:
  const arith::ConstIntBoundAnalyzer& analyzer_;
};

// Every variable in a set of expressions (buffer shapes and strides).
class VarCollector : public IRVisitor {
 public:
  std::vector<Var> vars;

  void VisitExpr(const Expr& e) override {
    if (e.as<VarNode>()) vars.emplace_back(std::static_pointer_cast<const VarNode>(e.node()));
    IRVisitor::VisitExpr(e);
  }
};

enum class VarKind { kShape, kLoop, kIter };

struct VarDef {
  VarKind kind;
  size_t frame;       // the frame whose body defines the variable
  std::string owner;  // "loop 'i' in block 'root'", "block 'C'"
};

// A buffer region relaxed over the block's iteration domain.
struct Box {
  const BufferNode* buffer;
  std::vector<ConstIntBound> dims;  // an unknown dimension is unbounded
};

// One block (or the function itself at index 0).
struct Frame {
  std::string name;
  bool opaque = true;  // no iter vars: enclosing variables stay visible inside
  bool check_accesses = false;
  bool has_init = false;  // a reduction may read back what it writes
  std::vector<Box> reads, writes;
  std::set<const BufferNode*> allocs;  // local to the block: not in its regions
};

class Verifier : public IRVisitor {
 public:
  explicit Verifier(const PrimFunc& f) : func_(f) {}

  std::vector<VerifyIssue> Run() {
    frames_.emplace_back().name = func_.name;
    CheckParams();
    if (!func_.body.defined()) {
      Report("the function has no body");
    } else if (const auto* root = func_.body.as<BlockRealizeNode>()) {
      VisitRealize(root, /*is_root=*/true);
    } else {
      Report("the function body must be the root block realize (block \"root\"), found another "
             "statement");
    }
    return std::move(issues_);
  }

 private:
  // ---- reporting -----------------------------------------------------------

  std::string Where() const {
    if (!where_override_.empty()) return where_override_;
    if (frames_.size() > 1) return "block " + Q(frames_.back().name);
    return "function " + func_.name;
  }

  void Report(const std::string& message) {
    ++problems_;
    VerifyIssue issue{Where(), message};
    if (reported_.insert(issue.str()).second) issues_.push_back(std::move(issue));
  }
  // Expression issues say which expression they were found in.
  void ReportExpr(const std::string& message) {
    Report(ctx_.empty() ? message : message + " (in " + ctx_ + ")");
  }

  // Visits e as `what`; returns true if e is present and raised no issue.
  bool CheckExpr(const Expr& e, const std::string& what) {
    std::string saved = std::exchange(ctx_, what);
    size_t before = problems_;
    VisitExpr(e);
    ctx_ = std::move(saved);
    return problems_ == before;
  }

  bool CheckIntExpr(const Expr& e, const std::string& what) {
    if (!CheckExpr(e, what)) return false;
    if (!e.dtype().is_integer() || !e.dtype().is_scalar()) {
      Report(what + " has type " + e.dtype().str() + "; it must be a scalar integer");
      return false;
    }
    return true;
  }

  bool Boundable(const Expr& e) const {
    BoundableChecker c(analyzer_);
    c.VisitExpr(e);
    return c.ok;
  }

  // ---- variables -----------------------------------------------------------

  // Returns true when v became defined here (and must be undefined later).
  bool Define(const Var& v, VarKind kind, const std::string& owner) {
    if (!v.defined()) return false;
    if (auto it = defined_.find(v.get()); it != defined_.end()) {
      Report("variable " + Q(v.name()) + " is defined again by " + owner +
             " while its definition by " + it->second.owner +
             " is still in scope; use a fresh Var");
      return false;
    }
    if (auto it = ever_defined_.find(v.get()); it != ever_defined_.end()) {
      // Still defined below, so that its uses do not raise follow-on issues.
      Report("variable " + Q(v.name()) + " is bound a second time by " + owner +
             " (it was already bound by " + it->second +
             "); every loop and iter var needs its own Var object");
    }
    defined_[v.get()] = VarDef{kind, frames_.size() - 1, owner};
    ever_defined_[v.get()] = owner;
    return true;
  }

  void Undefine(const Var& v) {
    defined_.erase(v.get());
    analyzer_.Unbind(v);
  }

  void VisitVar(const VarNode* v) override {
    if (binding_block_ != nullptr) {
      for (const auto& iv : binding_block_->iter_vars) {
        if (iv.var.get() == v) {
          ReportExpr("the binding uses " + Q(v->name) +
                     ", an iter var of the same block; bindings are evaluated outside the block "
                     "and may only use enclosing loop variables");
          return;
        }
      }
    }
    auto it = defined_.find(v);
    if (it == defined_.end()) {
      if (auto ev = ever_defined_.find(v); ev != ever_defined_.end()) {
        ReportExpr("variable " + Q(v->name) + " is used outside the scope of its definition by " +
                   ev->second);
      } else {
        ReportExpr("variable " + Q(v->name) +
                   " is used but never defined: it is not a loop variable, block iter var or "
                   "buffer shape variable in scope");
      }
      return;
    }
    const VarDef& d = it->second;
    if (d.kind == VarKind::kShape) return;
    for (size_t k = d.frame + 1; k < frames_.size(); ++k) {
      if (frames_[k].opaque) continue;
      if (d.kind == VarKind::kLoop) {
        ReportExpr("block " + Q(frames_[k].name) + " uses loop variable " + Q(v->name) +
                   " of a loop outside the block; a block can only see its own iter vars and "
                   "variables defined inside it, so bind the loop variable to an iter var");
      } else {
        ReportExpr("block " + Q(frames_[k].name) + " uses iter var " + Q(v->name) + " of " +
                   d.owner + "; a block can only see its own iter vars and variables defined "
                   "inside it, so pass the value in through a binding");
      }
      return;
    }
  }

  // ---- buffers ---------------------------------------------------------------

  // Returns true if b is present and declared here.
  bool UseBuffer(const Buffer& b, const std::string& what) {
    if (!b.defined()) {
      Report(what + " has no buffer (null)");
      return false;
    }
    if (declared_.count(b.get())) return true;
    if (auto it = ever_declared_.find(b.get()); it != ever_declared_.end()) {
      Report("buffer " + Q(b.name()) + " is used outside " + it->second +
             ", which allocates it (in " + what + ")");
      return false;
    }
    std::string msg = "buffer " + Q(b.name()) +
                      " is used but not declared: it is neither a function parameter nor "
                      "allocated by an enclosing block (in " + what + ")";
    for (const auto& [node, owner] : declared_) {
      if (node->name == b.name()) {
        msg += "; a different buffer object with that name is declared by " + owner +
               " (buffers are compared by identity)";
        break;
      }
    }
    Report(msg);
    return false;
  }

  // Checks a declared buffer's own fields; `alloc` requires a constant shape.
  void CheckBufferDecl(const Buffer& b, bool alloc) {
    std::string name = Q(b.name());
    if (!b->dtype.is_scalar()) {
      Report("buffer " + name + " has vector element type " + b->dtype.str() +
             "; buffer element types are scalar");
    }
    for (size_t d = 0; d < b->shape.size(); ++d) {
      const Expr& e = b->shape[d];
      std::string what = "the extent of buffer " + name + " in dimension " + std::to_string(d);
      if (!e.defined()) {
        Report(what + " is null");
        continue;
      }
      if (!e.dtype().is_integer() || !e.dtype().is_scalar()) {
        Report(what + " has type " + e.dtype().str() + "; it must be a scalar integer");
        continue;
      }
      int64_t v;
      if (!AsConstInt(e, &v)) {
        if (alloc) Report("allocated buffer " + name + " has a non-constant extent in dimension " +
                          std::to_string(d) + "; allocations need constant shapes");
      } else if (v <= 0 && (alloc || v < 0)) {
        Report(std::string(alloc ? "allocated " : "") + "buffer " + name + " has extent " +
               std::to_string(v) + " in dimension " + std::to_string(d) +
               "; extents must be positive");
      }
    }
  }

  void Declare(const Buffer& b, const std::string& owner) {
    declared_[b.get()] = owner;
    ever_declared_[b.get()] = owner;
  }

  void CheckParams() {
    std::unordered_map<const BufferNode*, size_t> seen;
    for (size_t i = 0; i < func_.params.size(); ++i) {
      const Buffer& b = func_.params[i];
      if (!b.defined()) {
        Report("parameter " + std::to_string(i) + " is a null buffer");
        continue;
      }
      if (auto [it, fresh] = seen.emplace(b.get(), i); !fresh) {
        Report("buffer " + Q(b.name()) + " is listed twice as a parameter (positions " +
               std::to_string(it->second) + " and " + std::to_string(i) + ")");
        continue;
      }
      CheckBufferDecl(b, /*alloc=*/false);
      // Symbolic shapes: variables in parameter shapes are defined everywhere.
      VarCollector vars;
      for (const auto& e : b->shape) vars.VisitExpr(e);
      for (const auto& e : b->strides) vars.VisitExpr(e);
      for (const Var& v : vars.vars) {
        if (!defined_.count(v.get())) Define(v, VarKind::kShape, "the shape of buffer " + Q(b.name()));
      }
      Declare(b, "the function parameters");
    }
  }

  // ---- expressions -----------------------------------------------------------

  void VisitExpr(const Expr& e) override {
    if (!e.defined()) {
      ReportExpr("a null expression is used");
      return;
    }
    IRVisitor::VisitExpr(e);
  }

  void VisitBinary(const BinaryNode* op) override {
    IRVisitor::VisitBinary(op);
    if (!op->a.defined() || !op->b.defined()) return;
    DataType ta = op->a.dtype(), tb = op->b.dtype();
    if (ta != tb) {
      ReportExpr("a binary expression mixes operand types " + ta.str() + " and " + tb.str() +
                 "; cast one operand");
    } else if ((op->kind == ExprKind::kAnd || op->kind == ExprKind::kOr) && !ta.is_bool()) {
      ReportExpr("a logical and/or has operands of type " + ta.str() + "; they must be bool");
    } else if (IsComparison(op->kind) ? op->dtype != DataType::Bool(ta.lanes())
                                      : op->dtype != ta) {
      ReportExpr("a binary expression on " + ta.str() + " operands has result type " +
                 op->dtype.str());
    }
  }

  void VisitNot(const NotNode* op) override {
    IRVisitor::VisitNot(op);
    if (op->a.defined() && !op->a.dtype().is_bool()) {
      ReportExpr("a logical not has an operand of type " + op->a.dtype().str() +
                 "; it must be bool");
    }
  }

  void VisitSelect(const SelectNode* op) override {
    IRVisitor::VisitSelect(op);
    if (op->condition.defined() && !op->condition.dtype().is_bool()) {
      ReportExpr("a select condition has type " + op->condition.dtype().str() +
                 "; it must be bool");
    }
    if (op->true_value.defined() && op->false_value.defined() &&
        op->true_value.dtype() != op->false_value.dtype()) {
      ReportExpr("the branches of a select have different types " +
                 op->true_value.dtype().str() + " and " + op->false_value.dtype().str());
    }
  }

  void VisitCall(const CallNode* op) override {
    IRVisitor::VisitCall(op);
    if (static_cast<int>(op->args.size()) != CallOpArity(op->op)) {
      ReportExpr(std::string("T.") + CallOpName(op->op) + " takes " +
                 std::to_string(CallOpArity(op->op)) + " argument(s) but is given " +
                 std::to_string(op->args.size()));
      return;
    }
    if (op->op == CallOp::kIfThenElse && op->args[0].defined() &&
        !op->args[0].dtype().is_bool()) {
      ReportExpr("the condition of T.if_then_else has type " + op->args[0].dtype().str() +
                 "; it must be bool");
    }
  }

  void VisitRamp(const RampNode* op) override {
    IRVisitor::VisitRamp(op);
    if (op->base.defined() && (!op->base.dtype().is_integer() || !op->base.dtype().is_scalar())) {
      ReportExpr("a ramp has base type " + op->base.dtype().str() +
                 "; it must be a scalar integer");
    }
  }

  // Checks indices against the buffer; returns true if all are clean.
  bool CheckIndices(const Buffer& b, const std::vector<Expr>& indices, const std::string& what) {
    bool ok = true;
    int lanes = 1;
    for (size_t i = 0; i < indices.size(); ++i) {
      std::string iw = "index " + std::to_string(i) + " of " + what;
      if (!CheckExpr(indices[i], iw)) {
        ok = false;
        continue;
      }
      DataType t = indices[i].dtype();
      if (!t.is_integer()) {
        Report(iw + " has type " + t.str() + "; indices must be integers");
        ok = false;
      } else if (t.is_vector()) {
        if (lanes > 1 && lanes != t.lanes()) {
          Report(what + " mixes vector indices of " + std::to_string(lanes) + " and " +
                 std::to_string(t.lanes()) + " lanes");
          ok = false;
        }
        lanes = t.lanes();
      }
    }
    if (b.defined() && indices.size() != b.ndim()) {
      Report(what + " has " + std::to_string(indices.size()) + " index(es) but buffer " +
             Q(b.name()) + " has " + std::to_string(b.ndim()) + " dimension(s)");
      ok = false;
    }
    return ok;
  }

  void VisitBufferLoad(const BufferLoadNode* op) override {
    std::string what = "the load from buffer " + Q(BufName(op->buffer));
    bool declared = UseBuffer(op->buffer, what);
    std::string saved = std::exchange(ctx_, {});
    bool ok = CheckIndices(op->buffer, op->indices, what);
    ctx_ = std::move(saved);
    if (declared && op->dtype.element_of() != op->buffer.dtype()) {
      ReportExpr(what + " has type " + op->dtype.str() + " but the buffer holds " +
                 op->buffer.dtype().str());
    }
    if (declared && ok) CheckAccess(op->buffer, op->indices, /*is_store=*/false);
  }

  // ---- accesses and regions --------------------------------------------------

  // The bound of each index, or false if some index cannot be bounded.
  bool IndexBounds(const std::vector<Expr>& indices, std::vector<ConstIntBound>* out) const {
    for (const auto& e : indices) {
      if (!Boundable(e)) return false;
      ConstIntBound b = analyzer_(e);
      if (!Finite(b)) return false;
      out->push_back(b);
    }
    return true;
  }

  // The innermost frame whose declared regions govern accesses, if any.
  const Frame* AccessFrame() const {
    const Frame& f = frames_.back();
    return f.check_accesses ? &f : nullptr;
  }

  void CheckAccess(const Buffer& b, const std::vector<Expr>& indices, bool is_store) {
    std::vector<ConstIntBound> idx;
    if (!IndexBounds(indices, &idx)) return;
    std::string what = std::string(is_store ? "store to" : "load from") + " buffer " + Q(b.name());
    const Frame* frame = AccessFrame();
    if (frame == nullptr || frame->allocs.count(b.get())) {
      // Not governed by declared regions: only the buffer shape applies.
      for (size_t d = 0; d < idx.size(); ++d) {
        int64_t extent;
        if (AsConstInt(b->shape[d], &extent) &&
            (idx[d].min_value < 0 || idx[d].max_value >= extent)) {
          ReportExpr(what + " reaches " + Slices(b.name(), idx) + " in dimension " +
                     std::to_string(d) + ", outside the buffer's extent " +
                     std::to_string(extent));
        }
      }
      return;
    }
    const char* kind = is_store ? "write" : "read";
    std::vector<const Box*> boxes;
    for (const Box& box : is_store ? frame->writes : frame->reads) boxes.push_back(&box);
    if (!is_store && frame->has_init) {
      for (const Box& box : frame->writes) boxes.push_back(&box);
    }
    bool any = false;
    std::string declared;
    for (const Box* box : boxes) {
      if (box->buffer != b.get() || box->dims.size() != idx.size()) continue;
      any = true;
      bool inside = true;
      for (size_t d = 0; d < idx.size(); ++d) {
        inside = inside && idx[d].min_value >= box->dims[d].min_value &&
                 idx[d].max_value <= box->dims[d].max_value;
      }
      if (inside) return;
      declared += (declared.empty() ? "" : " or ") + Slices(b.name(), box->dims);
    }
    if (!any) {
      ReportExpr(what + ", but the block declares no " + kind + " region for " + Q(b.name()) +
                 "; add it to T." + kind + "s");
      return;
    }
    ReportExpr(what + " reaches " + Slices(b.name(), idx) + ", outside the block's " + kind +
               " region(s) " + declared + "; widen T." + kind + "s or fix the index");
  }

  // Checks one T.reads / T.writes entry and returns its relaxed box.
  void CheckRegion(const BufferRegion& r, const char* kind, std::vector<Box>* boxes) {
    std::string what = std::string("the ") + kind + " region of buffer " + Q(BufName(r.buffer));
    if (!UseBuffer(r.buffer, what)) return;
    if (r.region.size() != r.buffer.ndim()) {
      Report(what + " has " + std::to_string(r.region.size()) + " range(s) but the buffer has " +
             std::to_string(r.buffer.ndim()) + " dimension(s)");
      return;
    }
    Box box{r.buffer.get(), {}};
    for (size_t d = 0; d < r.region.size(); ++d) {
      std::string dw = what + " in dimension " + std::to_string(d);
      const Range& range = r.region[d];
      bool ok = CheckIntExpr(range.min, "the start of " + dw);
      ok = CheckIntExpr(range.extent, "the extent of " + dw) && ok;
      ConstIntBound dim = ConstIntBound::Everything();
      if (ok && Boundable(range.min) && Boundable(range.extent)) {
        ConstIntBound mn = analyzer_(range.min), ext = analyzer_(range.extent);
        if (Finite(mn) && Finite(ext)) {
          if (ext.max_value <= 0) {
            Report(dw + " has non-positive extent " + ext.str());
          }
          dim = ConstIntBound::Make(mn.min_value, mn.max_value + ext.max_value - 1);
          int64_t extent;
          if (AsConstInt(r.buffer->shape[d], &extent) &&
              (dim.min_value < 0 || dim.max_value >= extent)) {
            Report(dw + " covers [" + std::to_string(dim.min_value) + ":" +
                   std::to_string(dim.max_value + 1) + "], outside the buffer's extent " +
                   std::to_string(extent));
          }
        }
      }
      box.dims.push_back(dim);
    }
    boxes->push_back(std::move(box));
  }

  // ---- statements ------------------------------------------------------------

  void CheckStmt(const Stmt& s, const std::string& what) {
    if (!s.defined()) {
      Report(what + " is null");
      return;
    }
    VisitStmt(s);
  }

  void VisitBufferStore(const BufferStoreNode* op) override {
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

  void VisitSeqStmt(const SeqStmtNode* op) override {
    if (op->seq.empty()) Report("a statement sequence is empty");
    for (const auto& s : op->seq) CheckStmt(s, "a statement in a sequence");
  }

  void VisitIfThenElse(const IfThenElseNode* op) override {
    if (CheckExpr(op->condition, "the condition of an if statement") &&
        !op->condition.dtype().is_bool()) {
      Report("the condition of an if statement has type " + op->condition.dtype().str() +
             "; it must be bool");
    }
    CheckStmt(op->then_case, "the then-branch of an if statement");
    if (op->else_case.defined()) VisitStmt(op->else_case);
  }

  void VisitEvaluate(const EvaluateNode* op) override {
    CheckExpr(op->value, "an evaluate statement");
  }

  void VisitFor(const ForNode* op) override {
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
          "blockIdx.x",  "blockIdx.y",  "blockIdx.z", "threadIdx.x", "threadIdx.y",
          "threadIdx.z", "vthread",     "vthread.x",  "vthread.y",   "vthread.z"};
      if (op->thread_tag.empty()) {
        Report("thread-bound loop " + name + " has no thread tag (e.g. \"threadIdx.x\")");
      } else if (!kTags.count(op->thread_tag)) {
        Report("thread-bound loop " + name + " has unknown thread tag " + Q(op->thread_tag));
      } else if (!active_threads_.insert(op->thread_tag).second) {
        Report("loop " + name + " binds " + op->thread_tag +
               ", which an enclosing loop already binds");
      } else {
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
    }
    CheckStmt(op->body, "the body of loop " + name);
    if (fresh) Undefine(op->loop_var);
    if (bound_thread) active_threads_.erase(op->thread_tag);
  }

  void VisitBlockRealize(const BlockRealizeNode* op) override { VisitRealize(op, false); }

  void VisitRealize(const BlockRealizeNode* op, bool is_root) {
    if (!op->block.defined()) {
      Report("a block realize has no block (null)");
      return;
    }
    const BlockNode* b = op->block.get();
    std::string outer_where = Where();
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
    for (size_t i = 0; i < n; ++i) {
      if (binding_ok[i]) CheckBindingRange(op, i, pred_ok);
    }
    where_override_.clear();
    VisitBlockBody(b, is_root);
  }

  // Lower / upper limits the predicate puts on `value` (conjuncts comparing
  // it with something boundable).
  void ApplyPredicate(const Expr& pred, const Expr& value, ConstIntBound* r) const {
    const auto* bin = pred.as<BinaryNode>();
    if (bin == nullptr) return;
    if (bin->kind == ExprKind::kAnd) {
      ApplyPredicate(bin->a, value, r);
      ApplyPredicate(bin->b, value, r);
      return;
    }
    if (!IsComparison(bin->kind)) return;
    ExprKind k = bin->kind;
    const Expr* other = nullptr;
    if (SameExpr(bin->a, value)) {
      other = &bin->b;
    } else if (SameExpr(bin->b, value)) {
      other = &bin->a;
      // Mirror the comparison so that it reads "value k other".
      if (k == ExprKind::kLT) k = ExprKind::kGT;
      else if (k == ExprKind::kGT) k = ExprKind::kLT;
      else if (k == ExprKind::kLE) k = ExprKind::kGE;
      else if (k == ExprKind::kGE) k = ExprKind::kLE;
    }
    if (other == nullptr || !Boundable(*other)) return;
    ConstIntBound o = analyzer_(*other);
    if (!Finite(o)) return;
    switch (k) {
      case ExprKind::kLT: r->max_value = std::min(r->max_value, o.max_value - 1); break;
      case ExprKind::kLE: r->max_value = std::min(r->max_value, o.max_value); break;
      case ExprKind::kGT: r->min_value = std::max(r->min_value, o.min_value + 1); break;
      case ExprKind::kGE: r->min_value = std::max(r->min_value, o.min_value); break;
      default: break;
    }
  }

  void CheckBindingRange(const BlockRealizeNode* op, size_t i, bool pred_ok) {
    const Expr& v = op->iter_values[i];
    const IterVar& iv = op->block->iter_vars[i];
    int64_t dmin, dext;
    if (!AsConstInt(iv.dom.min, &dmin) || !AsConstInt(iv.dom.extent, &dext) || !Boundable(v)) {
      return;
    }
    ConstIntBound r = analyzer_(v);
    if (!Finite(r)) return;
    if (pred_ok) ApplyPredicate(op->predicate, v, &r);
    ConstIntBound dom = ConstIntBound::Make(dmin, dmin + dext - 1);
    if (r.min_value < dom.min_value || r.max_value > dom.max_value) {
      Report("the binding of iter var " + Q(VarName(iv.var)) + " ranges over " + r.str() +
             " under the enclosing loops, outside its domain " + dom.str() +
             "; shrink the loops or guard the block with a predicate");
    }
  }

  // Returns true if the domain is clean (safe to bound).
  bool CheckIterVar(const IterVar& iv) {
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

  void VisitBlockBody(const BlockNode* b, bool is_root) {
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
      }
    }
    for (const auto& r : b->reads) CheckRegion(r, "read", &frame.reads);
    for (const auto& r : b->writes) CheckRegion(r, "write", &frame.writes);
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
  }

  void CheckInit(const BlockNode* b, bool has_reduce) {
    if (b->init && !has_reduce) {
      Report("the block has an init but no reduction iter vars; an init only makes sense for a "
             "reduction");
    }
    if (b->init || !has_reduce) return;
    for (const auto& w : b->writes) {
      for (const auto& r : b->reads) {
        if (w.buffer.defined() && w.buffer == r.buffer) {
          Report("the block reduces into buffer " + Q(w.buffer.name()) +
                 " (which it also reads) over reduction iter vars but has no init; add T.init");
          return;
        }
      }
    }
  }

  const PrimFunc& func_;
  std::vector<VerifyIssue> issues_;
  std::set<std::string> reported_;  // drops repeats of one issue
  size_t problems_ = 0;             // counts repeats too, for CheckExpr
  std::string where_override_;
  std::string ctx_;  // the expression being checked, for messages

  std::vector<Frame> frames_;
  std::unordered_map<const VarNode*, VarDef> defined_;
  std::unordered_map<const VarNode*, std::string> ever_defined_;
  std::unordered_map<const BufferNode*, std::string> declared_;
  std::unordered_map<const BufferNode*, std::string> ever_declared_;
  std::set<std::string> block_names_;
  std::set<std::string> active_threads_;
  const BlockNode* binding_block_ = nullptr;  // bindings of this block are being checked
  const BlockNode* in_init_ = nullptr;        // the init of this block is being checked
  arith::ConstIntBoundAnalyzer analyzer_;
};

std::string Describe(const std::string& func_name, const std::vector<VerifyIssue>& issues) {
  std::string s = "function " + func_name + " is not well-formed (" +
                  std::to_string(issues.size()) + " issue(s)):";
  for (const auto& i : issues) s += "\n  " + i.str();
  return s;
}

}  // namespace

std::vector<VerifyIssue> VerifyFunc(const PrimFunc& f) { return Verifier(f).Run(); }

VerifyError::VerifyError(const std::string& func_name, std::vector<VerifyIssue> issues)
    : std::runtime_error(Describe(func_name, issues)), issues_(std::move(issues)) {}

void Verify(const PrimFunc& f) {
  std::vector<VerifyIssue> issues = VerifyFunc(f);
  if (!issues.empty()) throw VerifyError(f.name, std::move(issues));
}

}  // namespace kiln::ir
