// Shared checks for lowering tests: the lowered function computes what the
// block-form function computes (reference interpreter, same seeded random
// inputs, arguments flattened for the lowered side), is in lowered form, and
// survives a print/parse round trip.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "ir/compare.h"
#include "ir/interpreter.h"
#include "ir/ndarray.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/structural_equal.h"
#include "ir/transform/lower.h"
#include "ir/transform/verify_lowered.h"

namespace kiln::ir::testing {

inline NDArray Flattened(const NDArray& a) {
  NDArray flat(a.dtype(), {a.size()});
  if (a.nbytes()) std::memcpy(flat.data(), a.data(), a.nbytes());
  return flat;
}

// Runs `func` and `lowered` on the same random inputs and compares every
// parameter element by element. Arguments are flattened for a lowered
// function whose parameters are (a stage before flattening keeps shapes, and
// with them the interpreter's per-dimension bounds checks).
inline ::testing::AssertionResult SameAsLowered(const PrimFunc& func, const PrimFunc& lowered,
                                                uint64_t seed = 7) {
  if (func.params.size() != lowered.params.size()) {
    return ::testing::AssertionFailure() << "the parameter lists differ";
  }
  std::vector<NDArray> expected = MakeRandomArgs(func, seed);
  std::vector<NDArray> actual;
  for (size_t i = 0; i < expected.size(); ++i) {
    bool flat = lowered.params[i].ndim() != func.params[i].ndim();
    actual.push_back(flat ? Flattened(expected[i]) : expected[i]);
  }
  try {
    Interpret(func, expected);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "the input does not run: " << e.what();
  }
  try {
    Interpret(lowered, actual);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "the lowered program does not run: " << e.what()
                                         << "\n" << ToText(lowered);
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    CompareResult r = Compare(Flattened(expected[i]), Flattened(actual[i]),
                              Tolerance::For(expected[i].dtype()), func.params[i].name());
    if (!r.ok) {
      return ::testing::AssertionFailure() << r.message << "\nlowered program:\n"
                                           << ToText(lowered);
    }
  }
  return ::testing::AssertionSuccess();
}

// The lowered form's contract holds.
inline ::testing::AssertionResult IsLowered(const PrimFunc& f) {
  auto issues = transform::VerifyLowered(f);
  if (issues.empty()) return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure();
  for (const auto& i : issues) failure << i << "\n";
  return failure << ToText(f);
}

// Printing and parsing back gives a structurally equal function.
inline ::testing::AssertionResult RoundTrips(const PrimFunc& f) {
  std::string text = ToText(f);
  PrimFunc back;
  try {
    back = ParseFunc(text);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "does not parse back: " << e.what() << "\n" << text;
  }
  if (auto m = StructuralMismatch(f, back)) {
    return ::testing::AssertionFailure() << "parses back differently: " << *m << "\n" << text;
  }
  return ::testing::AssertionSuccess();
}

// Lowers and checks everything.
inline void ExpectLowersSoundly(const PrimFunc& f, uint64_t seed = 7) {
  PrimFunc lowered;
  try {
    lowered = transform::Lower(f, [&](const std::string& pass, const PrimFunc& stage) {
      // Before flattening, every access is still bounds-checked per dimension.
      if (pass == "compact_buffer_allocation") {
        EXPECT_TRUE(SameAsLowered(f, stage, seed)) << "after " << pass;
      }
    });
  } catch (const std::exception& e) {
    ADD_FAILURE() << "Lower failed: " << e.what() << "\n" << ToText(f);
    return;
  }
  EXPECT_TRUE(SameAsLowered(f, lowered, seed));
  EXPECT_TRUE(IsLowered(lowered));
  EXPECT_TRUE(RoundTrips(lowered));
}

}  // namespace kiln::ir::testing
