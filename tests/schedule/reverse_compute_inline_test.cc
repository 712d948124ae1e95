// reverse_compute_inline: golden rewrites, equivalence on suite workloads at
// reduced shapes, refusals, feasibility queries and replay.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/schedule/primitive/compute_inline.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "tests/schedule/schedule_test_util.h"

namespace kiln::ir {
namespace {

using testing::ReplaysExactly;
using testing::SameResult;
using testing::WellFormed;

constexpr char kBiasRelu[] = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), bias: T.Buffer((4,), "float32"), C: T.Buffer((4, 4), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((4, 4))
    for i, j in T.grid(4, 4):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
    for i, j in T.grid(4, 4):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(B[v_i, v_j], bias[v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = T.max(B[v_i, v_j] + bias[v_j], T.float32(0.0))
)";

TEST(ReverseComputeInline, EpilogueIntoElementwiseProducer) {
  PrimFunc f = ParseFunc(kBiasRelu);
  Schedule sch(f);
  sch.ReverseComputeInline(sch.GetBlock("C"));
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), bias: T.Buffer((4,), "float32"), C: T.Buffer((4, 4), "float32")):
    # with T.block("root"):
    for i, j in T.grid(4, 4):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j], bias[v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = T.max(A[v_i, v_j] * T.float32(2.0) + bias[v_j], T.float32(0.0))
)");
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
  EXPECT_EQ(sch.trace().AsPython(), R"(def apply_trace(sch):
  b0 = sch.get_block(name="C", func_name="main")
  sch.reverse_compute_inline(block=b0)
)");
  EXPECT_EQ(sch.trace().AsJSONString(),
            R"([[["GetBlock",[],["C","main"],["b0"]],["ReverseComputeInline",["b0"],[],[]]],[]])");
}

// The consumer reads B transposed, and the producer computes more rows of B
// than the consumer uses: the fused block is predicated to the consumer's
// domain.
constexpr char kTransposedLarger[] = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10, 4), "float32"), C: T.Buffer((4, 8), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((10, 4))
    for i, j in T.grid(10, 4):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j] + T.float32(1.0)
    for i, j in T.grid(4, 8):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(B[v_j, v_i])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = B[v_j, v_i] * B[v_j, v_i]
)";

TEST(ReverseComputeInline, TransposedConsumerOfALargerProducerIsPredicated) {
  PrimFunc f = ParseFunc(kTransposedLarger);
  Schedule sch(f);
  sch.ReverseComputeInline(sch.GetBlock("C"));
  EXPECT_EQ(ToText(sch.func()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10, 4), "float32"), C: T.Buffer((4, 8), "float32")):
    # with T.block("root"):
    for i, j in T.grid(10, 4):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.where(i < 8)
            T.reads(A[v_i, v_j])
            T.writes(C[v_j, v_i])
            C[v_j, v_i] = (A[v_i, v_j] + T.float32(1.0)) * (A[v_i, v_j] + T.float32(1.0))
)");
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

// Reverse-inlines, one after another, every block the primitive accepts.
std::vector<std::string> ReverseInlineAll(const PrimFunc& f, Schedule* sch) {
  std::vector<std::string> inlined;
  for (bool progress = true; progress;) {
    progress = false;
    for (const BlockRealizeNode* r : AllBlockRealizes(sch->func())) {
      std::string name = r->block->name;
      if (name == "root") continue;
      if (CanReverseComputeInline(sch->func(), *FindBlockPath(sch->func(), name))) {
        sch->ReverseComputeInline(sch->GetBlock(name));
        inlined.push_back(name);
        progress = true;
        break;
      }
    }
  }
  EXPECT_TRUE(SameResult(f, sch->func()));
  EXPECT_TRUE(ReplaysExactly(f, *sch));
  return inlined;
}

TEST(ReverseComputeInline, Conv2dBnReluEpilogueChain) {
  PrimFunc f = Conv2dNHWCBnRelu(1, 6, 6, 2, 4, 3, 1, 1);
  Schedule sch(f);
  std::vector<std::string> got = ReverseInlineAll(f, &sch);
  // bn_mul into bias_add, then bn_add and relu into the growing bias_add;
  // bias_add stops at the convolution, a reduction.
  EXPECT_EQ(got, (std::vector<std::string>{"bn_mul", "bn_add", "compute"}));
  EXPECT_TRUE(WellFormed(sch.func()));
  std::string why;
  EXPECT_FALSE(CanReverseComputeInline(sch, sch.GetBlock("bias_add"), &why));
  EXPECT_EQ(why,
            "reverse_compute_inline: the producer block Conv2dOutput is not complete: it has an "
            "init statement (it is a reduction block)");
}

TEST(ReverseComputeInline, SuiteWorkloadsStayEquivalent) {
  std::vector<std::pair<std::string, PrimFunc>> cases = {
      {"C2D", Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1)},
      {"SFM", SoftmaxMN(4, 8)},
      {"RMS", RmsNorm(2, 8)},
      {"NRM", NormBMN(1, 4, 4)},
      {"TBG", TransposeBatchMatmul(1, 4, 2, 4)},
      {"matmul_relu", MatmulRelu(4, 4, 4)},
  };
  for (auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    Schedule sch(f);
    ReverseInlineAll(f, &sch);
  }
}

TEST(ReverseComputeInline, RefusesReluAfterMatmulReduction) {
  // TVM fuses this epilogue with compute_at or fuse_reduction_epilogue, not
  // here: the producer is a reduction.
  Schedule sch(MatmulRelu(4, 4, 4));
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.ReverseComputeInline(sch.GetBlock("compute")),
      "reverse_compute_inline: the producer block C is not complete: it has an init statement");
}

