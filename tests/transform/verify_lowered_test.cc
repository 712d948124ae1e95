// VerifyLowered finds each way a function departs from the lowered form, and
// Lower reports bad input as an IRError naming the pass and the block.
#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/text/parser.h"
#include "ir/transform/lower.h"
#include "ir/transform/verify_lowered.h"

namespace kiln::ir {
namespace {

bool HasIssue(const PrimFunc& f, const std::string& needle) {
  for (const auto& i : transform::VerifyLowered(f)) {
    if (i.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(VerifyLowered, BlockFormIsNotLowered) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj]
)");
  EXPECT_TRUE(HasIssue(f, "block 'B': has iteration variables"));
  EXPECT_TRUE(HasIssue(f, "block 'B': has reads or writes"));
  EXPECT_TRUE(HasIssue(f, "parameter buffer 'A' is not one-dimensional"));
  EXPECT_TRUE(HasIssue(f, "store to 'B' has 2 indices"));
  EXPECT_TRUE(transform::VerifyLowered(transform::Lower(f)).empty());
}

TEST(VerifyLowered, LoopKindViolations) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32")):
    for i in T.parallel(4):
        for j in T.parallel(4):
            for k in T.vectorized(4):
                if k < 2:
                    A[i * 16 + j * 4 + k] = T.float32(0.0)
)");
  EXPECT_TRUE(HasIssue(f, "loop j: parallel loop nested in a parallel loop"));
  EXPECT_TRUE(HasIssue(f, "an if inside a vectorized loop"));
  PrimFunc lowered = transform::Lower(f);
  EXPECT_TRUE(transform::VerifyLowered(lowered).empty());
}

TEST(VerifyLowered, ScopingViolations) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i in range(4):
        with T.block("s"):
            T.reads()
            T.writes()
            C = T.alloc_buffer((4,))
            C[i] = T.float32(1.0)
    with T.block("e"):
        T.reads()
        T.writes()
        A[0] = T.float32(0.0)
)");
  EXPECT_TRUE(HasIssue(f, "block 'e': allocates nothing"));
  EXPECT_FALSE(HasIssue(f, "block 's'"));
}

TEST(Lower, MalformedAlignmentRequestNamesTheBlock) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    C = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi])
            T.writes(C[vi])
            T.block_attr({"buffer_dim_align": "[[0, 0]]"})
            C[vi] = A[vi]
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            T.reads(C[vi])
            T.writes(B[vi])
            B[vi] = C[vi]
)");
  try {
    transform::Lower(f);
    ADD_FAILURE() << "expected an IRError";
  } catch (const IRError& e) {
    EXPECT_NE(std::string(e.what()).find("plan_buffer_allocation"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("block 'C'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::ir
