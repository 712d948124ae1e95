// The checker for the lowered form described in lower.h: what backends may
// rely on, checked rather than assumed.
#pragma once

#include <string>
#include <vector>

#include "ir/prim_func.h"

namespace kiln::ir::transform {

// Every way f departs from the lowered form, one message each (naming the
// buffer, block or loop); empty when f is in lowered form. Besides the form
// itself it checks scoping: every variable is a loop variable (or a
// parameter's shape variable) in scope, every buffer a parameter or allocated
// by an enclosing scope. (ir/verify.h checks the block form; its static
// bounds and region checks do not apply once blocks are gone.)
std::vector<std::string> VerifyLowered(const PrimFunc& f);

}  // namespace kiln::ir::transform
