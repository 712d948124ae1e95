// cache_read: golden text against TVM's output, interpreter equivalence,
// replay, and refusals.
#include <gtest/gtest.h>

#include <string>

#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "tests/schedule/cache_test_programs.h"
#include "tests/schedule/schedule_test_util.h"

namespace kiln::ir {
namespace {

using testing::ReplaysExactly;
using testing::SameResult;
using testing::WellFormed;

using testing::kSharedLoop;

TEST(CacheRead, MatmulInputGolden) {
  PrimFunc f = Matmul(16, 16, 16);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  BlockRV a_shared = sch.CacheRead(c, 0, "shared");
  EXPECT_EQ(sch.NameOf(a_shared), "A_shared");
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    A_shared = T.alloc_buffer((16, 16), scope="shared")
    for ax0, ax1 in T.grid(16, 16):
        with T.block("A_shared"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v0, v1])
            T.writes(A_shared[v0, v1])
            A_shared[v0, v1] = A[v0, v1]
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A_shared[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A_shared[v_i, v_k] * B[v_k, v_j]
)");
  testing::ExpectSound(f, sch);
  EXPECT_EQ(sch.trace().AsPython(),
            "def apply_trace(sch):\n"
            "  b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
            "  b1 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope=\"shared\")\n");
  nlohmann::json inst = sch.trace().AsJSON()[0][1];
  EXPECT_EQ(inst.dump(), R"(["CacheRead",["b0",[]],[0,"shared"],["b1"]])");
}

TEST(CacheRead, SecondInputGoesFirst) {
  // Both stages are inserted at position 0 of the root, as TVM does.
  PrimFunc f = Matmul(8, 8, 8);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  sch.CacheRead(c, 0, "shared");
  sch.CacheRead(c, 1, "local");
  std::string text = ToText(sch.func());
  size_t b = text.find("T.block(\"B_local\")");
  size_t a = text.find("T.block(\"A_shared\")");
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(a, std::string::npos);
  EXPECT_LT(b, a);
  EXPECT_NE(text.find("T.reads(A_shared[v_i, v_k], B_local[v_k, v_j])"), std::string::npos) << text;
  testing::ExpectSound(f, sch);
}

TEST(CacheRead, IntermediateGoesBeforeFirstConsumer) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  BlockRV norm = sch.GetBlock("T_softmax_norm");
  sch.CacheRead(norm, 0, "shared");
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), T_softmax_norm: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    T_softmax_maxelem = T.alloc_buffer((4,))
    T_softmax_exp = T.alloc_buffer((4, 8))
    T_softmax_expsum = T.alloc_buffer((4,))
    T_softmax_exp_shared = T.alloc_buffer((4, 8), scope="shared")
    for i0, k in T.grid(4, 8):
        with T.block("T_softmax_maxelem"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            T.reads(A[v_i0, v_k])
            T.writes(T_softmax_maxelem[v_i0])
            with T.init():
                T_softmax_maxelem[v_i0] = T.float32(-3.4028234663852886e+38)
            T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], A[v_i0, v_k])
    for i0, i1 in T.grid(4, 8):
        with T.block("T_softmax_exp"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(A[v_i0, v_i1], T_softmax_maxelem[v_i0])
            T.writes(T_softmax_exp[v_i0, v_i1])
            T_softmax_exp[v_i0, v_i1] = T.exp(A[v_i0, v_i1] - T_softmax_maxelem[v_i0])
    for ax0, ax1 in T.grid(4, 8):
        with T.block("T_softmax_exp_shared"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(T_softmax_exp[v0, v1])
            T.writes(T_softmax_exp_shared[v0, v1])
            T_softmax_exp_shared[v0, v1] = T_softmax_exp[v0, v1]
    for i0, k in T.grid(4, 8):
        with T.block("T_softmax_expsum"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            T.reads(T_softmax_exp_shared[v_i0, v_k])
            T.writes(T_softmax_expsum[v_i0])
            with T.init():
                T_softmax_expsum[v_i0] = T.float32(0.0)
            T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_exp_shared[v_i0, v_k]
    for i0, i1 in T.grid(4, 8):
        with T.block("T_softmax_norm"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(T_softmax_exp_shared[v_i0, v_i1], T_softmax_expsum[v_i0])
            T.writes(T_softmax_norm[v_i0, v_i1])
            T.block_attr({"axis": 1})
            T_softmax_norm[v_i0, v_i1] = T_softmax_exp_shared[v_i0, v_i1] / T_softmax_expsum[v_i0]
)");
  testing::ExpectSound(f, sch);
}

TEST(CacheRead, ConsumerBlocksRestrictRedirect) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  BlockRV norm = sch.GetBlock("T_softmax_norm");
  BlockRV cached = sch.CacheRead(norm, 0, "local", {norm});
  EXPECT_EQ(sch.NameOf(cached), "T_softmax_exp_local");
  std::string text = ToText(sch.func());
  // expsum keeps reading the original; the stage sits right before norm.
  EXPECT_NE(text.find("T.reads(T_softmax_exp[v_i0, v_k])"), std::string::npos) << text;
  EXPECT_NE(text.find("T.reads(T_softmax_exp_local[v_i0, v_i1], T_softmax_expsum[v_i0])"),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("T.block(\"T_softmax_expsum\")"),
            text.find("T.block(\"T_softmax_exp_local\")"));
  EXPECT_LT(text.find("T.block(\"T_softmax_exp_local\")"),
            text.find("T.block(\"T_softmax_norm\")"));
  testing::ExpectSound(f, sch);
  EXPECT_NE(sch.trace().AsPython().find(
                "b1 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope=\"local\", "
                "consumer_blocks=[b0])"),
            std::string::npos)
      << sch.trace().AsPython();
}

TEST(CacheRead, InsideSharedLoopGolden) {
  PrimFunc f = ParseFunc(kSharedLoop);
  Schedule sch(f);
  sch.CacheRead(sch.GetBlock("C"), 0, "local");
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((4, 8))
    B_local = T.alloc_buffer((4, 8), scope="local")
    for i in range(4):
        for j in range(8):
            with T.block("B"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                T.reads(A[v_i, v_j])
                T.writes(B[v_i, v_j])
                B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        for ax0, ax1 in T.grid(1, 8):
            with T.block("B_local"):
                v0 = T.axis.spatial(4, i + ax0)
                v1 = T.axis.spatial(8, ax1)
                T.reads(B[v0, v1])
                T.writes(B_local[v0, v1])
                B_local[v0, v1] = B[v0, v1]
        for j in range(8):
            with T.block("C"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                T.reads(B_local[v_i, v_j])
                T.writes(C[v_i, v_j])
                C[v_i, v_j] = B_local[v_i, v_j] + T.float32(1.0)
)");
  testing::ExpectSound(f, sch);
}

TEST(CacheRead, ConvWithPadding) {
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 4, 3, 1, 1);
  {
    Schedule sch(f);
    BlockRV conv = sch.GetBlock("conv2d_nhwc");
    sch.CacheRead(conv, 0, "shared");  // PadInput, produced in the function
    sch.CacheRead(conv, 1, "local");   // weight, an input
    testing::ExpectSound(f, sch);
  }
  {
    Schedule sch(f);
    sch.CacheRead(sch.GetBlock("PadInput"), 0, "shared");
    testing::ExpectSound(f, sch);
  }
}

TEST(CacheRead, SoftmaxEveryRead) {
  PrimFunc f = SoftmaxMN(5, 7);
  for (const char* block :
       {"T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum", "T_softmax_norm"}) {
    Schedule probe(f);
    int n = static_cast<int>(probe.Get(probe.GetBlock(block)).reads.size());
    for (int i = 0; i < n; ++i) {
      SCOPED_TRACE(std::string(block) + " read " + std::to_string(i));
      Schedule sch(f);
      BlockRV b = sch.GetBlock(block);
      // maxelem and expsum read their own output only through writes.
      sch.CacheRead(b, i, "shared");
      testing::ExpectSound(f, sch);
    }
  }
}

TEST(CacheRead, RepeatedNamesStayUnique) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  BlockRV exp = sch.GetBlock("T_softmax_exp");
  BlockRV maxelem = sch.GetBlock("T_softmax_maxelem");
  BlockRV first = sch.CacheRead(maxelem, 0, "shared", {maxelem});
  BlockRV second = sch.CacheRead(exp, 0, "shared", {exp});
  EXPECT_EQ(sch.NameOf(first), "A_shared");
  EXPECT_EQ(sch.NameOf(second), "A_shared_1");
  testing::ExpectSound(f, sch);
}

