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

PrimFunc Lower(const PrimFunc& func,
               const std::function<void(const std::string& pass, const PrimFunc&)>& after_each) {
  PrimFunc f = func;
  for (const Pass& p : LoweringPipeline()) {
    try {
      f = p.run(f);
    } catch (const IRError& e) {
      throw IRError("lowering pass " + p.name + ": " + e.what());
    }
    if (after_each) after_each(p.name, f);
  }
  return f;
}

}  // namespace kiln::ir::transform
