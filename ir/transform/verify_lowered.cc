#include "ir/transform/verify_lowered.h"

#include "ir/functor.h"
#include "ir/op.h"
#include <unordered_set>

namespace kiln::ir::transform {
namespace {

class Checker : public IRVisitor {
 public:
  std::vector<std::string> issues;

  void VisitStmt(const Stmt& s) override {
    if (!s.defined()) return;
    IRVisitor::VisitStmt(s);
  }

 protected:
  void VisitVar(const VarNode* v) override {
    if (!defined_.count(v)) issues.push_back("variable " + v->name + " is used outside its loop");
  }
  void VisitFor(const ForNode* op) override {
    const std::string where = "loop " + op->loop_var.name();
    if (!op->loop_var.defined() || !op->body.defined()) {
      issues.push_back(where + ": has no variable or no body");
      return;
    }
    if (defined_.count(op->loop_var.get())) issues.push_back(where + ": variable defined twice");
    int64_t n = 0;
    bool const_extent = AsConstInt(op->extent, &n);
    if (op->for_kind == ForKind::kParallel) {
      if (parallel_ > 0) issues.push_back(where + ": parallel loop nested in a parallel loop");
      ++parallel_;
    }
    if (op->for_kind == ForKind::kVectorized) {
      if (!const_extent) issues.push_back(where + ": vectorized loop without a constant extent");
      if (vector_ > 0) issues.push_back(where + ": loop inside a vectorized loop");
      ++vector_;
    } else if (vector_ > 0) {
      issues.push_back(where + ": loop inside a vectorized loop");
    }
    if (op->for_kind == ForKind::kUnrolled && !const_extent) {
      issues.push_back(where + ": unrolled loop without a constant extent");
    }
    VisitExpr(op->min);
    VisitExpr(op->extent);
    defined_.insert(op->loop_var.get());
    VisitStmt(op->body);
    defined_.erase(op->loop_var.get());
    if (op->for_kind == ForKind::kParallel) --parallel_;
    if (op->for_kind == ForKind::kVectorized) --vector_;
  }
  void VisitIfThenElse(const IfThenElseNode* op) override {
    if (vector_ > 0) issues.push_back("an if inside a vectorized loop");
    IRVisitor::VisitIfThenElse(op);
  }
  void VisitBlockRealize(const BlockRealizeNode* op) override {
    const BlockNode& b = *op->block.get();
    const std::string where = "block '" + b.name + "'";
    bool root = depth_ == 0;
    if (!b.iter_vars.empty() || !op->iter_values.empty()) {
      issues.push_back(where + ": has iteration variables");
    }
    if (op->predicate.defined() && !IsConstInt(op->predicate, 1)) {
      issues.push_back(where + ": has a predicate");
    }
    if (b.init) issues.push_back(where + ": has an init");
    if (!b.reads.empty() || !b.writes.empty()) issues.push_back(where + ": has reads or writes");
    if (!root && b.alloc_buffers.empty()) issues.push_back(where + ": allocates nothing");
    if (!root && !b.annotations.empty()) issues.push_back(where + ": has annotations");
    if (vector_ > 0) issues.push_back(where + ": allocates inside a vectorized loop");
    for (const auto& buf : b.alloc_buffers) {
      CheckFlat(buf, "allocated");
      int64_t n = 0;
      if (buf.ndim() == 1 && !AsConstInt(buf.shape()[0], &n)) {
        issues.push_back("allocated buffer '" + buf.name() + "' has no constant size");
      }
      if (!buffers_.insert(buf.get()).second) {
        issues.push_back("buffer '" + buf.name() + "' is allocated twice");
      }
    }
    ++depth_;
    VisitStmt(b.body);
    --depth_;
    for (const auto& buf : b.alloc_buffers) buffers_.erase(buf.get());
  }
  void VisitBufferLoad(const BufferLoadNode* op) override {
    UseBuffer(op->buffer);
    if (op->indices.size() != 1) {
      issues.push_back("load of '" + op->buffer.name() + "' has " +
                       std::to_string(op->indices.size()) + " indices");
    }
    IRVisitor::VisitBufferLoad(op);
  }
  void VisitBufferStore(const BufferStoreNode* op) override {
    UseBuffer(op->buffer);
    if (op->indices.size() != 1) {
      issues.push_back("store to '" + op->buffer.name() + "' has " +
                       std::to_string(op->indices.size()) + " indices");
    }
    IRVisitor::VisitBufferStore(op);
  }

 public:
  // Parameters: declared everywhere; their shape variables are in scope.
  void DeclareParam(const Buffer& b) {
    CheckFlat(b, "parameter");
    buffers_.insert(b.get());
    for (const auto& e : b.shape()) {
      if (const auto* v = e.as<VarNode>()) defined_.insert(v);
    }
  }
  void CheckFlat(const Buffer& b, const char* what) {
    if (b.ndim() != 1 || !b->strides.empty()) {
      issues.push_back(std::string(what) + " buffer '" + b.name() + "' is not one-dimensional");
    }
  }

 private:
  void UseBuffer(const Buffer& b) {
    if (!b.defined()) {
      issues.push_back("an access to a null buffer");
    } else if (!buffers_.count(b.get())) {
      issues.push_back("buffer '" + b.name() + "' is used outside its allocation scope");
    }
  }

  std::unordered_set<const VarNode*> defined_;
  std::unordered_set<const BufferNode*> buffers_;
  int parallel_ = 0, vector_ = 0, depth_ = 0;
};

}  // namespace

std::vector<std::string> VerifyLowered(const PrimFunc& f) {
  std::vector<std::string> issues;
  const auto* root = f.body.as<BlockRealizeNode>();
  if (root == nullptr || !root->block.defined() || root->block->name != "root") {
    issues.push_back("function " + f.name + ": body is not the root block");
    return issues;
  }
  Checker c;
  for (const auto& p : f.params) c.DeclareParam(p);
  c.VisitStmt(f.body);
  issues.insert(issues.end(), c.issues.begin(), c.issues.end());
  return issues;
}

}  // namespace kiln::ir::transform
