#include <gtest/gtest.h>

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

// Matmul 16x16x16 with i and j split by 4 (as split + reorder leave it).
const char* kSplitMatmul = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0, j_0, i_1, j_1, k in T.grid(4, 4, 4, 4, 16):
        with T.block("C"):
            v_i = T.axis.spatial(16, i_0 * 4 + i_1)
            v_j = T.axis.spatial(16, j_0 * 4 + j_1)
            v_k = T.axis.reduce(16, k)
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)";

// The reduction split too, the inner tile innermost.
const char* kSplitK = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0, j_0, k_0, i_1, j_1, k_1 in T.grid(2, 2, 2, 4, 4, 4):
        with T.block("C"):
            v_i = T.axis.spatial(8, i_0 * 4 + i_1)
            v_j = T.axis.spatial(8, j_0 * 4 + j_1)
            v_k = T.axis.reduce(8, k_0 * 4 + k_1)
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)";

LoopRV LoopNamed(Schedule& sch, const std::string& block, const std::string& name) {
  for (LoopRV l : sch.GetLoops(sch.GetBlock(block))) {
    if (sch.NameOf(l) == name) return l;
  }
  ADD_FAILURE() << "no loop " << name;
  return {};
}

TEST(Blockize, InnerTileGolden) {
  PrimFunc f = ParseFunc(kSplitMatmul);
  Schedule sch(f);
  BlockRV outer = sch.Blockize(LoopNamed(sch, "C", "i_1"));
  EXPECT_EQ(sch.NameOf(outer), "C_o");
  const char* expected = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0, j_0 in T.grid(4, 4):
        with T.block("C_o"):
            v_i_o = T.axis.spatial(4, i_0)
            v_j_o = T.axis.spatial(4, j_0)
            v_k_o = T.axis.reduce(1, 0)
            T.reads(A[v_i_o * 4:v_i_o * 4 + 4, 0:16], B[0:16, v_j_o * 4:v_j_o * 4 + 4])
            T.writes(C[v_i_o * 4:v_i_o * 4 + 4, v_j_o * 4:v_j_o * 4 + 4])
            with T.init():
                for i_1, j_1 in T.grid(4, 4):
                    with T.block("C_init"):
                        v_i_init = T.axis.spatial(16, v_i_o * 4 + i_1)
                        v_j_init = T.axis.spatial(16, v_j_o * 4 + j_1)
                        T.reads()
                        T.writes(C[v_i_init, v_j_init])
                        C[v_i_init, v_j_init] = T.float32(0.0)
            for i_1, j_1, k in T.grid(4, 4, 16):
                with T.block("C"):
                    v_i = T.axis.spatial(16, v_i_o * 4 + i_1)
                    v_j = T.axis.spatial(16, v_j_o * 4 + j_1)
                    v_k = T.axis.reduce(16, k)
                    T.reads(C[v_i, v_j], A[v_i, v_k], B[v_k, v_j])
                    T.writes(C[v_i, v_j])
                    C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)";
  EXPECT_EQ(ToText(sch.func()), expected);
  EXPECT_EQ(ToText(ParseFunc(ToText(sch.func()))), expected);
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
  EXPECT_NE(sch.trace().AsPython().find("b6 = sch.blockize(target=l3, preserve_unit_iters=True)"),
            std::string::npos)
      << sch.trace().AsPython();
}

