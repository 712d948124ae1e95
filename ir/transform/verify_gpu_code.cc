#include "ir/transform/verify_gpu_code.h"

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/transform/gpu_kernels.h"

namespace kiln::ir::transform {
namespace {

// Hardware limits of every CUDA device since compute capability 3.0.
constexpr int64_t kMaxBlockDim[3] = {1024, 1024, 64};
constexpr int64_t kMaxGridDim[3] = {2147483647, 65535, 65535};

class BodyChecker : public IRVisitor {
 public:
  BodyChecker(const GpuLimits& limits, std::string where, std::vector<std::string>* issues)
      : limits_(limits), where_(std::move(where)), issues_(issues) {}

 protected:
  void VisitFor(const ForNode* op) override {
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
    BodyChecker(limits, where, &issues).VisitStmt(k.body);
  }
  return issues;
}

}  // namespace kiln::ir::transform
