// Shared checks for schedule-primitive tests: a scheduled program must compute
// what the original computes (run both in the reference interpreter on the
// same seeded random inputs), and must still be well-formed.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "ir/compare.h"
#include "ir/interpreter.h"
#include "ir/ndarray.h"
#include "ir/text/printer.h"
#include "ir/schedule/schedule.h"
#include "ir/structural_equal.h"
#include "ir/verify.h"

namespace kiln::ir::testing {

// Runs both functions on the same random inputs and compares every param
// (outputs and any in-place inputs). `reordered_reduction` widens the float
// tolerance for schedules that change the order of a reduction (rfactor).
inline ::testing::AssertionResult SameResult(const PrimFunc& original, const PrimFunc& scheduled,
                                             uint64_t seed = 7, bool reordered_reduction = false) {
  if (original.params.size() != scheduled.params.size()) {
    return ::testing::AssertionFailure() << "the parameter lists differ";
  }
  std::vector<NDArray> expected = MakeRandomArgs(original, seed);
  std::vector<NDArray> actual = MakeRandomArgs(scheduled, seed);
  try {
    Interpret(original, expected);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "the original does not run: " << e.what();
  }
  try {
    Interpret(scheduled, actual);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "the scheduled program does not run: " << e.what()
                                         << "\n" << ToText(scheduled);
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    Tolerance tol = Tolerance::For(expected[i].dtype());
    if (reordered_reduction && expected[i].dtype().is_floating()) {
      tol.rtol = std::max(tol.rtol, 1e-4);
      tol.atol = std::max(tol.atol, 1e-4);
    }
    CompareResult r = Compare(expected[i], actual[i], tol, original.params[i].name());
    if (!r.ok) {
      return ::testing::AssertionFailure() << r.message << "\nscheduled program:\n"
                                           << ToText(scheduled);
    }
  }
  return ::testing::AssertionSuccess();
}

// The function verifies clean.
inline ::testing::AssertionResult WellFormed(const PrimFunc& f) {
  auto issues = VerifyFunc(f);
  if (issues.empty()) return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure();
  for (const auto& i : issues) failure << i.where << ": " << i.message << "\n";
  return failure << ToText(f);
}

// Replaying the schedule's own trace on a fresh copy of `original` gives a
// structurally equal program.
inline ::testing::AssertionResult ReplaysExactly(const PrimFunc& original, const Schedule& sch) {
  Schedule fresh(original);
  try {
    Trace::FromJSONString(sch.trace().AsJSONString()).ApplyToSchedule(&fresh, false);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "replay failed: " << e.what();
  }
  if (auto m = StructuralMismatch(sch.func(), fresh.func())) {
    return ::testing::AssertionFailure() << "replay differs: " << *m;
  }
  return ::testing::AssertionSuccess();
}

// Every check a scheduled program must pass: it computes what the original
// computes, it is well-formed, and its trace replays to the same program.
inline void ExpectSound(const PrimFunc& original, const Schedule& sch) {
  EXPECT_TRUE(SameResult(original, sch.func()));
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(original, sch));
}

// Asserts that `statement` throws ScheduleError whose what() contains `needle`.
#define KILN_EXPECT_SCHEDULE_ERROR(statement, needle)                                  \
  do {                                                                                \
    try {                                                                             \
      statement;                                                                      \
      ADD_FAILURE() << "expected a ScheduleError containing: " << (needle);           \
    } catch (const ::kiln::ir::ScheduleError& e) {                                    \
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();   \
    }                                                                                 \
  } while (0)

}  // namespace kiln::ir::testing