TEST(Blockize, SpatialOnlyGolden) {
  PrimFunc f = SoftmaxMN(8, 8);
  Schedule sch(f);
  sch.Blockize(LoopNamed(sch, "T_softmax_exp", "i1"));
  const char* expected_part = R"(    for i0 in range(8):
        with T.block("T_softmax_exp_o"):
            v_i0_o = T.axis.spatial(8, i0)
            v_i1_o = T.axis.spatial(1, 0)
            T.reads(A[v_i0_o, 0:8], T_softmax_maxelem[v_i0_o])
            T.writes(T_softmax_exp[v_i0_o, 0:8])
            for i1 in range(8):
                with T.block("T_softmax_exp"):
                    v_i0 = T.axis.spatial(8, v_i0_o)
                    v_i1 = T.axis.spatial(8, i1)
                    T.reads(A[v_i0, v_i1], T_softmax_maxelem[v_i0])
                    T.writes(T_softmax_exp[v_i0, v_i1])
                    T_softmax_exp[v_i0, v_i1] = T.exp(A[v_i0, v_i1] - T_softmax_maxelem[v_i0])
)";
  EXPECT_NE(ToText(sch.func()).find(expected_part), std::string::npos) << ToText(sch.func());
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

TEST(Blockize, OuterReductionKeepsInitOnFirstStep) {
  PrimFunc f = ParseFunc(kSplitK);
  Schedule sch(f);
  sch.Blockize(LoopNamed(sch, "C", "i_1"));
  std::string text = ToText(sch.func());
  EXPECT_NE(text.find("v_i_o, v_j_o, v_k_o = T.axis.remap(\"SSR\", [i_0, j_0, k_0])"),
            std::string::npos)
      << text;
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

TEST(Blockize, InterpreterEquivalence) {
  struct Case {
    PrimFunc f;
    std::string block, loop;
    bool preserve;
  };
  std::vector<Case> cases = {
      {ParseFunc(kSplitMatmul), "C", "k", true},
      {ParseFunc(kSplitMatmul), "C", "j_1", true},
      {ParseFunc(kSplitMatmul), "C", "i_0", true},
      {ParseFunc(kSplitMatmul), "C", "i_0", false},
      {ParseFunc(kSplitK), "C", "k_1", true},
      {ParseFunc(kSplitK), "C", "k_0", false},
      {Matmul(8, 8, 8), "C", "j", true},
      {Conv2dNHWC(1, 6, 6, 4, 4, 3, 1, 1), "conv2d_nhwc", "rh", true},
      {Conv2dNHWC(1, 6, 6, 4, 4, 3, 1, 1), "PadInput", "i2", true},
      {Conv2dNHWC(1, 6, 6, 4, 4, 3, 1, 1), "conv2d_nhwc", "w", false},
      {SoftmaxMN(8, 8), "T_softmax_maxelem", "k", true},
      {SoftmaxMN(8, 8), "T_softmax_expsum", "i0", true},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.block + " at " + c.loop);
    Schedule sch(c.f);
    sch.Blockize(LoopNamed(sch, c.block, c.loop), c.preserve);
    EXPECT_TRUE(SameResult(c.f, sch.func()));
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(ReplaysExactly(c.f, sch));
  }
}

// Split comes from another branch, whose instruction kind the lead
// registers when merging; until then the trace cannot replay.
TEST(Blockize, AfterSplit) {
  PrimFunc f = Matmul(16, 16, 16);
  {
    Schedule sch(f);
    std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C"));
    std::vector<LoopRV> i = sch.Split(loops[0], {Factor{}, Factor{int64_t{4}}});
    BlockRV outer = sch.Blockize(i[1]);
    EXPECT_EQ(sch.NameOf(outer), "C_o");
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
  }
  {
    // The reduction's outer half stays outside: the init runs on k_0 == 0.
    Schedule sch(f);
    std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C"));
    std::vector<LoopRV> k = sch.Split(loops[2], {Factor{}, Factor{int64_t{4}}});
    sch.Blockize(k[1]);
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
  }
  {
    // An imperfect split: the predicate goes with the block holding its loops.
    Schedule sch(f);
    std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C"));
    std::vector<LoopRV> i = sch.Split(loops[0], {Factor{}, Factor{int64_t{5}}});
    KILN_EXPECT_SCHEDULE_ERROR(sch.Blockize(i[1]), "mixes loops outside and inside");
    sch.Blockize(loops[1]);
    std::string text = ToText(sch.func());
    EXPECT_NE(text.find("T.where(i_0 * 5 + i_1 < 16)"), std::string::npos) << text;
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
  }
}

