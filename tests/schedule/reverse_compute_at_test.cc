// reverse_compute_at: golden rewrites, interpreter equivalence, replay and
// refusals.
#include <gtest/gtest.h>

#include "ir/ir.h"
#include "ir/text/parser.h"
#include "ir/workloads/suite.h"
#include "tests/schedule/schedule_test_util.h"

namespace kiln::ir {
namespace {

LoopRV LoopOf(Schedule& sch, const std::string& block, const std::string& loop) {
  for (LoopRV l : sch.GetLoops(sch.GetBlock(block))) {
    if (sch.NameOf(l) == loop) return l;
  }
  ADD_FAILURE() << "block " << block << " has no loop " << loop;
  return LoopRV{};
}

void ExpectScheduled(const PrimFunc& original, const Schedule& sch, const std::string& golden) {
  EXPECT_EQ(ToText(sch.func()), golden);
  testing::ExpectSound(original, sch);
}

// B is computed under a 3 x 4 split of its loop (10 elements); C reads it.
constexpr const char* kTiledProducer = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((10,))
    for i_0, i_1 in T.grid(3, 4):
        with T.block("B"):
            v_i = T.axis.spatial(10, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < 10)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i] * T.float32(2.0)
    for i in range(10):
        with T.block("C"):
            v_i = T.axis.spatial(10, i)
            T.reads(B[v_i])
            T.writes(C[v_i])
            C[v_i] = B[v_i] + T.float32(1.0)
)";

TEST(ReverseComputeAt, ReluUnderMatmulColumn) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  sch.ReverseComputeAt(sch.GetBlock("compute"), LoopOf(sch, "C", "j"));
  ExpectScheduled(f, sch, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), compute: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        for k in range(8):
            with T.block("C"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(A[v_i, v_k], B[v_k, v_j])
                T.writes(C[v_i, v_j])
                with T.init():
                    C[v_i, v_j] = T.float32(0.0)
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
        with T.block("compute"):
            v_i0, v_i1 = T.axis.remap("SS", [i, j])
            T.reads(C[v_i0, v_i1])
            T.writes(compute[v_i0, v_i1])
            compute[v_i0, v_i1] = T.max(C[v_i0, v_i1], T.float32(0.0))
)");
}

TEST(ReverseComputeAt, ReluUnderMatmulRow) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  sch.ReverseComputeAt(sch.GetBlock("compute"), LoopOf(sch, "C", "i"));
  ExpectScheduled(f, sch, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), compute: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C = T.alloc_buffer((8, 8))
    for i in range(8):
        for j, k in T.grid(8, 8):
            with T.block("C"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(A[v_i, v_k], B[v_k, v_j])
                T.writes(C[v_i, v_j])
                with T.init():
                    C[v_i, v_j] = T.float32(0.0)
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
        for ax0 in range(8):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i, ax0])
                T.reads(C[v_i0, v_i1])
                T.writes(compute[v_i0, v_i1])
                compute[v_i0, v_i1] = T.max(C[v_i0, v_i1], T.float32(0.0))
)");
}

TEST(ReverseComputeAt, NonDividingTileGetsPredicate) {
  PrimFunc f = ParseFunc(kTiledProducer);
  Schedule sch(f);
  sch.ReverseComputeAt(sch.GetBlock("C"), LoopOf(sch, "B", "i_0"));
  ExpectScheduled(f, sch, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((10,))
    for i_0 in range(3):
        for i_1 in range(4):
            with T.block("B"):
                v_i = T.axis.spatial(10, i_0 * 4 + i_1)
                T.where(i_0 * 4 + i_1 < 10)
                T.reads(A[v_i])
                T.writes(B[v_i])
                B[v_i] = A[v_i] * T.float32(2.0)
        for ax0 in range(4):
            with T.block("C"):
                v_i = T.axis.spatial(10, i_0 * 4 + ax0)
                T.where(i_0 * 4 + ax0 < 10)
                T.reads(B[v_i])
                T.writes(C[v_i])
                C[v_i] = B[v_i] + T.float32(1.0)
)");
}

TEST(ReverseComputeAt, PreserveUnitLoops) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  sch.ReverseComputeAt(sch.GetBlock("compute"), LoopOf(sch, "C", "j"), true);
  auto loops = sch.GetLoops(sch.GetBlock("compute"));
  ASSERT_EQ(loops.size(), 4u);
  EXPECT_EQ(sch.NameOf(loops[2]), "ax0");
  EXPECT_EQ(sch.NameOf(loops[3]), "ax1");
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

