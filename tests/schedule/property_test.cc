// Property test: random sequences of schedule primitives on every suite
// workload (at reduced shapes) either raise a ScheduleError — leaving the
// schedule as it was — or produce a well-formed program that computes what
// the original computes, and whose trace replays to the same program.
#include <gtest/gtest.h>

#include "ir/schedule/analysis.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/stmt_path.h"
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

// SimplifyBlockBindings reports the blocks whose bindings its iteration
// map proved affine, and split and fuse note that as a fact that spares
// parallel and vectorize the check (schedule_fact.h): every block it
// reports must be one IsAffineBinding accepts in the rewritten program.
TEST(ScheduleProperty, BindingsReportedAffineAreAffine) {
  int reported = 0;
  for (size_t k = 0; k < ReducedSuite().size(); ++k) {
    const Case c = ReducedSuite()[k];
    const PrimFunc original = c.make();
    RandomEngine rng(2000 + static_cast<int64_t>(k));
    for (int trial = 0; trial < 40; ++trial) {
      Schedule sch(original, rng.ForkSeed());
      const int steps = static_cast<int>(rng.SampleInt(1, 7));
      for (int s = 0; s < steps; ++s) {
        try {
          kiln::testing::RandomStep(sch, rng, kiln::testing::kStructuralSteps, {"global", "local"});
        } catch (const ScheduleError&) {
        }
      }
      // Every loop's subtree simplified as split and fuse simplify theirs.
      for (const std::string& block : kiln::testing::BlockNames(sch)) {
        for (LoopRV l : sch.GetLoops(sch.GetBlock(block))) {
          const PrimFunc& f = sch.func();
          const StmtPath path = *FindLoopPath(f, sch.Get(l).loop_var.get());
          std::vector<std::string> affine;
          PrimFunc g = f;
          g.body = ReplaceAlongPath(
              path, SimplifyBlockBindings(path.back(), LoopDomainOf(path), true, &affine));
          for (const std::string& name : affine) {
            ++reported;
            std::string why;
            EXPECT_TRUE(IsAffineBinding(*FindBlockPath(g, name), &why))
                << c.name << " trial " << trial << " block " << name << ": " << why << "\n"
                << sch.trace().AsPython();
          }
        }
      }
    }
  }
  // Bindings of + - * alone are simplified without a map and not reported:
  // the random schedules must still reach the map often (fuse, splits of
  // fused loops).
  EXPECT_GT(reported, 200);
}

INSTANTIATE_TEST_SUITE_P(Suite, ScheduleProperty,
                         ::testing::Range(0, static_cast<int>(ReducedSuite().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(ReducedSuite()[info.param].name);
                         });

}  // namespace
}  // namespace kiln::ir
