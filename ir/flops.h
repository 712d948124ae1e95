// Floating-point (and integer) operation count of a PrimFunc, computed the way
// TVM's estimate_tir_flops does, so figures compare with TVM's.
//
// Counted: every arithmetic binary op (+ - * / % // min max) in stored values,
// times the extents of the enclosing loops. Not counted: index arithmetic
// inside loads and store indices, comparisons, intrinsic calls themselves (their
// arguments are; for if_then_else all three), casts themselves, and block
// inits. Select and an if statement count their condition plus the costlier
// branch. A loop with a non-constant extent counts once.
#pragma once

#include "ir/prim_func.h"
#include "ir/stmt.h"

namespace kiln::ir {

double EstimateFlops(const PrimFunc& func);
double EstimateFlops(const Stmt& stmt);

}  // namespace kiln::ir
