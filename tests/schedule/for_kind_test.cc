// parallel, vectorize, bind, unroll: golden text, interpreter equivalence,
// replay, and the refusals for loops whose iterations are not independent.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "ir/ir.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/schedule_mutator.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/workloads/suite.h"
#include "tests/schedule/schedule_test_util.h"

namespace kiln::ir {
namespace {

using testing::ReplaysExactly;
using testing::SameResult;
using testing::WellFormed;

const char* kHeader =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 4), \"float32\"), B: T.Buffer((4, 4), \"float32\"), C: "
    "T.Buffer((4, 4), \"float32\")):\n"
    "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n";

const char* kMatmulBlock =
    "        with T.block(\"C\"):\n"
    "            v_i, v_j, v_k = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A[v_i, v_k], B[v_k, v_j])\n"
    "            T.writes(C[v_i, v_j])\n"
    "            with T.init():\n"
    "                C[v_i, v_j] = T.float32(0.0)\n"
    "            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]\n";

// Indents every line of `block` by `n` more spaces.
std::string Indent(const std::string& block, int n) {
  std::string out, pad(n, ' ');
  size_t start = 0;
  while (start < block.size()) {
    size_t end = block.find('\n', start);
    out += pad + block.substr(start, end - start + 1);
    start = end + 1;
  }
  return out;
}

TEST(ForKind, ParallelVectorizeUnrollGolden) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Parallel(loops[0]);
  sch.Vectorize(loops[1]);
  sch.Unroll(loops[2]);
  std::string expected = std::string(kHeader) +
                         "    for i in T.parallel(4):\n"
                         "        for j in T.vectorized(4):\n"
                         "            for k in T.unroll(4):\n" +
                         Indent(kMatmulBlock, 8);
  EXPECT_EQ(ToText(sch.func()), expected);
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
  // The handles survive: the loops are the same variables.
  EXPECT_EQ(sch.Get(loops[0]).for_kind, ForKind::kParallel);
  EXPECT_EQ(sch.NameOf(loops[2]), "k");
}

TEST(ForKind, BindGoldenAndTrace) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Bind(loops[0], "blockIdx.x");
  sch.Bind(loops[1], "threadIdx.x");
  std::string expected = std::string(kHeader) +
                         "    for i in T.thread_binding(4, thread=\"blockIdx.x\"):\n"
                         "        for j in T.thread_binding(4, thread=\"threadIdx.x\"):\n"
                         "            for k in range(4):\n" +
                         Indent(kMatmulBlock, 8);
  EXPECT_EQ(ToText(sch.func()), expected);
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
  nlohmann::json j = sch.trace().AsJSON();
  EXPECT_EQ(j[0][2].dump(), R"(["Bind",["l1"],["blockIdx.x"],[]])");
  EXPECT_NE(sch.trace().AsPython().find("sch.bind(loop=l2, thread_axis=\"threadIdx.x\")"),
            std::string::npos)
      << sch.trace().AsPython();
}

TEST(ForKind, TraceJsonAndPython) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Parallel(loops[0]);
  sch.Vectorize(loops[1]);
  sch.Unroll(loops[2]);
  nlohmann::json j = sch.trace().AsJSON();
  EXPECT_EQ(j[0][2].dump(), R"(["Parallel",["l1"],[],[]])");
  EXPECT_EQ(j[0][3].dump(), R"(["Vectorize",["l2"],[],[]])");
  EXPECT_EQ(j[0][4].dump(), R"(["Unroll",["l3"],[],[]])");
  std::string py = sch.trace().AsPython();
  EXPECT_NE(py.find("sch.parallel(loop=l1)"), std::string::npos) << py;
  EXPECT_NE(py.find("sch.vectorize(loop=l2)"), std::string::npos) << py;
  EXPECT_NE(py.find("sch.unroll(loop=l3)"), std::string::npos) << py;
}

