// compute_at: golden rewrites, interpreter equivalence, replay and refusals.
#include <gtest/gtest.h>

#include "ir/ir.h"
#include "ir/schedule/schedule_mutator.h"
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

// B[i] = 2 A[i] (10 elements); C reads B under a 3 x 4 split of its loop.
constexpr const char* kTiledConsumer = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((10,))
    for i in range(10):
        with T.block("B"):
            v_i = T.axis.spatial(10, i)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i] * T.float32(2.0)
    for i_0, i_1 in T.grid(3, 4):
        with T.block("C"):
            v_i = T.axis.spatial(10, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < 10)
            T.reads(B[v_i])
            T.writes(C[v_i])
            C[v_i] = B[v_i] + T.float32(1.0)
)";

TEST(ComputeAt, MatmulUnderReluRow) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  sch.ComputeAt(sch.GetBlock("C"), LoopOf(sch, "compute", "i0"));
  ExpectScheduled(f, sch, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), compute: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C = T.alloc_buffer((8, 8))
    for i0 in range(8):
        for ax0, ax1 in T.grid(8, 8):
            with T.block("C"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i0, ax0, ax1])
                T.reads(A[v_i, v_k], B[v_k, v_j])
                T.writes(C[v_i, v_j])
                with T.init():
                    C[v_i, v_j] = T.float32(0.0)
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
        for i1 in range(8):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(C[v_i0, v_i1])
                T.writes(compute[v_i0, v_i1])
                compute[v_i0, v_i1] = T.max(C[v_i0, v_i1], T.float32(0.0))
)");
}

