// The lowering pipeline: a (scheduled) PrimFunc in block form becomes the
// loop-only form the backends compile.
//
// The lowered form (what every backend may rely on; VerifyLowered in
// verify_lowered.h checks it):
//  - Parameters keep their order and identity of meaning; every buffer,
//    parameters included, is flattened to one dimension (row-major, padded by
//    storage_align strides where requested), so a kernel argument is a plain
//    pointer to contiguous data. Every access has exactly one index.
//  - The body is still the root BlockRealize (no iter vars, reads, writes or
//    init; it may allocate). No other block with iteration variables is
//    left: bindings are substituted, predicates became IfThenElse, a
//    reduction's init runs where the first reduction step would (under the
//    condition that every reduce iterator is at the start of its domain,
//    placed like TVM's LowerInitBlock).
//  - Every other BlockRealize is an *allocation scope*: no iter vars, no
//    bindings, predicate true, no init, empty reads/writes, no annotations,
//    and a non-empty alloc_buffers. Each sits at the lowest common ancestor
//    of its buffers' uses (so a cache under a parallel loop is private to
//    each iteration: allocate on entry, free on exit), and each allocated
//    buffer has a constant size, shrunk to the region actually used; its
//    scope string ("global", "local", "shared") is kept.
//  - Loops keep their ForKind, annotations other than the unroll pragmas,
//    and loop variables are used only inside their loop. Loops of extent one
//    are gone. A parallel loop is never nested in another parallel loop
//    (the backend outlines each one into a closure) and never writes a
//    buffer allocated outside it (that would be shared by its threads); a vectorized loop has a
//    constant extent and a body of stores, loads and arithmetic only (no
//    loop, if or allocation; indices are scalar expressions of the loop
//    variable, the backend widens them), otherwise it was demoted to serial.
//    Unrolled loops were replicated; a kUnrolled loop that is left (implicit
//    auto-unroll, a body that allocates, more than 1024 copies) has a
//    constant extent and asks the backend's unroller.
//  - Integer and boolean expressions are simplified; statements that do
//    nothing are removed (T.evaluate(0) appears only as an otherwise empty
//    body). The text form prints and parses all of it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/prim_func.h"
#include "ir/target.h"

namespace kiln::ir::transform {

// One named pass: a plain function from PrimFunc to PrimFunc.
struct Pass {
  std::string name;
  std::function<PrimFunc(const PrimFunc&)> run;
};

// The passes, in order, that Lower runs.
std::vector<Pass> LoweringPipeline();

// The passes for a target: the above for llvm; for cuda the same between
// LowerCrossThreadReduction and the GPU passes LowerThreadBinding and
// InjectStorageSync (gpu_kernels.h describes the form they produce).
std::vector<Pass> LoweringPipeline(const Target& target);

// Runs the pipeline. If after_each is set it is called with every pass's name
// and output (kiln lower --print-after-all). Throws IRError on input the
// pipeline cannot lower, naming the pass.
PrimFunc Lower(const PrimFunc& func,
               const std::function<void(const std::string& pass, const PrimFunc&)>& after_each = {});

// Lower with the pipeline for `target`.
PrimFunc Lower(const PrimFunc& func, const Target& target,
               const std::function<void(const std::string& pass, const PrimFunc&)>& after_each = {});

}  // namespace kiln::ir::transform
