#include <algorithm>
#include <utility>

#include "ir/op.h"
#include "ir/verify/verifier.h"

namespace kiln::ir::verify_internal {

namespace {

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

}  // namespace

void Verifier::VisitExpr(const Expr& e) {
  if (!e.defined()) {
    ReportExpr("a null expression is used");
    return;
  }
  IRVisitor::VisitExpr(e);
}

void Verifier::VisitBinary(const BinaryNode* op) {
  IRVisitor::VisitBinary(op);
  if (!op->a.defined() || !op->b.defined()) return;
  DataType ta = op->a.dtype(), tb = op->b.dtype();
  if (ta != tb) {
    ReportExpr("a binary expression mixes operand types " + ta.str() + " and " + tb.str() +
               "; cast one operand");
  } else if ((op->kind == ExprKind::kAnd || op->kind == ExprKind::kOr) && !ta.is_bool()) {
    ReportExpr("a logical and/or has operands of type " + ta.str() + "; they must be bool");
  } else if (IsComparison(op->kind) ? op->dtype != DataType::Bool(ta.lanes()) : op->dtype != ta) {
    ReportExpr("a binary expression on " + ta.str() + " operands has result type " +
               op->dtype.str());
  }
}

void Verifier::VisitNot(const NotNode* op) {
  IRVisitor::VisitNot(op);
  if (op->a.defined() && !op->a.dtype().is_bool()) {
    ReportExpr("a logical not has an operand of type " + op->a.dtype().str() + "; it must be bool");
  }
}

void Verifier::VisitSelect(const SelectNode* op) {
  IRVisitor::VisitSelect(op);
  if (op->condition.defined() && !op->condition.dtype().is_bool()) {
    ReportExpr("a select condition has type " + op->condition.dtype().str() + "; it must be bool");
  }
  if (op->true_value.defined() && op->false_value.defined() &&
      op->true_value.dtype() != op->false_value.dtype()) {
    ReportExpr("the branches of a select have different types " + op->true_value.dtype().str() +
               " and " + op->false_value.dtype().str());
  }
}

void Verifier::VisitCall(const CallNode* op) {
  bool guard = op->op == CallOp::kIfThenElse && op->args.size() == 3 && op->args[0].defined() &&
               op->args[0].dtype().is_bool();
  if (guard) {
    // Unlike Select, only the taken branch is evaluated.
    VisitExpr(op->args[0]);
    VisitGuarded(op->args[0], /*holds=*/true, op->args[1]);
    VisitGuarded(op->args[0], /*holds=*/false, op->args[2]);
  } else {
    IRVisitor::VisitCall(op);
  }
  if (static_cast<int>(op->args.size()) != CallOpArity(op->op)) {
    ReportExpr(std::string("T.") + CallOpName(op->op) + " takes " +
               std::to_string(CallOpArity(op->op)) + " argument(s) but is given " +
               std::to_string(op->args.size()));
    return;
  }
  if (op->op == CallOp::kIfThenElse && op->args[0].defined() && !op->args[0].dtype().is_bool()) {
    ReportExpr("the condition of T.if_then_else has type " + op->args[0].dtype().str() +
               "; it must be bool");
  }
}

void Verifier::VisitRamp(const RampNode* op) {
  IRVisitor::VisitRamp(op);
  if (op->base.defined() && (!op->base.dtype().is_integer() || !op->base.dtype().is_scalar())) {
    ReportExpr("a ramp has base type " + op->base.dtype().str() + "; it must be a scalar integer");
  }
}

bool Verifier::CheckIndices(const Buffer& b, const std::vector<Expr>& indices,
                            const std::string& what) {
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

void Verifier::VisitBufferLoad(const BufferLoadNode* op) {
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

bool Verifier::IndexBounds(const std::vector<Expr>& indices,
                           std::vector<ConstIntBound>* out) const {
  for (const auto& e : indices) {
    if (!Boundable(e)) return false;
    ConstIntBound b = BoundOf(e);
    if (!Finite(b)) return false;
    out->push_back(b);
  }
  return true;
}

const Frame* Verifier::AccessFrame() const {
  const Frame& f = frames_.back();
  return f.check_accesses ? &f : nullptr;
}

void Verifier::CheckAccess(const Buffer& b, const std::vector<Expr>& indices, bool is_store) {
  std::vector<ConstIntBound> idx;
  if (!IndexBounds(indices, &idx)) return;
  std::string what = std::string(is_store ? "store to" : "load from") + " buffer " + Q(b.name());
  // Declared regions are descriptions and may exceed the buffer; the access
  // itself must stay inside it.
  for (size_t d = 0; d < idx.size(); ++d) {
    int64_t extent;
    if (AsConstInt(b->shape[d], &extent) && (idx[d].min_value < 0 || idx[d].max_value >= extent)) {
      ReportExpr(what + " reaches " + Slices(b.name(), idx) + " in dimension " + std::to_string(d) +
                 ", outside the buffer's extent " + std::to_string(extent));
      return;
    }
  }
  const Frame* frame = AccessFrame();
  if (frame == nullptr || frame->allocs.count(b.get())) return;  // no regions govern it
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

void Verifier::CheckRegion(const BufferRegion& r, const char* kind, std::vector<Box>* boxes) {
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
        int64_t last;
        if (LastOf(mn.max_value, ext.max_value, &last)) {
          dim = ConstIntBound::Make(mn.min_value, last);
        }
      }
    }
    box.dims.push_back(dim);
  }
  boxes->push_back(std::move(box));
}

}  // namespace kiln::ir::verify_internal
