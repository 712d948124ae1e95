#include "ir/transform/lower.h"

#include "ir/error.h"
#include "ir/transform/passes.h"

namespace kiln::ir::transform {

std::vector<Pass> LoweringPipeline() {
  return {
      {"plan_buffer_allocation", PlanBufferAllocation},
      {"blocks_to_loops", BlocksToLoops},
      {"compact_buffer_allocation", CompactBufferAllocation},
      {"flatten_buffer", FlattenBuffer},
      {"simplify", Simplify},
      // Unrolling before legalization lets a vectorized loop keep its kind
      // when the loops inside it were unrolled away.
      {"unroll_loops", UnrollLoops},
      {"legalize_loop_kinds", LegalizeLoopKinds},
      {"simplify_after_unroll", Simplify},
  };
}

std::vector<Pass> LoweringPipeline(const Target& target) {
  std::vector<Pass> passes = LoweringPipeline();
  if (target.kind == Target::Kind::kCUDA) {
    passes.insert(passes.begin(), {"lower_cross_thread_reduction", LowerCrossThreadReduction});
    passes.insert(passes.begin(), {"lower_tensor_intrin", LowerTensorIntrin});
    passes.push_back({"lower_thread_binding", LowerThreadBinding});
    passes.push_back({"inject_storage_sync", InjectStorageSync});
  }
  return passes;
}

namespace {

PrimFunc RunPasses(const std::vector<Pass>& passes, const PrimFunc& func,
                   const std::function<void(const std::string&, const PrimFunc&)>& after_each) {
  PrimFunc f = func;
  for (const Pass& p : passes) {
    try {
      f = p.run(f);
    } catch (const IRError& e) {
      throw IRError("lowering pass " + p.name + ": " + e.what());
    }
    if (after_each) after_each(p.name, f);
  }
  return f;
}

}  // namespace

PrimFunc Lower(const PrimFunc& func,
               const std::function<void(const std::string& pass, const PrimFunc&)>& after_each) {
  return RunPasses(LoweringPipeline(), func, after_each);
}

PrimFunc Lower(const PrimFunc& func, const Target& target,
               const std::function<void(const std::string& pass, const PrimFunc&)>& after_each) {
  return RunPasses(LoweringPipeline(target), func, after_each);
}

}  // namespace kiln::ir::transform
