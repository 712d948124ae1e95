// compute_inline: golden rewrites, equivalence on the suite at reduced
// shapes, refusals, feasibility queries and replay.
#include "ir/schedule/primitive/compute_inline.h"

#include <gtest/gtest.h>

#include <functional>
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

using testing::ReplaysExactly;
using testing::SameResult;
using testing::WellFormed;

TEST(ComputeInline, PadInputIntoConv2d) {
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1);
  Schedule sch(f);
  sch.ComputeInline(sch.GetBlock("PadInput"));
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(inputs: T.Buffer((1, 6, 6, 2), "float32"), weight: T.Buffer((3, 3, 2, 2), "float32"), conv2d_nhwc: T.Buffer((1, 6, 6, 2), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for n, h, w, co, rh, rw, rc in T.grid(1, 6, 6, 2, 3, 3, 2):
        with T.block("conv2d_nhwc"):
            v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, rc])
            T.reads(inputs[v_n, v_h + v_rh - 1, v_w + v_rw - 1, v_co // 2 * 2 + v_rc], weight[v_rh, v_rw, v_rc, v_co])
            T.writes(conv2d_nhwc[v_n, v_h, v_w, v_co])
            with T.init():
                conv2d_nhwc[v_n, v_h, v_w, v_co] = T.float32(0.0)
            conv2d_nhwc[v_n, v_h, v_w, v_co] = conv2d_nhwc[v_n, v_h, v_w, v_co] + T.if_then_else(1 <= v_h + v_rh and v_h + v_rh < 7 and 1 <= v_w + v_rw and v_w + v_rw < 7, inputs[v_n, v_h + v_rh - 1, v_w + v_rw - 1, v_co // 2 * 2 + v_rc], T.float32(0.0)) * weight[v_rh, v_rw, v_rc, v_co]
)");
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
  EXPECT_EQ(sch.trace().AsPython(), R"(def apply_trace(sch):
  b0 = sch.get_block(name="PadInput", func_name="main")
  sch.compute_inline(block=b0)
)");
  // TVM's layout: inputs [block], no attrs, no outputs.
  EXPECT_EQ(sch.trace().AsJSONString(),
            R"([[["GetBlock",[],["PadInput","main"],["b0"]],["ComputeInline",["b0"],[],[]]],[]])");
}

TEST(ComputeInline, SoftmaxExpIntoBothConsumers) {
  PrimFunc f = SoftmaxMN(4, 4);
  Schedule sch(f);
  sch.ComputeInline(sch.GetBlock("T_softmax_exp"));
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), T_softmax_norm: T.Buffer((4, 4), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    T_softmax_maxelem = T.alloc_buffer((4,))
    T_softmax_expsum = T.alloc_buffer((4,))
    for i0, k in T.grid(4, 4):
        with T.block("T_softmax_maxelem"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            T.reads(A[v_i0, v_k])
            T.writes(T_softmax_maxelem[v_i0])
            with T.init():
                T_softmax_maxelem[v_i0] = T.float32(-3.4028234663852886e+38)
            T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], A[v_i0, v_k])
    for i0, k in T.grid(4, 4):
        with T.block("T_softmax_expsum"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            T.reads(A[v_i0, v_k], T_softmax_maxelem[v_i0])
            T.writes(T_softmax_expsum[v_i0])
            with T.init():
                T_softmax_expsum[v_i0] = T.float32(0.0)
            T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T.exp(A[v_i0, v_k] - T_softmax_maxelem[v_i0])
    for i0, i1 in T.grid(4, 4):
        with T.block("T_softmax_norm"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(A[v_i0, v_i1], T_softmax_maxelem[v_i0], T_softmax_expsum[v_i0])
            T.writes(T_softmax_norm[v_i0, v_i1])
            T.block_attr({"axis": 1})
            T_softmax_norm[v_i0, v_i1] = T.exp(A[v_i0, v_i1] - T_softmax_maxelem[v_i0]) / T_softmax_expsum[v_i0]
)");
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

// A transposing producer: the store indices are the iteration variables in
// another order, and a unit iteration variable indexes nothing.
constexpr char kTransposed[] = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((8, 4), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((8, 4))
    for i, j, u in T.grid(4, 8, 1):
        with T.block("B"):
            v_i, v_j, v_u = T.axis.remap("SSS", [i, j, u])
            T.reads(A[v_i, v_j + v_u])
            T.writes(B[v_j, v_i])
            B[v_j, v_i] = A[v_i, v_j + v_u] * T.float32(2.0)
    for i, j in T.grid(8, 4):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(B[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = B[v_i, v_j] + B[v_i, v_j]
)";

TEST(ComputeInline, PermutedStoreIndicesAndUnitIter) {
  PrimFunc f = ParseFunc(kTransposed);
  Schedule sch(f);
  sch.ComputeInline(sch.GetBlock("B"));
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((8, 4), "float32")):
    # with T.block("root"):
    for i, j in T.grid(8, 4):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_j, v_i + 0])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = A[v_j, v_i + 0] * T.float32(2.0) + A[v_j, v_i + 0] * T.float32(2.0)
)");
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

// Consumers below the scope's children: a loop inside block C and a block D
// nested in block outer. Their regions are recomputed, loops relaxed.
constexpr char kNestedConsumers[] = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32"), D: T.Buffer((4, 4), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((4, 4))
    for i, j in T.grid(4, 4):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j] + T.float32(1.0)
    for i in range(4):
        with T.block("C"):
            v_i = T.axis.spatial(4, i)
            T.reads(B[v_i, 0:4])
            T.writes(C[v_i, 0:4])
            for k in range(4):
                C[v_i, k] = B[v_i, k] * T.float32(2.0)
    for i in range(4):
        with T.block("outer"):
            v_o = T.axis.spatial(4, i)
            T.reads(B[v_o, 0:4])
            T.writes(D[v_o, 0:4])
            for k in range(4):
                with T.block("D"):
                    v_a = T.axis.spatial(4, v_o)
                    v_k = T.axis.spatial(4, k)
                    T.reads(B[v_a, v_k])
                    T.writes(D[v_a, v_k])
                    D[v_a, v_k] = B[v_a, v_k]
)";

