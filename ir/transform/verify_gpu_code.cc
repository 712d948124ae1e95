#include "ir/transform/verify_gpu_code.h"

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/substitute.h"
#include "ir/tensor_intrin/tensor_intrin.h"
#include "ir/transform/gpu_kernels.h"

namespace kiln::ir::transform {
namespace {

// Hardware limits of every CUDA device since compute capability 3.0.
constexpr int64_t kMaxBlockDim[3] = {1024, 1024, 64};
constexpr int64_t kMaxGridDim[3] = {2147483647, 65535, 65535};
constexpr int64_t kWarpSize = 32;

class BodyChecker : public IRVisitor {
 public:
  // `tx` is the kernel's threadIdx.x variable (undefined without that axis),
  // `tx_extent` its extent.
  BodyChecker(const GpuLimits& limits, std::string where, Var tx, int64_t tx_extent,
              std::vector<std::string>* issues)
      : limits_(limits), where_(std::move(where)), tx_(std::move(tx)), tx_extent_(tx_extent),
        issues_(issues) {}

 protected:
  void VisitIfThenElse(const IfThenElseNode* op) override {
    const int on_tx = UsesTx(op->condition) ? 1 : 0;
    tx_guards_ += on_tx;
    IRVisitor::VisitIfThenElse(op);
    tx_guards_ -= on_tx;
  }
  void VisitFor(const ForNode* op) override {
    auto tc = op->annotations.find(kTensorIntrinAttr);
    if (tc != op->annotations.end()) CheckWarpWide(*op, tc->second);
    int64_t n = 1;
    bool vthread = op->annotations.count("vthread") > 0;
    if (vthread) {
      if (!AsConstInt(op->extent, &n)) n = limits_.max_vthread + 1;
      vthreads_ *= n;
      if (vthreads_ > limits_.max_vthread) {
        issues_->push_back(where_ + ": virtual threads " + std::to_string(vthreads_) +
                           " exceed the limit " + std::to_string(limits_.max_vthread));
      }
    }
    if (op->for_kind == ForKind::kVectorized) {
      vector_lanes_ = AsConstInt(op->extent, &n) ? n : 0;
    }
    IRVisitor::VisitFor(op);
    if (op->for_kind == ForKind::kVectorized) vector_lanes_ = 1;
    if (vthread) vthreads_ /= n;
  }
  void VisitBufferLoad(const BufferLoadNode* op) override {
    CheckVector(op->buffer, op->dtype);
    IRVisitor::VisitBufferLoad(op);
  }
  void VisitBufferStore(const BufferStoreNode* op) override {
    CheckVector(op->buffer, op->value.dtype());
    IRVisitor::VisitBufferStore(op);
  }

 private:
  bool UsesTx(const Expr& e) const {
    return tx_.defined() && UsesVar(e, [this](const VarNode* v) { return v == tx_.get(); });
  }

  // A tensor-core call (wmma) is made by a warp's 32 lanes together, on one
  // tile: every lane of each warp must reach it and name the same operands.
  // MultiLevelTilingTensorCore builds it so (threadIdx.x is the warp's
  // lane); a trace written or imported by hand could tensorize elsewhere.
  void CheckWarpWide(const ForNode& loop, const Expr& intrin) {
    const auto* name = intrin.as<StringImmNode>();
    const std::string what =
        where_ + ": the tensor-core call " + (name != nullptr ? name->value : std::string("?"));
    if (tx_extent_ % kWarpSize != 0) {
      issues_->push_back(what + " needs whole warps, but threadIdx.x has " +
                         std::to_string(tx_extent_) + " thread(s), not a multiple of 32");
    }
    if (tx_guards_ > 0) {
      issues_->push_back(what +
                         " is under a condition on threadIdx.x: part of a warp would skip it");
    }
    if (tx_.defined() && UsesVar(loop.body, [this](const VarNode* v) { return v == tx_.get(); })) {
      issues_->push_back(what + " names operand tiles that depend on threadIdx.x: the lanes of a "
                         "warp would each name their own");
    }
  }

  void CheckVector(const Buffer& b, DataType t) {
    int64_t bytes = vector_lanes_ * t.lanes() * ((t.bits() + 7) / 8);
    if ((vector_lanes_ > 1 || t.lanes() > 1) && bytes > limits_.max_vector_bytes) {
      issues_->push_back(where_ + ": a vectorized access to '" + b.name() + "' moves " +
                         std::to_string(bytes) + " bytes; the limit is " +
                         std::to_string(limits_.max_vector_bytes));
    }
  }

  const GpuLimits& limits_;
  std::string where_;
  Var tx_;
  int64_t tx_extent_ = 1;
  int tx_guards_ = 0;  // conditions on threadIdx.x around the statement visited
  std::vector<std::string>* issues_;
  int64_t vthreads_ = 1;
  int64_t vector_lanes_ = 1;
};

}  // namespace

GpuLimits GpuLimits::FromTarget(const Target& target) {
  GpuLimits l;
  l.max_threads_per_block = target.MaxThreadsPerBlock();
  l.max_shared_memory_per_block = target.MaxSharedMemoryPerBlock();
  return l;
}

std::vector<std::string> VerifyGPUCode(const PrimFunc& lowered, const GpuLimits& limits) {
  std::vector<std::string> issues;
  GpuKernels ks;
  try {
    ks = SplitKernels(lowered);
  } catch (const IRError& e) {
    issues.push_back(e.what());
    return issues;
  }
  for (size_t i = 0; i < ks.kernels.size(); ++i) {
    const GpuKernel& k = ks.kernels[i];
    const std::string where = "kernel " + std::to_string(i);
    int64_t threads = k.block[0] * k.block[1] * k.block[2];
    if (threads > limits.max_threads_per_block) {
      issues.push_back(where + ": " + std::to_string(threads) + " threads per block exceed " +
                       std::to_string(limits.max_threads_per_block));
    }
    for (int d = 0; d < 3; ++d) {
      const char axis = static_cast<char>('x' + d);
      if (k.block[d] > kMaxBlockDim[d]) {
        issues.push_back(where + ": threadIdx." + axis + " extent " + std::to_string(k.block[d]) +
                         " exceeds " + std::to_string(kMaxBlockDim[d]));
      }
      if (k.grid[d] > kMaxGridDim[d]) {
        issues.push_back(where + ": blockIdx." + axis + " extent " + std::to_string(k.grid[d]) +
                         " exceeds " + std::to_string(kMaxGridDim[d]));
      }
    }
    int64_t shared = 0;
    for (const Buffer& b : k.shared) {
      int64_t n = 1;
      for (const Expr& e : b.shape()) {
        int64_t d = 0;
        if (!AsConstInt(e, &d)) {
          issues.push_back(where + ": shared buffer '" + b.name() + "' has no constant size");
          d = 0;
        }
        n *= d;
      }
      shared += n * ((b.dtype().bits() * b.dtype().lanes() + 7) / 8);
    }
    if (shared > limits.max_shared_memory_per_block) {
      issues.push_back(where + ": " + std::to_string(shared) +
                       " bytes of shared memory per block exceed " +
                       std::to_string(limits.max_shared_memory_per_block));
    }
    Var tx;
    for (const LaunchAxis& a : k.launch) {
      if (a.tag == "threadIdx.x") tx = a.var;
    }
    BodyChecker(limits, where, tx, k.block[0], &issues).VisitStmt(k.body);
  }
  return issues;
}

}  // namespace kiln::ir::transform
