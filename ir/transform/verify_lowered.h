// The checker for the lowered form described in lower.h: what backends may
// rely on, checked rather than assumed.
#pragma once

#include <string>
#include <vector>

#include "ir/prim_func.h"

namespace kiln::ir::transform {

// Every way f departs from the lowered form, one message each (naming the
// buffer, block or loop); empty when f is in lowered form. Also runs the IR
// well-formedness checker (ir/verify.h).
std::vector<std::string> VerifyLowered(const PrimFunc& f);

}  // namespace kiln::ir::transform
