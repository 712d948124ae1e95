// decompose_reduction: golden text, interpreter equivalence on the suite's
// reductions at small shapes, well-formedness, replay, refusals.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "tests/schedule/schedule_test_util.h"

namespace kiln::ir {
namespace {

// Decomposes `block` at its loop number `loop_index` and checks the result
// computes the same, verifies, and replays.
void ExpectDecomposes(const PrimFunc& f, const std::string& block, int loop_index) {
  SCOPED_TRACE(block + " at loop " + std::to_string(loop_index));
  Schedule sch(f);
  BlockRV b = sch.GetBlock(block);
  BlockRV init = sch.DecomposeReduction(b, sch.GetLoops(b)[loop_index]);
  EXPECT_EQ(sch.NameOf(init), block + "_init");
  EXPECT_EQ(sch.NameOf(b), block + "_update");
  EXPECT_FALSE(sch.Get(b).init.has_value());
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

TEST(DecomposeReduction, GoldenAtTheReductionLoop) {
  PrimFunc f = Matmul(8, 8, 8);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(b);
  BlockRV init = sch.DecomposeReduction(b, loops[2]);
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j in T.grid(8, 8):
        with T.block("C_init"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads()
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = T.float32(0.0)
        for k in range(8):
            with T.block("C_update"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(C[v_i, v_j], A[v_i, v_k], B[v_k, v_j])
                T.writes(C[v_i, v_j])
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  // The handle follows the renamed update block; the new one names the init.
  EXPECT_EQ(sch.NameOf(b), "C_update");
  EXPECT_EQ(sch.NameOf(init), "C_init");
  EXPECT_EQ(sch.GetLoops(b).size(), 3u);
  EXPECT_EQ(sch.GetLoops(init).size(), 2u);
  EXPECT_EQ(
      sch.trace().AsJSONString(),
      R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)"
      R"(["DecomposeReduction",["b0","l3"],[],["b4"]],["GetLoops",["b0"],[],["l5","l6","l7"]],)"
      R"(["GetLoops",["b4"],[],["l8","l9"]]],[]])");
  EXPECT_NE(sch.trace().AsPython().find("b4 = sch.decompose_reduction(block=b0, loop=l3)"),
            std::string::npos)
      << sch.trace().AsPython();
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

TEST(DecomposeReduction, GoldenAtTheOutermostLoopReplicatesTheSpatialLoops) {
  PrimFunc f = Matmul(8, 8, 8);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("C");
  sch.DecomposeReduction(b, sch.GetLoops(b)[0]);
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_init, j_init in T.grid(8, 8):
        with T.block("C_init"):
            v_i, v_j = T.axis.remap("SS", [i_init, j_init])
            T.reads()
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = T.float32(0.0)
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C_update"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(C[v_i, v_j], A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

// A tiled matmul in the "SRSR" order multi-level tiling leaves: the init
// keeps the spatial loop below the target (i_1) and drops the reduction one.
constexpr const char* kTiled = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0, j, k_0, i_1, k_1 in T.grid(2, 8, 2, 4, 4):
        with T.block("C"):
            v_i = T.axis.spatial(8, i_0 * 4 + i_1)
            v_j = T.axis.spatial(8, j)
            v_k = T.axis.reduce(8, k_0 * 4 + k_1)
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)";

TEST(DecomposeReduction, GoldenTiledKeepsOnlyLoopsTheSpatialBindingsUse) {
  PrimFunc f = ParseFunc(kTiled);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("C");
  sch.DecomposeReduction(b, sch.GetLoops(b)[2]);
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0, j in T.grid(2, 8):
        for i_1_init in range(4):
            with T.block("C_init"):
                v_i = T.axis.spatial(8, i_0 * 4 + i_1_init)
                v_j = T.axis.spatial(8, j)
                T.reads()
                T.writes(C[v_i, v_j])
                C[v_i, v_j] = T.float32(0.0)
        for k_0, i_1, k_1 in T.grid(2, 4, 4):
            with T.block("C_update"):
                v_i = T.axis.spatial(8, i_0 * 4 + i_1)
                v_j = T.axis.spatial(8, j)
                v_k = T.axis.reduce(8, k_0 * 4 + k_1)
                T.reads(C[v_i, v_j], A[v_i, v_k], B[v_k, v_j])
                T.writes(C[v_i, v_j])
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

// A non-divisible split of both i (6 = 2 x 4, guarded) and k (10 = 3 x 4):
// the init keeps the guard on the spatial loops and drops the one on k.
constexpr const char* kGuarded = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6, 10), "float32"), B: T.Buffer((6,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0, i_1, k_0, k_1 in T.grid(2, 4, 3, 4):
        with T.block("B"):
            v_i = T.axis.spatial(6, i_0 * 4 + i_1)
            v_k = T.axis.reduce(10, k_0 * 4 + k_1)
            T.where(i_0 * 4 + i_1 < 6 and k_0 * 4 + k_1 < 10)
            T.reads(A[v_i, v_k])
            T.writes(B[v_i])
            with T.init():
                B[v_i] = T.float32(0.0)
            B[v_i] = B[v_i] + A[v_i, v_k]
)";

TEST(DecomposeReduction, GoldenGuardedSplitKeepsTheSpatialCondition) {
  PrimFunc f = ParseFunc(kGuarded);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  sch.DecomposeReduction(b, sch.GetLoops(b)[0]);
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6, 10), "float32"), B: T.Buffer((6,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0_init, i_1_init in T.grid(2, 4):
        with T.block("B_init"):
            v_i = T.axis.spatial(6, i_0_init * 4 + i_1_init)
            T.where(i_0_init * 4 + i_1_init < 6)
            T.reads()
            T.writes(B[v_i])
            B[v_i] = T.float32(0.0)
    for i_0, i_1, k_0, k_1 in T.grid(2, 4, 3, 4):
        with T.block("B_update"):
            v_i = T.axis.spatial(6, i_0 * 4 + i_1)
            v_k = T.axis.reduce(10, k_0 * 4 + k_1)
            T.where(i_0 * 4 + i_1 < 6 and k_0 * 4 + k_1 < 10)
            T.reads(B[v_i], A[v_i, v_k])
            T.writes(B[v_i])
            B[v_i] = B[v_i] + A[v_i, v_k]
)");
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
  // At the reduction loop the whole guard stays with the update.
  ExpectDecomposes(f, "B", 2);
}

TEST(DecomposeReduction, MatchesTheInterpreterOnSuiteReductions) {
  // GMM: batch matmul, every loop from the outermost to the reduction loop.
  PrimFunc gmm = BatchMatmulNKKM(2, 8, 8, 8);
  for (int l = 0; l <= 3; ++l) ExpectDecomposes(gmm, "Z", l);
  // NRM: a sum of squares over two reduction loops.
  PrimFunc nrm = NormBMN(2, 4, 4);
  for (int l = 0; l <= 1; ++l) ExpectDecomposes(nrm, "C", l);
  // Softmax: the max (identity: lowest float) and the sum.
  PrimFunc sfm = SoftmaxMN(4, 8);
  for (int l = 0; l <= 1; ++l) {
    ExpectDecomposes(sfm, "T_softmax_maxelem", l);
    ExpectDecomposes(sfm, "T_softmax_expsum", l);
  }
  // GEMV in LLM layout, and a padded convolution.
  PrimFunc gemv = GemvNT(1, 8, 16);
  for (int l = 0; l <= 2; ++l) ExpectDecomposes(gemv, "NT_matmul", l);
  PrimFunc conv = Conv2dNHWC(1, 6, 6, 4, 4, 3, 1, 1);
  ExpectDecomposes(conv, "conv2d_nhwc", 0);
  ExpectDecomposes(conv, "conv2d_nhwc", 4);
  ExpectDecomposes(ParseFunc(kTiled), "C", 0);
  ExpectDecomposes(ParseFunc(kTiled), "C", 1);
}

TEST(DecomposeReduction, BothSoftmaxReductionsInOneSchedule) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  for (const char* name : {"T_softmax_maxelem", "T_softmax_expsum"}) {
    BlockRV b = sch.GetBlock(name);
    sch.DecomposeReduction(b, sch.GetLoops(b)[1]);
  }
  EXPECT_TRUE(sch.HasBlock("T_softmax_maxelem_init"));
  EXPECT_TRUE(sch.HasBlock("T_softmax_expsum_update"));
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

TEST(DecomposeReduction, RefusesABlockWithoutInit) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("T_softmax_exp");
  LoopRV l = sch.GetLoops(b)[0];
  KILN_EXPECT_SCHEDULE_ERROR(sch.DecomposeReduction(b, l),
                             "block T_softmax_exp is not a reduction block: it has no init");
  // Decomposing twice finds the update without init.
  BlockRV c = sch.GetBlock("T_softmax_expsum");
  sch.DecomposeReduction(c, sch.GetLoops(c)[1]);
  KILN_EXPECT_SCHEDULE_ERROR(sch.DecomposeReduction(c, sch.GetLoops(c)[1]),
                             "block T_softmax_expsum_update is not a reduction block");
}

TEST(DecomposeReduction, RefusesALoopThatDoesNotEncloseTheBlock) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("T_softmax_expsum");
  LoopRV other = sch.GetLoops(sch.GetBlock("T_softmax_maxelem"))[0];
  KILN_EXPECT_SCHEDULE_ERROR(sch.DecomposeReduction(b, other),
                             "decompose_reduction: loop i0 is not an ancestor of block "
                             "T_softmax_expsum");
}

TEST(DecomposeReduction, RefusesALoopInsideAReductionLoop) {
  PrimFunc f = ParseFunc(kTiled);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(b);
  KILN_EXPECT_SCHEDULE_ERROR(sch.DecomposeReduction(b, loops[3]),
                             "loop i_1 must enclose every loop bound to a reduction iter var of "
                             "block C, but loop k_0 (outside it) feeds v_k");
  KILN_EXPECT_SCHEDULE_ERROR(sch.DecomposeReduction(b, loops[4]), "loop k_0 (outside it)");
  // Nothing was recorded for the refusals.
  EXPECT_EQ(sch.trace().insts().size(), 2u);
}

TEST(DecomposeReduction, RefusesAnIfBetweenTheLoopAndTheBlock) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(4):
        if i < 3:
            for k in range(4):
                with T.block("B"):
                    v_i, v_k = T.axis.remap("SR", [i, k])
                    T.reads(A[v_i, v_k])
                    T.writes(B[v_i])
                    with T.init():
                        B[v_i] = T.float32(0.0)
                    B[v_i] = B[v_i] + A[v_i, v_k]
)");
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  KILN_EXPECT_SCHEDULE_ERROR(sch.DecomposeReduction(b, sch.GetLoops(b)[0]),
                             "an if statement lies between loop i and block B");
  // Below the if there is nothing to lose.
  ExpectDecomposes(f, "B", 1);
}

TEST(DecomposeReduction, RefusesABlockThatIsNotTheOnlyWriter) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(4):
        with T.block("zero"):
            v_i = T.axis.remap("S", [i])
            T.reads()
            T.writes(B[v_i])
            B[v_i] = T.float32(0.0)
    for i, k in T.grid(4, 4):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(B[v_i])
            with T.init():
                B[v_i] = T.float32(0.0)
            B[v_i] = B[v_i] + A[v_i, v_k]
)");
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  KILN_EXPECT_SCHEDULE_ERROR(sch.DecomposeReduction(b, sch.GetLoops(b)[1]),
                             "block B is not a reduction block");
}

}  // namespace
}  // namespace kiln::ir