TEST(ReverseComputeInline, RefusesConsumerOfTwoProducedBuffers) {
  Schedule sch(SoftmaxMN(4, 4));
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.ReverseComputeInline(sch.GetBlock("T_softmax_norm")),
      "block T_softmax_norm must read exactly one buffer that another block of its scope writes, "
      "but it reads T_softmax_exp, T_softmax_expsum");
}

TEST(ReverseComputeInline, RefusesReductionConsumer) {
  Schedule sch(SoftmaxMN(4, 4));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ReverseComputeInline(sch.GetBlock("T_softmax_expsum")),
                             "block T_softmax_expsum has an init statement");
}

TEST(ReverseComputeInline, RefusesLoadNotIndexedByEveryIterVar) {
  // T_rms_norm reads rsqrt[v_i] only: v_j would be lost.
  Schedule sch(RmsNorm(2, 8));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ReverseComputeInline(sch.GetBlock("T_rms_norm")),
                             "indexes no dimension of rsqrt");
}

// kBiasRelu with the consumer's body replaced.
PrimFunc WithConsumer(const std::string& reads, const std::string& body,
                      const std::string& where = "") {
  std::string text = kBiasRelu;
  size_t at = text.find("            T.reads(B[v_i, v_j], bias[v_j])");
  text = text.substr(0, at) + where + "            T.reads(" + reads +
         ")\n            T.writes(C[v_i, v_j])\n            " + body + "\n";
  return ParseFunc(text);
}

TEST(ReverseComputeInline, RefusesLoadsAtDifferentIndices) {
  Schedule sch(WithConsumer("B[0:4, 0:4]", "C[v_i, v_j] = B[v_i, v_j] + B[v_j, v_i]"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ReverseComputeInline(sch.GetBlock("C")),
                             "it loads B at different indices");
}

TEST(ReverseComputeInline, RefusesShiftedLoad) {
  Schedule sch(WithConsumer("B[0:4, 0:4]", "C[v_i, v_j] = B[v_i, 3 - v_j]"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ReverseComputeInline(sch.GetBlock("C")),
                             "the body of block C is not a single store reading buffer B at its "
                             "iteration variables");
}

TEST(ReverseComputeInline, RefusesConsumerWritingAnElementTwice) {
  // Every C[v_i, 0] is written four times, the last with v_j = 3; fused into
  // B the order of those writes would be B's.
  Schedule sch(WithConsumer("B[v_i, v_j]", "C[v_i, 0] = B[v_i, v_j]"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ReverseComputeInline(sch.GetBlock("C")),
                             "block C does not store to C at distinct iteration variables");
}

TEST(ReverseComputeInline, RefusesPredicatedConsumer) {
  Schedule sch(
      WithConsumer("B[v_i, v_j]", "C[v_i, v_j] = B[v_i, v_j]", "            T.where(i < 3)\n"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ReverseComputeInline(sch.GetBlock("C")),
                             "block C has a predicate");
}

TEST(ReverseComputeInline, RefusesConsumerLargerThanProducer) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((8,), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((8,))
    for i in range(4):
        with T.block("B"):
            v_i = T.axis.spatial(4, i)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i]
    for i in range(8):
        with T.block("C"):
            v_i = T.axis.spatial(8, i)
            T.reads(B[v_i])
            T.writes(C[v_i])
            C[v_i] = B[v_i]
)");
  Schedule sch(f);
  // TVM's stage-pipeline requirement catches it first (region cover).
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.ReverseComputeInline(sch.GetBlock("C")),
      "the scope of block C (block root) is not a stage pipeline: the region of buffer B that "
      "block C reads");
}

TEST(ReverseComputeInline, RefusesOutputProducerAndSharedIntermediate) {
  // B is a parameter: the producer is an output block.
  std::string text = kBiasRelu;
  text.replace(text.find("bias: T.Buffer((4,), \"float32\")"), 0,
               "B: T.Buffer((4, 4), \"float32\"), ");
  text.erase(text.find("    B = T.alloc_buffer((4, 4))\n"), 31);
  Schedule out(ParseFunc(text));
  KILN_EXPECT_SCHEDULE_ERROR(out.ReverseComputeInline(out.GetBlock("C")),
                             "the producer block B is an output block");
  // A second reader of B would lose its input.
  std::string shared = kBiasRelu;
  shared.replace(shared.find("C: T.Buffer((4, 4), \"float32\")"), 0,
                 "D: T.Buffer((4, 4), \"float32\"), ");
  shared += R"(    for i, j in T.grid(4, 4):
        with T.block("D"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(B[v_i, v_j])
            T.writes(D[v_i, v_j])
            D[v_i, v_j] = B[v_i, v_j]
)";
  Schedule sch(ParseFunc(shared));
  KILN_EXPECT_SCHEDULE_ERROR(sch.ReverseComputeInline(sch.GetBlock("C")),
                             "buffer B of the producer block B is also read by block D");
}

TEST(ReverseComputeInline, FeasibilityQuery) {
  PrimFunc f = ParseFunc(kBiasRelu);
  std::string why;
  EXPECT_TRUE(CanReverseComputeInline(f, *FindBlockPath(f, "C"), &why));
  EXPECT_FALSE(CanReverseComputeInline(f, *FindBlockPath(f, "B"), &why));
  EXPECT_EQ(why,
            "reverse_compute_inline: block B must read exactly one buffer that another block of "
            "its scope writes, but it reads none");
}

}  // namespace
}  // namespace kiln::ir
