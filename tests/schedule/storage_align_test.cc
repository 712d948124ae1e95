// storage_align: the buffer_dim_align block annotation (golden text, update
// of an existing request, negative axes), equivalence, replay, refusals.
#include <gtest/gtest.h>

#include <string>

#include "ir/ir.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "tests/schedule/schedule_test_util.h"

namespace kiln::ir {
namespace {

using testing::ReplaysExactly;
using testing::SameResult;
using testing::WellFormed;

const char* kTwoStage = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((4, 8), scope="shared")
    for i, j in T.grid(4, 8):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
    for i, j in T.grid(4, 8):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(B[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = B[v_i, v_j] + T.float32(1.0)
)";

const char* kAligned = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((4, 8), scope="shared")
    for i, j in T.grid(4, 8):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            T.block_attr({"buffer_dim_align": "[[0, 0, 32, 8]]"})
            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
    for i, j in T.grid(4, 8):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(B[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = B[v_i, v_j] + T.float32(1.0)
)";

std::string AlignOf(const Schedule& sch, BlockRV b) {
  const auto& ann = sch.Get(b).annotations;
  auto it = ann.find("buffer_dim_align");
  if (it == ann.end()) return "<none>";
  return it->second.as<StringImmNode>()->value;
}

TEST(StorageAlign, Golden) {
  PrimFunc f = ParseFunc(kTwoStage);
  ASSERT_EQ(ToText(f), kTwoStage);
  Schedule sch(f);
  sch.StorageAlign(sch.GetBlock("B"), 0, 0, 32, 8);
  EXPECT_EQ(ToText(sch.func()), kAligned);
  EXPECT_TRUE(StructuralEqual(sch.func(), ParseFunc(kAligned)));
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
  nlohmann::json j = sch.trace().AsJSON();
  EXPECT_EQ(j[0][1].dump(), R"(["StorageAlign",["b0"],[0,0,32,8],[]])");
  EXPECT_NE(sch.trace().AsPython().find(
                "sch.storage_align(block=b0, buffer_index=0, axis=0, factor=32, offset=8)"),
            std::string::npos)
      << sch.trace().AsPython();
}

TEST(StorageAlign, SameAxisReplacesOtherAxesAppend) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  sch.StorageAlign(b, 0, 0, 32, 8);
  sch.StorageAlign(b, 0, 1, 16, 1);
  EXPECT_EQ(AlignOf(sch, b), "[[0, 0, 32, 8], [0, 1, 16, 1]]");
  // axis -2 is axis 0 of the 2-d buffer: it replaces the first request, and
  // the trace keeps the axis as given.
  sch.StorageAlign(b, 0, -2, 64, 4);
  EXPECT_EQ(AlignOf(sch, b), "[[0, 0, 64, 4], [0, 1, 16, 1]]");
  nlohmann::json j = sch.trace().AsJSON();
  EXPECT_EQ(j[0][3].dump(), R"(["StorageAlign",["b0"],[0,-2,64,4],[]])");
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
  // The text form round-trips.
  EXPECT_TRUE(StructuralEqual(ParseFunc(ToText(sch.func())), sch.func()));
}

TEST(StorageAlign, Workloads) {
  {
    PrimFunc f = Conv2dNHWC(1, 6, 6, 4, 4, 3, 1, 1);
    Schedule sch(f);
    BlockRV pad = sch.GetBlock("PadInput");
    sch.SetScope(pad, 0, "shared");
    sch.StorageAlign(pad, 0, 2, 32, 4);
    EXPECT_EQ(AlignOf(sch, pad), "[[0, 2, 32, 4]]");
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
  }
  {
    PrimFunc f = SoftmaxMN(4, 8);
    Schedule sch(f);
    BlockRV exp = sch.GetBlock("T_softmax_exp");
    sch.StorageAlign(exp, 0, 0, 16, 1);
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
  }
}

TEST(StorageAlign, Refusals) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  KILN_EXPECT_SCHEDULE_ERROR(sch.StorageAlign(b, 0, 0, 0, 0),
                             "storage_align: factor must be positive, got 0 (buffer B)");
  KILN_EXPECT_SCHEDULE_ERROR(sch.StorageAlign(b, 0, 2, 32, 0),
                             "storage_align: axis 2 is out of range for buffer B, which has 2 "
                             "dimension(s) (expected [-2, 2))");
  KILN_EXPECT_SCHEDULE_ERROR(sch.StorageAlign(b, 0, -3, 32, 0), "axis -3 is out of range");
  KILN_EXPECT_SCHEDULE_ERROR(sch.StorageAlign(b, 1, 0, 32, 0),
                             "storage_align: buffer_index 1 is out of range: block 'B' writes 1 "
                             "buffer(s)");
  KILN_EXPECT_SCHEDULE_ERROR(sch.StorageAlign(sch.GetBlock("C"), 0, 0, 32, 0),
                             "storage_align: buffer C written by block 'C' is not allocated by a "
                             "block (it is a function parameter)");
  EXPECT_TRUE(sch.func().body.same_as(f.body));
}

TEST(StorageAlign, RefusesAMalformedExistingAnnotation) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  sch.Annotate(b, "buffer_dim_align", std::string("[[0, 0, 32]]"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.StorageAlign(b, 0, 0, 32, 8),
                             "storage_align: block 'B' has a \"buffer_dim_align\" annotation that "
                             "is not a list of (buffer_index, axis, factor, offset) tuples");
}

TEST(StorageAlign, ReplayChecksShapes) {
  EXPECT_THROW(
      {
        PrimFunc f = ParseFunc(kTwoStage);
        Schedule sch(f);
        Trace::FromJSONString(
            R"([[["GetBlock",[],["B","main"],["b0"]],["StorageAlign",["b0"],[0,0,32],[]]],[]])")
            .ApplyToSchedule(&sch, false);
      },
      TraceError);
}

}  // namespace
}  // namespace kiln::ir
