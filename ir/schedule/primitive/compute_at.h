// The legality-checking core of compute_at / reverse_compute_at, shared with
// sample_compute_location (which asks it whether a loop is a legal location
// without changing the schedule).
#pragma once

#include <optional>
#include <string>

#include "ir/prim_func.h"
#include "ir/stmt.h"

namespace kiln::ir {

// The function body after moving block `block_name` under the loop whose
// variable is `loop_var` (reverse: the consumer mirror). Throws ScheduleError
// named after `primitive` when the move is not legal.
Stmt MoveBlockUnderLoop(const PrimFunc& f, const std::string& block_name, const VarNode* loop_var,
                        bool preserve_unit_loops, int index, bool reverse,
                        const std::string& primitive);

// What MoveBlockUnderLoop returns (at the default position), or nothing
// where the move is not legal.
std::optional<Stmt> TryMoveBlockUnderLoop(const PrimFunc& f, const std::string& block_name,
                                          const VarNode* loop_var, bool preserve_unit_loops,
                                          bool reverse);

}  // namespace kiln::ir
