#include "ir/verify/verifier.h"

#include <utility>

#include "ir/op.h"

namespace kiln::ir::verify_internal {

namespace {

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

}  // namespace

std::vector<VerifyIssue> Verifier::Run() {
  frames_.emplace_back().name = func_.name;
  CheckParams();
  if (!func_.body.defined()) {
    Report("the function has no body");
  } else if (const auto* root = func_.body.as<BlockRealizeNode>()) {
    VisitRealize(root, /*is_root=*/true);
  } else {
    Report(
        "the function body must be the root block realize (block \"root\"), found another "
        "statement");
  }
  return std::move(issues_);
}

std::string Verifier::Where() const {
  if (!where_override_.empty()) return where_override_;
  if (frames_.size() > 1) return "block " + Q(frames_.back().name);
  return "function " + func_.name;
}

void Verifier::Report(const std::string& message) {
  ++problems_;
  VerifyIssue issue{Where(), message};
  if (reported_.insert(issue.str()).second) issues_.push_back(std::move(issue));
}

void Verifier::ReportExpr(const std::string& message) {
  Report(ctx_.empty() ? message : message + " (in " + ctx_ + ")");
}

bool Verifier::CheckExpr(const Expr& e, const std::string& what) {
  std::string saved = std::exchange(ctx_, what);
  size_t before = problems_;
  VisitExpr(e);
  ctx_ = std::move(saved);
  return problems_ == before;
}

bool Verifier::CheckIntExpr(const Expr& e, const std::string& what) {
  if (!CheckExpr(e, what)) return false;
  if (!e.dtype().is_integer() || !e.dtype().is_scalar()) {
    Report(what + " has type " + e.dtype().str() + "; it must be a scalar integer");
    return false;
  }
  return true;
}

bool Verifier::Boundable(const Expr& e) const {
  BoundableChecker c(analyzer_);
  c.VisitExpr(e);
  return c.ok;
}

bool Verifier::Define(const Var& v, VarKind kind, const std::string& owner) {
  if (!v.defined()) return false;
  if (auto it = defined_.find(v.get()); it != defined_.end()) {
    Report("variable " + Q(v.name()) + " is defined again by " + owner +
           " while its definition by " + it->second.owner + " is still in scope; use a fresh Var");
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

void Verifier::Undefine(const Var& v) {
  defined_.erase(v.get());
  analyzer_.Unbind(v);
}

void Verifier::VisitVar(const VarNode* v) {
  if (binding_block_ != nullptr) {
    for (const auto& iv : binding_block_->iter_vars) {
      if (iv.var.get() == v) {
        ReportExpr("uses " + Q(v->name) +
                   ", an iter var of the same block; bindings and the predicate are evaluated "
                   "outside the block and may only use enclosing loop variables");
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
      ReportExpr("block " + Q(frames_[k].name) + " uses iter var " + Q(v->name) + " of " + d.owner +
                 "; a block can only see its own iter vars and variables defined "
                 "inside it, so pass the value in through a binding");
    }
    return;
  }
}

bool Verifier::UseBuffer(const Buffer& b, const std::string& what) {
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
                    "allocated by an enclosing block (in " +
                    what + ")";
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

void Verifier::CheckBufferDecl(const Buffer& b, bool alloc) {
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
      if (alloc) {
        Report("allocated buffer " + name + " has a non-constant extent in dimension " +
               std::to_string(d) + "; allocations need constant shapes");
      }
    } else if (v <= 0 && (alloc || v < 0)) {
      Report(std::string(alloc ? "allocated " : "") + "buffer " + name + " has extent " +
             std::to_string(v) + " in dimension " + std::to_string(d) +
             "; extents must be positive");
    }
  }
}

void Verifier::Declare(const Buffer& b, const std::string& owner) {
  declared_[b.get()] = owner;
  ever_declared_[b.get()] = owner;
}

void Verifier::CheckParams() {
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
      if (!defined_.count(v.get()))
        Define(v, VarKind::kShape, "the shape of buffer " + Q(b.name()));
    }
    Declare(b, "the function parameters");
  }
}

}  // namespace kiln::ir::verify_internal
