#include "ir/schedule/analysis.h"

#include <gtest/gtest.h>

#include "ir/text/parser.h"
#include "ir/workloads/suite.h"

namespace kiln::ir {
namespace {

StmtPath BlockPath(const PrimFunc& f, const std::string& name) {
  auto p = FindBlockPath(f, name);
  EXPECT_TRUE(p.has_value()) << name;
  return *p;
}

const BlockRealizeNode* Realize(const PrimFunc& f, const std::string& name) {
  return BlockPath(f, name).back().as<BlockRealizeNode>();
}

std::string Names(const std::vector<const BlockRealizeNode*>& v) {
  std::string s;
  for (const auto* r : v) s += (s.empty() ? "" : ",") + r->block->name;
  return s;
}

TEST(Analysis, SoftmaxBlockKinds) {
  PrimFunc f = SoftmaxMN(8, 8);
  std::string why;
  EXPECT_TRUE(IsReductionBlock(BlockPath(f, "T_softmax_maxelem"), &why)) << why;
  EXPECT_TRUE(IsReductionBlock(BlockPath(f, "T_softmax_expsum"), &why)) << why;
  EXPECT_TRUE(IsCompleteBlock(BlockPath(f, "T_softmax_exp"), &why)) << why;
  EXPECT_TRUE(IsCompleteBlock(BlockPath(f, "T_softmax_norm"), &why)) << why;

  EXPECT_FALSE(IsCompleteBlock(BlockPath(f, "T_softmax_maxelem"), &why));
  EXPECT_NE(why.find("block T_softmax_maxelem is not complete"), std::string::npos) << why;
  EXPECT_FALSE(IsReductionBlock(BlockPath(f, "T_softmax_exp"), &why));
  EXPECT_NE(why.find("T_softmax_exp is not a reduction block: it has no init"), std::string::npos)
      << why;

  for (const char* name :
       {"T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum", "T_softmax_norm"}) {
    EXPECT_TRUE(IsAffineBinding(BlockPath(f, name), &why)) << why;
    EXPECT_TRUE(IsTrivialBinding(BlockPath(f, name), &why)) << why;
  }
  EXPECT_TRUE(IsDataParallelBlock(*Realize(f, "T_softmax_exp")->block.get()));
  EXPECT_FALSE(IsDataParallelBlock(*Realize(f, "T_softmax_expsum")->block.get(), &why));
  EXPECT_NE(why.find("iter var v_k"), std::string::npos) << why;
}

TEST(Analysis, SoftmaxProducersConsumersAndOutputs) {
  PrimFunc f = SoftmaxMN(8, 8);
  const Stmt& root = f.body;
  const BlockNode* exp = Realize(f, "T_softmax_exp")->block.get();
  EXPECT_EQ(Names(ProducersOf(root, exp)), "T_softmax_maxelem");
  EXPECT_EQ(Names(ConsumersOf(root, exp)), "T_softmax_expsum,T_softmax_norm");
  EXPECT_EQ(Names(BlocksInScope(root)),
            "T_softmax_maxelem,T_softmax_exp,T_softmax_expsum,T_softmax_norm");
  EXPECT_EQ(BlockPathsInScope(root).size(), 4u);
  EXPECT_FALSE(IsOutputBlock(root, exp));
  EXPECT_TRUE(IsOutputBlock(root, Realize(f, "T_softmax_norm")->block.get()));
  EXPECT_EQ(ScopeBlockOf(BlockPath(f, "T_softmax_exp")), root.as<BlockRealizeNode>());
  EXPECT_EQ(ScopeBlockOf({root}), nullptr);
  EXPECT_EQ(ScopePathOf(BlockPath(f, "T_softmax_exp")).size(), 1u);
  std::string why;
  EXPECT_TRUE(IsStagePipeline({root}, &why)) << why;
}

TEST(Analysis, SuiteWorkloadsAreStagePipelines) {
  for (const PrimFunc& f : {BatchMatmulNKKM(1, 8, 8, 8), Conv2dNHWC(1, 8, 8, 4, 8, 3, 1, 1),
                            NormBMN(1, 8, 8), MatmulRelu(8, 8, 8)}) {
    std::string why;
    EXPECT_TRUE(IsStagePipeline({f.body}, &why)) << f.name << ": " << why;
    for (const auto* r : BlocksInScope(f.body)) {
      StmtPath p = BlockPath(f, r->block->name);
      EXPECT_TRUE(IsAffineBinding(p, &why)) << why;
      EXPECT_TRUE(IsCompleteBlock(p) || IsReductionBlock(p)) << r->block->name;
    }
  }
}

TEST(Analysis, ConvPaddingIsCoveredAndComplete) {
  PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 4, 3, 1, 1);
  std::string why;
  EXPECT_TRUE(IsCompleteBlock(BlockPath(f, "PadInput"), &why)) << why;
  EXPECT_TRUE(IsReductionBlock(BlockPath(f, "conv2d_nhwc"), &why)) << why;
  EXPECT_TRUE(IsRegionCovered({f.body}, Realize(f, "conv2d_nhwc"), &why)) << why;
}

// A split-and-predicated binding is affine; a binding that multiplies two
// loops, or that strides a loop, is not.
TEST(Analysis, AffineBindings) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32"), C: T.Buffer((16,), "float32"), D: T.Buffer((20,), "float32")):
    for i_0, i_1 in T.grid(4, 3):
        with T.block("B"):
            vi = T.axis.spatial(10, i_0 * 3 + i_1)
            T.where(i_0 * 3 + i_1 < 10)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi]
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi = T.axis.spatial(16, i * j)
            T.reads()
            T.writes(C[vi])
            C[vi] = T.float32(0.0)
    for i in range(10):
        with T.block("D"):
            vi = T.axis.spatial(20, i * 2)
            T.reads()
            T.writes(D[vi])
            D[vi] = T.float32(0.0)
)");
  std::string why;
  EXPECT_TRUE(IsAffineBinding(BlockPath(f, "B"), &why)) << why;
  EXPECT_FALSE(IsTrivialBinding(BlockPath(f, "B"), &why));
  EXPECT_NE(why.find("block B has 1 iter vars under 2 loops"), std::string::npos) << why;
  EXPECT_FALSE(IsAffineBinding(BlockPath(f, "C"), &why));
  EXPECT_NE(why.find("block C has a non-affine binding"), std::string::npos) << why;
  EXPECT_FALSE(IsAffineBinding(BlockPath(f, "D"), &why));
  EXPECT_NE(why.find("block D has a non-affine binding"), std::string::npos) << why;
}

