// annotate / unannotate on blocks and loops: golden text, values of every
// kind (int, float, string, sampled), replay, and refusals.
#include <gtest/gtest.h>

#include <string>

#include "ir/ir.h"
#include "ir/text/printer.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "tests/schedule/schedule_test_util.h"

namespace kiln::ir {
namespace {

using testing::ReplaysExactly;
using testing::SameResult;
using testing::WellFormed;

const char* kExpected = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.serial(4, annotations={"pragma_auto_unroll_max_step": 16, "pragma_unroll_explicit": 0}):
        for j, k in T.grid(4, 4):
            with T.block("C"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(A[v_i, v_k], B[v_k, v_j])
                T.writes(C[v_i, v_j])
                T.block_attr({"meta_schedule.tiling_structure": "SSRSRS", "ratio": T.float32(0.5)})
                with T.init():
                    C[v_i, v_j] = T.float32(0.0)
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)";

TEST(Annotate, BlockAndLoopGolden) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  auto loops = sch.GetLoops(c);
  sch.Annotate(c, "meta_schedule.tiling_structure", std::string("SSRSRS"));
  sch.Annotate(c, "ratio", 0.5);
  sch.Annotate(loops[0], "pragma_auto_unroll_max_step", int64_t{16});
  sch.Annotate(loops[0], "pragma_unroll_explicit", int64_t{0});
  EXPECT_EQ(ToText(sch.func()), kExpected);
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));

  nlohmann::json j = sch.trace().AsJSON();
  EXPECT_EQ(j[0][2].dump(),
            R"(["Annotate",["b0","\"SSRSRS\""],["meta_schedule.tiling_structure"],[]])");
  EXPECT_EQ(j[0][3].dump(), R"(["Annotate",["b0",0.5],["ratio"],[]])");
  EXPECT_EQ(j[0][4].dump(), R"(["Annotate",["l1",16],["pragma_auto_unroll_max_step"],[]])");
  std::string py = sch.trace().AsPython();
  EXPECT_NE(py.find("sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.tiling_structure\", "
                    "ann_val=\"SSRSRS\")"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("sch.annotate(block_or_loop=l1, ann_key=\"pragma_auto_unroll_max_step\", "
                    "ann_val=16)"),
            std::string::npos)
      << py;

  // Unannotating everything gives the original program back.
  sch.Unannotate(c, "meta_schedule.tiling_structure");
  sch.Unannotate(c, "ratio");
  sch.Unannotate(loops[0], "pragma_auto_unroll_max_step");
  sch.Unannotate(loops[0], "pragma_unroll_explicit");
  EXPECT_TRUE(StructuralEqual(sch.func(), f));
  EXPECT_TRUE(ReplaysExactly(f, sch));
  j = sch.trace().AsJSON();
  EXPECT_EQ(j[0][6].dump(), R"(["Unannotate",["b0"],["meta_schedule.tiling_structure"],[]])");
  py = sch.trace().AsPython();
  EXPECT_NE(py.find("sch.unannotate(block_or_loop=l1, ann_key=\"pragma_unroll_explicit\")"),
            std::string::npos)
      << py;
}

TEST(Annotate, SampledValueIsStoredAndReplayedWithNewDecisions) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  BlockRV root = sch.GetBlock("root");
  ExprRV v = sch.SampleCategorical({0, 16, 64, 512}, {0.25, 0.25, 0.25, 0.25}, 2);
  sch.Annotate(root, "meta_schedule.unroll_explicit", v);
  const Expr& stored = sch.Get(root).annotations.at("meta_schedule.unroll_explicit");
  int64_t value = -1;
  ASSERT_TRUE(AsConstInt(stored, &value));
  EXPECT_EQ(value, 64);
  EXPECT_EQ(stored.dtype(), DataType::Int32());
  EXPECT_TRUE(ReplaysExactly(f, sch));

  nlohmann::json j = sch.trace().AsJSON();
  EXPECT_EQ(j[0][2].dump(), R"(["Annotate",["b0","v1"],["meta_schedule.unroll_explicit"],[]])");
  EXPECT_NE(sch.trace().AsPython().find(
                "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.unroll_explicit\", "
                "ann_val=v1)"),
            std::string::npos)
      << sch.trace().AsPython();

  // The mutator's way: replay with another decision stores the new value.
  Trace t = sch.trace().WithDecision(1, nlohmann::json(3), false);
  Schedule fresh(f);
  t.ApplyToSchedule(&fresh, false);
  ASSERT_TRUE(AsConstInt(
      fresh.Get(fresh.GetBlock("root")).annotations.at("meta_schedule.unroll_explicit"), &value));
  EXPECT_EQ(value, 512);
}

TEST(Annotate, ExistingKeyKeepsItsValue) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  sch.Annotate(c, "k", int64_t{1});
  sch.Annotate(c, "k", int64_t{2});
  int64_t value = 0;
  ASSERT_TRUE(AsConstInt(sch.Get(c).annotations.at("k"), &value));
  EXPECT_EQ(value, 1);
  EXPECT_EQ(sch.trace().size(), 3u);  // both calls are recorded
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

TEST(Annotate, LargeIntegersAreInt64) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  sch.Annotate(c, "big", int64_t{1} << 40);
  EXPECT_EQ(sch.Get(c).annotations.at("big").dtype(), DataType::Int64());
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

TEST(Annotate, WorkloadsStillComputeTheSame) {
  for (PrimFunc f :
       {Conv2dNHWC(1, 6, 6, 4, 4, 3, 1, 1), SoftmaxMN(4, 8), BatchMatmulNKKM(1, 8, 8, 8)}) {
    Schedule sch(f);
    BlockRV root = sch.GetBlock("root");
    sch.Annotate(root, "meta_schedule.parallel", int64_t{64});
    sch.Annotate(root, "meta_schedule.vectorize", int64_t{16});
    for (BlockRV b : sch.GetChildBlocks(root)) {
      sch.Annotate(sch.GetLoops(b)[0], "software_pipeline_stage", std::string("0"));
    }
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
  }
}

TEST(Annotate, Refusals) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  auto loops = sch.GetLoops(c);
  KILN_EXPECT_SCHEDULE_ERROR(sch.Unannotate(c, "missing"),
                             "unannotate: block 'C' has no annotation \"missing\" (it has: none)");
  sch.Annotate(loops[1], "present", int64_t{1});
  KILN_EXPECT_SCHEDULE_ERROR(sch.Unannotate(loops[1], "absent"),
                             "unannotate: loop j has no annotation \"absent\" (it has: present)");
  KILN_EXPECT_SCHEDULE_ERROR(sch.Annotate(c, "", int64_t{1}),
                             "annotate: the annotation key for block 'C' is empty");
}

TEST(Annotate, ReplayChecksShapes) {
  EXPECT_THROW(Trace::FromJSONString(
                   R"([[["GetBlock",[],["C","main"],["b0"]],["Annotate",["b0"],["k"],[]]],[]])"),
               TraceError);
  EXPECT_THROW(Trace::FromJSONString(
                   R"([[["GetBlock",[],["C","main"],["b0"]],["Unannotate",["b0"],[3],[]]],[]])"),
               TraceError);
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  Trace t = Trace::FromJSONString(
      R"([[["GetBlock",[],["C","main"],["b0"]],["Unannotate",["b0"],["nope"],[]]],[]])");
  KILN_EXPECT_SCHEDULE_ERROR(t.ApplyToSchedule(&sch, false), "has no annotation \"nope\"");
}

}  // namespace
}  // namespace kiln::ir
