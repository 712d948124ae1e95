// cache_write: golden text against TVM's output, interpreter equivalence,
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

TEST(CacheWrite, MatmulLocalGolden) {
  PrimFunc f = Matmul(16, 16, 16);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  BlockRV wb = sch.CacheWrite(c, 0, "local");
  EXPECT_EQ(sch.NameOf(wb), "C_local");
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C_local = T.alloc_buffer((16, 16), scope="local")
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C_local[v_i, v_j])
            with T.init():
                C_local[v_i, v_j] = T.float32(0.0)
            C_local[v_i, v_j] = C_local[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
    for ax0, ax1 in T.grid(16, 16):
        with T.block("C_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(C_local[v0, v1])
            T.writes(C[v0, v1])
            C[v0, v1] = C_local[v0, v1]
)");
  testing::ExpectSound(f, sch);
  EXPECT_EQ(sch.trace().AsPython(),
            "def apply_trace(sch):\n"
            "  b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
            "  b1 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"local\")\n");
  EXPECT_EQ(sch.trace().AsJSON()[0][1].dump(), R"(["CacheWrite",["b0",[]],[0,"local"],["b1"]])");
}

TEST(CacheWrite, InsideSharedLoopGolden) {
  PrimFunc f = ParseFunc(kSharedLoop);
  Schedule sch(f);
  sch.CacheWrite(sch.GetBlock("B"), 0, "shared");
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((4, 8))
    B_shared = T.alloc_buffer((4, 8), scope="shared")
    for i in range(4):
        for j in range(8):
            with T.block("B"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                T.reads(A[v_i, v_j])
                T.writes(B_shared[v_i, v_j])
                B_shared[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        for ax0, ax1 in T.grid(1, 8):
            with T.block("B_shared"):
                v0 = T.axis.spatial(4, i + ax0)
                v1 = T.axis.spatial(8, ax1)
                T.reads(B_shared[v0, v1])
                T.writes(B[v0, v1])
                B[v0, v1] = B_shared[v0, v1]
        for j in range(8):
            with T.block("C"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                T.reads(B[v_i, v_j])
                T.writes(C[v_i, v_j])
                C[v_i, v_j] = B[v_i, v_j] + T.float32(1.0)
)");
  testing::ExpectSound(f, sch);
}

TEST(CacheWrite, ConsumerReadsCacheAndWriteBackMovesToTheEnd) {
  // With its only consumer reading the cache, nothing needs the original in
  // the loop: the write-back goes to the end of the scope.
  PrimFunc f = ParseFunc(kSharedLoop);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  sch.CacheWrite(sch.GetBlock("B"), 0, "local", {c});
  std::string text = ToText(sch.func());
  EXPECT_NE(text.find("T.reads(B_local[v_i, v_j])"), std::string::npos) << text;
  EXPECT_NE(text.find("    for ax0, ax1 in T.grid(4, 8):\n        with T.block(\"B_local\"):"),
            std::string::npos)
      << text;
  EXPECT_GT(text.find("T.block(\"B_local\")"), text.find("T.block(\"C\")"));
  testing::ExpectSound(f, sch);
  EXPECT_NE(sch.trace().AsPython().find("b2 = sch.cache_write(block=b1, write_buffer_index=0, "
                                        "storage_scope=\"local\", consumer_blocks=[b0])"),
            std::string::npos)
      << sch.trace().AsPython();
}

TEST(CacheWrite, SoftmaxIntermediates) {
  PrimFunc f = SoftmaxMN(5, 7);
  {
    Schedule sch(f);
    sch.CacheWrite(sch.GetBlock("T_softmax_exp"), 0, "local");
    std::string text = ToText(sch.func());
    // Written back before the first consumer; the consumers read the original.
    EXPECT_LT(text.find("T.block(\"T_softmax_exp_local\")"),
              text.find("T.block(\"T_softmax_expsum\")"));
    EXPECT_NE(text.find("T.reads(T_softmax_exp[v_i0, v_k])"), std::string::npos) << text;
    testing::ExpectSound(f, sch);
  }
  {
    Schedule sch(f);
    BlockRV expsum = sch.GetBlock("T_softmax_expsum");
    sch.CacheWrite(sch.GetBlock("T_softmax_exp"), 0, "local", {expsum});
    std::string text = ToText(sch.func());
    EXPECT_NE(text.find("T.reads(T_softmax_exp_local[v_i0, v_k])"), std::string::npos) << text;
    EXPECT_LT(text.find("T.block(\"T_softmax_expsum\")"),
              text.find("T.block(\"T_softmax_exp_local\")"));
    EXPECT_LT(text.find("T.block(\"T_softmax_exp_local\")"),
              text.find("T.block(\"T_softmax_norm\")"));
    testing::ExpectSound(f, sch);
  }
  for (const char* block : {"T_softmax_maxelem", "T_softmax_expsum", "T_softmax_norm"}) {
    SCOPED_TRACE(block);
    Schedule sch(f);
    sch.CacheWrite(sch.GetBlock(block), 0, "shared");
    testing::ExpectSound(f, sch);
  }
}

TEST(CacheWrite, ConvWithPadding) {
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 4, 3, 1, 1);
  Schedule sch(f);
  sch.CacheWrite(sch.GetBlock("PadInput"), 0, "shared");
  sch.CacheWrite(sch.GetBlock("conv2d_nhwc"), 0, "local");
  testing::ExpectSound(f, sch);
}

TEST(CacheWrite, AfterCacheRead) {
  PrimFunc f = BatchMatmulNKKM(1, 8, 8, 8);
  Schedule sch(f);
  BlockRV z = sch.GetBlock("Z");
  sch.CacheRead(z, 0, "shared");
  sch.CacheRead(z, 1, "shared");
  BlockRV wb = sch.CacheWrite(z, 0, "local");
  EXPECT_EQ(sch.NameOf(wb), "Z_local");
  testing::ExpectSound(f, sch);
}

TEST(CacheWrite, Refusals) {
  PrimFunc f = Matmul(8, 8, 8);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  KILN_EXPECT_SCHEDULE_ERROR(sch.CacheWrite(c, 1, "local"),
                             "write_buffer_index 1 is out of range: block 'C' writes 1");
  KILN_EXPECT_SCHEDULE_ERROR(sch.CacheWrite(c, 0, "registers"),
                             "invalid storage scope \"registers\"");
  KILN_EXPECT_SCHEDULE_ERROR(sch.CacheWrite(c, 0, "local", {c}),
                             "consumer block 'C' does not read buffer 'C' written by block 'C'");
  EXPECT_TRUE(StructuralEqual(sch.func(), f));

  PrimFunc sm = SoftmaxMN(4, 8);
  Schedule ss(sm);
  KILN_EXPECT_SCHEDULE_ERROR(
      ss.CacheWrite(ss.GetBlock("T_softmax_exp"), 0, "local", {ss.GetBlock("T_softmax_maxelem")}),
      "consumer block 'T_softmax_maxelem' does not read buffer 'T_softmax_exp'");
}

TEST(CacheWrite, RefusesTwoWriters) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
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
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.CacheWrite(sch.GetBlock("B0"), 0, "local"),
                             "buffer 'B' is written by 2 blocks in scope block 'root' (B0, B1)");
}

