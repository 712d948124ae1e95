// rfactor: golden text, interpreter equivalence on the suite's reductions at
// small shapes (split by hand where a split is needed), well-formedness,
// replay, refusals.
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

// Matmul 8x8x8 with k split into k_0 (2) x k_1 (4), as split(k, [None, 4]) gives.
constexpr const char* kSplitK = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j, k_0, k_1 in T.grid(8, 8, 2, 4):
        with T.block("C"):
            v_i = T.axis.spatial(8, i)
            v_j = T.axis.spatial(8, j)
            v_k = T.axis.reduce(8, k_0 * 4 + k_1)
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)";

// rfactor(loop_index, factor_axis) on `block`, checked for equivalence (with
// the tolerance of a reordered float sum), well-formedness and replay.
void ExpectRFactors(const PrimFunc& f, const std::string& block, int loop_index, int factor_axis,
                    bool verify = true) {
  SCOPED_TRACE(block + " at loop " + std::to_string(loop_index) + ", factor_axis " +
               std::to_string(factor_axis));
  Schedule sch(f);
  BlockRV b = sch.GetBlock(block);
  BlockRV rf = sch.RFactor(sch.GetLoops(b)[loop_index], factor_axis);
  EXPECT_EQ(sch.NameOf(rf), block + "_rf");
  EXPECT_TRUE(sch.Get(b).init.has_value());  // the write-back is a reduction
  EXPECT_TRUE(testing::SameResult(f, sch.func(), 7, /*reordered_reduction=*/true));
  if (verify) {
    EXPECT_TRUE(testing::WellFormed(sch.func()));
  }
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

TEST(RFactor, GoldenInnerSplitLoopAtAxisZero) {
  PrimFunc f = ParseFunc(kSplitK);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(b);
  BlockRV rf = sch.RFactor(loops[3], 0);
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C_rf = T.alloc_buffer((4, 8, 8))
    for i, j, k_0, k_1 in T.grid(8, 8, 2, 4):
        with T.block("C_rf"):
            vk_1, v_i, v_j, vk_0 = T.axis.remap("SSSR", [k_1, i, j, k_0])
            T.reads(A[v_i, vk_0 * 4 + vk_1], B[vk_0 * 4 + vk_1, v_j])
            T.writes(C_rf[vk_1, v_i, v_j])
            with T.init():
                C_rf[vk_1, v_i, v_j] = T.float32(0.0)
            C_rf[vk_1, v_i, v_j] = C_rf[vk_1, v_i, v_j] + A[v_i, vk_0 * 4 + vk_1] * B[vk_0 * 4 + vk_1, v_j]
    for i, j, k_1 in T.grid(8, 8, 4):
        with T.block("C"):
            vk_1, v_i, v_j = T.axis.remap("RSS", [k_1, i, j])
            T.reads(C_rf[vk_1, v_i, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + C_rf[vk_1, v_i, v_j]
)");
  EXPECT_EQ(sch.NameOf(rf), "C_rf");
  EXPECT_EQ(sch.NameOf(b), "C");
  // The handles of the kept loops now name the write-back's loops; k_0 is gone.
  EXPECT_EQ(sch.GetLoops(b).size(), 3u);
  KILN_EXPECT_SCHEDULE_ERROR(sch.Get(loops[2]), "loop k_0 no longer exists");
  EXPECT_EQ(sch.GetLoops(rf).size(), 4u);
  const std::string json = sch.trace().AsJSONString();
  EXPECT_NE(json.find(R"(["RFactor",["l4"],[0],["b5"]])"), std::string::npos) << json;
  EXPECT_NE(sch.trace().AsPython().find("b5 = sch.rfactor(loop=l4, factor_axis=0)"),
            std::string::npos);
  EXPECT_TRUE(testing::SameResult(f, sch.func(), 7, true));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

TEST(RFactor, GoldenOuterSplitLoopAtTheLastAxis) {
  PrimFunc f = ParseFunc(kSplitK);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("C");
  sch.RFactor(sch.GetLoops(b)[2], -1);
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C_rf = T.alloc_buffer((8, 8, 2))
    for i, j, k_0, k_1 in T.grid(8, 8, 2, 4):
        with T.block("C_rf"):
            vk_0, v_i, v_j, vk_1 = T.axis.remap("SSSR", [k_0, i, j, k_1])
            T.reads(A[v_i, vk_0 * 4 + vk_1], B[vk_0 * 4 + vk_1, v_j])
            T.writes(C_rf[v_i, v_j, vk_0])
            with T.init():
                C_rf[v_i, v_j, vk_0] = T.float32(0.0)
            C_rf[v_i, v_j, vk_0] = C_rf[v_i, v_j, vk_0] + A[v_i, vk_0 * 4 + vk_1] * B[vk_0 * 4 + vk_1, v_j]
    for i, j, k_0 in T.grid(8, 8, 2):
        with T.block("C"):
            vk_0, v_i, v_j = T.axis.remap("RSS", [k_0, i, j])
            T.reads(C_rf[v_i, v_j, vk_0])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + C_rf[v_i, v_j, vk_0]
)");
  EXPECT_NE(sch.trace().AsJSONString().find(R"(["RFactor",["l3"],[-1],["b5"]])"),
            std::string::npos);
  EXPECT_TRUE(testing::SameResult(f, sch.func(), 7, true));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

TEST(RFactor, GoldenWholeReductionLoopLeavesNoReductionInTheRFactorBlock) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  sch.RFactor(sch.GetLoops(sch.GetBlock("C"))[2], 1);
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C_rf = T.alloc_buffer((4, 4, 4))
    for i, j, k in T.grid(4, 4, 4):
        with T.block("C_rf"):
            vk, v_i, v_j = T.axis.remap("SSS", [k, i, j])
            T.reads(A[v_i, vk], B[vk, v_j])
            T.writes(C_rf[v_i, vk, v_j])
            C_rf[v_i, vk, v_j] = A[v_i, vk] * B[vk, v_j]
    for i, j, k in T.grid(4, 4, 4):
        with T.block("C"):
            vk, v_i, v_j = T.axis.remap("RSS", [k, i, j])
            T.reads(C_rf[v_i, vk, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + C_rf[v_i, vk, v_j]
)");
  EXPECT_TRUE(testing::SameResult(f, sch.func(), 7, true));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

TEST(RFactor, GoldenMaxReducerOfSoftmax) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  sch.RFactor(sch.GetLoops(sch.GetBlock("T_softmax_maxelem"))[1], 0);
  const std::string text = ToText(sch.func());
  // The max combiner and its identity (the lowest float) in both blocks.
  EXPECT_NE(text.find(R"(    for i0, k in T.grid(4, 8):
        with T.block("T_softmax_maxelem_rf"):
            vk, v_i0 = T.axis.remap("SS", [k, i0])
            T.reads(A[v_i0, vk])
            T.writes(T_softmax_maxelem_rf[vk, v_i0])
            T_softmax_maxelem_rf[vk, v_i0] = A[v_i0, vk]
    for i0, k in T.grid(4, 8):
        with T.block("T_softmax_maxelem"):
            vk, v_i0 = T.axis.remap("RS", [k, i0])
            T.reads(T_softmax_maxelem_rf[vk, v_i0])
            T.writes(T_softmax_maxelem[v_i0])
            with T.init():
                T_softmax_maxelem[v_i0] = T.float32(-3.4028234663852886e+38)
            T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], T_softmax_maxelem_rf[vk, v_i0])
)"),
            std::string::npos)
      << text;
  EXPECT_TRUE(testing::SameResult(f, sch.func(), 7, true));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

// GEMV (decode, NT layout) with k = 32 split 4 x 8, and NRM with j split.
constexpr const char* kGemvSplit = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1, 32), "float32"), B: T.Buffer((16, 32), "float32"), NT_matmul: T.Buffer((1, 16), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i0, i1, k_0, k_1 in T.grid(1, 16, 4, 8):
        with T.block("NT_matmul"):
            v_i0 = T.axis.spatial(1, i0)
            v_i1 = T.axis.spatial(16, i1)
            v_k = T.axis.reduce(32, k_0 * 8 + k_1)
            T.reads(A[v_i0, v_k], B[v_i1, v_k])
            T.writes(NT_matmul[v_i0, v_i1])
            with T.init():
                NT_matmul[v_i0, v_i1] = T.float32(0.0)
            NT_matmul[v_i0, v_i1] = NT_matmul[v_i0, v_i1] + A[v_i0, v_k] * B[v_i1, v_k]
)";

