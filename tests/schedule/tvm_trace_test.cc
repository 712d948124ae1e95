// A trace written the way TVM MetaSchedule writes one (GetSBlock, quoted
// string inputs, booleans as 1/0, empty consumer lists, decisions by index)
// replays in Kiln and gives a correct, well-formed program.
#include <gtest/gtest.h>

#include "ir/op.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "schedule_test_util.h"

namespace kiln::ir {
namespace {

// The shape of a TVM CPU multi-level-tiling trace for batch_matmul_nkkm
// (1, 16, 16, 16): tiling structure annotation, 4-way spatial and 2-way
// reduction tiles, SSRSRS reorder, write cache at level 1, parallel /
// vectorize / unroll annotations.
constexpr const char* kTvmTrace = R"([
 [["GetSBlock", [], ["Z", "main"], ["b0"]],
  ["Annotate", ["b0", "\"SSRSRS\""], ["meta_schedule.tiling_structure"], []],
  ["GetLoops", ["b0"], [], ["l1", "l2", "l3", "l4"]],
  ["SamplePerfectTile", ["l1"], [4, 64], ["v5", "v6", "v7", "v8"]],
  ["Split", ["l1", "v5", "v6", "v7", "v8"], [1, 0], ["l9", "l10", "l11", "l12"]],
  ["SamplePerfectTile", ["l2"], [4, 64], ["v13", "v14", "v15", "v16"]],
  ["Split", ["l2", "v13", "v14", "v15", "v16"], [1, 0], ["l17", "l18", "l19", "l20"]],
  ["SamplePerfectTile", ["l3"], [4, 64], ["v21", "v22", "v23", "v24"]],
  ["Split", ["l3", "v21", "v22", "v23", "v24"], [1, 0], ["l25", "l26", "l27", "l28"]],
  ["SamplePerfectTile", ["l4"], [2, 64], ["v29", "v30"]],
  ["Split", ["l4", "v29", "v30"], [1, 0], ["l31", "l32"]],
  ["Reorder", ["l9", "l17", "l25", "l10", "l18", "l26", "l31", "l11", "l19", "l27", "l32", "l12", "l20", "l28"], [], []],
  ["CacheWrite", ["b0", []], [0, "global"], ["b33"]],
  ["ReverseComputeAt", ["b33", "l26"], [1, -1], []],
  ["Annotate", ["b0", 32], ["meta_schedule.parallel"], []],
  ["Annotate", ["b0", 64], ["meta_schedule.vectorize"], []],
  ["SampleCategorical", [], [[0, 16, 64, 512], [0.25, 0.25, 0.25, 0.25]], ["v34"]],
  ["Annotate", ["b0", "v34"], ["meta_schedule.unroll_explicit"], []],
  ["EnterPostproc", [], [], []],
  ["Unannotate", ["b0"], ["meta_schedule.parallel"], []],
  ["Fuse", ["l9", "l17", "l25"], [1], ["l35"]],
  ["Parallel", ["l35"], [], []]],
 [[3, [1, 1, 4, 4]], [5, [2, 2, 2, 2]], [7, [1, 4, 2, 2]], [9, [4, 4]], [16, 1]]
])";

TEST(TvmTrace, MultiLevelTilingTraceReplays) {
  const PrimFunc gmm = BatchMatmulNKKM(1, 16, 16, 16);
  Trace trace = Trace::FromJSONString(kTvmTrace);
  Schedule sch(gmm);
  trace.ApplyToSchedule(&sch, /*remove_postproc=*/false);
  EXPECT_TRUE(testing::SameResult(gmm, sch.func()));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(gmm, sch));
  // The decisions were honoured.
  const Trace& t = sch.trace();
  EXPECT_EQ(t.GetDecision(5)->dump(), "[2,2,2,2]");
  EXPECT_EQ(t.GetDecision(16)->get<int>(), 1);
  // GetSBlock was read as GetBlock; everything else kept its name.
  EXPECT_EQ(t.insts()[0].kind, "GetBlock");
  EXPECT_EQ(t.insts()[12].kind, "CacheWrite");
  const std::string py = t.AsPython();
  EXPECT_NE(py.find("sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.tiling_structure\", "
                    "ann_val=\"SSRSRS\")"),
            std::string::npos)
      << py;
  // The block carries the unroll decision's value.
  const BlockNode& z = sch.Get(sch.GetBlock("Z"));
  int64_t unroll = -1;
  ASSERT_TRUE(z.annotations.count("meta_schedule.unroll_explicit"));
  ASSERT_TRUE(AsConstInt(z.annotations.at("meta_schedule.unroll_explicit"), &unroll));
  EXPECT_EQ(unroll, 16);
}

TEST(TvmTrace, WithoutDecisionsItResamplesAndStillComputesTheSame) {
  const PrimFunc gmm = BatchMatmulNKKM(1, 16, 16, 16);
  Trace sketch = Trace::FromJSONString(kTvmTrace).WithoutDecisions();
  for (int64_t seed = 1; seed <= 20; ++seed) {
    Schedule sch(gmm, seed);
    sketch.ApplyToSchedule(&sch, false);
    EXPECT_TRUE(testing::SameResult(gmm, sch.func())) << "seed " << seed;
    EXPECT_TRUE(testing::WellFormed(sch.func())) << "seed " << seed;
  }
}

TEST(TvmTrace, RemovePostprocStopsAtTheMarker) {
  const PrimFunc gmm = BatchMatmulNKKM(1, 16, 16, 16);
  Schedule sch(gmm);
  Trace::FromJSONString(kTvmTrace).ApplyToSchedule(&sch, /*remove_postproc=*/true);
  EXPECT_EQ(sch.trace().size(), 18u);
  EXPECT_TRUE(testing::SameResult(gmm, sch.func()));
}

}  // namespace
}  // namespace kiln::ir
