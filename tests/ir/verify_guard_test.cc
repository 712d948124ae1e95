// VerifyFunc on guarded accesses: if-then-else guards, guards on sums and
// block predicates (alone, or coupling several loops) bound the accesses
// they protect, and a guard too loose is reported.
#include "ir/verify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/op.h"
#include "ir/text/parser.h"
#include "tests/ir/verify_test_util.h"

namespace kiln::ir {
namespace {

using namespace verify_test;  // NOLINT(build/namespaces): the shared builders
using ::testing::HasSubstr;

// ---- guarded accesses ---------------------------------------------------------------------------

// P[vi] = value(vi) over 70 elements, padding A (64 elements) by 3 on each
// side, as te.create_prim_func writes pad blocks: the read region is the
// unguarded one, A[vi - 3], past both ends of A.
struct Pad {
  Buffer A{"A", f32, {IntImm(64)}};
  Buffer P{"P", f32, {IntImm(70)}};
  Var i{"i"};
  Var vi{"vi"};
  Range read = Pt(vi - 3);

  Expr Load(int64_t shift = 3) { return BufferLoad(A, {vi - shift}); }
  Expr InRange() { return IntImm(3) <= vi && vi < 67; }

  PrimFunc Build(const std::function<Expr(Pad&)>& value) {
    return BuildStmt([&](Pad& p) { return BufferStore(p.P, value(p), {p.vi}); });
  }
  PrimFunc BuildStmt(const std::function<Stmt(Pad&)>& body) {
    BlockNode blk;
    blk.name = "P";
    blk.iter_vars = {IV(vi, 70)};
    blk.reads = {Region(A, {read})};
    blk.writes = {Region(P, {Pt(vi)})};
    blk.body = body(*this);
    Stmt realize = BlockRealize({i}, BoolImm(true), MakeBlock(std::move(blk)));
    return Func({A, P}, For(i, IntImm(0), IntImm(70), ForKind::kSerial, realize));
  }
};

TEST(VerifyGuardTest, IfThenElseGuardBoundsTheLoad) {
  ExpectClean(Pad().Build([](Pad& p) { return IfThenElse(p.InRange(), p.Load(), FloatImm(0)); }));
}

TEST(VerifyGuardTest, FalseBranchUsesTheNegatedGuard) {
  ExpectClean(Pad().Build(
      [](Pad& p) { return IfThenElse(p.vi < 3 || IntImm(67) <= p.vi, FloatImm(0), p.Load()); }));
  ExpectClean(Pad().Build([](Pad& p) { return IfThenElse(!p.InRange(), FloatImm(0), p.Load()); }));
}

TEST(VerifyGuardTest, GuardOnShiftedVariable) {
  ExpectClean(Pad().Build(
      [](Pad& p) { return IfThenElse(p.vi - 3 >= 0 && p.vi - 3 < 64, p.Load(), FloatImm(0)); }));
}

TEST(VerifyGuardTest, IfStatementGuardsBothBranches) {
  ExpectClean(Pad().BuildStmt([](Pad& p) {
    return IfThenElseStmt(p.InRange(), BufferStore(p.P, p.Load(), {p.vi}),
                          BufferStore(p.P, FloatImm(0), {p.vi}));
  }));
  ExpectClean(Pad().BuildStmt([](Pad& p) {
    return IfThenElseStmt(!p.InRange(), BufferStore(p.P, FloatImm(0), {p.vi}),
                          BufferStore(p.P, p.Load(), {p.vi}));
  }));
  // The guard is gone after the if.
  Pad p;
  ExpectOne(p.BuildStmt([](Pad& p) {
    return SeqStmt({IfThenElseStmt(p.InRange(), BufferStore(p.P, p.Load(), {p.vi})),
                    BufferStore(p.P, p.Load(), {p.vi})});
  }),
            "block 'P'",
            "load from buffer 'A' reaches A[-3:67] in dimension 0, outside the buffer's extent 64 "
            "(in the value stored to buffer 'P')");
}

TEST(VerifyGuardTest, UnguardedLoadIsReported) {
  ExpectOne(Pad().Build([](Pad& p) { return p.Load(); }), "block 'P'",
            "load from buffer 'A' reaches A[-3:67] in dimension 0, outside the buffer's extent 64 "
            "(in the value stored to buffer 'P')");
}

TEST(VerifyGuardTest, GuardThatDoesNotCoverTheLoadIsReported) {
  ExpectOne(Pad().Build([](Pad& p) {
    return IfThenElse(IntImm(1) <= p.vi && p.vi < 67, p.Load(), FloatImm(0));
  }),
            "block 'P'",
            "load from buffer 'A' reaches A[-2:64] in dimension 0, outside the buffer's extent 64");
  // The guard holds in the true branch only.
  ExpectOne(Pad().Build([](Pad& p) { return IfThenElse(p.InRange(), FloatImm(0), p.Load()); }),
            "block 'P'",
            "load from buffer 'A' reaches A[-3:67] in dimension 0, outside the buffer's extent 64");
  // A disjunction holding says nothing about either side.
  ExpectOne(Pad().Build([](Pad& p) {
    return IfThenElse(IntImm(3) <= p.vi || p.vi < 67, p.Load(), FloatImm(0));
  }),
            "block 'P'",
            "load from buffer 'A' reaches A[-3:67] in dimension 0, outside the buffer's extent 64");
}

TEST(VerifyGuardTest, SelectDoesNotNarrow) {
  // Select evaluates both operands, so its condition guards nothing.
  ExpectOne(Pad().Build([](Pad& p) { return Select(p.InRange(), p.Load(), FloatImm(0)); }),
            "block 'P'",
            "load from buffer 'A' reaches A[-3:67] in dimension 0, outside the buffer's extent 64");
}

TEST(VerifyGuardTest, RegionCheckUsesTheGuard) {
  // Only the guarded range A[0:64] is read, so declaring just that is enough.
  auto with_region = [](int64_t declared) {
    Pad p;
    p.read = Range{IntImm(0), IntImm(declared)};
    return p.Build([](Pad& p) { return IfThenElse(p.InRange(), p.Load(), FloatImm(0)); });
  };
  ExpectClean(with_region(64));
  ExpectOne(with_region(32), "block 'P'",
            "load from buffer 'A' reaches A[0:64], outside the block's read region(s) A[0:32]");
}


// ---- guards on expressions and predicated blocks ----------------------------

// An inlined padding: the guard bounds the sum v_h + v_rh, not either variable.
std::string PaddedConv(const std::string& offset) {
  return R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6,), "float32"), C: T.Buffer((6,), "float32")):
    # with T.block("root"):
    for h, rh in T.grid(6, 3):
        with T.block("C"):
            v_h, v_rh = T.axis.remap("SR", [h, rh])
            T.reads(A[v_h + v_rh - )" +
         offset + R"(])
            T.writes(C[v_h])
            with T.init():
                C[v_h] = T.float32(0.0)
            C[v_h] = C[v_h] + T.if_then_else(1 <= v_h + v_rh and v_h + v_rh < 7, A[v_h + v_rh - )" +
         offset + R"(], T.float32(0.0))
)";
}