TEST(RFactor, MatchesTheInterpreterOnSuiteReductions) {
  // GMM: batch matmul over its reduction loop, at each factor axis.
  PrimFunc gmm = BatchMatmulNKKM(2, 4, 4, 8);
  for (int axis : {0, 1, 2, 3, -1, -4}) ExpectRFactors(gmm, "Z", 3, axis);
  // NRM: two reduction loops; rfactor either, the other stays a reduction.
  PrimFunc nrm = NormBMN(2, 4, 8);
  ExpectRFactors(nrm, "C", 1, 0);
  ExpectRFactors(nrm, "C", 2, 1);
  // Softmax: the max and the sum.
  PrimFunc sfm = SoftmaxMN(4, 8);
  ExpectRFactors(sfm, "T_softmax_maxelem", 1, 0);
  ExpectRFactors(sfm, "T_softmax_expsum", 1, 1);
  // GEMV, unsplit and split (both halves of the split).
  ExpectRFactors(GemvNT(1, 8, 16), "NT_matmul", 2, 0);
  PrimFunc gemv = ParseFunc(kGemvSplit);
  ExpectRFactors(gemv, "NT_matmul", 3, 0);
  ExpectRFactors(gemv, "NT_matmul", 2, 2);
  // A padded convolution: three reduction loops.
  PrimFunc conv = Conv2dNHWC(1, 6, 6, 4, 4, 3, 1, 1);
  ExpectRFactors(conv, "conv2d_nhwc", 4, 0);
  ExpectRFactors(conv, "conv2d_nhwc", 6, 4);
  ExpectRFactors(ParseFunc(kSplitK), "C", 3, 2);
}

