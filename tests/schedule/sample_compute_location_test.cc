// sample_compute_location: the candidate rules, decisions and their snapping
// on replay, uniform sampling, and compute_at at the sampled location.
#include <gtest/gtest.h>

#include <set>

#include "ir/ir.h"
#include "ir/text/parser.h"
#include "ir/workloads/suite.h"
#include "tests/schedule/schedule_test_util.h"
#include "tests/workloads/block_walk.h"

namespace kiln::ir {
namespace {

// The location a decision resolves to: "root", or the loop's name; and the
// decision recorded for it.
std::pair<std::string, int64_t> Resolve(const PrimFunc& f, const std::string& block,
                                        std::optional<int64_t> decision, int64_t seed = 1) {
  Schedule sch(f, seed);
  LoopRV l = sch.SampleComputeLocation(sch.GetBlock(block), decision);
  int64_t recorded = sch.trace().GetDecision(sch.trace().size() - 1)->get<int64_t>();
  return {sch.IsRootMark(l) ? "root" : sch.NameOf(l), recorded};
}

using Loc = std::pair<std::string, int64_t>;

// A replayed decision resolves as a lookup in the full candidate list would
// (the decision, else the nearest smaller candidate, else root), although
// replay asks compute_at only about the loops it needs: every block of
// every suite workload, decisions -3 to 9.
TEST(SampleComputeLocation, ReplayedDecisionsResolveAsTheCandidateList) {
  int checked = 0;
  for (const std::string& name : SuiteNames()) {
    const PrimFunc f = MakeWorkload(name, 0);
    for (const std::string& block : testing::BlockNames(f)) {
      Schedule sch(f);
      const std::vector<int64_t> candidates = sch.ComputeLocationCandidates(sch.GetBlock(block));
      for (int64_t d = -3; d <= 9; ++d) {
        int64_t expect = -1;
        for (int64_t c : candidates) {
          if (c <= d && (c >= 0 || c == d)) expect = std::max(expect, c);
          if (c == d) expect = c;
        }
        EXPECT_EQ(Resolve(f, block, d).second, expect) << name << " block " << block << " decision " << d;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(SampleComputeLocation, MatmulBeforeReluOffersBothReluLoops) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  EXPECT_EQ(Resolve(f, "C", -1), Loc("root", -1));
  EXPECT_EQ(Resolve(f, "C", 0), Loc("i0", 0));
  EXPECT_EQ(Resolve(f, "C", 1), Loc("i1", 1));
  // A reduction block cannot be inlined: no -2 candidate.
  EXPECT_EQ(Resolve(f, "C", -2), Loc("root", -1));
}

TEST(SampleComputeLocation, ConvPadSkipsUnitLoopsAndStopsAtTheReduction) {
  // conv2d_nhwc loops: n (extent 1: skipped), h, w, co, then the reduction
  // loops rh, rw, rc (trailing non-spatial: not offered).
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1);
  EXPECT_EQ(Resolve(f, "PadInput", 1), Loc("h", 1));
  EXPECT_EQ(Resolve(f, "PadInput", 2), Loc("w", 2));
  EXPECT_EQ(Resolve(f, "PadInput", 3), Loc("co", 3));
  // Replayed decisions that are no longer candidates snap down, or to root.
  EXPECT_EQ(Resolve(f, "PadInput", 4), Loc("co", 3));
  EXPECT_EQ(Resolve(f, "PadInput", 6), Loc("co", 3));
  EXPECT_EQ(Resolve(f, "PadInput", 0), Loc("root", -1));
  // PadInput can be inlined into the conv: -2 is a candidate; anything
  // below it snaps to root.
  EXPECT_EQ(Resolve(f, "PadInput", -2), Loc("<inline mark>", -2));
  EXPECT_EQ(Resolve(f, "PadInput", -3), Loc("root", -1));
}

TEST(SampleComputeLocation, ConsumersInDifferentNestsLeaveOnlyTheMarks) {
  // T_softmax_exp feeds expsum and norm, which share no loop: inline or root.
  PrimFunc f = SoftmaxMN(4, 8);
  EXPECT_EQ(Resolve(f, "T_softmax_exp", 1), Loc("root", -1));
  std::set<int64_t> seen;
  for (int64_t seed = 1; seed < 30; ++seed) {
    seen.insert(Resolve(f, "T_softmax_exp", std::nullopt, seed).second);
  }
  EXPECT_EQ(seen, (std::set<int64_t>{-2, -1}));
  // An output block has no consumer: root only.
  EXPECT_EQ(Resolve(f, "T_softmax_norm", 0), Loc("root", -1));
}

TEST(SampleComputeLocation, NoSpatialLoopAfterAReductionLoop) {
  // C's loops are i, k (reduction), j: j is spatial after a reduction loop,
  // so B may go under i or k only.
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((4, 4))
    for i, j in T.grid(4, 4):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j] + T.float32(1.0)
    for i, k, j in T.grid(4, 4, 4):
        with T.block("C"):
            v_i, v_k, v_j = T.axis.remap("SRS", [i, k, j])
            T.reads(B[v_i, v_k])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + B[v_i, v_k]
)");
  EXPECT_EQ(Resolve(f, "B", 0), Loc("i", 0));
  EXPECT_EQ(Resolve(f, "B", 1), Loc("k", 1));
  EXPECT_EQ(Resolve(f, "B", 2), Loc("k", 1));
  std::set<int64_t> seen;
  for (int64_t seed = 1; seed < 60; ++seed) seen.insert(Resolve(f, "B", std::nullopt, seed).second);
  EXPECT_EQ(seen, (std::set<int64_t>{-2, -1, 0, 1}));
}

TEST(SampleComputeLocation, FreshSamplesCoverEveryCandidate) {
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1);
  std::set<int64_t> seen;
  for (int64_t seed = 1; seed < 200; ++seed) {
    seen.insert(Resolve(f, "PadInput", std::nullopt, seed).second);
  }
  EXPECT_EQ(seen, (std::set<int64_t>{-2, -1, 1, 2, 3}));
}

TEST(SampleComputeLocation, ComputeAtTheSampledLocation) {
  for (const auto& [f, block] : std::vector<std::pair<PrimFunc, std::string>>{
           {Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1), "PadInput"}, {MatmulRelu(8, 8, 8), "C"}}) {
    for (int64_t seed = 1; seed < 12; ++seed) {
      Schedule sch(f, seed);
      BlockRV b = sch.GetBlock(block);
      LoopRV l = sch.SampleComputeLocation(b);
      sch.ComputeAt(b, l, /*preserve_unit_loops=*/true);
      EXPECT_TRUE(testing::SameResult(f, sch.func())) << seed;
      // (The verifier does not yet follow the padding guard compute_inline
      // leaves in the conv; inlined results are checked by running them.)
      if (!sch.IsInlineMark(l)) {
        EXPECT_TRUE(testing::WellFormed(sch.func())) << seed;
      }
      EXPECT_TRUE(testing::ReplaysExactly(f, sch)) << seed;
    }
  }
}

