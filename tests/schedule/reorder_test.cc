// reorder: golden text, semantics on suite workloads, refusals, trace form.
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

// Unlisted loops between the listed ones keep their places.
TEST(Reorder, ListedPositionsOnly) {
  PrimFunc f = Matmul(4, 6, 8);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Reorder({loops[2], loops[0]});
  EXPECT_EQ(Body(sch.func()), R"(    for k, j, i in T.grid(8, 6, 4):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  testing::ExpectSound(f, sch);
  EXPECT_NE(sch.trace().AsPython().find("sch.reorder(l3, l1)"), std::string::npos)
      << sch.trace().AsPython();
  nlohmann::json j = sch.trace().AsJSON();
  EXPECT_EQ(j[0].back().dump(), R"(["Reorder",["l3","l1"],[],[]])") << j.dump();
}

TEST(Reorder, TiledMatmul) {
  PrimFunc f = Matmul(6, 8, 8);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  auto i = sch.Split(loops[0], {std::monostate{}, int64_t{4}});
  auto j = sch.Split(loops[1], {std::monostate{}, int64_t{4}});
  sch.Reorder({i[0], j[0], loops[2], i[1], j[1]});
  EXPECT_EQ(Body(sch.func()), R"(    for i_0, j_0, k, i_1, j_1 in T.grid(2, 2, 8, 4, 4):
        with T.block("C"):
            v_i = T.axis.spatial(6, i_0 * 4 + i_1)
            v_j = T.axis.spatial(8, j_0 * 4 + j_1)
            v_k = T.axis.reduce(8, k)
            T.where(i_0 * 4 + i_1 < 6)
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  testing::ExpectSound(f, sch);
}

// Reductions moved outermost, on workloads with padding and several stages.
void ReductionsOutermost(const PrimFunc& f) {
  Schedule sch(f);
  for (const auto* r : AllBlockRealizes(f)) {
    if (r->block->name == "root") continue;
    auto loops = sch.GetLoops(sch.GetBlock(r->block->name));
    std::vector<LoopRV> reversed(loops.rbegin(), loops.rend());
    sch.Reorder(reversed);
  }
  testing::ExpectSound(f, sch);
}

TEST(Reorder, PreservesSemanticsOnWorkloads) {
  ReductionsOutermost(BatchMatmulNKKM(2, 5, 3, 4));
  ReductionsOutermost(Conv2dNHWC(1, 5, 5, 2, 3, 3, 1, 1));
  ReductionsOutermost(SoftmaxMN(5, 7));
  ReductionsOutermost(NormBMN(2, 3, 3));
}

TEST(Reorder, Refusals) {
  PrimFunc f = SoftmaxMN(4, 4);
  Schedule sch(f);
  auto a = sch.GetLoops(sch.GetBlock("T_softmax_maxelem"));
  auto b = sch.GetLoops(sch.GetBlock("T_softmax_exp"));
  KILN_EXPECT_SCHEDULE_ERROR(sch.Reorder({a[1], a[0], a[1]}),
                             "reorder: loop k appears twice in the list");
  KILN_EXPECT_SCHEDULE_ERROR(sch.Reorder({a[0], b[1]}),
                             "reorder: loops i0 and i1 are not in one chain of nested loops");
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
  auto la = s2.GetLoops(s2.GetBlock("A"));
  KILN_EXPECT_SCHEDULE_ERROR(s2.Reorder({la[1], la[0]}),
                             "reorder: loops i and j are not in one chain of nested loops: the "
                             "body of loop i has several statements");

  PrimFunc nonaffine = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(C: T.Buffer((16,), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi = T.axis.spatial(16, i * j)
            T.reads()
            T.writes(C[vi])
            C[vi] = T.float32(0.0)
)");
  Schedule s3(nonaffine);
  auto lc = s3.GetLoops(s3.GetBlock("C"));
  KILN_EXPECT_SCHEDULE_ERROR(s3.Reorder({lc[1], lc[0]}),
                             "reorder: block C under the loops has a non-affine binding");

  PrimFunc scan = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(C: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            vj = T.axis.scan(4, j)
            T.reads()
            T.writes(C[vi, vj])
            C[vi, vj] = T.float32(0.0)
)");
  Schedule s4(scan);
  auto ls = s4.GetLoops(s4.GetBlock("C"));
  KILN_EXPECT_SCHEDULE_ERROR(s4.Reorder({ls[1], ls[0]}),
                             "reorder: block C under the loops has iter var vj of type ordered");
}

}  // namespace
}  // namespace kiln::ir
