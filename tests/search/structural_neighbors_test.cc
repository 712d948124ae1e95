// Structural neighbours (search/structural_neighbors.h): each changes one
// compute location or categorical draw of the schedule and nothing else,
// every alternative of each such decision appears once, the first few touch
// every decision, and each neighbour replays to a program that computes what
// the workload does (or a postprocessor rejects it with a reason).
#include "search/structural_neighbors.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "../schedule/schedule_test_util.h"
#include "ir/schedule/schedule.h"
#include "search/apply_trace.h"
#include "search/replay_trace.h"
#include "search/tune_context.h"
#include "search_test_util.h"

namespace kiln::search {
namespace {

using ir::testing::SameResult;
using testing::ChangedDecisions;

// The values each structural decision of `trace` could take, by instruction
// index, as the schedule lists them when the trace replays.
std::map<size_t, std::vector<int64_t>> Choices(const ir::PrimFunc& f, const ir::Trace& trace) {
  std::map<size_t, std::vector<int64_t>> out;
  ir::Schedule sch(f);
  const ir::Instruction* first = &trace.insts()[0];
  trace.ApplyToSchedule(&sch, /*remove_postproc=*/true,
                        [&](const ir::Instruction& inst, const std::vector<ir::InstArg>& in,
                            const std::optional<nlohmann::json>& d) {
                          const size_t i = static_cast<size_t>(&inst - first);
                          if (inst.kind == "SampleComputeLocation") {
                            out[i] = sch.ComputeLocationCandidates(ir::BlockRV{in[0].rv.id});
                          } else if (inst.kind == "SampleCategorical") {
                            for (size_t v = 0; v < inst.attrs[1].size(); ++v) {
                              if (inst.attrs[1][v].get<double>() > 0) {
                                out[i].push_back(static_cast<int64_t>(v));
                              }
                            }
                          }
                          return d;
                        });
  return out;
}

TEST(StructuralNeighbors, EachChangesOneStructuralDecisionAndComputesTheSame) {
  int checked = 0;
  for (const testing::ReducedCase& which :
       {testing::ReducedSuite()[1], testing::ReducedSuite()[10]}) {
    SCOPED_TRACE(which.name);
    const ir::PrimFunc f = which.make();
    TuneContext ctx = testing::Context(f, testing::kParityTarget, /*seed=*/3);
    ReplayTrace rt(ctx);
    for (const Candidate& parent : rt.NextBatch(3)) {
      const std::map<size_t, std::vector<int64_t>> choices = Choices(f, parent.trace);
      const std::vector<ir::Trace> neighbors = StructuralNeighbors(f, parent.trace);
      // Every alternative of every structural decision, once.
      std::map<size_t, std::set<int64_t>> seen;
      size_t expected = 0;
      for (const auto& [i, values] : choices) expected += values.size() - 1;
      EXPECT_EQ(neighbors.size(), expected);
      size_t with_alternatives = 0;
      for (const auto& [i, values] : choices) with_alternatives += values.size() > 1 ? 1 : 0;
      std::set<size_t> first_round;
      for (size_t n = 0; n < neighbors.size(); ++n) {
        const ir::Trace& t = neighbors[n];
        EXPECT_EQ(t.PostprocIndex(), t.size()) << "a neighbour keeps no postproc part";
        const std::vector<size_t> diff = ChangedDecisions(parent.trace, t);
        ASSERT_EQ(diff.size(), 1u) << t.AsPython();
        const size_t i = diff[0];
        ASSERT_TRUE(choices.count(i))
            << "changed " << t.insts()[i].kind << ", not a structural decision";
        const int64_t v = t.GetDecision(i)->get<int64_t>();
        EXPECT_TRUE(std::count(choices.at(i).begin(), choices.at(i).end(), v)) << v;
        EXPECT_TRUE(seen[i].insert(v).second) << "value " << v << " twice";
        if (n < with_alternatives) first_round.insert(i);
      }
      // Round robin: the first picks touch every decision that has an alternative.
      EXPECT_EQ(first_round.size(), std::min(with_alternatives, neighbors.size()));
      for (const ir::Trace& t : neighbors) {
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
  EXPECT_GT(checked, 0) << "no neighbour replayed";
}

// The compute-location alternatives come as the schedule lists them, so a
// block computed under a loop gets the inline and root marks first.
TEST(StructuralNeighbors, TheMarksComeFirst) {
  const ir::PrimFunc f = testing::ReducedSuite()[1].make();  // a padded conv2d
  TuneContext ctx = testing::Context(f, testing::kParityTarget, /*seed=*/4);
  ReplayTrace rt(ctx);
  int under_loop = 0;
  for (const Candidate& parent : rt.NextBatch(8)) {
    for (const auto& [i, values] : Choices(f, parent.trace)) {
      if (parent.trace.insts()[i].kind != "SampleComputeLocation") continue;
      if (parent.trace.GetDecision(i)->get<int64_t>() < 0) continue;
      ++under_loop;
      std::vector<int64_t> got;
      for (const ir::Trace& t : StructuralNeighbors(f, parent.trace)) {
        std::vector<size_t> diff = ChangedDecisions(parent.trace, t);
        if (diff.size() == 1 && diff[0] == i) got.push_back(t.GetDecision(i)->get<int64_t>());
      }
      ASSERT_GE(got.size(), 1u);
      const bool can_inline = values[0] == -2;
      EXPECT_EQ(got[0], can_inline ? -2 : -1);
      if (can_inline) {
        ASSERT_GE(got.size(), 2u);
        EXPECT_EQ(got[1], -1);
      }
    }
  }
  EXPECT_GT(under_loop, 0) << "no sample computed a block under a loop";
}

TEST(StructuralNeighbors, NoneForATraceThatDoesNotReplay) {
  const ir::PrimFunc conv = testing::ReducedSuite()[1].make();
  const ir::PrimFunc softmax = testing::ReducedSuite()[10].make();
  TuneContext ctx = testing::Context(conv, testing::kParityTarget, 1);
  ReplayTrace rt(ctx);
  const std::vector<Candidate> batch = rt.NextBatch(1);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_TRUE(StructuralNeighbors(softmax, batch[0].trace).empty());
}

}  // namespace
}  // namespace kiln::search