// sample_compute_location builds the move it checks, and the compute_at
// right after it takes that body (Schedule::PlannedMove): a change of the
// body in between, even an annotation, must make compute_at build it anew.
TEST(SampleComputeLocation, ComputeAtAfterAnotherChangeSeesIt) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  LoopRV at = sch.SampleComputeLocation(c, 1);
  ASSERT_EQ(sch.NameOf(at), "i1");
  LoopRV outer = sch.GetLoops(sch.GetBlock("compute"))[0];
  sch.Annotate(outer, "kiln.test", int64_t{7});
  sch.ComputeAt(c, at, /*preserve_unit_loops=*/true);
  EXPECT_EQ(sch.Get(outer).annotations.count("kiln.test"), 1u) << ToText(sch.func());

  Schedule plain(f);
  LoopRV plain_outer = plain.GetLoops(plain.GetBlock("compute"))[0];
  plain.Annotate(plain_outer, "kiln.test", int64_t{7});
  plain.ComputeAt(plain.GetBlock("C"), plain.GetLoops(plain.GetBlock("compute"))[1], true);
  EXPECT_TRUE(StructuralEqual(sch.func(), plain.func()));
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
}

TEST(SampleComputeLocation, TraceFormAndSnappedReplay) {
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("PadInput");
  LoopRV l = sch.SampleComputeLocation(b, 2);
  sch.ComputeAt(b, l);
  nlohmann::json j = sch.trace().AsJSON();
  EXPECT_EQ(j[0][1], nlohmann::json::parse(R"(["SampleComputeLocation",["b0"],[],["l1"]])"));
  EXPECT_EQ(j[1], nlohmann::json::parse("[[1, 2]]"));
  EXPECT_NE(sch.trace().AsPython().find("l1 = sch.sample_compute_location(block=b0, decision=2)"),
            std::string::npos)
      << sch.trace().AsPython();
  // A decision that is not a candidate any more (the unit loop n) replays as root.
  Trace edited = sch.trace().WithDecision(1, nlohmann::json(0), false);
  Schedule replay(f);
  edited.ApplyToSchedule(&replay, false);
  EXPECT_EQ(replay.trace().GetDecision(1)->get<int64_t>(), -1);
  EXPECT_FALSE(StructuralMismatch(f, replay.func()).has_value());
}

TEST(SampleComputeLocation, RefusesARemovedBlock) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("C");
  Schedule other(f);
  KILN_EXPECT_SCHEDULE_ERROR(other.SampleComputeLocation(b), "unknown block handle");
}

}  // namespace
}  // namespace kiln::ir
