// Lane analysis for the CPU backend's widened (vectorized) loops: whether a
// loop body can be widened at all, and how an index moves from lane to lane.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/expr.h"
#include "ir/stmt.h"

namespace kiln::codegen {

// Whether `e` mentions the variable `v`.
bool UsesVar(const ir::Expr& e, const ir::VarNode* v);

// Whether a vectorized loop over `lane_var` must stay a scalar loop: its
// body has a statement the widened form cannot express (an if, an
// allocation scope), or a T.if_then_else whose condition differs between
// lanes (each lane may evaluate only its own branch: padding guards loads
// that would be out of bounds). A condition that is the same for every lane
// (the usual padding test on a spatial index, with the lanes over channels)
// becomes one branch per group of lanes.
bool NeedsScalarLoop(const ir::Stmt& s, const ir::VarNode* lane_var);

// The constant per-lane step of `index` in `v` when index is affine in v
// with a constant coefficient; nullopt otherwise (the index needs a gather).
std::optional<int64_t> LaneStride(const ir::Expr& e, const ir::VarNode* v);

}  // namespace kiln::codegen
