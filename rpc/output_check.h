// How the runner decides that a candidate's outputs equal the reference's:
// ir::Compare (dtype-aware, NaN-aware, names the worst element) with the
// tolerances TVM's validation uses, which are looser than ir::Tolerance::For
// because a schedule may reorder a reduction and so change its rounding.
#pragma once

#include <optional>
#include <string>

#include "ir/compare.h"
#include "ir/ndarray.h"

namespace kiln::rpc {

// float32 atol 2e-3 rtol 1e-3, float16 1e-2/1e-2, bfloat16 5e-2/5e-2,
// float64 1e-7/1e-7; integers and bool exact.
ir::Tolerance ToleranceFor(ir::DataType dtype);

// nullopt when every element of `got` matches `expected` within
// ToleranceFor(expected.dtype()); otherwise ir::Compare's message (argument,
// worst element, values, errors, mismatch count) and the tolerance used.
std::optional<std::string> CompareOutput(const std::string& name, const ir::NDArray& got,
                                         const ir::NDArray& expected);

}  // namespace kiln::rpc