constexpr const char* kTwoWriters = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(4):
        with T.block("B0"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.reads(B[vi])
            T.writes(C[vi])
            C[vi] = B[vi]
    for i in range(4):
        with T.block("B1"):
            vi = T.axis.spatial(8, i + 4)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi]
    for i in range(8):
        with T.block("acc"):
            vi = T.axis.spatial(8, i)
            T.reads(C[vi], A[vi])
            T.writes(C[vi])
            C[vi] = C[vi] + A[vi]
)";

// Two producers that each write half of a buffer together cover a consumer
// that reads all of it.
TEST(Analysis, RegionCoverUnitesProducers) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(4):
        with T.block("B0"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi]
    for i in range(4):
        with T.block("B1"):
            vi = T.axis.spatial(8, i + 4)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.reads(B[vi])
            T.writes(C[vi])
            C[vi] = B[vi]
)");
  std::string why;
  EXPECT_TRUE(IsRegionCovered({f.body}, Realize(f, "C"), &why)) << why;
}

TEST(Analysis, DominanceAndRegionCoverRefusals) {
  PrimFunc f = ParseFunc(kTwoWriters);
  std::string why;
  EXPECT_FALSE(IsCompleteBlock(BlockPath(f, "B0"), &why));
  EXPECT_NE(why.find("block B0 is not the only writer of buffer B"), std::string::npos) << why;
  EXPECT_FALSE(IsDominantBlock(f.body, *Realize(f, "C")->block.get(), &why));
  EXPECT_NE(why.find("(block acc writes it too)"), std::string::npos) << why;
  EXPECT_FALSE(IsCompleteBlock(BlockPath(f, "acc"), &why));
  EXPECT_NE(why.find("block acc is not the only writer of buffer C"), std::string::npos) << why;
  // C reads B[0:8] but only B[0:4] was written before it.
  EXPECT_FALSE(IsRegionCovered({f.body}, Realize(f, "C"), &why));
  EXPECT_NE(why.find("buffer B that block C reads"), std::string::npos) << why;
  EXPECT_FALSE(IsStagePipeline({f.body}, &why));
  EXPECT_EQ(Names(WritersOf(f.body, Realize(f, "C")->block->reads[0].buffer.get())), "B0,B1");
  EXPECT_EQ(Names(ReadersOf(f.body, Realize(f, "C")->block->writes[0].buffer.get())), "acc");
}

