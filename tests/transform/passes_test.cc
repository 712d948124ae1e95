// Golden before/after text for each lowering pass on small programs: a
// producer/consumer pair under a parallel loop (allocation placement,
// compaction, flattening), an imperfectly split reduction (init and
// predicate), and a program of loop kinds (unrolling, legalization). Every
// expected text was checked by hand against the pass's documented effect;
// each case also checks that the pass preserves what the program computes
// and that its output prints and parses back.
#include <gtest/gtest.h>

#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/transform/passes.h"
#include "lower_test_util.h"

namespace kiln::ir {
namespace {

using PassFn = PrimFunc (*)(const PrimFunc&);

void ExpectGolden(PassFn pass, const char* before, const char* after) {
  PrimFunc in = ParseFunc(before);
  PrimFunc out = pass(in);
  EXPECT_EQ(ToText(out), after);
  EXPECT_TRUE(testing::SameAsLowered(in, out));
  EXPECT_TRUE(testing::RoundTrips(out));
}

TEST(Passes, PlanBufferAllocationMovesTheCacheUnderTheLoop) {
  ExpectGolden(transform::PlanBufferAllocation, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((4, 8))
    for i in T.parallel(4):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1.0)
)", R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        with T.block("i_alloc"):
            T.reads()
            T.writes()
            B = T.alloc_buffer((4, 8))
            for j in range(8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for j in range(8):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
)");
}

// Neighbouring iterations share a halo: each writes B[2i : 2i + 4] and
// reads all of it (a convolution's padding computed under the parallel loop
// is the real case). No element is private to one iteration, but each
// iteration writes everything it reads before reading it, so per-iteration
// copies compute the same values: B moves under the loop.
TEST(Passes, PlanBufferAllocationMovesAHaloUnderTheLoop) {
  ExpectGolden(transform::PlanBufferAllocation, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((10,))
    for i in T.parallel(4):
        for j in range(4):
            with T.block("B"):
                vi = T.axis.spatial(10, i * 2 + j)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * T.float32(2.0)
        for j in range(2):
            with T.block("C"):
                vi = T.axis.spatial(8, i * 2 + j)
                T.reads(B[vi:vi + 3])
                T.writes(C[vi])
                C[vi] = B[vi] + B[vi + 2]
)",
               R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        with T.block("i_alloc"):
            T.reads()
            T.writes()
            B = T.alloc_buffer((10,))
            for j in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(10, i * 2 + j)
                    T.reads(A[vi])
                    T.writes(B[vi])
                    B[vi] = A[vi] * T.float32(2.0)
            for j in range(2):
                with T.block("C"):
                    vi = T.axis.spatial(8, i * 2 + j)
                    T.reads(B[vi:vi + 3])
                    T.writes(C[vi])
                    C[vi] = B[vi] + B[vi + 2]
)");
}

// Each iteration reads B[2i], which the previous iteration wrote (only the
// first iteration writes B[0] itself, under a predicate): a value flows
// between iterations, so B stays above the loop. Moving it would make the
// later iterations read unwritten (NaN-filled, in the interpreter) memory,
// which ExpectGolden's comparison of outputs would catch.
TEST(Passes, PlanBufferAllocationKeepsAValueFlowingBetweenIterations) {
  const char* program = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((9,), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((9,))
    for i in T.parallel(4):
        with T.block("B0"):
            vi = T.axis.remap("S", [i])
            T.where(i == 0)
            T.reads(A[0])
            T.writes(B[0])
            B[0] = A[0]
        for j in range(2):
            with T.block("B"):
                vi = T.axis.spatial(8, i * 2 + j)
                T.reads(A[vi + 1])
                T.writes(B[vi + 1])
                B[vi + 1] = A[vi + 1] * T.float32(2.0)
        for j in range(2):
            with T.block("C"):
                vi = T.axis.spatial(8, i * 2 + j)
                T.reads(B[vi])
                T.writes(C[vi])
                C[vi] = B[vi]
)";
  ExpectGolden(transform::PlanBufferAllocation, program, program);
}

