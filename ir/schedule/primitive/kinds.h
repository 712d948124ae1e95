// The instruction kinds, one accessor per kind, defined next to the
// primitive they record (ir/schedule/primitive/<primitive>.cc) with
// kind_definition::DefineKind (ir/schedule/define_kind.h), which takes the name once.
// The registry in instruction_kind.cc lists them all.
#pragma once

#include "ir/schedule/instruction.h"

namespace kiln::ir::instruction_kinds {

// sampling.cc
const InstructionKind& SampleCategorical();
const InstructionKind& SamplePerfectTile();
// get_block_loop.cc
const InstructionKind& GetBlock();
const InstructionKind& GetLoops();
const InstructionKind& GetChildBlocks();
const InstructionKind& GetProducers();
const InstructionKind& GetConsumers();
// split.cc, fuse.cc, reorder.cc, add_unit_loop.cc
const InstructionKind& Split();
const InstructionKind& Fuse();
const InstructionKind& Reorder();
const InstructionKind& AddUnitLoop();
// for_kind.cc
const InstructionKind& Parallel();
const InstructionKind& Vectorize();
const InstructionKind& Bind();
const InstructionKind& Unroll();
// annotate.cc
const InstructionKind& Annotate();
const InstructionKind& Unannotate();
// set_scope.cc
const InstructionKind& SetScope();
// storage_align.cc
const InstructionKind& StorageAlign();
// cache_read.cc, cache_write.cc
const InstructionKind& CacheRead();
const InstructionKind& CacheWrite();
// compute_at.cc
const InstructionKind& ComputeAt();
const InstructionKind& ReverseComputeAt();
// sample_compute_location.cc
const InstructionKind& SampleComputeLocation();
// compute_inline.cc, reverse_compute_inline.cc
const InstructionKind& ComputeInline();
const InstructionKind& ReverseComputeInline();
// decompose_reduction.cc
const InstructionKind& DecomposeReduction();
// rfactor.cc
const InstructionKind& RFactor();
// blockize.cc
const InstructionKind& Blockize();
// transform_layout.cc
const InstructionKind& TransformLayout();
// enter_postproc.cc
const InstructionKind& EnterPostproc();

}  // namespace kiln::ir::instruction_kinds