TEST(ReverseComputeAt, SoftmaxStagesUnderOneRowLoop) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  sch.ReverseComputeAt(sch.GetBlock("T_softmax_expsum"), LoopOf(sch, "T_softmax_exp", "i0"));
  sch.ReverseComputeAt(sch.GetBlock("T_softmax_norm"), LoopOf(sch, "T_softmax_exp", "i0"));
  sch.ComputeAt(sch.GetBlock("T_softmax_maxelem"), LoopOf(sch, "T_softmax_exp", "i0"));
  EXPECT_EQ(sch.GetChildBlocks(LoopOf(sch, "T_softmax_exp", "i0")).size(), 4u);
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

TEST(ReverseComputeAt, ConvEpilogueUnderConvLoops) {
  PrimFunc f = Conv2dNHWCBnRelu(1, 6, 6, 2, 4, 3, 1, 1);
  for (size_t depth : {0u, 1u, 2u, 3u}) {
    Schedule sch(f);
    std::vector<BlockRV> blocks = sch.GetChildBlocks(sch.GetBlock("root"));
    ASSERT_GE(blocks.size(), 3u);
    const std::string conv = sch.NameOf(blocks[1]);
    for (size_t i = 2; i < blocks.size(); ++i) {
      LoopRV loop = sch.GetLoops(sch.GetBlock(conv))[depth];
      sch.ReverseComputeAt(blocks[i], loop);
    }
    EXPECT_TRUE(testing::SameResult(f, sch.func())) << depth;
    EXPECT_TRUE(testing::WellFormed(sch.func())) << depth;
    EXPECT_TRUE(testing::ReplaysExactly(f, sch)) << depth;
  }
}

TEST(ReverseComputeAt, PythonForm) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  // One statement each: the order of a call's arguments is unspecified (gcc
  // and clang differ), and it decides the trace's variable names.
  const auto loop = LoopOf(sch, "C", "j");
  const auto block = sch.GetBlock("compute");
  sch.ReverseComputeAt(block, loop);
  EXPECT_NE(sch.trace().AsPython().find("sch.reverse_compute_at(block=b4, loop=l2, "
                                        "preserve_unit_loops=False, index=-1)"),
            std::string::npos)
      << sch.trace().AsPython();
}

TEST(ReverseComputeAt, RefusesAReductionLoopOfTheProducer) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.ReverseComputeAt(sch.GetBlock("compute"), LoopOf(sch, "C", "k")),
      "producer block 'C' reduces over loop k or a loop above it (iteration variable v_k); block "
      "'compute' would read its partial results");
}

TEST(ReverseComputeAt, RefusesWhenAProducerIsOutsideTheLoop) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.ReverseComputeAt(sch.GetBlock("T_softmax_norm"), LoopOf(sch, "T_softmax_expsum", "i0")),
      "all the producers of block 'T_softmax_norm' must be under loop i0, but 1 producer is not: "
      "'T_softmax_exp'");
}

TEST(ReverseComputeAt, RefusesAStencilConsumer) {
  // The conv reads PadInput[v_n, v_h + v_rh, ...]: no lone iteration variable
  // to derive v_h's range from.
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1);
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.ReverseComputeAt(sch.GetBlock("conv2d_nhwc"), LoopOf(sch, "PadInput", "i1")),
      "block 'conv2d_nhwc' indexes dimension 1 of buffer 'PadInput' (index v_h + v_rh) by an "
      "expression that is not a lone iteration variable");
}

TEST(ReverseComputeAt, RefusesALoopAboveTheBlock) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.ReverseComputeAt(sch.GetBlock("compute"), LoopOf(sch, "compute", "i0")),
      "loop i0 is an ancestor of block 'compute'");
}

TEST(ReverseComputeAt, RefusesMovingAheadOfAnEarlierReader) {
  // Y reads C before B writes it: B may not move ahead of Y.
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32"), E: T.Buffer((4,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    P = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("P"):
            v_i = T.axis.spatial(4, i)
            T.reads(A[v_i])
            T.writes(P[v_i])
            P[v_i] = A[v_i]
    for i in range(4):
        with T.block("Y"):
            v_i = T.axis.spatial(4, i)
            T.reads(C[v_i])
            T.writes(E[v_i])
            E[v_i] = C[v_i]
    for i in range(4):
        with T.block("B"):
            v_i = T.axis.spatial(4, i)
            T.reads(P[v_i])
            T.writes(C[v_i])
            C[v_i] = P[v_i]
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.ReverseComputeAt(sch.GetBlock("B"), LoopOf(sch, "P", "i")),
                             "moving block 'B' under loop i would reorder it against block 'Y', "
                             "which reads a buffer the block writes");
}

TEST(ReverseComputeAt, RefusesARemovedLoop) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  LoopRV relu_inner = LoopOf(sch, "compute", "i1");
  sch.ReverseComputeAt(sch.GetBlock("compute"), LoopOf(sch, "C", "j"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ReverseComputeAt(sch.GetBlock("compute"), relu_inner),
                             "loop i1 no longer exists");
}

}  // namespace
}  // namespace kiln::ir