TEST(Passes, BlocksToLoopsSubstitutesBindings) {
  ExpectGolden(transform::BlocksToLoops, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        with T.block("i_alloc"):
            T.reads()
            T.writes()
            B = T.alloc_buffer((4, 8))
            for j in range(8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for j in range(8):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
)", R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        with T.block("i_alloc"):
            T.reads()
            T.writes()
            B = T.alloc_buffer((4, 8))
            for j in range(8):
                B[i, j] = A[i, j] * T.float32(2.0)
            for j in range(8):
                C[i, j] = B[i, j] + T.float32(1.0)
)");
}

TEST(Passes, BlocksToLoopsGuardsInitAndPredicate) {
  ExpectGolden(transform::BlocksToLoops, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10, 6), "float32"), S: T.Buffer((10,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0, i_1, k in T.grid(3, 4, 6):
        with T.block("S"):
            vi = T.axis.spatial(10, i_0 * 4 + i_1)
            vk = T.axis.reduce(6, k)
            T.where(i_0 * 4 + i_1 < 10)
            T.reads(A[vi, vk])
            T.writes(S[vi])
            with T.init():
                S[vi] = T.float32(0.0)
            S[vi] = S[vi] + A[vi, vk]
)", R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10, 6), "float32"), S: T.Buffer((10,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0, i_1, k in T.grid(3, 4, 6):
        if i_0 * 4 + i_1 < 10:
            if k == 0:
                S[i_0 * 4 + i_1] = T.float32(0.0)
            S[i_0 * 4 + i_1] = S[i_0 * 4 + i_1] + A[i_0 * 4 + i_1, k]
)");
}

TEST(Passes, CompactBufferAllocationShrinksToOneRow) {
  ExpectGolden(transform::CompactBufferAllocation, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        with T.block("i_alloc"):
            T.reads()
            T.writes()
            B = T.alloc_buffer((4, 8))
            for j in range(8):
                B[i, j] = A[i, j] * T.float32(2.0)
            for j in range(8):
                C[i, j] = B[i, j] + T.float32(1.0)
)", R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        with T.block("i_alloc"):
            T.reads()
            T.writes()
            B = T.alloc_buffer((1, 8))
            for j in range(8):
                B[i - i, j] = A[i, j] * T.float32(2.0)
            for j in range(8):
                C[i, j] = B[i - i, j] + T.float32(1.0)
)");
}

TEST(Passes, FlattenBufferIsRowMajor) {
  ExpectGolden(transform::FlattenBuffer, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        with T.block("i_alloc"):
            T.reads()
            T.writes()
            B = T.alloc_buffer((1, 8))
            for j in range(8):
                B[i - i, j] = A[i, j] * T.float32(2.0)
            for j in range(8):
                C[i, j] = B[i - i, j] + T.float32(1.0)
)", R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32,), "float32"), C: T.Buffer((32,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        with T.block("i_alloc"):
            T.reads()
            T.writes()
            B = T.alloc_buffer((8,))
            for j in range(8):
                B[(i - i) * 8 + j] = A[i * 8 + j] * T.float32(2.0)
            for j in range(8):
                C[i * 8 + j] = B[(i - i) * 8 + j] + T.float32(1.0)
)");
}

TEST(Passes, FlattenBufferOfAReduction) {
  ExpectGolden(transform::FlattenBuffer, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10, 6), "float32"), S: T.Buffer((10,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0, i_1, k in T.grid(3, 4, 6):
        if i_0 * 4 + i_1 < 10:
            if k == 0:
                S[i_0 * 4 + i_1] = T.float32(0.0)
            S[i_0 * 4 + i_1] = S[i_0 * 4 + i_1] + A[i_0 * 4 + i_1, k]
)", R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((60,), "float32"), S: T.Buffer((10,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0, i_1, k in T.grid(3, 4, 6):
        if i_0 * 4 + i_1 < 10:
            if k == 0:
                S[i_0 * 4 + i_1] = T.float32(0.0)
            S[i_0 * 4 + i_1] = S[i_0 * 4 + i_1] + A[(i_0 * 4 + i_1) * 6 + k]
)");
}