// Producer and consumer share loop i (as after compute_at): the cover check
// works at their lowest common ancestor, per iteration of i.
std::string SharedLoop(const std::string& offset) {
  return R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((9,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((9,))
    for i in range(4):
        for j in range(2):
            with T.block("B"):
                vi = T.axis.spatial(9, i * 2 + j)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi]
        for j in range(2):
            with T.block("C"):
                vi = T.axis.spatial(8, i * 2 + j)
                T.reads(B[vi + )" +
         offset + R"(])
                T.writes(C[vi])
                C[vi] = B[vi + )" +
         offset + R"(]
)";
}

TEST(Analysis, RegionCoverAtTheLowestCommonAncestor) {
  PrimFunc ok = ParseFunc(SharedLoop("0"));
  std::string why;
  EXPECT_TRUE(IsRegionCovered({ok.body}, Realize(ok, "C"), &why)) << why;
  EXPECT_TRUE(IsStagePipeline({ok.body}, &why)) << why;
  PrimFunc shifted = ParseFunc(SharedLoop("1"));
  EXPECT_FALSE(IsRegionCovered({shifted.body}, Realize(shifted, "C"), &why));
  EXPECT_NE(why.find("buffer B that block C reads"), std::string::npos) << why;
}

TEST(Analysis, InPlaceBlockIsNotComplete) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("inc"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi])
            T.writes(A[vi])
            A[vi] = A[vi] + T.float32(1.0)
)");
  std::string why;
  EXPECT_FALSE(IsCompleteBlock(BlockPath(f, "inc"), &why));
  EXPECT_NE(why.find("block inc is not complete: it reads buffer A, which it writes"),
            std::string::npos)
      << why;
  EXPECT_TRUE(IsOutputBlock(f.body, Realize(f, "inc")->block.get()));
}

TEST(Analysis, ReductionIndexingOutputIsRefused) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vk = T.axis.reduce(8, i)
            T.reads(A[vk])
            T.writes(B[vk])
            with T.init():
                B[vk] = T.float32(0.0)
            B[vk] = B[vk] + A[vk]
)");
  std::string why;
  EXPECT_FALSE(IsReductionBlock(BlockPath(f, "B"), &why));
  EXPECT_NE(why.find("the reduction iter vars index the output buffer B"), std::string::npos)
      << why;
}

TEST(Analysis, LoopChains) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

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
  StmtPath a = BlockPath(f, "A");
  std::vector<const ForNode*> loops = LoopsAbove(a);
  ASSERT_EQ(loops.size(), 2u);
  std::string why;
  EXPECT_FALSE(IsPerfectlyNested(loops, &why));
  EXPECT_NE(why.find("loop j is not the only statement in the body of loop i"), std::string::npos)
      << why;
  EXPECT_TRUE(IsPerfectlyNested({loops[1]}, &why));
  EXPECT_FALSE(IsSingleChain(a[1], &why));
  EXPECT_NE(why.find("the body of loop i has several statements"), std::string::npos) << why;
  StmtPath j = *FindLoopPath(f, loops[1]->loop_var.get());
  // A loop whose body is a block has that block as its child.
  EXPECT_EQ(Names(BlocksInScope(j.back())), "A");
  EXPECT_EQ(Names(BlocksInScope(a[1])), "A,B");
  EXPECT_TRUE(IsSingleChain(j.back(), &why)) << why;
  EXPECT_TRUE(IsAncestorLoop(loops[0], a));
  EXPECT_TRUE(IsAncestorLoop(loops[0], j));
  EXPECT_FALSE(IsAncestorLoop(loops[1], j));
  auto dom = LoopDomainOf(a);
  ASSERT_EQ(dom.size(), 2u);
  EXPECT_EQ(dom[0].first.get(), loops[0]->loop_var.get());
}

}  // namespace
}  // namespace kiln::ir
