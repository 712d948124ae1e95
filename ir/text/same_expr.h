// A cheap structural comparison used by the text form to decide what it may
// elide (a remap domain, a region's stop written as "min + extent").
#pragma once

#include "ir/expr.h"

namespace kiln::ir::text {

// True when a and b have the same shape, types and constants, and name the
// same variable and buffer nodes. Unlike structural equality it never maps
// one variable onto another.
bool SameExpr(const Expr& a, const Expr& b);

// Python keywords and names the text form itself uses ("T", "range").
bool IsReservedName(const std::string& name);

}  // namespace kiln::ir::text