TEST(ComputeInline, ConsumersWithInnerLoopsAndNestedBlocks) {
  PrimFunc f = ParseFunc(kNestedConsumers);
  Schedule sch(f);
  sch.ComputeInline(sch.GetBlock("B"));
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32"), D: T.Buffer((4, 4), "float32")):
    # with T.block("root"):
    for i in range(4):
        with T.block("C"):
            v_i = T.axis.remap("S", [i])
            T.reads(A[v_i, 0:4])
            T.writes(C[v_i, 0:4])
            for k in range(4):
                C[v_i, k] = (A[v_i, k] + T.float32(1.0)) * T.float32(2.0)
    for i in range(4):
        with T.block("outer"):
            v_o = T.axis.remap("S", [i])
            T.reads(A[v_o, 0:4])
            T.writes(D[v_o, 0:4])
            for k in range(4):
                with T.block("D"):
                    v_a = T.axis.spatial(4, v_o)
                    v_k = T.axis.spatial(4, k)
                    T.reads(A[v_a, v_k])
                    T.writes(D[v_a, v_k])
                    D[v_a, v_k] = A[v_a, v_k] + T.float32(1.0)
)");
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

// Inlines, one after another, every block compute_inline accepts, and checks
// the program still computes the same; returns the names inlined.
std::vector<std::string> InlineAll(const PrimFunc& f, Schedule* sch) {
  std::vector<std::string> inlined;
  for (bool progress = true; progress;) {
    progress = false;
    for (const BlockRealizeNode* r : AllBlockRealizes(sch->func())) {
      std::string name = r->block->name;
      if (name == "root") continue;
      if (CanComputeInline(sch->func(), *FindBlockPath(sch->func(), name))) {
        sch->ComputeInline(sch->GetBlock(name));
        inlined.push_back(name);
        progress = true;
        break;
      }
    }
  }
  EXPECT_TRUE(SameResult(f, sch->func()));
  EXPECT_TRUE(WellFormed(sch->func()));
  EXPECT_TRUE(ReplaysExactly(f, *sch));
  return inlined;
}