TEST(ForKind, UnrollClearsAThreadBinding) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Bind(loops[0], "threadIdx.y");
  sch.Unroll(loops[0]);
  EXPECT_EQ(sch.Get(loops[0]).for_kind, ForKind::kUnrolled);
  EXPECT_EQ(sch.Get(loops[0]).thread_tag, "");
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

TEST(ForKind, UnrollHasNoPreconditions) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Unroll(loops[2]);  // the reduction loop
  EXPECT_EQ(sch.Get(loops[2]).for_kind, ForKind::kUnrolled);
  EXPECT_TRUE(SameResult(f, sch.func()));
}

TEST(ForKind, CrossThreadReductionBindIsAllowed) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Bind(loops[2], "threadIdx.x");
  EXPECT_EQ(sch.Get(loops[2]).thread_tag, "threadIdx.x");
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

TEST(ForKind, ConvWithPaddingParallelAndVectorize) {
  PrimFunc f = Conv2dNHWC(1, 6, 6, 4, 4, 3, 1, 1);
  Schedule sch(f);
  auto pad = sch.GetLoops(sch.GetBlock("PadInput"));
  auto conv = sch.GetLoops(sch.GetBlock("conv2d_nhwc"));
  sch.Parallel(pad[1]);
  sch.Vectorize(pad[3]);
  sch.Parallel(conv[1]);
  sch.Vectorize(conv[3]);
  sch.Unroll(conv[4]);
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
  KILN_EXPECT_SCHEDULE_ERROR(sch.Parallel(conv[5]),
                             "parallel: loop rw is bound to reduction iteration variable v_rw of "
                             "block conv2d_nhwc");
}

TEST(ForKind, SoftmaxBindRows) {
  PrimFunc f = SoftmaxMN(4, 8);
  Schedule sch(f);
  for (const char* name :
       {"T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum", "T_softmax_norm"}) {
    auto loops = sch.GetLoops(sch.GetBlock(name));
    sch.Bind(loops[0], "blockIdx.x");
  }
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

TEST(ForKind, BatchMatmulParallelOuter) {
  PrimFunc f = BatchMatmulNKKM(2, 8, 8, 8);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("Z"));
  sch.Parallel(loops[0]);
  sch.Parallel(loops[1]);
  sch.Vectorize(loops[2]);
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

TEST(ForKind, RefusesReductionLoops) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.Parallel(loops[2]),
                             "parallel: loop k is bound to reduction iteration variable v_k of "
                             "block C");
  KILN_EXPECT_SCHEDULE_ERROR(sch.Vectorize(loops[2]),
                             "vectorize: loop k is bound to reduction iteration variable v_k");
  KILN_EXPECT_SCHEDULE_ERROR(sch.Bind(loops[2], "blockIdx.x"),
                             "only a threadIdx.* axis may take a reduction loop");
  KILN_EXPECT_SCHEDULE_ERROR(sch.Bind(loops[2], "vthread.x"),
                             "bind: loop k is bound to reduction iteration variable v_k");
  // Refusals leave the program and the trace alone.
  EXPECT_TRUE(StructuralEqual(sch.func(), f));
  EXPECT_EQ(sch.trace().size(), 2u);
}

TEST(ForKind, RefusesBadThreadAxes) {
  PrimFunc f = Matmul(4, 4, 4);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.Bind(loops[0], "threadIdx.w"),
                             "bind: unknown thread axis \"threadIdx.w\" for loop i");
  KILN_EXPECT_SCHEDULE_ERROR(sch.Bind(loops[0], ""), "unknown thread axis");
  sch.Bind(loops[0], "threadIdx.x");
  KILN_EXPECT_SCHEDULE_ERROR(sch.Bind(loops[1], "threadIdx.x"),
                             "bind: loop j cannot be bound to threadIdx.x: a loop enclosing or "
                             "inside it is bound to threadIdx.x already");
}

