#include "ir/transform/gpu_kernels.h"

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"

namespace kiln::ir::transform {
namespace {

class SharedCollector : public IRVisitor {
 public:
  std::vector<Buffer> shared;

 protected:
  void VisitBlock(const BlockNode* op) override {
    for (const auto& b : op->alloc_buffers) {
      if (b.scope() == "shared" || b.scope() == "shared.dyn") {
        shared.push_back(b);
      } else if (b.scope() != "local" && b.scope().rfind("wmma.", 0) != 0) {
        throw IRError("buffer '" + b.name() + "' of scope \"" + b.scope() +
                      "\" is allocated inside a GPU kernel; only shared, local and wmma fragment memory "
                      "can be");
      }
    }
    IRVisitor::VisitBlock(op);
  }
  void VisitFor(const ForNode* op) override {
    if (op->for_kind == ForKind::kThreadBinding) {
      throw IRError("loop " + op->loop_var.name() + " bound to " + op->thread_tag +
                    " is inside a kernel body; each launch axis is bound once, around the kernel");
    }
    IRVisitor::VisitFor(op);
  }
};

GpuKernel MakeKernel(const ForNode* op) {
  GpuKernel k;
  const ForNode* f = op;
  while (f != nullptr && f->for_kind == ForKind::kThreadBinding) {
    LaunchAxis a{f->thread_tag, f->loop_var, 0};
    if (!AsConstInt(f->extent, &a.extent) || !IsConstInt(f->min, 0)) {
      throw IRError("launch loop " + f->loop_var.name() + " (" + f->thread_tag +
                    ") must start at 0 and have a constant extent");
    }
    std::array<int64_t, 3>* dims = nullptr;
    if (a.tag.rfind("blockIdx.", 0) == 0) dims = &k.grid;
    if (a.tag.rfind("threadIdx.", 0) == 0) dims = &k.block;
    int axis = a.tag.size() > 2 ? a.tag.back() - 'x' : -1;
    if (dims == nullptr || axis < 0 || axis > 2) {
      throw IRError("launch loop " + f->loop_var.name() + " is bound to " + a.tag +
                    ", which is not a launch axis");
    }
    for (const auto& prev : k.launch) {
      if (prev.tag == a.tag) {
        throw IRError("kernel binds " + a.tag + " twice (loops " + prev.var.name() + " and " +
                      a.var.name() + "); lower it with LowerThreadBinding");
      }
    }
    (*dims)[axis] = a.extent;
    k.launch.push_back(a);
    k.body = f->body;
    f = f->body.as<ForNode>();
  }
  SharedCollector c;
  c.VisitStmt(k.body);
  k.shared = std::move(c.shared);
  return k;
}

void Walk(const Stmt& s, GpuKernels* out) {
  switch (s.kind()) {
    case StmtKind::kSeqStmt:
      for (const auto& c : s.as<SeqStmtNode>()->seq) Walk(c, out);
      return;
    case StmtKind::kBlockRealize: {
      const BlockNode& b = *s.as<BlockRealizeNode>()->block.get();
      for (const auto& buf : b.alloc_buffers) {
        if (buf.scope() != "global") {
          throw IRError("buffer '" + buf.name() + "' of scope \"" + buf.scope() +
                        "\" is allocated outside every kernel; only global memory can be");
        }
        out->workspace.push_back(buf);
      }
      Walk(b.body, out);
      return;
    }
    case StmtKind::kEvaluate:
      return;
    case StmtKind::kFor: {
      const auto* f = s.as<ForNode>();
      if (f->for_kind == ForKind::kThreadBinding) {
        out->kernels.push_back(MakeKernel(f));
        return;
      }
      throw IRError("loop " + f->loop_var.name() + " runs outside every GPU kernel");
    }
    default:
      throw IRError("a statement outside every GPU kernel (not under a thread-bound loop)");
  }
}

}  // namespace

GpuKernels SplitKernels(const PrimFunc& lowered) {
  const auto* root = lowered.body.as<BlockRealizeNode>();
  if (root == nullptr) throw IRError("function " + lowered.name + ": body is not the root block");
  GpuKernels out;
  Walk(lowered.body, &out);
  return out;
}

}  // namespace kiln::ir::transform
