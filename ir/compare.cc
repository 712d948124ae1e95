#include "ir/compare.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace kiln::ir {

namespace {

// Shortest text that reads back as the same value of type t.
std::string FormatValue(double v, DataType t) {
  if (t.is_integer() || t.is_bool()) {
    if (t.is_uint() && t.bits() == 64) return fmt::format("{}", static_cast<uint64_t>(v));
    return fmt::format("{}", static_cast<int64_t>(v));
  }
  if (t.is_float() && t.bits() == 64) return fmt::format("{}", v);
  return fmt::format("{}", static_cast<float>(v));
}

std::string FormatInt(int64_t v, DataType t) {
  if (t.is_uint() && t.bits() == 64) return fmt::format("{}", static_cast<uint64_t>(v));
  return fmt::format("{}", v);
}

}  // namespace

Tolerance Tolerance::For(DataType t) {
  if (t.is_bfloat()) return {2e-2, 2e-2};
  if (t.is_float()) {
    switch (t.bits()) {
      case 16:
        return {1e-2, 1e-2};
      case 32:
        return {1e-5, 1e-5};
      default:
        return {1e-9, 1e-9};
    }
  }
  return {0, 0};
}

CompareResult Compare(const NDArray& expected, const NDArray& actual, Tolerance tol,
                      const std::string& name) {
  CompareResult r;
  const std::string label = name.empty() ? std::string("array") : name;
  if (!expected.defined() || !actual.defined()) {
    r.ok = false;
    r.message = label + ": " + (expected.defined() ? "actual" : "expected") + " array is empty";
    return r;
  }
  if (expected.dtype() != actual.dtype()) {
    r.ok = false;
    r.message = label + ": dtype differs: expected " + expected.dtype().str() + ", got " +
                actual.dtype().str();
    return r;
  }
  if (expected.shape() != actual.shape()) {
    r.ok = false;
    r.message = label + ": shape differs: expected " + expected.ShapeString() + ", got " +
                actual.ShapeString();
    return r;
  }
  const DataType t = expected.dtype();
  const int64_t n = expected.size();
  const bool exact_ints = !t.is_floating() && tol.rtol == 0 && tol.atol == 0;
  // How far past its tolerance the worst element is; infinity for NaN and
  // infinity mismatches so they always win.
  double worst_excess = -1;
  for (int64_t i = 0; i < n; ++i) {
    double e, a, excess;
    if (exact_ints) {
      int64_t ei = expected.GetAsInt64(i), ai = actual.GetAsInt64(i);
      if (ei == ai) continue;
      e = IntToDouble(ei, t);
      a = IntToDouble(ai, t);
      excess = std::fabs(a - e);
      if (excess == 0) excess = std::numeric_limits<double>::min();  // beyond 2^53
    } else {
      e = expected.GetAsDouble(i);
      a = actual.GetAsDouble(i);
      if (std::isnan(e) && std::isnan(a)) continue;
      if (std::isinf(e) || std::isinf(a) || std::isnan(e) || std::isnan(a)) {
        if (e == a) continue;  // same infinity
        excess = std::numeric_limits<double>::infinity();
      } else {
        double err = std::fabs(a - e);
        double allowed = tol.atol + tol.rtol * std::fabs(e);
        if (err <= allowed) continue;
        excess = allowed > 0 ? err / allowed : std::numeric_limits<double>::max();
      }
    }
    ++r.mismatches;
    if (excess > worst_excess) {
      worst_excess = excess;
      r.worst_index = i;
      r.expected = e;
      r.actual = a;
    }
  }
  if (r.mismatches == 0) {
    r.message = fmt::format("{}: all {} elements match", label, n);
    return r;
  }
  r.ok = false;
  r.abs_err = std::fabs(r.actual - r.expected);
  if (std::isnan(r.abs_err)) r.abs_err = std::numeric_limits<double>::quiet_NaN();
  r.rel_err = r.expected != 0 ? r.abs_err / std::fabs(r.expected)
                              : (r.abs_err == 0 ? 0 : std::numeric_limits<double>::infinity());
  std::string e_text, a_text;
  if (exact_ints) {
    e_text = FormatInt(expected.GetAsInt64(r.worst_index), t);
    a_text = FormatInt(actual.GetAsInt64(r.worst_index), t);
  } else {
    e_text = FormatValue(r.expected, t);
    a_text = FormatValue(r.actual, t);
  }
  r.message = fmt::format(
      "{}{}: expected {}, got {} (abs err {:.3g}, rel err {:.3g}); {} of {} elements differ",
      name.empty() ? std::string("element ") : name, expected.IndexString(r.worst_index), e_text,
      a_text, r.abs_err, r.rel_err, r.mismatches, n);
  return r;
}

}  // namespace kiln::ir
