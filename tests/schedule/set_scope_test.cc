// set_scope: golden text, every use switched to the new buffer, equivalence
// on workloads with intermediate buffers, replay, refusals.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ir/functor.h"
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

const char* kTwoStage = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((4, 8))
    for i, j in T.grid(4, 8):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
    for i, j in T.grid(4, 8):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(B[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = B[v_i, v_j] + T.float32(1.0)
)";

const char* kTwoStageShared = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((4, 8), scope="shared")
    for i, j in T.grid(4, 8):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
    for i, j in T.grid(4, 8):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(B[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = B[v_i, v_j] + T.float32(1.0)
)";

// Collects every distinct buffer object named `name` in the function.
std::set<const BufferNode*> BuffersNamed(const PrimFunc& f, const std::string& name) {
  struct Collector : IRVisitor {
    std::string name;
    std::set<const BufferNode*> found;
    void Add(const Buffer& b) {
      if (b.name() == name) found.insert(b.get());
    }
    void VisitBufferLoad(const BufferLoadNode* op) override {
      Add(op->buffer);
      IRVisitor::VisitBufferLoad(op);
    }
    void VisitBufferStore(const BufferStoreNode* op) override {
      Add(op->buffer);
      IRVisitor::VisitBufferStore(op);
    }
    void VisitBlock(const BlockNode* op) override {
      for (const auto& r : op->reads) Add(r.buffer);
      for (const auto& w : op->writes) Add(w.buffer);
      for (const auto& a : op->alloc_buffers) Add(a);
      IRVisitor::VisitBlock(op);
    }
  } c;
  c.name = name;
  c.VisitStmt(f.body);
  return c.found;
}

TEST(SetScope, Golden) {
  PrimFunc f = ParseFunc(kTwoStage);
  ASSERT_EQ(ToText(f), kTwoStage);
  Schedule sch(f);
  sch.SetScope(sch.GetBlock("B"), 0, "shared");
  EXPECT_EQ(ToText(sch.func()), kTwoStageShared);
  EXPECT_TRUE(StructuralEqual(sch.func(), ParseFunc(kTwoStageShared)));
  EXPECT_TRUE(WellFormed(sch.func()));
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(ReplaysExactly(f, sch));
  // One buffer object everywhere, with the new scope.
  auto buffers = BuffersNamed(sch.func(), "B");
  ASSERT_EQ(buffers.size(), 1u);
  EXPECT_EQ((*buffers.begin())->scope, "shared");

  nlohmann::json j = sch.trace().AsJSON();
  EXPECT_EQ(j[0][1].dump(), R"(["SetScope",["b0"],[0,"shared"],[]])");
  EXPECT_NE(sch.trace().AsPython().find(
                "sch.set_scope(block=b0, buffer_index=0, storage_scope=\"shared\")"),
            std::string::npos)
      << sch.trace().AsPython();
}

TEST(SetScope, ScopesWithTags) {
  PrimFunc f = ParseFunc(kTwoStage);
  for (const char* scope : {"shared.dyn", "local", "warp", "wmma.accumulator", "global"}) {
    Schedule sch(f);
    sch.SetScope(sch.GetBlock("B"), 0, scope);
    EXPECT_EQ(BuffersNamed(sch.func(), "B").size(), 1u);
    EXPECT_EQ(sch.func().root_block().alloc_buffers[0].scope(), scope);
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
  }
}

TEST(SetScope, SameScopeIsANoOpEvenForParams) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  sch.SetScope(sch.GetBlock("C"), 0, "global");  // C is a parameter, already global
  EXPECT_TRUE(sch.func().body.same_as(f.body));
  EXPECT_EQ(sch.trace().size(), 2u);
  EXPECT_TRUE(ReplaysExactly(f, sch));
}

TEST(SetScope, Workloads) {
  {
    PrimFunc f = Conv2dNHWC(1, 6, 6, 4, 4, 3, 1, 1);
    Schedule sch(f);
    sch.SetScope(sch.GetBlock("PadInput"), 0, "local");
    EXPECT_EQ(BuffersNamed(sch.func(), "PadInput").size(), 1u);
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
  }
  {
    PrimFunc f = SoftmaxMN(4, 8);
    Schedule sch(f);
    sch.SetScope(sch.GetBlock("T_softmax_maxelem"), 0, "shared");
    sch.SetScope(sch.GetBlock("T_softmax_exp"), 0, "local");
    sch.SetScope(sch.GetBlock("T_softmax_expsum"), 0, "shared.dyn");
    EXPECT_EQ(BuffersNamed(sch.func(), "T_softmax_exp").size(), 1u);
    for (const Buffer& b : sch.func().root_block().alloc_buffers) EXPECT_NE(b.scope(), "global");
    EXPECT_TRUE(WellFormed(sch.func()));
    EXPECT_TRUE(SameResult(f, sch.func()));
    EXPECT_TRUE(ReplaysExactly(f, sch));
  }
}

TEST(SetScope, Refusals) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  BlockRV c = sch.GetBlock("C");
  KILN_EXPECT_SCHEDULE_ERROR(sch.SetScope(c, 0, "shared"),
                             "set_scope: buffer C written by block 'C' is not allocated by a block "
                             "(it is a function parameter)");
  KILN_EXPECT_SCHEDULE_ERROR(sch.SetScope(b, 0, "sharde"),
                             "set_scope: unknown storage scope \"sharde\" for buffer B");
  KILN_EXPECT_SCHEDULE_ERROR(sch.SetScope(b, 0, "shared."), "unknown storage scope \"shared.\"");
  KILN_EXPECT_SCHEDULE_ERROR(sch.SetScope(b, 0, ""), "unknown storage scope \"\"");
  KILN_EXPECT_SCHEDULE_ERROR(sch.SetScope(b, 1, "shared"),
                             "set_scope: buffer_index 1 is out of range: block 'B' writes 1 "
                             "buffer(s)");
  KILN_EXPECT_SCHEDULE_ERROR(sch.SetScope(b, -1, "shared"), "buffer_index -1 is out of range");
  EXPECT_TRUE(sch.func().body.same_as(f.body));
  EXPECT_EQ(sch.trace().size(), 2u);
}

TEST(SetScope, ReplayChecksShapes) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  Trace t = Trace::FromJSONString(
      R"([[["GetBlock",[],["B","main"],["b0"]],["SetScope",["b0"],["shared"],[]]],[]])");
  EXPECT_THROW(t.ApplyToSchedule(&sch, false), TraceError);
}

}  // namespace
}  // namespace kiln::ir
