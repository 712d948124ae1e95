// add_unit_loop: golden text, semantics, refusals, trace form.
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

TEST(AddUnitLoop, AboveABlockAndAboveALoop) {
  PrimFunc f = Matmul(2, 3, 4);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  LoopRV u = sch.AddUnitLoop(c);
  EXPECT_EQ(sch.NameOf(u), "u");
  auto loops = sch.GetLoops(c);
  ASSERT_EQ(loops.size(), 4u);
  sch.AddUnitLoop(loops[0]);
  EXPECT_EQ(Body(sch.func()), R"(    for u, i, j, k, u_1 in T.grid(1, 2, 3, 4, 1):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  testing::ExpectSound(f, sch);
  std::string py = sch.trace().AsPython();
  EXPECT_NE(py.find("l1 = sch.add_unit_loop(block_or_loop=b0)"), std::string::npos) << py;
  nlohmann::json j = sch.trace().AsJSON();
  EXPECT_EQ(j[0][1].dump(), R"(["AddUnitLoop",["b0"],[],["l1"]])") << j.dump();
}

TEST(AddUnitLoop, LooplessBlockThenSplitAndFuse) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1,), "float32"), B: T.Buffer((1,), "float32")):
    with T.block("B"):
        T.reads(A[0])
        T.writes(B[0])
        B[0] = A[0] + T.float32(1.0)
)");
  Schedule sch(f);
  LoopRV u = sch.AddUnitLoop(sch.GetBlock("B"));
  std::string text = ToText(sch.func());
  EXPECT_NE(text.find(R"(    for u in range(1):
        with T.block("B"):)"),
            std::string::npos)
      << text;
  sch.Fuse({u});
  testing::ExpectSound(f, sch);
}

TEST(AddUnitLoop, PreservesSemanticsOnWorkloads) {
  for (const PrimFunc& f : {Conv2dNHWC(1, 4, 4, 2, 2, 3, 1, 1), SoftmaxMN(3, 5)}) {
    Schedule sch(f);
    for (const auto* r : AllBlockRealizes(f)) {
      if (r->block->name == "root") continue;
      BlockRV b = sch.GetBlock(r->block->name);
      sch.AddUnitLoop(b);
      sch.AddUnitLoop(sch.GetLoops(b)[1]);
    }
    testing::ExpectSound(f, sch);
  }
}

TEST(AddUnitLoop, Refusals) {
  PrimFunc f = Matmul(2, 3, 4);
  Schedule sch(f);
  KILN_EXPECT_SCHEDULE_ERROR(sch.AddUnitLoop(sch.GetBlock("root")),
                             "add_unit_loop: block root is the root block of the function");
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Fuse({loops[0], loops[1]});
  KILN_EXPECT_SCHEDULE_ERROR(sch.AddUnitLoop(loops[0]), "loop i no longer exists");
  KILN_EXPECT_SCHEDULE_ERROR(sch.AddUnitLoop(LoopRV{999}), "unknown loop handle");
}

}  // namespace
}  // namespace kiln::ir
