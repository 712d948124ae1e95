// Index arithmetic that folds constants the way TVM's operator constructors do.
//
// te_workload writes `h * stride + rh * dilation` with Python ints; TVM folds
// `x * 1`, `x + 0`, `x // 1` and constant-constant operations while building
// the expression, so a stride-1 convolution reads `PadInput[n, h + rh, ...]`.
// Workload builders use these helpers to produce the same index expressions.
#pragma once

#include <cstdint>

#include "ir/expr.h"

namespace kiln::ir::compute {

Expr FoldAdd(Expr a, Expr b);
Expr FoldSub(Expr a, Expr b);
Expr FoldMul(Expr a, Expr b);
Expr FoldFloorDiv(Expr a, Expr b);
Expr FoldFloorMod(Expr a, Expr b);

// The same with an integer literal (typed like the other operand).
Expr FoldAdd(Expr a, int64_t b);
Expr FoldSub(Expr a, int64_t b);
Expr FoldSub(int64_t a, Expr b);
Expr FoldMul(Expr a, int64_t b);
Expr FoldFloorDiv(Expr a, int64_t b);
Expr FoldFloorMod(Expr a, int64_t b);

// An index constant: int32 when it fits (as TVM types Python ints), else int64.
Expr IndexConst(int64_t value);

}  // namespace kiln::ir::compute