TEST(ComputeAt, PadInputUnderConvRows) {
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1);
  Schedule sch(f);
  sch.ComputeAt(sch.GetBlock("PadInput"), LoopOf(sch, "conv2d_nhwc", "h"));
  ExpectScheduled(f, sch, R"(# from tvm.script import tir as T

@T.prim_func
def main(inputs: T.Buffer((1, 6, 6, 2), "float32"), weight: T.Buffer((3, 3, 2, 2), "float32"), conv2d_nhwc: T.Buffer((1, 6, 6, 2), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    PadInput = T.alloc_buffer((1, 8, 8, 2))
    for n, h in T.grid(1, 6):
        for ax0, ax1, ax2 in T.grid(3, 8, 2):
            with T.block("PadInput"):
                v_i0 = T.axis.spatial(1, 0)
                v_i1 = T.axis.spatial(8, h + ax0)
                v_i2 = T.axis.spatial(8, ax1)
                v_i3 = T.axis.spatial(2, ax2)
                T.reads(inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3])
                T.writes(PadInput[v_i0, v_i1, v_i2, v_i3])
                PadInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 7 and 1 <= v_i2 and v_i2 < 7, inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0.0))
        for w, co, rh, rw, rc in T.grid(6, 2, 3, 3, 2):
            with T.block("conv2d_nhwc"):
                v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, rc])
                T.reads(PadInput[v_n, v_h + v_rh, v_w + v_rw, v_co // 2 * 2 + v_rc], weight[v_rh, v_rw, v_rc, v_co])
                T.writes(conv2d_nhwc[v_n, v_h, v_w, v_co])
                with T.init():
                    conv2d_nhwc[v_n, v_h, v_w, v_co] = T.float32(0.0)
                conv2d_nhwc[v_n, v_h, v_w, v_co] = conv2d_nhwc[v_n, v_h, v_w, v_co] + PadInput[v_n, v_h + v_rh, v_w + v_rw, v_co // 2 * 2 + v_rc] * weight[v_rh, v_rw, v_rc, v_co]
)");
}

TEST(ComputeAt, PreserveUnitLoopsKeepsUnitExtents) {
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1);
  Schedule sch(f);
  sch.ComputeAt(sch.GetBlock("PadInput"), LoopOf(sch, "conv2d_nhwc", "w"),
                /*preserve_unit_loops=*/true);
  ExpectScheduled(f, sch, R"(# from tvm.script import tir as T

@T.prim_func
def main(inputs: T.Buffer((1, 6, 6, 2), "float32"), weight: T.Buffer((3, 3, 2, 2), "float32"), conv2d_nhwc: T.Buffer((1, 6, 6, 2), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    PadInput = T.alloc_buffer((1, 8, 8, 2))
    for n, h, w in T.grid(1, 6, 6):
        for ax0, ax1, ax2, ax3 in T.grid(1, 3, 3, 2):
            with T.block("PadInput"):
                v_i0 = T.axis.spatial(1, ax0)
                v_i1 = T.axis.spatial(8, h + ax1)
                v_i2 = T.axis.spatial(8, w + ax2)
                v_i3 = T.axis.spatial(2, ax3)
                T.reads(inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3])
                T.writes(PadInput[v_i0, v_i1, v_i2, v_i3])
                PadInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 7 and 1 <= v_i2 and v_i2 < 7, inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0.0))
        for co, rh, rw, rc in T.grid(2, 3, 3, 2):
            with T.block("conv2d_nhwc"):
                v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, rc])
                T.reads(PadInput[v_n, v_h + v_rh, v_w + v_rw, v_co // 2 * 2 + v_rc], weight[v_rh, v_rw, v_rc, v_co])
                T.writes(conv2d_nhwc[v_n, v_h, v_w, v_co])
                with T.init():
                    conv2d_nhwc[v_n, v_h, v_w, v_co] = T.float32(0.0)
                conv2d_nhwc[v_n, v_h, v_w, v_co] = conv2d_nhwc[v_n, v_h, v_w, v_co] + PadInput[v_n, v_h + v_rh, v_w + v_rw, v_co // 2 * 2 + v_rc] * weight[v_rh, v_rw, v_rc, v_co]
)");
}

TEST(ComputeAt, NonDividingTileGetsPredicate) {
  PrimFunc f = ParseFunc(kTiledConsumer);
  Schedule sch(f);
  sch.ComputeAt(sch.GetBlock("B"), LoopOf(sch, "C", "i_0"));
  ExpectScheduled(f, sch, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((10,))
    for i_0 in range(3):
        for ax0 in range(4):
            with T.block("B"):
                v_i = T.axis.spatial(10, i_0 * 4 + ax0)
                T.where(i_0 * 4 + ax0 < 10)
                T.reads(A[v_i])
                T.writes(B[v_i])
                B[v_i] = A[v_i] * T.float32(2.0)
        for i_1 in range(4):
            with T.block("C"):
                v_i = T.axis.spatial(10, i_0 * 4 + i_1)
                T.where(i_0 * 4 + i_1 < 10)
                T.reads(B[v_i])
                T.writes(C[v_i])
                C[v_i] = B[v_i] + T.float32(1.0)
)");
}

TEST(ComputeAt, StridedConvAndDilatedConvStayEquivalent) {
  for (PrimFunc f : {Conv2dNHWC(1, 7, 7, 2, 3, 3, 2, 1), Conv2dNHWC(1, 8, 8, 2, 2, 3, 1, 2, 2),
                     Conv1dNLC(1, 9, 2, 2, 3, 2, 1)}) {
    for (const char* loop : {"n", "h", "w", "l", "co"}) {
      Schedule sch(f);
      BlockRV conv = sch.GetChildBlocks(sch.GetBlock("root"))[1];
      LoopRV target{};
      bool found = false;
      for (LoopRV l : sch.GetLoops(conv)) {
        if (sch.NameOf(l) == loop) {
          target = l;
          found = true;
        }
      }
      if (!found) continue;
      sch.ComputeAt(sch.GetBlock("PadInput"), target);
      EXPECT_TRUE(testing::SameResult(f, sch.func())) << loop;
      EXPECT_TRUE(testing::WellFormed(sch.func())) << loop;
      EXPECT_TRUE(testing::ReplaysExactly(f, sch)) << loop;
    }
  }
}

TEST(ComputeAt, SoftmaxStages) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  sch.ComputeAt(sch.GetBlock("T_softmax_maxelem"), LoopOf(sch, "T_softmax_exp", "i0"));
  sch.ComputeAt(sch.GetBlock("T_softmax_expsum"), LoopOf(sch, "T_softmax_norm", "i0"));
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

// B feeds C; X (independent of B) comes first in C's loop, so B may go at
// child 0 or 1 of that loop.
constexpr const char* kTwoSlots = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32"), D: T.Buffer((4,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("B"):
            v_i = T.axis.spatial(4, i)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i] * T.float32(3.0)
    for i in range(4):
        with T.block("X"):
            v_i = T.axis.spatial(4, i)
            T.reads(A[v_i])
            T.writes(D[v_i])
            D[v_i] = A[v_i]
        with T.block("C"):
            v_i = T.axis.spatial(4, i)
            T.reads(B[v_i])
            T.writes(C[v_i])
            C[v_i] = B[v_i]
)";

