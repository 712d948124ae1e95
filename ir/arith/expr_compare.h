// Structural order and equality of expressions, for canonical forms.
//
// The order never looks at addresses, so canonical forms come out the same in
// every run: variables compare by name and type, everything else by kind,
// type, payload and children. Two different variables with the same name are
// equivalent in the order (Compare returns 0) yet not Equal; callers keep such
// ties in their input order.
#pragma once

#include "ir/expr.h"

namespace kiln::ir::arith {

// <0, 0 or >0 as a sorts before, with, or after b.
int ExprCompare(const Expr& a, const Expr& b);
// Same structure, same constants, same variables (by identity).
bool ExprEqual(const Expr& a, const Expr& b);

}  // namespace kiln::ir::arith