TEST(ComputeInline, SuiteAtReducedShapes) {
  struct Case {
    std::string name;
    PrimFunc func;
    std::vector<std::string> expected;
  };
  std::vector<Case> cases = {
      {"C1D", Conv1dNLC(1, 8, 4, 4, 3, 2, 1), {"PadInput"}},
      {"C2D", Conv2dNHWC(1, 8, 8, 4, 4, 3, 2, 1), {"PadInput"}},
      {"C3D", Conv3dNDHWC(1, 4, 4, 4, 2, 2, 3, 1, 1), {"PadInput"}},
      {"GRP", Conv2dNHWC(1, 8, 8, 4, 4, 3, 1, 1, 1, 2), {"PadInput"}},
      {"DIL", Conv2dNHWC(1, 8, 8, 2, 2, 3, 1, 1, 2), {"PadInput"}},
      {"DEP", DepthwiseConv2dNHWC(1, 8, 8, 4, 3, 1, 1), {"PadInput"}},
      {"CAP", Conv2dCapsuleNHWIJC(1, 4, 4, 2, 2, 3, 1, 1, 2), {"PadInput"}},
      {"CBR",
       Conv2dNHWCBnRelu(1, 8, 8, 2, 4, 3, 1, 1),
       {"PaddedInput", "bias_add", "bn_mul", "bn_add"}},
      {"SFM", SoftmaxMN(4, 8), {"T_softmax_exp"}},
      {"conv2d_nchw", Conv2dNCHW(1, 6, 6, 2, 2, 3, 3, 1, 1), {"pad_temp"}},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    Schedule sch(c.func);
    std::vector<std::string> got = InlineAll(c.func, &sch);
    std::sort(got.begin(), got.end());
    std::sort(c.expected.begin(), c.expected.end());
    EXPECT_EQ(got, c.expected);
  }
}

TEST(ComputeInline, MoreSuiteWorkloadsStayEquivalent) {
  std::vector<std::pair<std::string, PrimFunc>> cases = {
      {"T2D", Conv2dTransposeNHWC(1, 4, 4, 4, 4, 4, 2, 1)},
      {"TBG", TransposeBatchMatmul(1, 4, 2, 4)},
      {"RMS", RmsNorm(2, 8)},
      {"NRM", NormBMN(1, 4, 4)},
      {"ATTN_SFM", Softmax({2, 1, 8})},
      {"matmul_relu", MatmulRelu(4, 4, 4)},
  };
  for (auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    Schedule sch(f);
    InlineAll(f, &sch);
  }
}

TEST(ComputeInline, BlockWithoutConsumersIsRemoved) {
  // As in TVM, a dead intermediate is inlined into nothing.
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("B"):
            v_i = T.axis.remap("S", [i])
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i]
    for i in range(4):
        with T.block("C"):
            v_i = T.axis.remap("S", [i])
            T.reads(A[v_i])
            T.writes(C[v_i])
            C[v_i] = A[v_i] + T.float32(1.0)
)");
  Schedule sch(f);
  sch.ComputeInline(sch.GetBlock("B"));
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    # with T.block("root"):
    for i in range(4):
        with T.block("C"):
            v_i = T.axis.remap("S", [i])
            T.reads(A[v_i])
            T.writes(C[v_i])
            C[v_i] = A[v_i] + T.float32(1.0)
)");
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

TEST(ComputeInline, RefusesOutputBlock) {
  Schedule sch(SoftmaxMN(4, 4));
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.ComputeInline(sch.GetBlock("T_softmax_norm")),
      "compute_inline: block T_softmax_norm is an output block: it writes buffer T_softmax_norm, "
      "which is not allocated in its scope (block root)");
}

