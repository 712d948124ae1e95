// Property test: random sequences of schedule primitives on every suite
// workload (at reduced shapes) either raise a ScheduleError — leaving the
// schedule as it was — or produce a well-formed program that computes what
// the original computes, and whose trace replays to the same program.
#include <gtest/gtest.h>

#include <functional>

#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "schedule_test_util.h"
#include "tests/common/reduced_suite.h"

namespace kiln::ir {
namespace {

using Case = kiln::testing::ReducedCase;
using kiln::testing::ReducedSuite;

std::vector<std::string> BlockNames(const Schedule& sch) {
  std::vector<std::string> names;
  for (const auto* r : AllBlockRealizes(sch.func())) {
    if (r->block->name != "root") names.push_back(r->block->name);
  }
  return names;
}

template <typename T>
const T& Pick(RandomEngine& rng, const std::vector<T>& v) {
  return v[rng.SampleInt(0, static_cast<int64_t>(v.size()))];
}

// Applies one random primitive with random arguments. Throws ScheduleError
// when the primitive refuses.
void RandomStep(Schedule& sch, RandomEngine& rng) {
  const std::vector<std::string> names = BlockNames(sch);
  BlockRV block = sch.GetBlock(Pick(rng, names));
  std::vector<LoopRV> loops = sch.GetLoops(block);
  const std::vector<std::string> scopes = {"global", "local", "shared"};
  auto other_loop = [&]() -> LoopRV {
    std::vector<LoopRV> all = sch.GetLoops(sch.GetBlock(Pick(rng, names)));
    if (all.empty()) throw ScheduleError("property", "no loop to pick");
    return Pick(rng, all);
  };
  switch (rng.SampleInt(0, 11)) {
    case 0: {  // split, perfect or with an inferred outer factor
      if (loops.empty()) return;
      LoopRV l = Pick(rng, loops);
      if (rng.SampleInt(0, 2) == 0) {
        auto f = sch.SamplePerfectTile(l, static_cast<int>(rng.SampleInt(2, 4)), 16);
        std::vector<Factor> factors(f.begin(), f.end());
        sch.Split(l, factors);
      } else {
        sch.Split(l, {std::monostate{}, rng.SampleInt(2, 5)});
      }
      return;
    }
    case 1: {  // reorder a random subset
      if (loops.size() < 2) return;
      std::vector<int64_t> idx = rng.SampleWithoutReplacement(static_cast<int64_t>(loops.size()),
                                                              std::min<int64_t>(3, loops.size()));
      std::vector<LoopRV> order;
      for (int64_t i : idx) order.push_back(loops[i]);
      sch.Reorder(order);
      return;
    }
    case 2: {  // fuse two adjacent loops
      if (loops.size() < 2) return;
      int64_t i = rng.SampleInt(0, static_cast<int64_t>(loops.size()) - 1);
      sch.Fuse({loops[i], loops[i + 1]});
      return;
    }
    case 3: {
      int reads = static_cast<int>(sch.Get(block).reads.size());
      if (reads == 0) return;
      sch.CacheRead(block, static_cast<int>(rng.SampleInt(0, reads)), Pick(rng, scopes));
      return;
    }
    case 4: {
      int writes = static_cast<int>(sch.Get(block).writes.size());
      sch.CacheWrite(block, static_cast<int>(rng.SampleInt(0, writes)), Pick(rng, scopes));
      return;
    }
    case 5:
      sch.ComputeAt(block, other_loop(), rng.SampleInt(0, 2) == 1);
      return;
    case 6:
      sch.ReverseComputeAt(block, other_loop(), rng.SampleInt(0, 2) == 1);
      return;
    case 7:
      sch.ComputeInline(block);
      return;
    case 8:
      sch.ReverseComputeInline(block);
      return;
    case 9: {
      if (loops.empty()) return;
      LoopRV l = Pick(rng, loops);
      sch.RFactor(l, static_cast<int>(rng.SampleInt(0, 3)));
      return;
    }
    default: {
      if (loops.empty()) return;
      sch.DecomposeReduction(block, Pick(rng, loops));
      return;
    }
  }
}

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
        RandomStep(sch, rng);
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
