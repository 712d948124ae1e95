// The decisive lowering test: for every suite workload at reduced shapes,
// unscheduled and under random schedules, the lowered function computes what
// the block-form function computes, satisfies the lowered-form contract and
// prints and parses back.
#include <gtest/gtest.h>

#include <functional>
#include <iostream>

#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "lower_test_util.h"
#include "tests/common/random_schedule.h"
#include "tests/common/reduced_suite.h"

namespace kiln::ir {
namespace {

using Case = kiln::testing::ReducedCase;
using kiln::testing::ReducedSuite;
using kiln::testing::RandomStep;

// What a lowered program exercises, so the test can show the random
// schedules reach the interesting cases.
struct Features {
  int alloc_under_parallel = 0;  // an allocation scope inside a parallel loop
  int guarded = 0;               // an IfThenElse (predicate or init guard)
  int vectorized = 0;            // a vectorized loop survived legalization
  int unrolled = 0;              // a kUnrolled loop left for the backend
  int strided = 0;               // an allocation padded by storage_align
};

void Collect(const Stmt& s, bool under_parallel, Features* f, bool* seen_alloc_par,
             bool* seen_if, bool* seen_vec, bool* seen_unroll) {
  if (!s.defined()) return;
  if (const auto* l = s.as<ForNode>()) {
    *seen_vec |= l->for_kind == ForKind::kVectorized;
    *seen_unroll |= l->for_kind == ForKind::kUnrolled;
    return Collect(l->body, under_parallel || l->for_kind == ForKind::kParallel, f,
                   seen_alloc_par, seen_if, seen_vec, seen_unroll);
  }
  if (const auto* q = s.as<SeqStmtNode>()) {
    for (const auto& x : q->seq) Collect(x, under_parallel, f, seen_alloc_par, seen_if, seen_vec, seen_unroll);
    return;
  }
  if (const auto* i = s.as<IfThenElseNode>()) {
    *seen_if = true;
    Collect(i->then_case, under_parallel, f, seen_alloc_par, seen_if, seen_vec, seen_unroll);
    Collect(i->else_case, under_parallel, f, seen_alloc_par, seen_if, seen_vec, seen_unroll);
    return;
  }
  if (const auto* r = s.as<BlockRealizeNode>()) {
    *seen_alloc_par |= under_parallel && !r->block->alloc_buffers.empty();
    Collect(r->block->body, under_parallel, f, seen_alloc_par, seen_if, seen_vec, seen_unroll);
  }
}

void Count(const PrimFunc& lowered, const PrimFunc& scheduled, Features* f) {
  bool par = false, guard = false, vec = false, unroll = false;
  Collect(lowered.body, false, f, &par, &guard, &vec, &unroll);
  f->alloc_under_parallel += par;
  f->guarded += guard;
  f->vectorized += vec;
  f->unrolled += unroll;
  f->strided += ToText(scheduled).find("buffer_dim_align") != std::string::npos;
}

class LowerSuite : public ::testing::TestWithParam<int> {};

TEST_P(LowerSuite, UnscheduledLowersSoundly) {
  const Case c = ReducedSuite()[GetParam()];
  SCOPED_TRACE(c.name);
  testing::ExpectLowersSoundly(c.make());
}

TEST_P(LowerSuite, RandomSchedulesLowerSoundly) {
  const Case c = ReducedSuite()[GetParam()];
  const PrimFunc original = c.make();
  RandomEngine rng(5000 + GetParam());
  int applied = 0;
  Features features;
  for (int trial = 0; trial < 100; ++trial) {
    Schedule sch(original, rng.ForkSeed());
    const int steps = static_cast<int>(rng.SampleInt(2, 9));
    for (int s = 0; s < steps; ++s) {
      try {
        RandomStep(sch, rng);
        ++applied;
      } catch (const ScheduleError&) {
      }
    }
    SCOPED_TRACE(std::string(c.name) + " trial " + std::to_string(trial) + "\n" +
                 sch.trace().AsPython());
    testing::ExpectLowersSoundly(sch.func(), 11 + trial);
    if (::testing::Test::HasFailure()) return;
    Count(transform::Lower(sch.func()), sch.func(), &features);
  }
  EXPECT_GT(applied, 200) << c.name;
  // Every workload has reductions or imperfect splits to guard.
  EXPECT_GT(features.guarded, 0) << c.name;
  std::cout << c.name << ": of 100 lowered schedules, " << features.alloc_under_parallel
            << " allocate under a parallel loop, " << features.guarded << " have guards, "
            << features.vectorized << " keep a vectorized loop, " << features.unrolled
            << " keep an unrolled loop, " << features.strided << " request storage alignment\n";
}

INSTANTIATE_TEST_SUITE_P(Suite, LowerSuite,
                         ::testing::Range(0, static_cast<int>(ReducedSuite().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(ReducedSuite()[info.param].name);
                         });

}  // namespace
}  // namespace kiln::ir
