// fuse: golden text, semantics on suite workloads, refusals, trace form.
#include <gtest/gtest.h>

#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/workloads/suite.h"
#include "tests/schedule/schedule_test_util.h"

namespace kiln::ir {
namespace {

using testing::ReplaysExactly;
using testing::SameResult;
using testing::WellFormed;

std::string Body(const PrimFunc& f) {
  std::string t = ToText(f);
  return t.substr(t.find("    for "));
}

TEST(Fuse, TwoLoops) {
  PrimFunc f = Matmul(4, 6, 8);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  LoopRV ij = sch.Fuse({loops[0], loops[1]});
  EXPECT_EQ(sch.NameOf(ij), "i_j_fused");
  EXPECT_EQ(Body(sch.func()), R"(    for i_j_fused, k in T.grid(24, 8):
        with T.block("C"):
            v_i = T.axis.spatial(4, i_j_fused // 6)
            v_j = T.axis.spatial(6, i_j_fused % 6)
            v_k = T.axis.reduce(8, k)
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  testing::ExpectSound(f, sch);
  EXPECT_NE(sch.trace().AsPython().find("l4 = sch.fuse(l1, l2, preserve_unit_iters=True)"),
            std::string::npos)
      << sch.trace().AsPython();
  nlohmann::json j = sch.trace().AsJSON();
  EXPECT_EQ(j[0].back().dump(), R"(["Fuse",["l1","l2"],[1],["l4"]])") << j.dump();
}

// Fusing what a split made gives back the original binding.
TEST(Fuse, UndoesASplit) {
  PrimFunc f = Matmul(4, 6, 8);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  auto parts = sch.Split(loops[2], {int64_t{2}, int64_t{2}, int64_t{2}});
  sch.Fuse({parts[0], parts[1], parts[2]});
  EXPECT_EQ(Body(sch.func()), R"(    for i, j, k_0_k_1_k_2_fused in T.grid(4, 6, 8):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k_0_k_1_k_2_fused])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  testing::ExpectSound(f, sch);
}

TEST(Fuse, UnitLoopsAndThreeLoops) {
  PrimFunc f = BatchMatmulNKKM(1, 4, 3, 2);
  for (bool preserve : {true, false}) {
    Schedule sch(f);
    auto loops = sch.GetLoops(sch.GetBlock("Z"));
    sch.Fuse({loops[0], loops[1], loops[2]}, preserve);
    // The unit loop b contributes nothing either way: its binding folds to 0
    // because the fused loop stays below 12.
    EXPECT_EQ(Body(sch.func()), R"(    for b_i_j_fused, k in T.grid(12, 2):
        with T.block("Z"):
            v_b = T.axis.spatial(1, 0)
            v_i = T.axis.spatial(4, b_i_j_fused // 3)
            v_j = T.axis.spatial(3, b_i_j_fused % 3)
            v_k = T.axis.reduce(2, k)
            T.reads(X[v_b, v_i, v_k], Y[v_b, v_k, v_j])
            T.writes(Z[v_b, v_i, v_j])
            with T.init():
                Z[v_b, v_i, v_j] = T.float32(0.0)
            Z[v_b, v_i, v_j] = Z[v_b, v_i, v_j] + X[v_b, v_i, v_k] * Y[v_b, v_k, v_j]
)") << preserve;
    testing::ExpectSound(f, sch);
  }
}

// Fuses the loops of every block (all of them, or the leading spatial ones
// of a reduction) on workloads with padding and several stages.
void FuseLeading(const PrimFunc& f, size_t n) {
  Schedule sch(f);
  for (const auto* r : AllBlockRealizes(f)) {
    if (r->block->name == "root") continue;
    auto loops = sch.GetLoops(sch.GetBlock(r->block->name));
    std::vector<LoopRV> prefix(loops.begin(), loops.begin() + std::min(n, loops.size()));
    sch.Fuse(prefix);
  }
  testing::ExpectSound(f, sch);
}

TEST(Fuse, PreservesSemanticsOnWorkloads) {
  FuseLeading(BatchMatmulNKKM(2, 5, 3, 4), 3);
  FuseLeading(Conv2dNHWC(1, 5, 5, 2, 3, 3, 1, 1), 4);
  FuseLeading(SoftmaxMN(5, 7), 2);
  FuseLeading(NormBMN(2, 3, 3), 2);
}

TEST(Fuse, Refusals) {
  PrimFunc f = Matmul(4, 6, 8);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.Fuse({loops[0], loops[2]}),
                             "fuse: loops i and k are not consecutive: loop j lies between them");
  KILN_EXPECT_SCHEDULE_ERROR(sch.Fuse({loops[1], loops[0]}),
                             "fuse: loops j and i are not in order: i encloses j");
  KILN_EXPECT_SCHEDULE_ERROR(sch.Fuse({loops[0], loops[0]}), "fuse: loop i appears twice");
  KILN_EXPECT_SCHEDULE_ERROR(sch.Fuse({}), "fuse: no loops given");
  EXPECT_TRUE(StructuralEqual(f, sch.func()));

  PrimFunc branchy = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for i in range(4):
        for j in range(4):
            with T.block("A"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads()
                T.writes(A[vi, vj])
                A[vi, vj] = T.float32(0.0)
        for j in range(4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj]
)");
  Schedule s2(branchy);
  auto a = s2.GetLoops(s2.GetBlock("A"));
  auto b = s2.GetLoops(s2.GetBlock("B"));
  KILN_EXPECT_SCHEDULE_ERROR(
      s2.Fuse({a[0], a[1]}),
      "fuse: loops i and j are not perfectly nested: the body of loop i has other statements");
  KILN_EXPECT_SCHEDULE_ERROR(s2.Fuse({a[1], b[1]}),
                             "fuse: loops j and j are not consecutive: j is not nested inside j");
}

}  // namespace
}  // namespace kiln::ir