TEST(CacheRead, Refusals) {
  PrimFunc f = Matmul(8, 8, 8);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  KILN_EXPECT_SCHEDULE_ERROR(sch.CacheRead(c, 2, "shared"),
                             "read_buffer_index 2 is out of range: block 'C' reads 2");
  KILN_EXPECT_SCHEDULE_ERROR(sch.CacheRead(c, -1, "shared"),
                             "read_buffer_index -1 is out of range");
  KILN_EXPECT_SCHEDULE_ERROR(sch.CacheRead(c, 0, "texture"), "invalid storage scope \"texture\"");
  KILN_EXPECT_SCHEDULE_ERROR(sch.CacheRead(c, 0, ""), "invalid storage scope \"\"");
  KILN_EXPECT_SCHEDULE_ERROR(sch.CacheRead(c, 0, "shared."), "invalid storage scope");

  // A reduction that declares the buffer it accumulates as a read.
  PrimFunc g = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), S: T.Buffer((1,), "float32")):
    for k in range(8):
        with T.block("S"):
            v_k = T.axis.reduce(8, k)
            T.reads(S[0], A[v_k])
            T.writes(S[0])
            with T.init():
                S[0] = T.float32(0.0)
            S[0] = S[0] + A[v_k]
)");
  Schedule gs(g);
  KILN_EXPECT_SCHEDULE_ERROR(gs.CacheRead(gs.GetBlock("S"), 0, "local"),
                             "block 'S' both reads and writes buffer 'S'");

  PrimFunc sm = SoftmaxMN(4, 8);
  Schedule ss(sm);
  BlockRV norm = ss.GetBlock("T_softmax_norm");
  BlockRV expsum = ss.GetBlock("T_softmax_expsum");
  KILN_EXPECT_SCHEDULE_ERROR(ss.CacheRead(norm, 1, "shared", {expsum}),
                             "consumer block 'T_softmax_expsum' does not read buffer "
                             "'T_softmax_expsum'");
  // Nothing was changed by the refused calls.
  EXPECT_TRUE(StructuralEqual(ss.func(), sm));
}

