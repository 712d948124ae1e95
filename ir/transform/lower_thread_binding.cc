// LowerThreadBinding: the loops a GPU schedule bound to blockIdx.* and
// threadIdx.* become each kernel's launch grid.
//
// A kernel is a statement at the top of the function (outside every loop)
// that starts with a thread-bound loop. All loops inside it bound to one
// axis must have one constant extent (they name the same hardware index, as
// in TVM's UnifyThreadBinding); they are removed, their variables replaced by
// one launch variable per axis, and the kernel becomes a nest of one
// thread-bound loop per axis (blockIdx.x, .y, .z, then threadIdx.x, .y, .z)
// around code every thread runs. Statements that were not under some thread
// loop are thereby run by every thread of that axis, which is what a GPU
// does with them too. vthread loops become serial loops that keep their tag
// in a "vthread" annotation (VerifyGPUCode bounds them).
#include <array>
#include <map>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/printer.h"
#include "ir/substitute.h"
#include "ir/transform/passes.h"

namespace kiln::ir::transform {
namespace {

constexpr std::array<const char*, 6> kLaunchAxes = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                                    "threadIdx.x", "threadIdx.y", "threadIdx.z"};

bool IsVThread(const std::string& tag) { return tag.rfind("vthread", 0) == 0; }

bool HasThreadLoop(const Stmt& s) {
  struct Finder : IRVisitor {
    bool found = false;
    void VisitFor(const ForNode* op) override {
      if (op->for_kind == ForKind::kThreadBinding) found = true;
      IRVisitor::VisitFor(op);
    }
  } f;
  f.VisitStmt(s);
  return f.found;
}

// One launch axis of a kernel: its extent and the variable that replaces the
// loop variables bound to it.
struct Axis {
  int64_t extent = 0;
  Var var;
  std::string first_loop;  // for error messages
};

class KernelCollector : public IRVisitor {
 public:
  std::map<std::string, Axis> axes;

 protected:
  void VisitFor(const ForNode* op) override {
    if (op->for_kind == ForKind::kThreadBinding && !IsVThread(op->thread_tag)) {
      const std::string& tag = op->thread_tag;
      int64_t n = 0;
      if (!AsConstInt(op->extent, &n)) {
        throw IRError("loop " + op->loop_var.name() + " bound to " + tag +
                      " has the non-constant extent " + ToText(op->extent) +
                      "; a GPU launch needs constant thread extents");
      }
      auto it = axes.find(tag);
      if (it == axes.end()) {
        std::string name = tag;
        for (char& c : name) c = c == '.' ? '_' : c;
        axes[tag] = Axis{n, Var(name, op->loop_var.dtype()), op->loop_var.name()};
      } else if (it->second.extent != n) {
        throw IRError("loops " + it->second.first_loop + " and " + op->loop_var.name() +
                      " are both bound to " + tag + " in one kernel but have the extents " +
                      std::to_string(it->second.extent) + " and " + std::to_string(n) +
                      "; all loops bound to one thread axis of a kernel need one extent");
      }
    }
    IRVisitor::VisitFor(op);
  }
};

class ThreadLoopRemover : public IRMutator {
 public:
  explicit ThreadLoopRemover(const std::map<std::string, Axis>& axes) : axes_(axes) {}

 protected:
  Stmt VisitFor(const Stmt& s, const ForNode* op) override {
    if (op->for_kind != ForKind::kThreadBinding) return IRMutator::VisitFor(s, op);
    if (IsVThread(op->thread_tag)) {
      Annotations ann = op->annotations;
      ann["vthread"] = StringImm(op->thread_tag);
      return For(op->loop_var, VisitExpr(op->min), VisitExpr(op->extent), ForKind::kSerial,
                 VisitStmt(op->body), "", std::move(ann));
    }
    const Axis& axis = axes_.at(op->thread_tag);
    Expr min = VisitExpr(op->min);
    Expr value = IsConstInt(min, 0) ? Expr(axis.var) : Add(axis.var, min);
    return Substitute(VisitStmt(op->body), VarMap{{op->loop_var.get(), value}});
  }

 private:
  const std::map<std::string, Axis>& axes_;
};

Stmt MakeKernel(const Stmt& s) {
  KernelCollector c;
  c.VisitStmt(s);
  for (const auto& [tag, axis] : c.axes) {
    bool known = false;
    for (const char* a : kLaunchAxes) known = known || tag == a;
    if (!known) throw IRError("loop " + axis.first_loop + " is bound to unknown axis " + tag);
  }
  Stmt body = ThreadLoopRemover(c.axes).VisitStmt(s);
  for (size_t i = kLaunchAxes.size(); i-- > 0;) {
    auto it = c.axes.find(kLaunchAxes[i]);
    if (it == c.axes.end()) continue;
    body = For(it->second.var, IntImm(0, it->second.var.dtype()),
               IntImm(it->second.extent, it->second.var.dtype()), ForKind::kThreadBinding, body,
               kLaunchAxes[i]);
  }
  return body;
}

// Rewrites the host part of the function: sequences, allocation scopes and
// no-ops around kernels.
Stmt LowerHost(const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::kSeqStmt: {
      std::vector<Stmt> seq;
      for (const auto& c : s.as<SeqStmtNode>()->seq) seq.push_back(LowerHost(c));
      return SeqStmt(std::move(seq));
    }
    case StmtKind::kBlockRealize: {
      const auto* r = s.as<BlockRealizeNode>();
      BlockNode b = *r->block.get();
      b.body = LowerHost(b.body);
      return BlockRealize(r->iter_values, r->predicate, MakeBlock(std::move(b)));
    }
    case StmtKind::kEvaluate:
      return s;
    case StmtKind::kFor: {
      const auto* f = s.as<ForNode>();
      if (f->for_kind == ForKind::kThreadBinding && !IsVThread(f->thread_tag)) {
        return MakeKernel(s);
      }
      if (HasThreadLoop(s)) {
        throw IRError("loop " + f->loop_var.name() +
                      " would run on the host around a GPU kernel; bind it to a thread axis "
                      "(or fuse it into one) so that each kernel starts at a thread-bound loop");
      }
      throw IRError("loop " + f->loop_var.name() +
                    " is not bound to GPU threads; every statement of a GPU function must be "
                    "under a blockIdx or threadIdx loop");
    }
    default: {
      std::string what = "a statement";
      if (const auto* st = s.as<BufferStoreNode>()) what = "a store to '" + st->buffer.name() + "'";
      throw IRError(what + " is not under any GPU thread loop; every statement of a GPU "
                    "function must be under a blockIdx or threadIdx loop");
    }
  }
}

}  // namespace

PrimFunc LowerThreadBinding(const PrimFunc& func) {
  const auto* root = func.body.as<BlockRealizeNode>();
  if (root == nullptr) throw IRError("function " + func.name + ": body is not the root block");
  BlockNode b = *root->block.get();
  b.body = LowerHost(b.body);
  PrimFunc out = func;
  out.body = BlockRealize(root->iter_values, root->predicate, MakeBlock(std::move(b)));
  return out;
}

}  // namespace kiln::ir::transform
