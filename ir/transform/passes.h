// The individual lowering passes, in the order LoweringPipeline runs them.
// Each is a plain PrimFunc -> PrimFunc function; see lower.h for the form
// the whole pipeline produces. Passes after BlocksToLoops expect its output.
#pragma once

#include "ir/prim_func.h"

namespace kiln::ir::transform {

// Moves every block's alloc_buffers to the lowest common ancestor of the
// buffer's uses: onto that block when it is a block, into a new
// allocation-scope block around the loop body when it is a loop, onto the
// root block when it is the whole function. Unused buffers are dropped.
// The allocation stops above a loop when a value may flow between its
// iterations, which needs the buffer to outlive one of them. It moves under
// the loop when its iterations touch disjoint elements (checked by
// enumerating the iterations, 4096 at most), or when each iteration writes
// every element it reads before reading it (the region-cover proof of
// ir/arith/region_bound.h: a convolution's padding computed under the
// parallel loop, whose iterations share a halo).
// Storage-alignment requests ("buffer_dim_align" on the writing block) move
// with the buffer onto its new allocating block.
PrimFunc PlanBufferAllocation(const PrimFunc& func);

// TVM's placement: every allocation at the lowest common ancestor of its
// uses, without the check above that no value flows between iterations of
// the loops it moves under (which enumerates iterations and dominates the
// cost of the pass). The result is not safe to compile; it is for analyses
// that want where a buffer lives and how much of it is used, such as the
// cost model's features (cost_model/feature_extractor.cc).
PrimFunc PlanBufferAllocationAtLca(const PrimFunc& func);

// Replaces every non-root block by its body with the iteration variables
// substituted by their bindings; the init runs first under "every reduce
// iterator at its domain minimum"; a non-true predicate becomes an
// IfThenElse. Reads, writes and iter vars are dropped; a block that allocates
// becomes an allocation scope.
PrimFunc BlocksToLoops(const PrimFunc& func);

// Shrinks each allocated buffer to the region accessed under its allocation
// scope (loops inside the scope relaxed to their ranges) and shifts the
// indices; storage-alignment requests become strides.
PrimFunc CompactBufferAllocation(const PrimFunc& func);

// Every buffer, parameters included, becomes one-dimensional (row-major, or
// by its strides when it has them).
PrimFunc FlattenBuffer(const PrimFunc& func);

// Simplifies every integer and boolean expression with the arith Analyzer
// (loop variables bound to their ranges, if conditions assumed in their
// branches), drops branches whose condition is provably constant, and
// replaces loops of extent one by their body.
PrimFunc Simplify(const PrimFunc& func);

// Demotes vectorized loops that cannot be vectorized (extent not constant,
// or a body with loops, ifs or allocations) to serial, and parallel loops
// nested in a parallel loop to serial.
PrimFunc LegalizeLoopKinds(const PrimFunc& func);

// Unrolled loops with a constant extent are replicated; loops under a
// "pragma_auto_unroll_max_step" annotation whose step count is within the
// maximum become unrolled (replicated unless "pragma_unroll_explicit" is 0).
// Steps count as TVM's UnrollLoop counts them: the stores a loop executes,
// a vectorized loop's stores once each (each becomes one vector store), so
// a micro-kernel's reduction loop over a few vector updates unrolls.
// A loop whose body allocates is marked unrolled instead of replicated; an
// unrolled loop without a constant extent becomes serial.
PrimFunc UnrollLoops(const PrimFunc& func);

}  // namespace kiln::ir::transform

// GPU lowering (LoweringPipeline for a cuda target runs the first before and
// the other two after the passes above; gpu_kernels.h describes the form they produce).
namespace kiln::ir::transform {

// Blocks Tensorize marked become one annotated unit loop each, naming the
// first and last element of every operand tile (block form, so this runs
// first; lower_tensor_intrin.cc, ir/tensor_intrin/tensor_intrin.h).
PrimFunc LowerTensorIntrin(const PrimFunc& func);

// Reductions whose reduce loop is bound to threadIdx (block form, so this
// runs first): per-thread partials, then a tree over them in shared memory
// (lower_cross_thread_reduction.cc shows the code made).
PrimFunc LowerCrossThreadReduction(const PrimFunc& func);

// Each top-level statement that starts with a blockIdx/threadIdx loop
// becomes a kernel: all loops bound to one axis (one constant extent per
// axis and kernel, else IRError) are replaced by one launch loop per axis
// around the kernel; vthread loops become serial loops annotated "vthread".
// A statement outside every thread loop is an IRError.
PrimFunc LowerThreadBinding(const PrimFunc& func);

// Inserts T.tvm_storage_sync("shared") where threads of a block may read
// shared memory other threads wrote since the last barrier, or overwrite
// shared memory others may still read (inject_storage_sync.cc).
PrimFunc InjectStorageSync(const PrimFunc& func);

}  // namespace kiln::ir::transform