TEST(VerifyTest, GuardOnASumBoundsTheShiftedIndex) {
  auto issues = VerifyFunc(ParseFunc(PaddedConv("1")));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, GuardOnASumThatDoesNotCoverTheIndexReports) {
  ExpectOne(ParseFunc(PaddedConv("2")), "block 'C'",
            "load from buffer 'A' reaches A[-1:5] in dimension 0, outside the buffer's extent 6");
}

TEST(VerifyTest, GuardOnASumHoldsOnlyInsideItsBranch) {
  // The else operand runs exactly when the guard fails: v_h + v_rh is 0 there.
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6,), "float32"), C: T.Buffer((6,), "float32")):
    # with T.block("root"):
    for h, rh in T.grid(6, 3):
        with T.block("C"):
            v_h, v_rh = T.axis.remap("SR", [h, rh])
            T.reads(A[v_h + v_rh - 1])
            T.writes(C[v_h])
            with T.init():
                C[v_h] = T.float32(0.0)
            C[v_h] = C[v_h] + T.if_then_else(1 <= v_h + v_rh, T.float32(0.0), A[v_h + v_rh - 1])
)");
  ExpectOne(f, "block 'C'", "load from buffer 'A' reaches A[-1:0] in dimension 0");
}

// A fused block computing more rows than the consumer's buffer holds, cut
// back by its predicate (what reverse_compute_inline produces).
std::string PredicatedTranspose(int64_t rows) {
  return R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10, 4), "float32"), C: T.Buffer((4, 8), "float32")):
    # with T.block("root"):
    for i, j in T.grid(10, 4):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.where(i < )" +
         std::to_string(rows) + R"()
            T.reads(A[v_i, v_j])
            T.writes(C[v_j, v_i])
            C[v_j, v_i] = A[v_i, v_j] + T.float32(1.0)
)";
}