TEST(ComputeAt, IndexChoosesThePosition) {
  PrimFunc f = ParseFunc(kTwoSlots);
  for (auto [index, first] :
       std::vector<std::pair<int, std::string>>{{-1, "X"}, {-2, "B"}, {0, "B"}, {1, "X"}}) {
    Schedule sch(f);
    sch.ComputeAt(sch.GetBlock("B"), LoopOf(sch, "C", "i"), false, index);
    auto children = sch.GetChildBlocks(LoopOf(sch, "C", "i"));
    ASSERT_EQ(children.size(), 3u);
    EXPECT_EQ(sch.NameOf(children[0]), first) << index;
    EXPECT_TRUE(testing::SameResult(f, sch.func())) << index;
    EXPECT_TRUE(testing::WellFormed(sch.func())) << index;
    EXPECT_TRUE(testing::ReplaysExactly(f, sch)) << index;
  }
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.ComputeAt(sch.GetBlock("B"), LoopOf(sch, "C", "i"), false, 2),
                             "index 2 is not a valid position under loop i: valid are -1, -2 and "
                             "[0, 1]");
}

TEST(ComputeAt, RootMarkIsANoOpAndIsRecorded) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  sch.ComputeAt(sch.GetBlock("C"), ScheduleMutator(sch).NewLocationMarkRV(/*inline_mark=*/false));
  EXPECT_FALSE(StructuralMismatch(f, sch.func()).has_value());
  EXPECT_EQ(sch.trace().insts().back().kind, "ComputeAt");
}

TEST(ComputeAt, PythonForm) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  // One statement each: the order of a call's arguments is unspecified (gcc
  // and clang differ), and it decides the trace's variable names.
  const auto loop = LoopOf(sch, "compute", "i0");
  const auto block = sch.GetBlock("C");
  sch.ComputeAt(block, loop, true, -2);
  EXPECT_NE(sch.trace().AsPython().find(
                "sch.compute_at(block=b3, loop=l1, preserve_unit_loops=True, index=-2)"),
            std::string::npos)
      << sch.trace().AsPython();
}

TEST(ComputeAt, RefusesAnOutputBlock) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.ComputeAt(sch.GetBlock("compute"), LoopOf(sch, "C", "i")),
      "block 'compute' is an output block: it writes a buffer its scope 'root' "
      "does not allocate");
}

TEST(ComputeAt, RefusesALoopAboveTheBlock) {
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1);
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.ComputeAt(sch.GetBlock("PadInput"), LoopOf(sch, "PadInput", "i1")),
                             "loop i1 is an ancestor of block 'PadInput'");
}

TEST(ComputeAt, RefusesWhenAConsumerIsOutsideTheLoop) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.ComputeAt(sch.GetBlock("T_softmax_exp"), LoopOf(sch, "T_softmax_norm", "i0")),
      "all the consumers of block 'T_softmax_exp' must be under loop i0, but 1 consumer is not: "
      "'T_softmax_expsum'");
}