// A block whose binding is not affine in the loops (i * i).
TEST(ForKind, RefusesNonAffineBinding) {
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            v = T.axis.spatial(16, i * i)
            T.reads(A[v])
            T.writes(B[v // 4])
            B[v // 4] = A[v]
)");
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("B"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.Parallel(loops[0]),
                             "parallel: block 'B' under loop i does not have an affine binding");
}

// A binding that repeats block instances (i // 2 * 3 is not affine) is
// accepted for a block whose instances are idempotent (data-parallel, one
// element per instance, reads nothing a block under the loop writes): a
// repeated instance stores the same value again. The shared-memory fetch of
// a padded convolution input on GPU has such a binding. (The interpreter
// runs loops in order whatever their kind, so SameResult shows that only
// the kind changed; the refusals below are what guards against races.)
TEST(ForKind, AcceptsNonAffineBindingOfIdempotentBlock) {
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(8):
        with T.block("B"):
            v = T.axis.spatial(16, i // 2 * 3)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v] * T.float32(2.0)
)");
  for (const char* axis : {"", "threadIdx.x"}) {
    Schedule sch(f);
    auto loops = sch.GetLoops(sch.GetBlock("B"));
    if (*axis == '\0') {
      sch.Parallel(loops[0]);
    } else {
      sch.Bind(loops[0], axis);
    }
    EXPECT_TRUE(SameResult(f, sch.func())) << axis;
  }
}

// The same binding is refused where a repeated instance is not harmless: a
// reduction (it would add twice), a block that reads what it writes, a block
// whose instances may write one element.
TEST(ForKind, RefusesNonAffineBindingOfNonIdempotentBlocks) {
  PrimFunc reduction = ParseFunc(R"(
@T.prim_func
def main(A: T.Buffer((16, 4), "float32"), C: T.Buffer((16,), "float32")):
    for i, k in T.grid(8, 4):
        with T.block("C"):
            v = T.axis.spatial(16, i // 2 * 3)
            r = T.axis.reduce(4, k)
            T.reads(A[v, r])
            T.writes(C[v])
            with T.init():
                C[v] = T.float32(0.0)
            C[v] = C[v] + A[v, r]
)");
  PrimFunc in_place = ParseFunc(R"(
@T.prim_func
def main(B: T.Buffer((16,), "float32")):
    for i in range(8):
        with T.block("B"):
            v = T.axis.spatial(16, i // 2 * 3)
            T.reads(B[v])
            T.writes(B[v])
            B[v] = B[v] * T.float32(2.0)
)");
  PrimFunc colliding = ParseFunc(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(8):
        with T.block("B"):
            v = T.axis.spatial(16, i // 2 * 3)
            T.reads(A[v])
            T.writes(B[v // 2])
            B[v // 2] = A[v]
)");
  {
    // Neither complete nor (with this binding) a reduction block.
    Schedule sch(reduction);
    auto loops = sch.GetLoops(sch.GetBlock("C"));
    KILN_EXPECT_SCHEDULE_ERROR(sch.Parallel(loops[0]),
                               "block C has a non-affine binding: iter var v = i // 2 * 3");
  }
  {
    Schedule sch(in_place);
    auto loops = sch.GetLoops(sch.GetBlock("B"));
    KILN_EXPECT_SCHEDULE_ERROR(sch.Parallel(loops[0]), "it reads buffer B, which it writes");
  }
  {
    Schedule sch(colliding);
    auto loops = sch.GetLoops(sch.GetBlock("B"));
    KILN_EXPECT_SCHEDULE_ERROR(sch.Bind(loops[0], "threadIdx.x"),
                               "bind: block 'B' under loop i does not have an affine binding");
  }
}

// Two blocks write one buffer: neither is a complete block.
TEST(ForKind, RefusesSecondWriter) {
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B0"):
            v = T.axis.spatial(4, i)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v]
    for i2 in range(4):
        with T.block("B1"):
            v = T.axis.spatial(4, i2)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v] * T.float32(2.0)
)");
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("B1"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.Vectorize(loops[0]),
                             "vectorize: loop i2 does not have compact data flow: its child block "
                             "'B1' is neither a complete block (block B1 is not complete: block B1 "
                             "is not the only writer of buffer B in its scope");
}

// The exceptions for idempotent blocks do not hold where a repeated instance
// could store another value: its input is written later under the loop, its
// input is written per iteration earlier under the loop (each thread's own
// S), or it writes one buffer through two regions that instances share.
TEST(ForKind, RefusesNonAffineBindingWhereRepeatsCouldDiffer) {
  PrimFunc later_writer = ParseFunc(R"(
@T.prim_func
def main(A: T.Buffer((8,), "float32"), X: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(8):
        with T.block("Q"):
            v = T.axis.spatial(16, i // 2 * 3)
            T.reads(X[v])
            T.writes(B[v])
            B[v] = X[v]
        with T.block("R"):
            vr = T.axis.spatial(8, i)
            T.reads(A[vr])
            T.writes(X[vr])
            X[vr] = A[vr]
)");
  PrimFunc per_iteration_input = ParseFunc(R"(
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((16,), "float32")):
    S = T.alloc_buffer((1,), scope="local")
    for i in range(8):
        with T.block("P"):
            vp = T.axis.spatial(8, i)
            T.reads(A[vp])
            T.writes(S[0])
            S[0] = A[vp]
        with T.block("Q"):
            v = T.axis.spatial(16, i // 2 * 3)
            T.reads(S[0])
            T.writes(B[v])
            B[v] = S[0]
)");
  PrimFunc two_regions = ParseFunc(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32"), B: T.Buffer((24,), "float32")):
    for i in range(8):
        with T.block("Q"):
            v = T.axis.spatial(16, i // 2 * 3)
            T.reads(A[v], C[v])
            T.writes(B[v], B[v + 3])
            B[v] = A[v]
            B[v + 3] = C[v]
)");
  for (const PrimFunc& f : {later_writer, per_iteration_input, two_regions}) {
    Schedule sch(f);
    auto loops = sch.GetLoops(sch.GetBlock("Q"));
    KILN_EXPECT_SCHEDULE_ERROR(sch.Bind(loops[0], "threadIdx.x"),
                               "bind: block 'Q' under loop i does not have an affine binding");
  }
}

// Under loop j, C reads what B writes in the next iteration: the iterations
// depend on each other and may not run in parallel. A producer outside the
// loop needs no proof (it runs before the whole loop), even one that writes
// less than the consumer reads.
TEST(ForKind, RefusesLoopWhoseIterationsFeedEachOther) {
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    for j in range(4):
        with T.block("B"):
            v = T.axis.spatial(4, j)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v]
        with T.block("C"):
            v = T.axis.spatial(4, j)
            T.reads(B[T.min(v + 1, 3)])
            T.writes(C[v])
            C[v] = B[T.min(v + 1, 3)]
)");
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.Parallel(loops[0]),
                             "parallel: iterations of loop j depend on each other: the region of "
                             "buffer B that block C reads");

  PrimFunc outside = ParseFunc(R"(
@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    for i in range(2):
        with T.block("B"):
            v = T.axis.spatial(2, i)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v]
    for j in range(4):
        with T.block("C"):
            v = T.axis.spatial(4, j)
            T.reads(B[v])
            T.writes(C[v])
            C[v] = B[v]
)");
  Schedule ok(outside);
  ok.Parallel(ok.GetLoops(ok.GetBlock("C"))[0]);
}

// The schedule remembers what parallel proved (self-contained iterations,
// affine bindings) only while the data flow is unchanged: annotations and
// loop kinds keep the facts, any other rewrite forgets them, so a later
// check on a changed program is made again and refuses what it must.
TEST(ForKind, ProvedFactsLastOnlyWhileTheDataflowIsUnchanged) {
  const char* kTwoStages = R"(
@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    for j in range(4):
        with T.block("B"):
            v = T.axis.spatial(4, j)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v]
        with T.block("C"):
            v = T.axis.spatial(4, j)
            T.reads(B[%s])
            T.writes(C[v])
            C[v] = B[%s]
)";
  char good_text[1024], bad_text[1024];
  std::snprintf(good_text, sizeof good_text, kTwoStages, "v", "v");
  // C reads what the next iteration writes.
  std::snprintf(bad_text, sizeof bad_text, kTwoStages, "T.min(v + 1, 3)", "T.min(v + 1, 3)");
  PrimFunc good = ParseFunc(good_text), bad = ParseFunc(bad_text);

  Schedule sch(good);
  BlockRV c = sch.GetBlock("C");
  LoopRV j = sch.GetLoops(c)[0];
  const ScheduleFact self_contained = ScheduleFact::SelfContainedLoop(sch.Get(j).loop_var);
  const ScheduleFact affine = ScheduleFact::AffineBinding("C");
  sch.Parallel(j);
  EXPECT_TRUE(ScheduleMutator(sch).KnowsFact(self_contained));
  EXPECT_TRUE(ScheduleMutator(sch).KnowsFact(affine));
  sch.Annotate(c, "hint", int64_t{1});
  sch.Unroll(j);
  EXPECT_TRUE(ScheduleMutator(sch).KnowsFact(self_contained));  // kinds and annotations only
  EXPECT_TRUE(ScheduleMutator(sch).KnowsFact(affine));
  sch.Split(j, {int64_t{2}, int64_t{2}});
  EXPECT_FALSE(ScheduleMutator(sch).KnowsFact(self_contained));  // a loop rewrite forgets
  EXPECT_FALSE(ScheduleMutator(sch).KnowsFact(affine));

  Schedule again(good);
  LoopRV j2 = again.GetLoops(again.GetBlock("C"))[0];
  again.Parallel(j2);
  // A new body with another data flow: the old facts must not vouch for it.
  ScheduleMutator(again).SetBody(bad.body);
  EXPECT_FALSE(ScheduleMutator(again).KnowsFact(affine));
  KILN_EXPECT_SCHEDULE_ERROR(again.Vectorize(again.GetLoops(again.GetBlock("C"))[0]),
                             "vectorize: iterations of loop j depend on each other");
}

// An in-place spatial block (reads what it writes, no init) is neither
// complete nor a reduction.
TEST(ForKind, RefusesNonCompactDataflow) {
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("A"):
            v = T.axis.spatial(4, i)
            T.reads(A[v])
            T.writes(A[v])
            A[v] = A[v] + T.float32(1.0)
)");
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("A"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.Parallel(loops[0]),
                             "parallel: loop i does not have compact data flow: its child block "
                             "'A' is neither a complete block");
}

TEST(ForKind, RefusesNonConstantVectorize) {
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    for i in range(4):
        for j in range(i + 1):
            with T.block("A"):
                v = T.axis.spatial(16, i * 4 + j)
                T.reads()
                T.writes(A[v])
                A[v] = T.float32(1.0)
)");
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("A"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.Vectorize(loops[1]),
                             "vectorize: loop j has a non-constant extent");
}

TEST(ForKind, ReplayRejectsMalformedBind) {
  PrimFunc f = Matmul(4, 4, 4);
  std::string text =
      R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)"
      R"(["Bind",["l1"],[],[]]],[]])";
  EXPECT_THROW(Trace::FromJSONString(text), TraceError);
  std::string bad_axis =
      R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)"
      R"(["Bind",["l1"],["warp.x"],[]]],[]])";
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(Trace::FromJSONString(bad_axis).ApplyToSchedule(&sch, false),
                             "unknown thread axis \"warp.x\"");
}

}  // namespace
}  // namespace kiln::ir