TEST(ComputeInline, RefusesReductionBlock) {
  Schedule sch(MatmulRelu(4, 4, 4));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ComputeInline(sch.GetBlock("C")),
                             "block C has an init statement (it is a reduction block)");
}

TEST(ComputeInline, RefusesRootBlock) {
  Schedule sch(SoftmaxMN(4, 4));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ComputeInline(sch.GetBlock("root")),
                             "compute_inline: block root is the root block");
}

// The producer of B with the store `store` and value `value`; C reads B.
PrimFunc Producer(const std::string& store, const std::string& value, const std::string& extra = "",
                  const std::string& reads = "A[0:4, 0:4]") {
  return ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((4, 4))
    for i, j in T.grid(4, 4):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads()" +
                   reads + R"()
            T.writes(B[0:4, 0:4])
            )" + store +
                   " = " + value + R"(
)" + extra + R"(    for i, j in T.grid(4, 4):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(B[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = B[v_i, v_j]
)");
}

TEST(ComputeInline, RefusesNonInjectiveStore) {
  Schedule sch(Producer("B[v_i, v_i]", "A[v_i, v_j]"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ComputeInline(sch.GetBlock("B")),
                             "compute_inline: the body of block B is not a single store indexed by "
                             "its iteration variables");
  Schedule shifted(Producer("B[v_i + 1, v_j]", "A[v_i, v_j]"));
  KILN_EXPECT_SCHEDULE_ERROR(shifted.ComputeInline(shifted.GetBlock("B")), "index 0 is not");
}

TEST(ComputeInline, RefusesBlockReadingItsOutput) {
  Schedule sch(
      Producer("B[v_i, v_j]", "B[v_j, v_i] + A[v_i, v_j]", "", "A[0:4, 0:4], B[0:4, 0:4]"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ComputeInline(sch.GetBlock("B")),
                             "block B is not complete: it reads buffer B, which it writes");
}

TEST(ComputeInline, RefusesWhenALaterBlockOverwritesTheInput) {
  // Inlining B into C would read A after block Z zeroed it.
  std::string z = R"(    for i, j in T.grid(4, 4):
        with T.block("Z"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads()
            T.writes(A[v_i, v_j])
            A[v_i, v_j] = T.float32(0.0)
)";
  PrimFunc f = Producer("B[v_i, v_j]", "A[v_i, v_j] + T.float32(1.0)", z);
  Schedule sch(f);
  std::string why;
  EXPECT_FALSE(CanComputeInline(sch, sch.GetBlock("B"), &why));
  EXPECT_EQ(why,
            "compute_inline: the scope of block B is not a stage pipeline: block Z writes "
            "buffer A after B reads it");
  KILN_EXPECT_SCHEDULE_ERROR(sch.ComputeInline(sch.GetBlock("B")), "is not a stage pipeline");
}

TEST(ComputeInline, RefusesTheOnlyBlockOfItsScope) {
  Schedule sch(ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("B"):
            v_i = T.axis.spatial(4, i)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i]
)"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ComputeInline(sch.GetBlock("B")),
                             "block B is the only statement of its scope (block root)");
}

TEST(ComputeInline, FeasibilityQueryAndStaleHandle) {
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1);
  std::string why;
  EXPECT_TRUE(CanComputeInline(f, *FindBlockPath(f, "PadInput"), &why));
  EXPECT_FALSE(CanComputeInline(f, *FindBlockPath(f, "conv2d_nhwc"), &why));
  EXPECT_NE(why.find("has an init statement"), std::string::npos) << why;
  Schedule sch(f);
  BlockRV pad = sch.GetBlock("PadInput");
  EXPECT_TRUE(CanComputeInline(sch, pad));
  sch.ComputeInline(pad);
  // The block is gone: its handle (and the query) fail cleanly.
  EXPECT_FALSE(CanComputeInline(sch, pad, &why));
  EXPECT_THROW(sch.ComputeInline(pad), ScheduleError);
}

}  // namespace
}  // namespace kiln::ir