TEST(ComputeAt, InlineMarkInlinesAndRecordsComputeAt) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  sch.ComputeAt(sch.GetBlock("T_softmax_exp"),
                ScheduleMutator(sch).NewLocationMarkRV(/*inline_mark=*/true));
  EXPECT_FALSE(sch.HasBlock("T_softmax_exp"));
  EXPECT_EQ(sch.trace().insts().back().kind, "ComputeAt");
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
  EXPECT_TRUE(testing::WellFormed(sch.func()));
}

TEST(ComputeAt, RefusesTheInlineMarkWhereInliningIsIllegal) {
  PrimFunc f = MatmulRelu(8, 8, 8);
  Schedule sch(f);
  // C is a reduction: compute_inline refuses it, and so does compute_at at
  // the inline mark.
  EXPECT_THROW(sch.ComputeAt(sch.GetBlock("C"), ScheduleMutator(sch).NewLocationMarkRV(true)),
               ScheduleError);
}

TEST(ComputeAt, UnderASplitLoop) {
  // The realistic use: tile the consumer, then compute the producer per tile.
  PrimFunc f = Conv2dNHWC(1, 8, 8, 2, 2, 3, 1, 1);
  for (int64_t outer : {2, 3}) {
    Schedule sch(f);
    LoopRV h = LoopOf(sch, "conv2d_nhwc", "h");
    std::vector<LoopRV> parts = sch.Split(h, {Factor{outer}, Factor{}});
    sch.ComputeAt(sch.GetBlock("PadInput"), parts[0]);
    EXPECT_TRUE(testing::SameResult(f, sch.func())) << outer;
    EXPECT_TRUE(testing::WellFormed(sch.func())) << outer;
  }
}

TEST(ComputeAt, RefusesABlockThatIsNotTheOnlyWriter) {
  // X also writes B, so B is not a complete block of the scope.
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("B"):
            v_i = T.axis.spatial(4, i)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i]
    for i in range(4):
        with T.block("C"):
            v_i = T.axis.spatial(4, i)
            T.reads(B[v_i])
            T.writes(C[v_i])
            C[v_i] = B[v_i]
        with T.block("X"):
            v_i = T.axis.spatial(4, i)
            T.reads()
            T.writes(B[v_i])
            B[v_i] = T.float32(0.0)
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.ComputeAt(sch.GetBlock("B"), LoopOf(sch, "C", "i")),
                             "block 'B' must be a complete or a reduction block, but block B is "
                             "not complete: block B is not the only writer of buffer B in its "
                             "scope (block X writes it too)");
}

TEST(ComputeAt, RefusesAWriteAfterReadReorder) {
  // X overwrites A after B has read it: B may not move past X.
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("B"):
            v_i = T.axis.spatial(4, i)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i]
    for i in range(4):
        with T.block("X"):
            v_i = T.axis.spatial(4, i)
            T.reads()
            T.writes(A[v_i])
            A[v_i] = T.float32(0.0)
        with T.block("C"):
            v_i = T.axis.spatial(4, i)
            T.reads(B[v_i])
            T.writes(C[v_i])
            C[v_i] = B[v_i]
)");
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.ComputeAt(sch.GetBlock("B"), LoopOf(sch, "C", "i")),
                             "would reorder it against block 'X', which writes a buffer the block "
                             "reads");
}

TEST(ComputeAt, TraceReplayAfterJsonRoundTrip) {
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1);
  Schedule sch(f);
  sch.ComputeAt(sch.GetBlock("PadInput"), LoopOf(sch, "conv2d_nhwc", "w"), false, -1);
  nlohmann::json j = nlohmann::json::parse(sch.trace().AsJSONString());
  const auto& inst = j[0].back();
  EXPECT_EQ(inst[0], "ComputeAt");
  EXPECT_EQ(inst[2], nlohmann::json::parse("[0, -1]"));
  EXPECT_TRUE(testing::ReplaysExactly(f, sch));
}

}  // namespace
}  // namespace kiln::ir
