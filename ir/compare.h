// Dtype-aware, NaN-aware comparison of a computed tensor against a reference.
#pragma once

#include <cstdint>
#include <string>

#include "ir/dtype.h"
#include "ir/ndarray.h"

namespace kiln::ir {

// An element matches when |actual - expected| <= atol + rtol * |expected|
// (numpy's isclose). NaN matches NaN; an infinity matches only itself.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
  // Defaults per element type: float64 1e-9, float32 1e-5, float16 1e-2,
  // bfloat16 2e-2 (both rtol and atol); integers and bool exact.
  static Tolerance For(DataType t);
};

struct CompareResult {
  bool ok = true;
  // The worst mismatch (largest error relative to its tolerance); -1 when
  // every element matches or the arrays are not comparable.
  int64_t worst_index = -1;
  double expected = 0, actual = 0;
  double abs_err = 0, rel_err = 0;
  int64_t mismatches = 0;
  // On failure: "C[3, 17]: expected 1.25, got 1.5 (abs err 0.25, rel err 0.2);
  // 12 of 16384 elements differ", or why the arrays cannot be compared (dtype
  // or shape). On success: "C: all 16384 elements match".
  std::string message;
};

// Compares element by element. Integers and bool compare exactly (as int64)
// when both tolerances are zero.
CompareResult Compare(const NDArray& expected, const NDArray& actual, Tolerance tol,
                      const std::string& name = "");

}  // namespace kiln::ir
