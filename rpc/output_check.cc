#include "rpc/output_check.h"

#include <fmt/format.h>

#include <cstring>

namespace kiln::rpc {

ir::Tolerance ToleranceFor(ir::DataType dtype) {
  ir::Tolerance t;  // exact: integers and bool
  if (dtype.is_bfloat()) {
    t.atol = t.rtol = 5e-2;
  } else if (dtype.is_float()) {
    switch (dtype.bits()) {
      case 16: t.atol = t.rtol = 1e-2; break;
      case 32: t.atol = 2e-3; t.rtol = 1e-3; break;  // TVM's validate_database
      default: t.atol = t.rtol = 1e-7; break;
    }
  }
  return t;
}

std::optional<std::string> CompareOutput(const std::string& name, const ir::NDArray& got,
                                         const ir::NDArray& expected) {
  // Bitwise-equal arrays match under any tolerance (NaN bits match NaN):
  // this settles the unchanged inputs and most outputs at memcmp speed,
  // which matters because the check runs for every candidate.
  if (got.defined() && expected.defined() && got.dtype() == expected.dtype() &&
      got.shape() == expected.shape() &&
      std::memcmp(got.data(), expected.data(), expected.nbytes()) == 0) {
    return std::nullopt;
  }
  const ir::Tolerance tol = ToleranceFor(expected.dtype());
  ir::CompareResult r = ir::Compare(expected, got, tol, name);
  if (r.ok) return std::nullopt;
  if (r.worst_index < 0) return "output " + r.message;  // not comparable: dtype or shape
  const std::string rule = tol.atol == 0 && tol.rtol == 0
                               ? std::string("integers must match exactly")
                               : fmt::format("tolerance {} + {} * |expected|", tol.atol, tol.rtol);
  return fmt::format("output {} ({})", r.message, rule);
}

}  // namespace kiln::rpc
