// Compares a candidate's outputs with the reference's, with tolerances that
// depend on the dtype (reductions may be reordered by a schedule, so floats
// are compared up to rounding) and NaN-aware (NaN matches only NaN).
#pragma once

#include <optional>
#include <string>

#include "ir/ndarray.h"

namespace kiln::rpc {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};
// Exact for integers and bool; per-format for floats.
Tolerance ToleranceFor(ir::DataType dtype);

// nullopt when every element matches: |got - expected| <= atol + rtol*|expected|.
// Otherwise a message naming the argument, the worst element's index, the
// got / expected values, the error and the number of mismatches.
std::optional<std::string> CompareOutput(const std::string& name, const ir::NDArray& got,
                                         const ir::NDArray& expected);

}  // namespace kiln::rpc
