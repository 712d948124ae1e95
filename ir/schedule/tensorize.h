// Tensorize: mark a blockized block as computed by a registered tensor
// intrinsic (tensor_intrin.h) after checking that it matches the
// intrinsic's description (tensor_intrin_match.h); primitive/tensorize.cc.
#pragma once

#include <string>

#include "ir/schedule/instruction.h"
#include "ir/schedule/schedule.h"

namespace kiln::ir {

// `target` is a block made by blockize, or a loop: then the loops under it
// are blockized first (a Blockize instruction in the trace, as if called
// directly) and the new block is tensorized. Throws ScheduleError naming
// the block, the intrinsic and what did not match, and leaves the schedule
// as it was.
void Tensorize(Schedule& sch, BlockOrLoop target, const std::string& intrin,
               bool preserve_unit_iters = true);

namespace instruction_kinds {
const InstructionKind& Tensorize();
}  // namespace instruction_kinds

}  // namespace kiln::ir