// Non-divisible splits of i (6 = 2 x 4) and of k (10 = 3 x 4): the guard on
// i must stay with the write-back, which would otherwise write C[6], C[7].
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

TEST(RFactor, GuardedSplitsKeepTheSpatialGuardOnTheWriteBack) {
  PrimFunc f = ParseFunc(kGuarded);
  // Not verified: the rfactor block loads A[v_i, vk_0 * 4 + vk_1], in bounds
  // only under its T.where (as in TVM), and the verifier bounds loads by the
  // iter var domains alone.
  ExpectRFactors(f, "B", 3, 0, /*verify=*/false);
  ExpectRFactors(f, "B", 2, 1, /*verify=*/false);
  Schedule sch(f);
  sch.RFactor(sch.GetLoops(sch.GetBlock("B"))[3], 0);
  const std::string text = ToText(sch.func());
  EXPECT_NE(text.find(R"(    for i_0, i_1, k_1 in T.grid(2, 4, 4):
        with T.block("B"):
            vk_1 = T.axis.reduce(4, k_1)
            v_i = T.axis.spatial(6, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < 6)
)"),
            std::string::npos)
      << text;
}

TEST(RFactor, ThenDecomposeBothBlocks) {
  // What AddRFactor followed by RewriteReductionBlock does to a GEMV.
  PrimFunc f = ParseFunc(kGemvSplit);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("NT_matmul");
  BlockRV rf = sch.RFactor(sch.GetLoops(b)[3], 2);
  sch.DecomposeReduction(rf, sch.GetLoops(rf)[2]);
  sch.DecomposeReduction(b, sch.GetLoops(b)[2]);
  EXPECT_EQ(sch.NameOf(rf), "NT_matmul_rf_update");
  EXPECT_EQ(sch.NameOf(b), "NT_matmul_update");
  EXPECT_TRUE(testing::SameResult(f, sch.func(), 7, true));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

TEST(RFactor, TwiceOnTheSameReductionNamesTheBlocksApart) {
  PrimFunc f = ParseFunc(kSplitK);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("C");
  sch.RFactor(sch.GetLoops(b)[3], 0);
  BlockRV second = sch.RFactor(sch.GetLoops(b)[2], 0);
  EXPECT_EQ(sch.NameOf(second), "C_rf_1");
  EXPECT_TRUE(testing::SameResult(f, sch.func(), 7, true));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

TEST(RFactor, RefusesASpatialLoop) {
  Schedule sch(ParseFunc(kSplitK));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.RFactor(loops[0], 0),
                             "rfactor: loop i is not a reduction loop: the spatial iter var(s) "
                             "v_i of block C are bound to it");
}

TEST(RFactor, RefusesAnUnrecognisedReducer) {
  // A sum that starts from 1 is not the sum reducer (its identity is 0).
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, k in T.grid(4, 4):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(B[v_i])
            with T.init():
                B[v_i] = T.float32(1.0)
            B[v_i] = B[v_i] + A[v_i, v_k]
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.RFactor(sch.GetLoops(sch.GetBlock("B"))[1], 0),
                             "the reduction of block B is not a recognised reducer");
}

