// split: golden text, semantics on suite workloads, refusals, trace form.
#include <gtest/gtest.h>

#include "ir/schedule/analysis.h"
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

// The text form's body, from the first loop on (the header is the same).
std::string Body(const PrimFunc& f) {
  std::string t = ToText(f);
  return t.substr(t.find("    for "));
}

TEST(Split, ImperfectSplitAddsAPredicate) {
  PrimFunc f = Matmul(10, 8, 8);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("C");
  auto loops = sch.GetLoops(b);
  auto outs = sch.Split(loops[0], {std::monostate{}, int64_t{4}});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(sch.NameOf(outs[0]), "i_0");
  EXPECT_EQ(sch.Get(outs[0]).extent.as<IntImmNode>()->value, 3);
  sch.Split(loops[1], {int64_t{1}, int64_t{8}});
  EXPECT_EQ(Body(sch.func()), R"(    for i_0, i_1, j_0, j_1, k in T.grid(3, 4, 1, 8, 8):
        with T.block("C"):
            v_i = T.axis.spatial(10, i_0 * 4 + i_1)
            v_j = T.axis.spatial(8, j_0 * 8 + j_1)
            v_k = T.axis.reduce(8, k)
            T.where(i_0 * 4 + i_1 < 10)
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  testing::ExpectSound(f, sch);
  // The predicated binding is still affine (reorder and compute_at rely on it).
  std::string why;
  EXPECT_TRUE(IsAffineBinding(sch.PathOf(b), &why)) << why;
  EXPECT_TRUE(IsReductionBlock(sch.PathOf(b), &why)) << why;
}

TEST(Split, DropUnitItersAndDisablePredication) {
  PrimFunc f = Matmul(8, 8, 8);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Split(loops[1], {int64_t{1}, int64_t{8}}, /*preserve_unit_iters=*/false);
  // 2 * 4 covers 8 exactly: no predicate either way; disable_predication is
  // recorded and replayed.
  sch.Split(loops[2], {int64_t{2}, std::monostate{}}, true, /*disable_predication=*/true);
  EXPECT_EQ(Body(sch.func()), R"(    for i, j_0, j_1, k_0, k_1 in T.grid(8, 1, 8, 2, 4):
        with T.block("C"):
            v_i = T.axis.spatial(8, i)
            v_j = T.axis.spatial(8, j_1)
            v_k = T.axis.reduce(8, k_0 * 4 + k_1)
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  testing::ExpectSound(f, sch);
  EXPECT_NE(
      sch.trace().AsPython().find("sch.split(loop=l3, factors=[2, None], preserve_unit_iters=True, "
                                  "disable_predication=True)"),
      std::string::npos)
      << sch.trace().AsPython();
}

TEST(Split, SampledFactorsAndNestedSplit) {
  PrimFunc f = BatchMatmulNKKM(1, 8, 8, 8);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("Z"));
  auto tiles = sch.SamplePerfectTile(loops[1], 3, 16, std::vector<int64_t>{2, 2, 2});
  auto split = sch.Split(loops[1], {tiles[0], tiles[1], tiles[2]});
  ASSERT_EQ(split.size(), 3u);
  auto again = sch.Split(split[1], {std::monostate{}, int64_t{1}});
  EXPECT_EQ(sch.NameOf(again[0]), "i_1_0");
  EXPECT_EQ(Body(sch.func()),
            R"(    for b, i_0, i_1_0, i_1_1, i_2, j, k in T.grid(1, 2, 2, 1, 2, 8, 8):
        with T.block("Z"):
            v_b = T.axis.spatial(1, b)
            v_i = T.axis.spatial(8, i_0 * 4 + i_1_0 * 2 + i_1_1 * 2 + i_2)
            v_j = T.axis.spatial(8, j)
            v_k = T.axis.reduce(8, k)
            T.reads(X[v_b, v_i, v_k], Y[v_b, v_k, v_j])
            T.writes(Z[v_b, v_i, v_j])
            with T.init():
                Z[v_b, v_i, v_j] = T.float32(0.0)
            Z[v_b, v_i, v_j] = Z[v_b, v_i, v_j] + X[v_b, v_i, v_k] * Y[v_b, v_k, v_j]
)");
  testing::ExpectSound(f, sch);
  std::string py = sch.trace().AsPython();
  EXPECT_NE(
      py.find("l8, l9, l10 = sch.split(loop=l2, factors=[v5, v6, v7], preserve_unit_iters=True, "
              "disable_predication=False)"),
      std::string::npos)
      << py;
}

TEST(Split, TraceJSONLayout) {
  PrimFunc f = Matmul(8, 8, 8);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Split(loops[0], {std::monostate{}, int64_t{4}}, false, true);
  nlohmann::json j = sch.trace().AsJSON();
  EXPECT_EQ(j[0].back().dump(), R"(["Split",["l1","None",4],[0,1],["l4","l5"]])") << j.dump();
}

// Every loop of every block split imperfectly, on workloads with padding and
// several stages.
void SplitEverything(const PrimFunc& f, int64_t factor) {
  Schedule sch(f);
  for (const auto* r : AllBlockRealizes(f)) {
    if (r->block->name == "root") continue;
    BlockRV b = sch.GetBlock(r->block->name);
    for (LoopRV l : sch.GetLoops(b)) sch.Split(l, {std::monostate{}, factor});
  }
  testing::ExpectSound(f, sch);
}

TEST(Split, PreservesSemanticsOnWorkloads) {
  SplitEverything(BatchMatmulNKKM(1, 6, 5, 7), 4);
  SplitEverything(Conv2dNHWC(1, 5, 5, 2, 3, 3, 1, 1), 2);
  SplitEverything(SoftmaxMN(5, 7), 3);
  SplitEverything(NormBMN(1, 5, 3), 2);
}

TEST(Split, PredicateIsConjoinedWithAnExistingOne) {
  PrimFunc f = Conv2dNHWC(1, 5, 5, 2, 3, 3, 1, 1);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("PadInput"));
  auto outer = sch.Split(loops[1], {std::monostate{}, int64_t{4}});
  sch.Split(outer[1], {std::monostate{}, int64_t{3}});
  std::string text = ToText(sch.func());
  EXPECT_NE(text.find("T.where(i1_0 * 4 + i1_1_0 * 3 + i1_1_1 < 7 and i1_1_0 * 3 + i1_1_1 < 4)"),
            std::string::npos)
      << text;
  testing::ExpectSound(f, sch);
}

