// Property test: random sequences of schedule primitives on every suite
// workload (at reduced shapes) either raise a ScheduleError — leaving the
// schedule as it was — or produce a well-formed program that computes what
// the original computes, and whose trace replays to the same program.
#include <gtest/gtest.h>

#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "schedule_test_util.h"
#include "tests/common/random_schedule.h"
#include "tests/common/reduced_suite.h"

namespace kiln::ir {
namespace {

using Case = kiln::testing::ReducedCase;
using kiln::testing::ReducedSuite;

class ScheduleProperty : public ::testing::TestWithParam<int> {};

TEST_P(ScheduleProperty, RandomSchedulesRefuseOrPreserveSemantics) {
  const Case c = ReducedSuite()[GetParam()];
  const PrimFunc original = c.make();
  RandomEngine rng(1000 + GetParam());
  int applied = 0, refused = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Schedule sch(original, rng.ForkSeed());
    const int steps = static_cast<int>(rng.SampleInt(1, 7));
    for (int s = 0; s < steps; ++s) {
      const Stmt before = sch.func().body;
      try {
        kiln::testing::RandomStep(sch, rng, kiln::testing::kStructuralSteps, {"global", "local", "shared"});
        ++applied;
      } catch (const ScheduleError&) {
        ++refused;
        // A refusal changes nothing.
        ASSERT_TRUE(sch.func().body.same_as(before)) << c.name << " trial " << trial;
      }
    }
    SCOPED_TRACE(std::string(c.name) + " trial " + std::to_string(trial) + "\n" +
                 sch.trace().AsPython());
    ASSERT_TRUE(testing::SameResult(original, sch.func(), 11, /*reordered_reduction=*/true));
    ASSERT_TRUE(testing::WellFormed(sch.func()));
    ASSERT_TRUE(testing::ReplaysExactly(original, sch));
  }
  // The generator must actually exercise the primitives.
  EXPECT_GT(applied, 100) << c.name << ": " << applied << " applied, " << refused << " refused";
}

INSTANTIATE_TEST_SUITE_P(Suite, ScheduleProperty,
                         ::testing::Range(0, static_cast<int>(ReducedSuite().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(ReducedSuite()[info.param].name);
                         });

}  // namespace
}  // namespace kiln::ir