TEST(Blockize, Twice) {
  PrimFunc f = ParseFunc(kSplitMatmul);
  Schedule sch(f);
  sch.Blockize(LoopNamed(sch, "C", "i_1"));
  sch.Blockize(LoopNamed(sch, "C_o", "j_0"));
  EXPECT_TRUE(sch.HasBlock("C_o_o"));
  EXPECT_TRUE(SameResult(f, sch.func()));
  // Not checked for well-formedness: the verifier wants a reduction's init
  // on its direct parent block, while here it sits two levels up (C_o_o).
  EXPECT_TRUE(ReplaysExactly(f, sch));

  PrimFunc g = SoftmaxMN(8, 8);
  Schedule sg(g);
  sg.Blockize(LoopNamed(sg, "T_softmax_exp", "i1"));
  sg.Blockize(LoopNamed(sg, "T_softmax_exp_o", "i0"));
  EXPECT_TRUE(sg.HasBlock("T_softmax_exp_o_o"));
  EXPECT_TRUE(SameResult(g, sg.func()));
  EXPECT_TRUE(WellFormed(sg.func()));
  EXPECT_TRUE(ReplaysExactly(g, sg));
}

TEST(Blockize, ReplayRefusesABlockList) {
  Schedule sch(Matmul(8, 8, 8));
  EXPECT_THROW(Trace::FromJSONString(
                   R"([[["GetBlock",[],["C","main"],["b0"]],["Blockize",[["b0"]],[1],["b1"]]],[]])")
                   .ApplyToSchedule(&sch, false),
               TraceError);
}

TEST(Blockize, RefusesIndivisibleBindings) {
  // i_1 is the major digit of v_i: no outer block can own a tile of it.
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i_0, i_1 in T.grid(4, 4):
        with T.block("B"):
            v_i = T.axis.spatial(16, i_1 * 4 + i_0)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i]
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.Blockize(LoopNamed(sch, "B", "i_1")),
                             "blockize: the bindings of block B cannot be divided at loop i_1");
}

TEST(Blockize, RefusesSeveralBlocks) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            v_i = T.axis.spatial(16, i)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i]
        with T.block("C"):
            v_i = T.axis.spatial(16, i)
            T.reads(B[v_i])
            T.writes(C[v_i])
            C[v_i] = B[v_i]
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.Blockize(LoopNamed(sch, "B", "i")),
                             "blockize: the loops under i are not a single chain of loops over one "
                             "block (it holds 2 blocks)");
}

TEST(Blockize, RefusesMixedPredicateAndNameClash) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
    for i_0, i_1 in T.grid(3, 4):
        with T.block("B"):
            v_i = T.axis.spatial(10, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < 10)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i]
    for i in range(10):
        with T.block("B_o"):
            v_i = T.axis.spatial(10, i)
            T.reads(B[v_i])
            T.writes(C[v_i])
            C[v_i] = B[v_i]
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.Blockize(LoopNamed(sch, "B", "i_1")),
                             "a block named B_o already exists");
  PrimFunc g = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i_0, i_1 in T.grid(3, 4):
        with T.block("B"):
            v_i = T.axis.spatial(10, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < 10)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i]
)");
  Schedule sg(g);
  KILN_EXPECT_SCHEDULE_ERROR(sg.Blockize(LoopNamed(sg, "B", "i_1")),
                             "mixes loops outside and inside i_1");
  // Blockizing the whole nest keeps the predicate on the inner block.
  sg.Blockize(LoopNamed(sg, "B", "i_0"));
  EXPECT_TRUE(SameResult(g, sg.func()));
  EXPECT_TRUE(WellFormed(sg.func()));
  EXPECT_TRUE(ReplaysExactly(g, sg));
}

}  // namespace
}  // namespace kiln::ir