TEST(RFactor, RefusesAFactorAxisOutOfRange) {
  Schedule sch(ParseFunc(kSplitK));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.RFactor(loops[3], 3),
                             "factor_axis 3 is out of range: the output buffer C has 2 "
                             "dimension(s), so factor_axis must be in [-3, 2]");
  KILN_EXPECT_SCHEDULE_ERROR(sch.RFactor(loops[3], -4), "factor_axis -4 is out of range");
}

TEST(RFactor, RefusesABlockWithoutInit) {
  Schedule sch(SoftmaxMN(4, 8));
  KILN_EXPECT_SCHEDULE_ERROR(sch.RFactor(sch.GetLoops(sch.GetBlock("T_softmax_exp"))[1], 0),
                             "block T_softmax_exp is not a reduction block: it has no init");
}

TEST(RFactor, RefusesAParallelLoopAndALoopOverTwoBlocks) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(4):
        for k in T.parallel(4):
            with T.block("B"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                T.reads(A[v_i, v_k])
                T.writes(B[v_i])
                with T.init():
                    B[v_i] = T.float32(0.0)
                B[v_i] = B[v_i] + A[v_i, v_k]
        with T.block("C"):
            v_i = T.axis.remap("S", [i])
            T.reads(B[v_i])
            T.writes(C[v_i])
            C[v_i] = B[v_i]
)");
  Schedule sch(f);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("B"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.RFactor(loops[1], 0), "loop k must be serial, but it is parallel");
  KILN_EXPECT_SCHEDULE_ERROR(sch.RFactor(loops[0], 0),
                             "loop i has 2 child blocks; rfactor needs exactly one");
}

TEST(RFactor, RefusesALoopBoundToNoIterVar) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, k, u in T.grid(4, 4, 1):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(B[v_i])
            with T.init():
                B[v_i] = T.float32(0.0)
            B[v_i] = B[v_i] + A[v_i, v_k]
)");
  Schedule sch(f);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("B"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.RFactor(loops[2], 0),
                             "loop u is not a reduction loop: no reduction iter var of block B "
                             "is bound to it");
  // The unit loop under the reduction loop is allowed, and kept.
  ExpectRFactors(f, "B", 1, 0);
}

std::vector<Factor> Factors(std::vector<int64_t> v) {
  std::vector<Factor> out;
  for (int64_t f : v) {
    if (f < 0) {
      out.emplace_back(std::monostate{});
    } else {
      out.emplace_back(f);
    }
  }
  return out;
}

