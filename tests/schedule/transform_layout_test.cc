#include <gtest/gtest.h>

#include "ir/compare.h"
#include "ir/interpreter.h"
#include "ir/ndarray.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/schedule/index_map.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "tests/schedule/schedule_test_util.h"

namespace kiln::ir {
namespace {

using testing::ReplaysExactly;
using testing::SameResult;
using testing::WellFormed;

IndexMap Map(const char* text) { return IndexMap::FromText(text); }

TEST(TransformLayout, IntermediateGolden) {
  PrimFunc f = SoftmaxMN(8, 8);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("T_softmax_exp");
  sch.TransformLayout(b, 0, "write", Map("lambda i, j: (i // 4, j, i % 4)"));
  const char* expected = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), T_softmax_norm: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    T_softmax_maxelem = T.alloc_buffer((8,))
    T_softmax_exp = T.alloc_buffer((2, 8, 4))
    T_softmax_expsum = T.alloc_buffer((8,))
    for i0, k in T.grid(8, 8):
        with T.block("T_softmax_maxelem"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            T.reads(A[v_i0, v_k])
            T.writes(T_softmax_maxelem[v_i0])
            with T.init():
                T_softmax_maxelem[v_i0] = T.float32(-3.4028234663852886e+38)
            T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], A[v_i0, v_k])
    for i0, i1 in T.grid(8, 8):
        with T.block("T_softmax_exp"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(A[v_i0, v_i1], T_softmax_maxelem[v_i0])
            T.writes(T_softmax_exp[v_i0 // 4, v_i1, v_i0 % 4])
            T_softmax_exp[v_i0 // 4, v_i1, v_i0 % 4] = T.exp(A[v_i0, v_i1] - T_softmax_maxelem[v_i0])
    for i0, k in T.grid(8, 8):
        with T.block("T_softmax_expsum"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            T.reads(T_softmax_exp[v_i0 // 4, v_k, v_i0 % 4])
            T.writes(T_softmax_expsum[v_i0])
            with T.init():
                T_softmax_expsum[v_i0] = T.float32(0.0)
            T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_exp[v_i0 // 4, v_k, v_i0 % 4]
    for i0, i1 in T.grid(8, 8):
        with T.block("T_softmax_norm"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(T_softmax_exp[v_i0 // 4, v_i1, v_i0 % 4], T_softmax_expsum[v_i0])
            T.writes(T_softmax_norm[v_i0, v_i1])
            T.block_attr({"axis": 1})
            T_softmax_norm[v_i0, v_i1] = T_softmax_exp[v_i0 // 4, v_i1, v_i0 % 4] / T_softmax_expsum[v_i0]
)";
  EXPECT_EQ(ToText(sch.func()), expected);
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
  // The text form parses back to the same program.
  EXPECT_EQ(ToText(ParseFunc(ToText(sch.func()))), expected);
}

TEST(TransformLayout, ParamGoldenAndRun) {
  PrimFunc f = Matmul(16, 16, 16);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("C");
  sch.TransformLayout(b, 0, "read", Map("lambda i, k: (i // 4, k, i % 4)"));
  const char* expected = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 16, 4), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i // 4, v_k, v_i % 4], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i // 4, v_k, v_i % 4] * B[v_k, v_j]
)";
  EXPECT_EQ(ToText(sch.func()), expected);
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));

  // Run both with A handed over in the new layout: C must match.
  std::vector<NDArray> ref = MakeRandomArgs(f, 3);
  std::vector<NDArray> got = MakeRandomArgs(sch.func(), 3);
  for (int64_t i = 0; i < 16; ++i) {
    for (int64_t k = 0; k < 16; ++k) {
      got[0].SetFromDouble((i / 4) * 64 + k * 4 + i % 4, ref[0].GetAsDouble(i * 16 + k));
    }
  }
  got[1] = ref[1];
  Interpret(f, ref);
  Interpret(sch.func(), got);
  CompareResult r = Compare(ref[2], got[2], Tolerance::For(ref[2].dtype()), "C");
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(TransformLayout, InterpreterEquivalence) {
  {
    PrimFunc f = Conv2dNHWC(1, 6, 6, 4, 4, 3, 1, 1);
    Schedule sch(f);
    sch.TransformLayout(sch.GetBlock("PadInput"), 0, "write",
                        Map("lambda n, h, w, c: (n, h, w // 4, c, w % 4)"));
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
    // Applying a second map to the new layout composes.
    sch.TransformLayout(sch.GetBlock("conv2d_nhwc"), 0, "read",
                        Map("lambda n, h, w0, c, w1: (h * 2 + w0, n, c, w1)"));
    EXPECT_NE(ToText(sch.func()).find("PadInput = T.alloc_buffer((16, 1, 4, 4))"),
              std::string::npos)
        << ToText(sch.func());
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
  }
  {
    PrimFunc f = SoftmaxMN(8, 16);
    Schedule sch(f);
    sch.TransformLayout(sch.GetBlock("T_softmax_norm"), 0, "read", Map("lambda i, j: (j, i)"));
    sch.TransformLayout(sch.GetBlock("T_softmax_expsum"), 0, "write",
                        Map("lambda i: (i // 2, i % 2)"));
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
  }
  {
    PrimFunc f = MatmulRelu(8, 8, 8);
    Schedule sch(f);
    // The matmul result feeding the relu is an intermediate.
    BlockRV relu = sch.GetBlock("compute");
    sch.TransformLayout(relu, 0, "read", Map("lambda i, j: (i * 8 + j,)"));
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
  }
}

TEST(TransformLayout, TraceForms) {
  Schedule sch(SoftmaxMN(8, 8));
  sch.TransformLayout(sch.GetBlock("T_softmax_exp"), 0, "write",
                      Map("lambda i, j: (i // 4, j, i % 4)"));
  EXPECT_EQ(
      sch.trace().AsJSONString(),
      R"([[["GetBlock",[],["T_softmax_exp","main"],["b0"]],["TransformLayout",["b0","\"lambda i, j: (i // 4, j, i % 4)\""],[0,1,null,0],[]]],[]])");
  EXPECT_NE(
      sch.trace().AsPython().find(
          R"(sch.transform_layout(block=b0, buffer=("write", 0), index_map=lambda i, j: (i // 4, j, i % 4), pad_value=None, assume_injective_transform=False))"),
      std::string::npos)
      << sch.trace().AsPython();
}

TEST(TransformLayout, AssumeInjectiveStillChecksTheMap) {
  PrimFunc f = SoftmaxMN(8, 8);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("T_softmax_exp");
  KILN_EXPECT_SCHEDULE_ERROR(sch.TransformLayout(b, 0, "write", Map("lambda i, j: (i // 2, j)"),
                                                 std::nullopt, /*assume_injective_transform=*/true),
                             "not a bijective affine map");
  sch.TransformLayout(b, 0, "write", Map("lambda i, j: (j, i)"), std::nullopt, true);
  EXPECT_EQ(sch.trace().insts().back().attrs, nlohmann::json::parse("[0, 1, null, 1]"));
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

TEST(TransformLayout, Refusals) {
  Schedule sch(SoftmaxMN(8, 8));
  BlockRV b = sch.GetBlock("T_softmax_exp");
  KILN_EXPECT_SCHEDULE_ERROR(sch.TransformLayout(b, 3, "write", Map("lambda i, j: (j, i)")),
                             "transform_layout: block T_softmax_exp has 1 write buffers; write "
                             "index 3 is out of range");
  KILN_EXPECT_SCHEDULE_ERROR(sch.TransformLayout(b, 0, "readwrite", Map("lambda i, j: (j, i)")),
                             "buffer_index_type must be \"read\" or \"write\"");
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.TransformLayout(b, 0, "write", Map("lambda i, j, k: (k, j, i)")),
      "the index map lambda i, j, k: (k, j, i) takes 3 indices, but buffer T_softmax_exp has 2 "
      "dimensions");
  KILN_EXPECT_SCHEDULE_ERROR(sch.TransformLayout(b, 0, "write", Map("lambda i, j: (i // 2, j)")),
                             "cannot be applied to buffer T_softmax_exp of shape (8, 8): it is not "
                             "a bijective affine map");
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.TransformLayout(b, 0, "write", Map("lambda i, j: (i // 3, j, i % 3)")),
      "cannot be applied to buffer T_softmax_exp of shape (8, 8)");
  KILN_EXPECT_SCHEDULE_ERROR(sch.TransformLayout(b, 0, "write", Map("lambda i, j: (j, i)"),
                                                 Map("lambda i, j: (T.float32(0),)")),
                             "pad_value is not supported");
  // Nothing was changed or recorded by the refused calls.
  EXPECT_EQ(sch.trace().size(), 1u);
  EXPECT_TRUE(testing::SameResult(SoftmaxMN(8, 8), sch.func()));
}

TEST(TransformLayout, ReplayRefusesMalformedInstructions) {
  Schedule fresh(SoftmaxMN(8, 8));
  auto replay = [&](const std::string& json) {
    Schedule s(SoftmaxMN(8, 8));
    Trace::FromJSONString(json).ApplyToSchedule(&s, false);
  };
  EXPECT_THROW(
      replay(
          R"([[["GetBlock",[],["T_softmax_exp","main"],["b0"]],["TransformLayout",["b0","\"lambda i, j: (\""],[0,1,null,0],[]]],[]])"),
      TraceError);
  EXPECT_THROW(
      replay(
          R"([[["GetBlock",[],["T_softmax_exp","main"],["b0"]],["TransformLayout",["b0","\"lambda i, j: (j, i)\""],[0,5,null,0],[]]],[]])"),
      TraceError);
  EXPECT_THROW(
      replay(
          R"([[["GetBlock",[],["T_softmax_exp","main"],["b0"]],["TransformLayout",["b0"],[0,1,null,0],[]]],[]])"),
      TraceError);
  // A pad value reaches the primitive, which refuses it.
  const std::string padded =
      R"json([[["GetBlock",[],["T_softmax_exp","main"],["b0"]],["TransformLayout",["b0","\"lambda i, j: (j, i)\""],[0,1,"lambda i, j: (T.float32(0),)",0],[]]],[]])json";
  KILN_EXPECT_SCHEDULE_ERROR(replay(padded), "pad_value is not supported");
  fresh.GetBlock("T_softmax_exp");
  EXPECT_EQ(fresh.trace().size(), 1u);
}

}  // namespace
}  // namespace kiln::ir
