// The instruction kinds, one accessor per kind, defined next to the
// primitive they record (ir/schedule/primitive/<primitive>.cc). The registry
// in instruction_kind.cc lists them all.
#pragma once

#include "ir/schedule/instruction.h"

namespace kiln::ir::kinds {

// sampling.cc
const InstructionKind& SampleCategorical();
const InstructionKind& SamplePerfectTile();
// get_block_loop.cc
const InstructionKind& GetBlock();
const InstructionKind& GetLoops();
const InstructionKind& GetChildBlocks();
const InstructionKind& GetProducers();
const InstructionKind& GetConsumers();
// compute_inline.cc, reverse_compute_inline.cc
const InstructionKind& ComputeInline();
const InstructionKind& ReverseComputeInline();
// enter_postproc.cc
const InstructionKind& EnterPostproc();

}  // namespace kiln::ir::kinds