TEST(Passes, SimplifyFoldsShiftedIndices) {
  ExpectGolden(transform::Simplify, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32,), "float32"), C: T.Buffer((32,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        with T.block("i_alloc"):
            T.reads()
            T.writes()
            B = T.alloc_buffer((8,))
            for j in range(8):
                B[(i - i) * 8 + j] = A[i * 8 + j] * T.float32(2.0)
            for j in range(8):
                C[i * 8 + j] = B[(i - i) * 8 + j] + T.float32(1.0)
)", R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32,), "float32"), C: T.Buffer((32,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        with T.block("i_alloc"):
            T.reads()
            T.writes()
            B = T.alloc_buffer((8,))
            for j in range(8):
                B[j] = A[i * 8 + j] * T.float32(2.0)
            for j in range(8):
                C[i * 8 + j] = B[j] + T.float32(1.0)
)");
}

TEST(Passes, SimplifyFoldsFlattenedIndices) {
  ExpectGolden(transform::Simplify, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((60,), "float32"), S: T.Buffer((10,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0, i_1, k in T.grid(3, 4, 6):
        if i_0 * 4 + i_1 < 10:
            if k == 0:
                S[i_0 * 4 + i_1] = T.float32(0.0)
            S[i_0 * 4 + i_1] = S[i_0 * 4 + i_1] + A[(i_0 * 4 + i_1) * 6 + k]
)", R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((60,), "float32"), S: T.Buffer((10,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0, i_1, k in T.grid(3, 4, 6):
        if i_0 * 4 + i_1 < 10:
            if k == 0:
                S[i_0 * 4 + i_1] = T.float32(0.0)
            S[i_0 * 4 + i_1] = S[i_0 * 4 + i_1] + A[i_0 * 24 + i_1 * 6 + k]
)");
}

// An integer expression is simplified as a whole, but the indices of an
// integer load inside it are simplified too (the analyzer treats the load
// as an atom), as are those of a load under a cast.
TEST(Passes, SimplifyFoldsIndicesOfIntegerLoadsInsideArithmetic) {
  ExpectGolden(transform::Simplify, R"(# from tvm.script import tir as T

@T.prim_func
def main(I: T.Buffer((32,), "int32"), A: T.Buffer((32,), "float32"), C: T.Buffer((32,), "int32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j in T.grid(4, 8):
        C[i * 8 + j] = I[(i - i) * 8 + j] * 2 + (i - i) + T.Cast("int32", A[i * 8 + j + 0])
)", R"(# from tvm.script import tir as T

@T.prim_func
def main(I: T.Buffer((32,), "int32"), A: T.Buffer((32,), "float32"), C: T.Buffer((32,), "int32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j in T.grid(4, 8):
        C[i * 8 + j] = T.Cast("int32", A[i * 8 + j]) + I[j] * 2
)");
}

TEST(Passes, UnrollLoopsExplicitAndAuto) {
  ExpectGolden(transform::UnrollLoops, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        for j in T.parallel(2):
            for k in T.vectorized(8):
                B[i * 16 + j * 8 + k] = A[i * 16 + j * 8 + k] + T.float32(1.0)
    for u in T.unroll(2):
        for v in T.vectorized(4):
            if v < 2:
                B[u * 4 + v] = A[u * 4 + v] * T.float32(2.0)
    for a in T.serial(2, annotations={"pragma_auto_unroll_max_step": 8, "pragma_unroll_explicit": 1}):
        for b, c in T.grid(4, 2):
            B[a * 8 + b * 2 + c] = B[a * 8 + b * 2 + c] + T.float32(3.0)
)", R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        for j in T.parallel(2):
            for k in T.vectorized(8):
                B[i * 16 + j * 8 + k] = A[i * 16 + j * 8 + k] + T.float32(1.0)
    for v in T.vectorized(4):
        if v < 2:
            B[0 * 4 + v] = A[0 * 4 + v] * T.float32(2.0)
    for v in T.vectorized(4):
        if v < 2:
            B[1 * 4 + v] = A[1 * 4 + v] * T.float32(2.0)
    for a in range(2):
        B[a * 8 + 0 * 2 + 0] = B[a * 8 + 0 * 2 + 0] + T.float32(3.0)
        B[a * 8 + 0 * 2 + 1] = B[a * 8 + 0 * 2 + 1] + T.float32(3.0)
        B[a * 8 + 1 * 2 + 0] = B[a * 8 + 1 * 2 + 0] + T.float32(3.0)
        B[a * 8 + 1 * 2 + 1] = B[a * 8 + 1 * 2 + 1] + T.float32(3.0)
        B[a * 8 + 2 * 2 + 0] = B[a * 8 + 2 * 2 + 0] + T.float32(3.0)
        B[a * 8 + 2 * 2 + 1] = B[a * 8 + 2 * 2 + 1] + T.float32(3.0)
        B[a * 8 + 3 * 2 + 0] = B[a * 8 + 3 * 2 + 0] + T.float32(3.0)
        B[a * 8 + 3 * 2 + 1] = B[a * 8 + 3 * 2 + 1] + T.float32(3.0)
)");
}

// The auto-unroll step count is the number of stores executed, a
// vectorized loop's once: k's body (two vector updates of 8 lanes) is 2
// steps, so k (8 steps) fits in 8 and is replicated; i (32) is not.
TEST(Passes, UnrollLoopsCountsAVectorStoreAsOneStep) {
  ExpectGolden(transform::UnrollLoops, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((16,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.serial(4, annotations={"pragma_auto_unroll_max_step": 8, "pragma_unroll_explicit": 1}):
        for k in range(4):
            for v in T.vectorized(8):
                B[v] = B[v] + A[k * 16 + v]
            for v in T.vectorized(8):
                B[v + 8] = B[v + 8] + A[k * 16 + v + 8]
)",
               R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((16,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(4):
        for v in T.vectorized(8):
            B[v] = B[v] + A[0 * 16 + v]
        for v in T.vectorized(8):
            B[v + 8] = B[v + 8] + A[0 * 16 + v + 8]
        for v in T.vectorized(8):
            B[v] = B[v] + A[1 * 16 + v]
        for v in T.vectorized(8):
            B[v + 8] = B[v + 8] + A[1 * 16 + v + 8]
        for v in T.vectorized(8):
            B[v] = B[v] + A[2 * 16 + v]
        for v in T.vectorized(8):
            B[v + 8] = B[v + 8] + A[2 * 16 + v + 8]
        for v in T.vectorized(8):
            B[v] = B[v] + A[3 * 16 + v]
        for v in T.vectorized(8):
            B[v + 8] = B[v + 8] + A[3 * 16 + v + 8]
)");
}

TEST(Passes, LegalizeLoopKindsDemotes) {
  ExpectGolden(transform::LegalizeLoopKinds, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        for j in T.parallel(2):
            for k in T.vectorized(8):
                B[i * 16 + j * 8 + k] = A[i * 16 + j * 8 + k] + T.float32(1.0)
    for v in T.vectorized(4):
        if v < 2:
            B[0 * 4 + v] = A[0 * 4 + v] * T.float32(2.0)
    for v in T.vectorized(4):
        if v < 2:
            B[1 * 4 + v] = A[1 * 4 + v] * T.float32(2.0)
    for a in range(2):
        B[a * 8 + 0 * 2 + 0] = B[a * 8 + 0 * 2 + 0] + T.float32(3.0)
        B[a * 8 + 0 * 2 + 1] = B[a * 8 + 0 * 2 + 1] + T.float32(3.0)
        B[a * 8 + 1 * 2 + 0] = B[a * 8 + 1 * 2 + 0] + T.float32(3.0)
        B[a * 8 + 1 * 2 + 1] = B[a * 8 + 1 * 2 + 1] + T.float32(3.0)
        B[a * 8 + 2 * 2 + 0] = B[a * 8 + 2 * 2 + 0] + T.float32(3.0)
        B[a * 8 + 2 * 2 + 1] = B[a * 8 + 2 * 2 + 1] + T.float32(3.0)
        B[a * 8 + 3 * 2 + 0] = B[a * 8 + 3 * 2 + 0] + T.float32(3.0)
        B[a * 8 + 3 * 2 + 1] = B[a * 8 + 3 * 2 + 1] + T.float32(3.0)
)", R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.parallel(4):
        for j in range(2):
            for k in T.vectorized(8):
                B[i * 16 + j * 8 + k] = A[i * 16 + j * 8 + k] + T.float32(1.0)
    for v in range(4):
        if v < 2:
            B[0 * 4 + v] = A[0 * 4 + v] * T.float32(2.0)
    for v in range(4):
        if v < 2:
            B[1 * 4 + v] = A[1 * 4 + v] * T.float32(2.0)
    for a in range(2):
        B[a * 8 + 0 * 2 + 0] = B[a * 8 + 0 * 2 + 0] + T.float32(3.0)
        B[a * 8 + 0 * 2 + 1] = B[a * 8 + 0 * 2 + 1] + T.float32(3.0)
        B[a * 8 + 1 * 2 + 0] = B[a * 8 + 1 * 2 + 0] + T.float32(3.0)
        B[a * 8 + 1 * 2 + 1] = B[a * 8 + 1 * 2 + 1] + T.float32(3.0)
        B[a * 8 + 2 * 2 + 0] = B[a * 8 + 2 * 2 + 0] + T.float32(3.0)
        B[a * 8 + 2 * 2 + 1] = B[a * 8 + 2 * 2 + 1] + T.float32(3.0)
        B[a * 8 + 3 * 2 + 0] = B[a * 8 + 3 * 2 + 0] + T.float32(3.0)
        B[a * 8 + 3 * 2 + 1] = B[a * 8 + 3 * 2 + 1] + T.float32(3.0)
)");
}

// A buffer that stays allocated above a parallel loop (the planner could not
// show that per-iteration copies are equivalent: every iteration writes the
// same elements) would be shared by all threads: the loop runs serially.
// A parallel loop that writes only its own allocations and parameters stays.
TEST(Passes, LegalizeLoopKindsSerializesParallelLoopsWritingSharedBuffers) {
  ExpectGolden(transform::LegalizeLoopKinds, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32,), "float32"), C: T.Buffer((32,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((8,))
    for i in T.parallel(4):
        for j in range(8):
            B[j] = A[i * 8 + j] * T.float32(2.0)
        for j in range(8):
            C[i * 8 + j] = B[j] + T.float32(1.0)
    for i in T.parallel(4):
        with T.block("i_alloc"):
            T.reads()
            T.writes()
            D = T.alloc_buffer((8,))
            for j in range(8):
                D[j] = A[i * 8 + j]
            for j in range(8):
                C[i * 8 + j] = D[j] + B[j]
)", R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32,), "float32"), C: T.Buffer((32,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((8,))
    for i in range(4):
        for j in range(8):
            B[j] = A[i * 8 + j] * T.float32(2.0)
        for j in range(8):
            C[i * 8 + j] = B[j] + T.float32(1.0)
    for i in T.parallel(4):
        with T.block("i_alloc"):
            T.reads()
            T.writes()
            D = T.alloc_buffer((8,))
            for j in range(8):
                D[j] = A[i * 8 + j]
            for j in range(8):
                C[i * 8 + j] = D[j] + B[j]
)");
}

}  // namespace
}  // namespace kiln::ir