TEST(CacheRead, RefusesTwoWriters) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(4):
        with T.block("B0"):
            v = T.axis.spatial(4, i)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v]
    for i in range(4):
        with T.block("B1"):
            v = T.axis.spatial(4, i)
            T.reads(A[v + 4])
            T.writes(B[v + 4])
            B[v + 4] = A[v + 4]
    for i in range(8):
        with T.block("C"):
            v = T.axis.spatial(8, i)
            T.reads(B[v])
            T.writes(C[v])
            C[v] = B[v]
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.CacheRead(sch.GetBlock("C"), 0, "shared"),
                             "buffer 'B' is written by 2 blocks in scope block 'root' (B0, B1)");
}

TEST(CacheRead, RefusesUncoveredRead) {
  // C reads B[0:8] but B's only writer writes B[0:4]: a copy of what was
  // written would not hold B[4:8].
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(4):
        with T.block("B"):
            v = T.axis.spatial(4, i)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v]
    for i in range(8):
        with T.block("C"):
            v = T.axis.spatial(8, i)
            T.reads(B[v])
            T.writes(C[v])
            C[v] = B[v]
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.CacheRead(sch.GetBlock("C"), 0, "shared"),
      "the reads of block 'C' are not covered by what their producers write");
}

TEST(CacheRead, ReplayFromJSONWithConsumers) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  BlockRV norm = sch.GetBlock("T_softmax_norm");
  BlockRV expsum = sch.GetBlock("T_softmax_expsum");
  sch.CacheRead(norm, 0, "shared", {expsum, norm});
  EXPECT_TRUE(ReplaysExactly(f, sch));
  EXPECT_TRUE(SameResult(f, sch.func()));
}

}  // namespace
}  // namespace kiln::ir

namespace kiln::ir {
namespace {

TEST(CacheRead, DottedScopeRoundTrips) {
  PrimFunc f = Matmul(8, 8, 8);
  Schedule sch(f);
  BlockRV cached = sch.CacheRead(sch.GetBlock("C"), 1, "shared.dyn");
  EXPECT_EQ(sch.Get(cached).writes[0].buffer.scope(), "shared.dyn");
  std::string text = ToText(sch.func());
  PrimFunc reparsed = ParseFunc(text);
  EXPECT_EQ(ToText(reparsed), text);
  testing::ExpectSound(f, sch);
}

}  // namespace
}  // namespace kiln::ir
