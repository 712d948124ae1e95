// Postprocessors: run on a candidate after its design-space trace replayed
// (after EnterPostproc, so what they do is recorded after the marker). They
// carry out what the rules deferred (parallel / vectorize / unroll, reduction
// init blocks) and reject candidates that cannot be built. One per file in
// postproc/ (docs/ARCHITECTURE.md §5).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/schedule/schedule.h"

namespace kiln::search {

struct TuneContext;

class Postproc {
 public:
  virtual ~Postproc() = default;
  virtual std::string Name() const = 0;
  virtual void Initialize(const TuneContext& /*ctx*/) {}
  // Rewrites *sch. Returns false, with *why saying what is wrong (naming the
  // block or loop), when the candidate must be rejected; a primitive's
  // ScheduleError is caught and reported that way too.
  virtual bool Apply(ir::Schedule* sch, std::string* why) = 0;
};
using PostprocPtr = std::shared_ptr<Postproc>;

PostprocPtr MakeDisallowDynamicLoop();
PostprocPtr MakeRewriteParallelVectorizeUnroll();
PostprocPtr MakeRewriteReductionBlock();
// GPU postprocessors (docs/ARCHITECTURE.md §5).
PostprocPtr MakeRewriteCooperativeFetch();
PostprocPtr MakeRewriteUnboundBlock(int64_t max_threadblocks = 256);
PostprocPtr MakeVerifyGPUCode();

// TVM's LLVM list without RewriteLayout (no workload here carries
// layout_free_buffers).
std::vector<PostprocPtr> DefaultLLVMPostprocs();
// TVM's CUDA list.
std::vector<PostprocPtr> DefaultCUDAPostprocs();

}  // namespace kiln::search