TEST(CacheWrite, RefusesGappedWrite) {
  // B0 writes every other element; copying B[0:7] back would overwrite the
  // odd elements with values nobody wrote.
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(4):
        with T.block("B0"):
            v = T.axis.spatial(4, i)
            T.reads(A[v * 2])
            T.writes(B[v * 2])
            B[v * 2] = A[v * 2]
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.CacheWrite(sch.GetBlock("B0"), 0, "local"),
                             "block 'B0' does not write a whole rectangular region of buffer 'B'");
}

TEST(CacheWrite, RefusesAccumulateWithoutInit) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            v = T.axis.spatial(8, i)
            T.reads(B[v], A[v])
            T.writes(B[v])
            B[v] = B[v] + A[v]
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.CacheWrite(sch.GetBlock("B"), 0, "local"),
                             "block 'B' reads the values buffer 'B' held before it ran");
}

}  // namespace
}  // namespace kiln::ir

namespace kiln::ir {
namespace {

// A block nested in another: the outer block is the inner one's scope.
const char* kNested = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(4):
        with T.block("outer"):
            v_o = T.axis.spatial(4, i)
            T.reads(A[v_o, 0:8])
            T.writes(C[v_o, 0:8])
            for j in range(8):
                with T.block("C"):
                    v_i = T.axis.spatial(4, v_o)
                    v_j = T.axis.spatial(8, j)
                    T.reads(A[v_i, v_j])
                    T.writes(C[v_i, v_j])
                    C[v_i, v_j] = A[v_i, v_j] + T.float32(1.0)
)";

TEST(CacheWrite, NestedScope) {
  PrimFunc f = ParseFunc(kNested);
  Schedule sch(f);
  sch.CacheWrite(sch.GetBlock("C"), 0, "local");
  sch.CacheRead(sch.GetBlock("C"), 0, "shared");
  // The caches live in the scope block and copy the row the scope handles
  // (TVM before compact cache buffers).
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(4):
        with T.block("outer"):
            v_o = T.axis.remap("S", [i])
            T.reads(A[v_o, 0:8])
            T.writes(C[v_o, 0:8])
            C_local = T.alloc_buffer((4, 8), scope="local")
            A_shared = T.alloc_buffer((4, 8), scope="shared")
            for ax0, ax1 in T.grid(1, 8):
                with T.block("A_shared"):
                    v0 = T.axis.spatial(4, v_o + ax0)
                    v1 = T.axis.spatial(8, ax1)
                    T.reads(A[v0, v1])
                    T.writes(A_shared[v0, v1])
                    A_shared[v0, v1] = A[v0, v1]
            for j in range(8):
                with T.block("C"):
                    v_i = T.axis.spatial(4, v_o)
                    v_j = T.axis.spatial(8, j)
                    T.reads(A_shared[v_i, v_j])
                    T.writes(C_local[v_i, v_j])
                    C_local[v_i, v_j] = A_shared[v_i, v_j] + T.float32(1.0)
            for ax0, ax1 in T.grid(1, 8):
                with T.block("C_local"):
                    v0 = T.axis.spatial(4, v_o + ax0)
                    v1 = T.axis.spatial(8, ax1)
                    T.reads(C_local[v0, v1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_local[v0, v1]
)");
  testing::ExpectSound(f, sch);
}

}  // namespace
}  // namespace kiln::ir

namespace kiln::ir {
namespace {

TEST(CacheWrite, ReplaysTvmTraceWithoutConsumerList) {
  // TVM releases before consumer_blocks recorded [block] alone.
  PrimFunc f = Matmul(8, 8, 8);
  Schedule direct(f);
  direct.CacheWrite(direct.GetBlock("C"), 0, "local");
  Schedule replayed(f);
  Trace::FromJSONString(
      R"([[["GetBlock",[],["C","main"],["b0"]],["CacheWrite",["b0"],[0,"local"],["b1"]],)"
      R"(["CacheRead",["b0"],[1,"shared"],["b2"]]],[]])")
      .ApplyToSchedule(&replayed, false);
  direct.CacheRead(direct.GetBlock("C"), 1, "shared");
  EXPECT_TRUE(StructuralEqual(direct.func(), replayed.func()));
  EXPECT_TRUE(testing::SameResult(f, replayed.func()));
}

}  // namespace
}  // namespace kiln::ir
