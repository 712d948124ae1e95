// compute_inline / reverse_compute_inline feasibility, for the schedule
// rules and samplers that must decide before they act (sample_compute_location
// offers "inline" only where compute_inline would succeed).
#pragma once

#include <string>

#include "ir/prim_func.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/stmt_path.h"

namespace kiln::ir {

// True if compute_inline would accept the block at block_path.back() (a
// BlockRealize) in `func`; block_path must be a path in func's body (e.g.
// from FindBlockPath), which is all that is read. On false, *why (if given) receives the message
// the primitive would raise.
bool CanComputeInline(const PrimFunc& func, const StmtPath& block_path, std::string* why = nullptr);
bool CanComputeInline(const Schedule& sch, BlockRV block, std::string* why = nullptr);

// The same for reverse_compute_inline (the block is the consumer).
bool CanReverseComputeInline(const PrimFunc& func, const StmtPath& block_path,
                             std::string* why = nullptr);
bool CanReverseComputeInline(const Schedule& sch, BlockRV block, std::string* why = nullptr);

}  // namespace kiln::ir