TEST(RFactor, RefusesAnUnboundLoopUnderTheReductionLoop) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, k, u in T.grid(4, 4, 2):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(B[v_i])
            with T.init():
                B[v_i] = T.float32(0.0)
            B[v_i] = B[v_i] + A[v_i, v_k]
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.RFactor(sch.GetLoops(sch.GetBlock("B"))[1], 0),
                             "loop u feeds no iter var of block B but lies, with extent above 1, "
                             "under its reduction loop k");
}

TEST(RFactor, AfterSplitMatchesTheHandSplitGolden) {
  PrimFunc f = Matmul(8, 8, 8);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(b);
  std::vector<LoopRV> k = sch.Split(loops[2], Factors({-1, 4}));
  EXPECT_TRUE(StructuralEqual(sch.func(), ParseFunc(kSplitK))) << ToText(sch.func());
  BlockRV rf = sch.RFactor(k[1], 0);
  Schedule by_hand(ParseFunc(kSplitK));
  by_hand.RFactor(by_hand.GetLoops(by_hand.GetBlock("C"))[3], 0);
  EXPECT_TRUE(StructuralEqual(sch.func(), by_hand.func())) << ToText(sch.func());
  EXPECT_EQ(sch.NameOf(rf), "C_rf");
  EXPECT_TRUE(testing::SameResult(f, sch.func(), 7, true));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

// AddRFactor's recipe: fuse the reduction loops, split in two, rfactor one
// half; then RewriteReductionBlock's decompositions.
void ExpectAddRFactorRecipe(const PrimFunc& f, const std::string& block, size_t n_spatial,
                            int64_t inner, int which, bool guarded = false) {
  SCOPED_TRACE(block + " split by " + std::to_string(inner) + ", rfactor half " +
               std::to_string(which));
  Schedule sch(f);
  BlockRV b = sch.GetBlock(block);
  std::vector<LoopRV> loops = sch.GetLoops(b);
  std::vector<LoopRV> reduction(loops.begin() + static_cast<std::ptrdiff_t>(n_spatial),
                                loops.end());
  LoopRV fused = reduction.size() > 1 ? sch.Fuse(reduction) : reduction.front();
  std::vector<LoopRV> halves = sch.Split(fused, Factors({-1, inner}));
  BlockRV rf = sch.RFactor(halves[which], static_cast<int>(n_spatial));
  EXPECT_TRUE(testing::SameResult(f, sch.func(), 7, true));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
  // At the first loop of the rfactor block that is not data parallel.
  sch.DecomposeReduction(rf, sch.GetLoops(rf)[which == 0 ? n_spatial + 1 : n_spatial]);
  sch.DecomposeReduction(b, sch.GetLoops(b)[n_spatial]);
  EXPECT_TRUE(testing::SameResult(f, sch.func(), 7, true));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
  // A guarded (non-divisible) split is not verified, as in
  // GuardedSplitsKeepTheSpatialGuardOnTheWriteBack.
  if (!guarded) {
    EXPECT_TRUE(testing::WellFormed(sch.func()));
  }
}

TEST(RFactor, AddRFactorRecipeOnSuiteWorkloads) {
  for (int which : {0, 1}) {
    ExpectAddRFactorRecipe(BatchMatmulNKKM(1, 4, 4, 16), "Z", 3, 4, which);
    ExpectAddRFactorRecipe(NormBMN(1, 4, 8), "C", 1, 8, which);
    ExpectAddRFactorRecipe(GemvNT(1, 8, 32), "NT_matmul", 2, 8, which);
    ExpectAddRFactorRecipe(SoftmaxMN(4, 16), "T_softmax_maxelem", 1, 4, which);
    ExpectAddRFactorRecipe(SoftmaxMN(4, 16), "T_softmax_expsum", 1, 4, which);
    ExpectAddRFactorRecipe(Conv2dNHWC(1, 4, 4, 4, 4, 3, 1, 1), "conv2d_nhwc", 4, 4, which);
    // Non-divisible: 30 reduction points split by 8, under a guard.
    ExpectAddRFactorRecipe(GemvNT(1, 8, 30), "NT_matmul", 2, 8, which, /*guarded=*/true);
  }
}

}  // namespace
}  // namespace kiln::ir