TEST(Split, Refusals) {
  PrimFunc f = Matmul(8, 8, 8);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.Split(loops[0], {std::monostate{}, std::monostate{}}),
                             "split: only one factor can be None (inferred)");
  KILN_EXPECT_SCHEDULE_ERROR(sch.Split(loops[0], {int64_t{0}, int64_t{8}}),
                             "split: factor 0 of loop i is 0; factors must be positive");
  KILN_EXPECT_SCHEDULE_ERROR(
      sch.Split(loops[0], {int64_t{2}, int64_t{3}}),
      "split: the product of factors (6) is less than the extent of loop i (8)");
  KILN_EXPECT_SCHEDULE_ERROR(sch.Split(loops[0], {}), "split: no factors given for loop i");
  // The function is untouched by the refused calls.
  EXPECT_TRUE(StructuralEqual(f, sch.func()));

  PrimFunc offset = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i in range(2, 8):
        with T.block("A"):
            vi = T.axis.spatial(8, i)
            T.reads()
            T.writes(A[vi])
            A[vi] = T.float32(0.0)
)");
  PrimFunc opaque = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10,), "float32")):
    for i in range(10):
        A[i] = T.float32(0.0)
)");
  Schedule s3(opaque);
  LoopRV oi = LoopRV{};
  {
    const auto* loop = opaque.root_block().body.as<ForNode>();
    ASSERT_NE(loop, nullptr);
    oi = ScheduleMutator(s3).NewLoopRV(loop->loop_var);
  }
  KILN_EXPECT_SCHEDULE_ERROR(s3.Split(oi, {std::monostate{}, int64_t{4}}),
                             "split: the factors of loop i (product 12) do not divide its extent "
                             "10, and statements outside any block");
  // A perfect split needs no guard.
  s3.Split(oi, {int64_t{5}, int64_t{2}});
  EXPECT_TRUE(SameResult(opaque, s3.func()));

  Schedule s2(offset);
  LoopRV i = s2.GetLoops(s2.GetBlock("A"))[0];
  KILN_EXPECT_SCHEDULE_ERROR(s2.Split(i, {int64_t{2}, int64_t{3}}),
                             "split: loop i starts at 2; only loops starting at 0 can be split");
}

}  // namespace
}  // namespace kiln::ir
