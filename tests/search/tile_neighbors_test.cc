// Tile neighbours (search/tile_neighbors.h): each moves one prime factor of
// one tile decision to the adjacent level, the loop's extent kept; they come
// innermost pair first, growing before shrinking, round robin over the
// decisions; each replays to a program that computes what the workload does
// (or a postprocessor rejects it with a reason).
#include "search/tile_neighbors.h"

#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <set>
#include <tuple>

#include "../schedule/schedule_test_util.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "search/apply_trace.h"
#include "search/replay_trace.h"
#include "search/tune_context.h"
#include "search_test_util.h"

namespace kiln::search {
namespace {

using ir::testing::SameResult;
using testing::ChangedDecisions;

std::vector<int64_t> Tile(const ir::Trace& t, size_t i) {
  return t.GetDecision(i)->get<std::vector<int64_t>>();
}

bool IsPrime(int64_t v) {
  if (v < 2) return false;
  for (int64_t d = 2; d * d <= v; ++d) {
    if (v % d == 0) return false;
  }
  return true;
}

// GMM 1024^3 with i and k tiled by hand: the order and the bound, checked on
// values worked out by hand.
TEST(TileNeighbors, RegisterTileFirstGrowingBeforeShrinkingWithinTheInnermostBound) {
  ir::Schedule sch(ir::MakeWorkload("GMM", 3), 1);
  const std::vector<ir::LoopRV> loops = sch.GetLoops(sch.GetBlock("Z"));
  sch.SamplePerfectTile(loops[1], 4, 64, std::vector<int64_t>{4, 4, 16, 4});
  sch.SamplePerfectTile(loops[3], 2, 64, std::vector<int64_t>{16, 64});
  const std::vector<ir::Trace> got = TileNeighbors(sch.trace());
  // (instruction, tile): i grows its register rows first; k's inner level
  // may not grow past 64; then each shrinks; then the pairs further out.
  const std::vector<std::pair<size_t, std::vector<int64_t>>> want = {
      {2, {4, 4, 8, 8}}, {2, {4, 4, 32, 2}}, {3, {32, 32}},      {2, {4, 2, 32, 4}},
      {2, {4, 8, 8, 4}}, {2, {2, 8, 16, 4}}, {2, {8, 2, 16, 4}},
  };
  ASSERT_EQ(got.size(), want.size());
  for (size_t n = 0; n < got.size(); ++n) {
    SCOPED_TRACE(n);
    const std::vector<size_t> diff = ChangedDecisions(sch.trace(), got[n]);
    ASSERT_EQ(diff.size(), 1u);
    EXPECT_EQ(diff[0], want[n].first);
    EXPECT_EQ(Tile(got[n], diff[0]), want[n].second);
  }
}

TEST(TileNeighbors, EachMovesOnePrimeFactorAndComputesTheSame) {
  int checked = 0, neighbours = 0;
  for (const testing::ReducedCase& which :
       {testing::ReducedSuite()[3], testing::ReducedSuite()[1], testing::ReducedSuite()[13]}) {
    SCOPED_TRACE(which.name);
    const ir::PrimFunc f = which.make();
    TuneContext ctx = testing::Context(f, testing::kParityTarget, /*seed=*/5);
    ReplayTrace rt(ctx);
    for (const Candidate& parent : rt.NextBatch(4)) {
      const ir::Trace& p = parent.trace;
      // Every legal move, counted independently of the code under test.
      size_t expected = 0;
      for (size_t i = 0; i < p.PostprocIndex(); ++i) {
        if (p.insts()[i].kind != "SamplePerfectTile") continue;
        const std::vector<int64_t> t = Tile(p, i);
        const int64_t bound = p.insts()[i].attrs[1].get<int64_t>();
        for (size_t a = 0; a + 1 < t.size(); ++a) {
          if (t[a] > 1) {  // factor moves inward
            int64_t q = 2;
            while (t[a] % q != 0) ++q;
            expected += a + 2 == t.size() && bound > 0 && t[a + 1] * q > bound ? 0 : 1;
          }
          if (t[a + 1] > 1) ++expected;  // outward
        }
      }
      const std::vector<ir::Trace> got = TileNeighbors(p);
      EXPECT_EQ(got.size(), expected);
      std::set<std::string> distinct;
      std::tuple<size_t, int, size_t> last{0, 0, 0};
      for (const ir::Trace& t : got) {
        EXPECT_EQ(t.PostprocIndex(), t.size()) << "a neighbour keeps no postproc part";
        EXPECT_TRUE(distinct.insert(t.AsJSONString()).second) << "twice: " << t.AsPython();
        const std::vector<size_t> diff = ChangedDecisions(p, t);
        ASSERT_EQ(diff.size(), 1u) << t.AsPython();
        ASSERT_EQ(t.insts()[diff[0]].kind, "SamplePerfectTile");
        const std::vector<int64_t> before = Tile(p, diff[0]), after = Tile(t, diff[0]);
        ASSERT_EQ(before.size(), after.size());
        const auto product = [](const std::vector<int64_t>& v) {
          return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
        };
        EXPECT_EQ(product(before), product(after));
        std::vector<size_t> moved;
        for (size_t l = 0; l < before.size(); ++l) {
          if (before[l] != after[l]) moved.push_back(l);
        }
        ASSERT_EQ(moved.size(), 2u);
        ASSERT_EQ(moved[1], moved[0] + 1) << "levels not adjacent";
        const bool inward = after[moved[1]] > before[moved[1]];
        const int64_t factor =
            inward ? after[moved[1]] / before[moved[1]] : after[moved[0]] / before[moved[0]];
        EXPECT_TRUE(IsPrime(factor)) << factor;
        const int64_t bound = t.insts()[diff[0]].attrs[1].get<int64_t>();
        if (bound > 0) EXPECT_LE(after.back(), bound);
        // Innermost pair first, inward before outward, then trace order.
        const std::tuple<size_t, int, size_t> rank{before.size() - 1 - moved[1], inward ? 0 : 1,
                                                   diff[0]};
        EXPECT_LE(std::make_pair(std::get<0>(last), std::get<1>(last)),
                  std::make_pair(std::get<0>(rank), std::get<1>(rank)));
        if (std::get<0>(last) == std::get<0>(rank) && std::get<1>(last) == std::get<1>(rank)) {
          EXPECT_LE(std::get<2>(last), std::get<2>(rank));
        }
        last = rank;
        ++neighbours;
        FailureStats fails;
        if (std::optional<Candidate> c = ApplyTraceWithPostprocs(ctx, t, 1, &fails)) {
          EXPECT_TRUE(SameResult(f, c->scheduled, 3, /*reordered_reduction=*/true)) << t.AsPython();
          ++checked;
        } else {
          ASSERT_EQ(fails.counts.size(), 1u);
          EXPECT_FALSE(fails.example.begin()->second.empty()) << "rejected without a reason";
        }
      }
    }
  }
  EXPECT_GT(neighbours, 20);
  EXPECT_GT(checked, 0) << "no neighbour replayed";
}

TEST(TileNeighbors, NoneWithoutTileDecisions) {
  ir::Schedule sch(ir::MakeWorkload("GMM", 3), 1);
  sch.GetLoops(sch.GetBlock("Z"));
  EXPECT_TRUE(TileNeighbors(sch.trace()).empty());
}

}  // namespace
}  // namespace kiln::search
