// The lowering pipeline: a (scheduled) PrimFunc in block form becomes the
// loop-only form the backends compile.
//
// The lowered form (what every backend may rely on):
//  - Parameters keep their order; every buffer, parameters included, is
//    flattened to one dimension (row-major), so a kernel argument is a plain
//    pointer to contiguous data.
//  - No block with iteration variables is left: bindings are substituted,
//    predicates became IfThenElse, a reduction's init runs where the first
//    reduction step would (under the condition that every reduce iterator is
//    at its start).
//  - The only BlockRealize nodes left are *allocation scopes*: no iter vars,
//    no bindings, predicate true, no init, empty reads/writes, and a non-empty
//    alloc_buffers. Each sits at the lowest common ancestor of its buffers'
//    uses (so a cache under a parallel loop is private to each iteration), and
//    each allocated buffer is sized to the region actually used.
//  - Loops keep their ForKind. A parallel loop is never nested in another
//    parallel loop; a vectorized loop has a constant extent and a body of
//    stores/loads/arithmetic only (otherwise it was demoted to serial); an
//    unrolled loop has a constant extent.
//  - Expressions are simplified; the text form prints and parses it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/prim_func.h"

namespace kiln::ir::transform {

// One named pass: a plain function from PrimFunc to PrimFunc.
struct Pass {
  std::string name;
  std::function<PrimFunc(const PrimFunc&)> run;
};

// The passes, in order, that Lower runs.
std::vector<Pass> LoweringPipeline();

// Runs the pipeline. If after_each is set it is called with every pass's name
// and output (kiln lower --print-after-all). Throws IRError on input the
// pipeline cannot lower, naming the pass.
PrimFunc Lower(const PrimFunc& func,
               const std::function<void(const std::string& pass, const PrimFunc&)>& after_each = {});

}  // namespace kiln::ir::transform
