// ApplyTraceWithPostprocs (search/apply_trace.cc) replays on each thread's
// own copy of the workload: the program it gives must be the one the trace
// gives on the workload itself, on whichever thread, and must compute what
// the workload computes.
#include "search/apply_trace.h"

#include <gtest/gtest.h>

#include <thread>

#include "../schedule/schedule_test_util.h"
#include "ir/schedule/schedule.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "search/replay_trace.h"
#include "search_test_util.h"

namespace kiln::search {
namespace {

TEST(ApplyTraceWithPostprocs, EveryThreadGivesTheWorkloadsOwnProgram) {
  int checked = 0;
  for (const testing::ReducedCase& rc : testing::ReducedSuite()) {
    const ir::PrimFunc f = rc.make();
    const TuneContext ctx = testing::Context(f, "llvm -num-cores=2", /*seed=*/3, /*threads=*/2);
    ReplayTrace replay(ctx);
    for (const Candidate& c : replay.NextBatch(2)) {
      // The recorded trace, postprocessor steps included, on the workload itself.
      ir::Schedule direct(f);
      c.trace.ApplyToSchedule(&direct, /*remove_postproc=*/false);
      ASSERT_TRUE(ir::StructuralEqual(direct.func(), c.scheduled)) << rc.name;

      FailureStats fails;
      std::optional<Candidate> here = ApplyTraceWithPostprocs(ctx, c.trace, 1, &fails);
      std::optional<Candidate> there;
      std::thread other([&] { there = ApplyTraceWithPostprocs(ctx, c.trace, 1, &fails); });
      other.join();
      ASSERT_TRUE(here && there) << rc.name << ": " << fails.Summary();
      EXPECT_TRUE(ir::StructuralEqual(here->scheduled, direct.func())) << rc.name;
      EXPECT_TRUE(ir::StructuralEqual(there->scheduled, direct.func())) << rc.name;
      EXPECT_EQ(here->key, c.key);
      EXPECT_EQ(there->key, c.key);
      EXPECT_TRUE(ir::testing::SameResult(f, there->scheduled)) << rc.name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
}  // namespace kiln::search