TEST(VerifyTest, PredicateBoundsTheIterVarsOfTheBlock) {
  auto issues = VerifyFunc(ParseFunc(PredicatedTranspose(8)));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, PredicateThatDoesNotRestrictEnoughReports) {
  ExpectOne(
      ParseFunc(PredicatedTranspose(9)), "block 'B'",
      "store to buffer 'C' reaches C[0:4, 0:9] in dimension 1, outside the buffer's extent 8");
}

// A split loop whose tiles overshoot the extent: the predicate on the sum
// of the loop variables bounds the iter var below its domain.
std::string PredicatedSplit(int64_t limit) {
  return R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    # with T.block("root"):
    for i_0, i_1 in T.grid(3, 4):
        with T.block("B"):
            v = T.axis.spatial(12, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < )" +
         std::to_string(limit) + R"()
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v]
)";
}

TEST(VerifyTest, PredicateOnASplitBindingBoundsTheIterVar) {
  auto issues = VerifyFunc(ParseFunc(PredicatedSplit(10)));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, PredicateOnASplitBindingThatOvershootsReports) {
  auto issues = VerifyFunc(ParseFunc(PredicatedSplit(11)));
  ASSERT_FALSE(issues.empty());
  for (const auto& i : issues) {
    EXPECT_EQ(i.where, "block 'B'");
    EXPECT_THAT(i.message, HasSubstr("outside the buffer's extent 10")) << i.str();
  }
}

// ---- 16. predicates that couple several loops ----------------------------------------------

// Replaces every "$" in text by n, to build a clean program and one that is
// off by one from the same source.
std::string WithLimit(std::string text, int64_t n) {
  std::string out;
  for (char c : text) {
    if (c == '$') {
      out += std::to_string(n);
    } else {
      out += c;
    }
  }
  return out;
}

// A loop split twice (what C1D's schedules leave): the predicate bounds the
// outer two loops together, and v2 = 2 * (ax2_0_0 * 2 + ax2_0_1) + ax2_1.
const char* kNestedSplit = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32")):
    # with T.block("root"):
    for ax2_0_0, ax2_0_1, ax2_1 in T.grid(2, 2, 2):
        with T.block("B"):
            v2 = T.axis.spatial(6, ax2_0_0 * 4 + ax2_0_1 * 2 + ax2_1)
            T.where(ax2_0_0 * 2 + ax2_0_1 < $)
            T.reads(A[v2])
            T.writes(B[v2])
            B[v2] = A[v2]
)";

TEST(VerifyTest, PredicateOnOuterLoopsOfANestedSplitIsClean) {
  auto issues = VerifyFunc(ParseFunc(WithLimit(kNestedSplit, 3)));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, PredicateOnOuterLoopsOfANestedSplitThatOvershootsReports) {
  auto issues = VerifyFunc(ParseFunc(WithLimit(kNestedSplit, 4)));
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].where, "block 'B'");
  EXPECT_THAT(issues[0].message,
              HasSubstr("the binding of iter var 'v2' ranges over [0, 7] under the enclosing "
                        "loops, outside its domain [0, 5]"));
}

// The iter var's domain is wider than the buffer; only the predicate keeps
// the accesses inside it.
const char* kNestedSplitWideDomain = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32")):
    # with T.block("root"):
    for ax2_0_0, ax2_0_1, ax2_1 in T.grid(2, 2, 2):
        with T.block("B"):
            v2 = T.axis.spatial(8, ax2_0_0 * 4 + ax2_0_1 * 2 + ax2_1)
            T.where(ax2_0_0 * 2 + ax2_0_1 < $)
            T.reads(A[v2])
            T.writes(B[v2])
            B[v2] = A[v2]
)";

TEST(VerifyTest, CoupledPredicateBoundsTheAccessesOfTheBlock) {
  auto issues = VerifyFunc(ParseFunc(WithLimit(kNestedSplitWideDomain, 3)));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, CoupledPredicateThatDoesNotBoundTheAccessesReports) {
  auto issues = VerifyFunc(ParseFunc(WithLimit(kNestedSplitWideDomain, 4)));
  ASSERT_FALSE(issues.empty());
  for (const auto& i : issues) {
    EXPECT_EQ(i.where, "block 'B'");
    EXPECT_THAT(i.message, HasSubstr("outside the buffer's extent 6")) << i.str();
  }
}

