#include "rpc/output_check.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace kiln::rpc {

Tolerance ToleranceFor(ir::DataType dtype) {
  if (dtype.is_bfloat()) return {5e-2, 5e-2};
  if (dtype.is_float()) {
    switch (dtype.bits()) {
      case 16: return {1e-2, 1e-2};
      case 32: return {2e-3, 1e-3};  // what TVM's validate_database uses
      default: return {1e-7, 1e-7};
    }
  }
  return {0, 0};
}

std::optional<std::string> CompareOutput(const std::string& name, const ir::NDArray& got,
                                         const ir::NDArray& expected) {
  if (got.dtype() != expected.dtype() || got.shape() != expected.shape()) {
    return fmt::format("output '{}': got {}{} but expected {}{}", name, got.dtype().str(),
                       got.ShapeString(), expected.dtype().str(), expected.ShapeString());
  }
  const ir::DataType dtype = expected.dtype();
  const Tolerance tol = ToleranceFor(dtype);
  int64_t mismatches = 0;
  int64_t worst = -1;
  double worst_ratio = -1;
  for (int64_t i = 0; i < expected.size(); ++i) {
    bool bad;
    double ratio;
    if (dtype.is_floating()) {
      double g = got.GetAsDouble(i), e = expected.GetAsDouble(i);
      if (std::isnan(e) || std::isnan(g)) {
        bad = std::isnan(e) != std::isnan(g);
        ratio = bad ? std::numeric_limits<double>::infinity() : 0;
      } else if (std::isinf(e) || std::isinf(g)) {
        bad = g != e;
        ratio = bad ? std::numeric_limits<double>::infinity() : 0;
      } else {
        double err = std::fabs(g - e);
        double allowed = tol.atol + tol.rtol * std::fabs(e);
        bad = err > allowed;
        ratio = err / allowed;
      }
    } else {
      bad = got.GetAsInt64(i) != expected.GetAsInt64(i);
      ratio = bad ? 1 : 0;
    }
    if (bad) {
      ++mismatches;
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        worst = i;
      }
    }
  }
  if (mismatches == 0) return std::nullopt;
  std::string values;
  if (dtype.is_floating()) {
    double g = got.GetAsDouble(worst), e = expected.GetAsDouble(worst);
    values = fmt::format("got {}, expected {}, error {} (tolerance {} + {} * |expected|)", g, e,
                         std::fabs(g - e), tol.atol, tol.rtol);
  } else {
    int64_t g = got.GetAsInt64(worst), e = expected.GetAsInt64(worst);
    values = fmt::format("got {}, expected {} (integers must match exactly)", g, e);
  }
  return fmt::format("output '{}' differs from the reference at {}: {}; {} of {} elements differ",
                     name, expected.IndexString(worst), values, mismatches, expected.size());
}

}  // namespace kiln::rpc
