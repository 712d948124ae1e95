// ReplayTrace (docs/ARCHITECTURE.md §7): candidates depend only on the seed (never on
// the thread count), never repeat, never come from the measured set, and the
// attempts that failed are counted by cause.
#include "search/replay_trace.h"

#include <gtest/gtest.h>

#include <set>
#include <unordered_set>

#include "ir/structural_hash.h"
#include "search/postproc.h"
#include "search/space_generator.h"
#include "search_test_util.h"

namespace kiln::search {
namespace {

ir::PrimFunc SmallGmm() { return ir::BatchMatmulNKKM(1, 8, 8, 8); }

// The trace JSON of `batches` successive batches of k.
std::vector<std::string> Sequence(int64_t seed, int threads, int batches, int k) {
  ReplayTrace rt(testing::Context(SmallGmm(), testing::kParityTarget, seed, threads));
  std::vector<std::string> out;
  for (int b = 0; b < batches; ++b) {
    for (const Candidate& c : rt.NextBatch(k)) out.push_back(c.trace_json);
  }
  return out;
}

TEST(ReplayTrace, SameSeedSameSequenceAtAnyThreadCount) {
  const std::vector<std::string> one = Sequence(7, 1, 3, 8);
  const std::vector<std::string> two = Sequence(7, 2, 3, 8);
  const std::vector<std::string> four = Sequence(7, 4, 3, 8);
  ASSERT_EQ(one.size(), 24u);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, four);
}

TEST(ReplayTrace, DifferentSeedsDiffer) {
  const std::vector<std::string> a = Sequence(7, 1, 2, 8);
  const std::vector<std::string> b = Sequence(8, 1, 2, 8);
  ASSERT_EQ(a.size(), 16u);
  ASSERT_EQ(b.size(), 16u);
  EXPECT_NE(a, b);
}

TEST(ReplayTrace, CandidatesAreConsistentAndNeverRepeat) {
  ReplayTrace rt(testing::Context(SmallGmm(), testing::kParityTarget, 3, 2));
  EXPECT_EQ(rt.design_spaces().size(), 3u);
  std::set<uint64_t> keys;
  std::set<std::string> traces;
  for (int b = 0; b < 4; ++b) {
    std::vector<Candidate> batch = rt.NextBatch(6);
    ASSERT_EQ(batch.size(), 6u);
    for (const Candidate& c : batch) {
      EXPECT_TRUE(keys.insert(c.key).second) << "repeated key in batch " << b;
      EXPECT_TRUE(traces.insert(c.trace_json).second);
      EXPECT_EQ(c.key, ir::StructuralHash(c.scheduled));
      EXPECT_EQ(c.trace_json, c.trace.AsJSONString());
      EXPECT_GE(c.design_space, 0);
      EXPECT_LT(c.design_space, 3);
      // The stored trace reproduces the program: what a worker will build.
      ir::Schedule replay(SmallGmm());
      ir::Trace::FromJSONString(c.trace_json).ApplyToSchedule(&replay, /*remove_postproc=*/false);
      EXPECT_EQ(ir::StructuralHash(replay.func()), c.key);
    }
  }
}

TEST(ReplayTrace, SkipsMeasuredKeysAndWalksPastThem) {
  // A first strategy "measures" 8 batches of 4; a second one with the same
  // seed, told they are measured, meets them again in its first rounds
  // (more rounds than max_empty_rounds), returns none of them, and is not
  // fooled into reporting an exhausted space.
  std::unordered_set<uint64_t> measured;
  {
    ReplayTrace first(testing::Context(SmallGmm(), testing::kParityTarget, 5, 1));
    for (int b = 0; b < 8; ++b) {
      for (const Candidate& c : first.NextBatch(4)) measured.insert(c.key);
    }
    ASSERT_GT(first.rounds(), ReplayTraceConfig{}.max_empty_rounds);
  }
  ASSERT_EQ(measured.size(), 32u);
  ReplayTrace second(testing::Context(SmallGmm(), testing::kParityTarget, 5, 2));
  std::unordered_set<uint64_t> returned;
  for (int b = 0; b < 3; ++b) {
    std::vector<Candidate> batch = second.NextBatch(4, measured);
    ASSERT_EQ(batch.size(), 4u) << "batch " << b;
    for (const Candidate& c : batch) {
      EXPECT_EQ(measured.count(c.key), 0u);
      EXPECT_TRUE(returned.insert(c.key).second);
    }
  }
}

// Rejects every candidate, so that every attempt is counted.
class RejectAll : public Postproc {
 public:
  std::string Name() const override { return "RejectAll"; }
  bool Apply(ir::Schedule*, std::string* why) override {
    *why = "rejected on purpose";
    return false;
  }
};

TEST(ReplayTrace, CountsPostprocFailuresPerAttempt) {
  TuneContext ctx = testing::Context(SmallGmm(), testing::kParityTarget, 1, 2);
  ctx.postprocs.push_back(std::make_shared<RejectAll>());
  ReplayTraceConfig config;
  config.max_fail_count = 3;
  config.max_empty_rounds = 2;
  ReplayTrace rt(ctx, config);
  EXPECT_TRUE(rt.NextBatch(4).empty());
  // 2 empty rounds x 4 slots x 3 attempts, each rejected by exactly one
  // postproc: the default ones or RejectAll.
  EXPECT_EQ(rt.rounds(), 2);
  EXPECT_EQ(rt.failures().Total(), 2 * 4 * 3);
  ASSERT_GT(rt.failures().counts.count("RejectAll"), 0u);
  EXPECT_EQ(rt.failures().example.at("RejectAll"), "rejected on purpose");
  EXPECT_NE(rt.failures().Summary().find("RejectAll: "), std::string::npos);
}

TEST(ReplayTrace, CountsReplayFailures) {
  // Sketches of another workload do not replay on this one (no such blocks).
  TuneContext other = testing::Context(ir::SoftmaxMN(4, 8));
  std::vector<ir::Trace> sketches;
  for (ir::Schedule& s : other.space_generator->Generate(other)) sketches.push_back(s.trace());
  TuneContext ctx = testing::Context(SmallGmm(), testing::kParityTarget, 1, 1);
  ReplayTraceConfig config;
  config.max_fail_count = 2;
  config.max_empty_rounds = 1;
  ReplayTrace rt(ctx, sketches, config);
  EXPECT_TRUE(rt.NextBatch(3).empty());
  EXPECT_EQ(rt.failures().counts.size(), 1u) << rt.failures().Summary();
  EXPECT_EQ(rt.failures().counts.at("replay"), 1 * 3 * 2);
  EXPECT_FALSE(rt.failures().example.at("replay").empty());
  EXPECT_EQ(rt.failures().Summary(), "replay: 6");
}

TEST(ReplayTrace, EmptyFailureStatsSayNone) {
  FailureStats f;
  EXPECT_EQ(f.Total(), 0);
  EXPECT_EQ(f.Summary(), "none");
}

TEST(ReplayTrace, RejectsBadConfiguration) {
  TuneContext ctx = testing::Context(SmallGmm());
  EXPECT_THROW(ReplayTrace(ctx, std::vector<ir::Trace>{}), std::invalid_argument);
  ReplayTraceConfig bad;
  bad.max_fail_count = 0;
  EXPECT_THROW(ReplayTrace(ctx, bad), std::invalid_argument);
}

TEST(ReplayTrace, SlotSeedsAreDistinctAndInRange) {
  std::set<int64_t> seeds;
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t i = 0; i < 64; ++i) {
      const int64_t s = ReplayTrace::SlotSeed(9, r, i);
      EXPECT_GE(s, 1);
      seeds.insert(s);
    }
  }
  EXPECT_EQ(seeds.size(), 4u * 64u);
  EXPECT_EQ(ReplayTrace::SlotSeed(9, 1, 2), ReplayTrace::SlotSeed(9, 1, 2));
  EXPECT_NE(ReplayTrace::SlotSeed(9, 1, 2), ReplayTrace::SlotSeed(10, 1, 2));
}

}  // namespace
}  // namespace kiln::search