// An imperfect split fused back into one loop: the bindings divide the
// guarded fused variable.
const char* kFusedAfterSplit = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4, 6), "float32")):
    # with T.block("root"):
    for f in range(30):
        with T.block("B"):
            v_i = T.axis.spatial(4, f // 6)
            v_j = T.axis.spatial(6, f % 6)
            T.where(f < $)
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j]
)";

TEST(VerifyTest, DivisionOfAGuardedFusedLoopIsClean) {
  auto issues = VerifyFunc(ParseFunc(WithLimit(kFusedAfterSplit, 24)));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, DivisionOfAFusedLoopGuardedTooLooselyReports) {
  auto issues = VerifyFunc(ParseFunc(WithLimit(kFusedAfterSplit, 25)));
  ASSERT_FALSE(issues.empty());
  EXPECT_THAT(issues[0].message,
              HasSubstr("the binding of iter var 'v_i' ranges over [0, 4] under the enclosing "
                        "loops, outside its domain [0, 3]"));
}

// Two split loops, each cut back by its own conjunct.
const char* kTwoPredicates = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((3, 3), "float32"), B: T.Buffer((3, 3), "float32")):
    # with T.block("root"):
    for i_0, j_0, i_1, j_1 in T.grid(2, 2, 2, 2):
        with T.block("B"):
            v_i = T.axis.spatial(3, i_0 * 2 + i_1)
            v_j = T.axis.spatial(3, j_0 * 2 + j_1)
            T.where(i_0 * 2 + i_1 < 3 and j_0 * 2 + j_1 < $)
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j]
)";

TEST(VerifyTest, PredicatesOnSeveralLoopsAreClean) {
  auto issues = VerifyFunc(ParseFunc(WithLimit(kTwoPredicates, 3)));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, OneLoosePredicateAmongSeveralReports) {
  auto issues = VerifyFunc(ParseFunc(WithLimit(kTwoPredicates, 4)));
  ASSERT_FALSE(issues.empty());
  EXPECT_THAT(issues[0].message,
              HasSubstr("the binding of iter var 'v_j' ranges over [0, 3] under the enclosing "
                        "loops, outside its domain [0, 2]"));
}

// A unit iter var bound to split loops that the predicate pins to zero.
const char* kPinnedUnit = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1, 4), "float32"), B: T.Buffer((1, 4), "float32")):
    # with T.block("root"):
    for n_0, n_1, j in T.grid(1, 2, 4):
        with T.block("B"):
            v_n = T.axis.spatial(1, n_0 * 2 + n_1)
            v_j = T.axis.spatial(4, j)
            T.where(n_0 * 2 + n_1 < $)
            T.reads(A[v_n, v_j])
            T.writes(B[v_n, v_j])
            B[v_n, v_j] = A[v_n, v_j]
)";

TEST(VerifyTest, PredicatePinningAUnitIterVarIsClean) {
  auto issues = VerifyFunc(ParseFunc(WithLimit(kPinnedUnit, 1)));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, PredicateThatDoesNotPinAUnitIterVarReports) {
  auto issues = VerifyFunc(ParseFunc(WithLimit(kPinnedUnit, 2)));
  ASSERT_FALSE(issues.empty());
  EXPECT_THAT(issues[0].message,
              HasSubstr("the binding of iter var 'v_n' ranges over [0, 1] under the enclosing "
                        "loops, outside its domain [0, 0]"));
}

// compute_at leaves a loop whose extent depends on an outer loop (T2D's
// padding): interval arithmetic takes both at their largest.
const char* kDependentExtent = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32")):
    # with T.block("root"):
    for w in range(8):
        for ax in range((w + 3) // 2 - w // 2 + $):
            with T.block("B"):
                v = T.axis.spatial(6, w // 2 + ax)
                T.reads(A[v])
                T.writes(B[v])
                B[v] = A[v]
)";

TEST(VerifyTest, LoopExtentDependingOnAnOuterLoopIsClean) {
  auto issues = VerifyFunc(ParseFunc(WithLimit(kDependentExtent, 1)));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, LoopExtentDependingOnAnOuterLoopThatOvershootsReports) {
  auto issues = VerifyFunc(ParseFunc(WithLimit(kDependentExtent, 2)));
  ASSERT_FALSE(issues.empty());
  EXPECT_THAT(issues[0].message,
              HasSubstr("the binding of iter var 'v' ranges over [0, 6] under the enclosing "
                        "loops, outside its domain [0, 5]"));
}


}  // namespace
}  // namespace kiln::ir
