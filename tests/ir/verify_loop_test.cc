// VerifyFunc on loops, allocations and parameters (checks 11 and 12), and
// its robustness: null nodes are issues, never crashes.
#include "ir/verify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/parser.h"
#include "tests/ir/verify_test_util.h"

namespace kiln::ir {
namespace {

using namespace verify_test;  // NOLINT(build/namespaces): the shared builders
using ::testing::HasSubstr;

// ---- 11. loops ----------------------------------------------------------------------------------

TEST(VerifyTest, NonPositiveLoopExtent) {
  Buffer A("A", f32, {IntImm(4)});
  Var i("i");
  ExpectOne(Func({A}, For(i, IntImm(0), IntImm(0), ForKind::kSerial,
                          BufferStore(A, FloatImm(0), {IntImm(0)}))),
            "loop i in block 'root'", "loop 'i' has extent 0; loop extents must be positive");
}

TEST(VerifyTest, ThreadBindingWithoutTag) {
  Buffer A("A", f32, {IntImm(4)});
  Var i("i");
  ExpectOne(Func({A}, RawFor(i, IntImm(0), IntImm(4), ForKind::kThreadBinding,
                             BufferStore(A, FloatImm(0), {i}))),
            "loop i in block 'root'",
            "thread-bound loop 'i' has no thread tag (e.g. \"threadIdx.x\")");
}

TEST(VerifyTest, NestedLoopsBindTheSameThread) {
  Buffer A("A", f32, {IntImm(4), IntImm(4)});
  Var i("i"), j("j");
  // Another extent: not the same threads.
  Stmt inner = For(j, IntImm(0), IntImm(2), ForKind::kThreadBinding,
                   BufferStore(A, FloatImm(0), {i, j}), "threadIdx.x");
  ExpectOne(Func({A}, For(i, IntImm(0), IntImm(4), ForKind::kThreadBinding, inner, "threadIdx.x")),
            "loop j in block 'root'",
            "loop 'j' binds threadIdx.x, which an enclosing loop already binds with another "
            "extent");
  // blockIdx never nests in itself.
  Stmt blocks = For(j, IntImm(0), IntImm(4), ForKind::kThreadBinding,
                    BufferStore(A, FloatImm(0), {i, j}), "blockIdx.x");
  ExpectOne(Func({A}, For(i, IntImm(0), IntImm(4), ForKind::kThreadBinding, blocks, "blockIdx.x")),
            "loop j in block 'root'",
            "loop 'j' binds blockIdx.x, which an enclosing loop already binds");
}

TEST(VerifyTest, NestedThreadLoopsOfOneExtentNameTheSameThreads) {
  // A cooperative fetch under a compute's thread loop (MetaSchedule's GPU
  // schedules bind both to threadIdx.x).
  Buffer A("A", f32, {IntImm(4), IntImm(4)}), S("S", f32, {IntImm(4)});
  Var i("i"), j("j");
  Stmt fetch = For(j, IntImm(0), IntImm(4), ForKind::kThreadBinding,
                   BufferStore(S, FloatImm(0), {j}), "threadIdx.x");
  ExpectClean(Func({S}, For(i, IntImm(0), IntImm(4), ForKind::kThreadBinding, fetch, "threadIdx.x")));
  // One that depends on the outer loop would lose its iterations when both
  // become the same thread index.
  Stmt uses_i = For(j, IntImm(0), IntImm(4), ForKind::kThreadBinding,
                    BufferStore(A, FloatImm(0), {i, j}), "threadIdx.x");
  ExpectOne(Func({A}, For(i, IntImm(0), IntImm(4), ForKind::kThreadBinding, uses_i, "threadIdx.x")),
            "loop j in block 'root'", "and uses that loop's variable");
}

TEST(VerifyTest, NonIntegerLoopVariable) {
  Buffer A("A", f32, {IntImm(4)});
  Var x("x", f32);
  ExpectSome(Func({A}, RawFor(x, FloatImm(0), FloatImm(4), ForKind::kSerial,
                              BufferStore(A, FloatImm(0), {IntImm(0)}))),
             "loop x in block 'root': loop variable 'x' has type float32; loop variables must be "
             "scalar integers");
}

TEST(VerifyTest, VectorizedLoopWithSymbolicExtent) {
  Var n("n");
  Buffer A("A", f32, {n});
  Var i("i");
  ExpectOne(Func({A}, For(i, IntImm(0), n, ForKind::kVectorized, BufferStore(A, FloatImm(0), {i}))),
            "loop i in block 'root'",
            "vectorized loop 'i' has a non-constant extent; vector lanes are fixed");
}

// ---- 12. allocations and parameters ----------------------------------------------------------

TEST(VerifyTest, AllocationWithNonConstantShape) {
  Var n("n");
  Buffer A("A", f32, {n});
  Buffer T("T", f32, {n, IntImm(0)});
  ExpectSome(Func({A}, Evaluate(IntImm(0)), {T}),
             "block 'root': allocated buffer 'T' has a non-constant extent in dimension 0; "
             "allocations need constant shapes");
  ExpectSome(Func({A}, Evaluate(IntImm(0)), {T}),
             "block 'root': allocated buffer 'T' has extent 0 in dimension 1; extents must be "
             "positive");
}

TEST(VerifyTest, BufferAllocatedTwice) {
  Buffer A("A", f32, {IntImm(4)});
  Buffer T("T", f32, {IntImm(4)});
  ExpectOne(Func({A}, Evaluate(IntImm(0)), {T, T}), "block 'root'",
            "buffer 'T' is allocated again (it is already declared by block 'root')");
  ExpectOne(Func({A}, Evaluate(IntImm(0)), {A}), "block 'root'",
            "buffer 'A' is allocated again (it is already declared by the function parameters)");
}

TEST(VerifyTest, DuplicateParameters) {
  Buffer A("A", f32, {IntImm(4)});
  ExpectOne(Func({A, A}, BufferStore(A, FloatImm(0), {IntImm(0)})), "function main",
            "buffer 'A' is listed twice as a parameter (positions 0 and 1)");
}

TEST(VerifyTest, ExpressionTypeErrors) {
  Buffer A("A", f32, {IntImm(4)});
  Var i("i");
  Expr mixed = Expr(std::make_shared<const BinaryNode>(ExprKind::kAdd, DataType::Int32(), i,
                                                       IntImm(1, DataType::Int64())));
  Expr bad_call = Expr(std::make_shared<const CallNode>(f32, CallOp::kExp, std::vector<Expr>{}));
  Expr bad_select = Expr(std::make_shared<const SelectNode>(IntImm(1), FloatImm(0), IntImm(0)));
  Stmt body = SeqStmt({BufferStore(A, bad_call, {i}), RawStore(A, bad_select, {i}),
                       RawStore(A, FloatImm(0), {mixed})});
  auto issues = VerifyFunc(Func({A}, For(i, IntImm(0), IntImm(3), ForKind::kSerial, body)));
  std::string all = Dump(issues);
  EXPECT_THAT(all, HasSubstr("T.exp takes 1 argument(s) but is given 0 (in the value stored to "
                             "buffer 'A')"));
  EXPECT_THAT(all, HasSubstr("a select condition has type int32; it must be bool"));
  EXPECT_THAT(all, HasSubstr("the branches of a select have different types float32 and int32"));
  EXPECT_THAT(all, HasSubstr("a binary expression mixes operand types int32 and int64; cast one "
                             "operand (in index 0 of the store to buffer 'A')"));
}

// ---- robustness: null nodes are issues, never crashes ---------------------------------------

TEST(VerifyTest, NullNodesAreReported) {
  Buffer A("A", f32, {IntImm(4)});
  Var i("i"), vi("vi");
  {
    PrimFunc f;
    f.params = {A, Buffer()};
    ExpectSome(f, "function main: parameter 1 is a null buffer");
    ExpectSome(f, "function main: the function has no body");
  }
  {
    BlockNode root;
    root.name = "root";
    PrimFunc f;
    f.body = RawRealize({}, Expr(), RawBlock(std::move(root)));
    ExpectSome(f, "block 'root': the block predicate is null");
    ExpectSome(f, "block 'root': the body of block 'root' is null");
  }
  {
    PrimFunc f;
    f.body = RawRealize({}, BoolImm(true), Block());
    ExpectOne(f, "function main", "a block realize has no block (null)");
  }
  auto null_bin = Expr(
      std::make_shared<const BinaryNode>(ExprKind::kAdd, DataType::Int32(), Expr(), IntImm(1)));
  ExpectSome(Func({A}, RawStore(A, Expr(), {null_bin})),
             "the store to buffer 'A' has no value (null)");
  ExpectSome(Func({A}, RawStore(A, FloatImm(0), {null_bin})),
             "a null expression is used (in index 0 of the store to buffer 'A')");
  ExpectSome(Func({A}, RawStore(Buffer(), FloatImm(0), {IntImm(0)})),
             "the store to buffer '?' has no buffer (null)");
  ExpectSome(Func({A}, RawStore(A, RawLoad(Buffer(), {IntImm(0)}), {IntImm(0)})),
             "the load from buffer '?' has no buffer (null)");
  ExpectSome(Func({A}, RawFor(Var(), Expr(), IntImm(4), ForKind::kSerial, Stmt())),
             "the loop has no loop variable (null)");
  ExpectSome(Func({A}, RawFor(i, IntImm(0), IntImm(4), ForKind::kSerial, Stmt())),
             "the body of loop 'i' is null");
  {
    auto seq = std::make_shared<SeqStmtNode>();
    seq->seq = {Stmt(), Evaluate(IntImm(0))};
    ExpectSome(Func({A}, Stmt(seq)), "a statement in a sequence is null");
  }
  {
    BlockNode blk;
    blk.name = "b";
    blk.iter_vars = {IterVar{Var(), Range{}, IterType::kDataPar}, IterVar{vi, Range{}}};
    blk.reads = {BufferRegion{Buffer(), {}}};
    blk.writes = {BufferRegion{A, {Range{}}}};
    blk.init = Stmt();
    Stmt s = RawRealize({IntImm(0), Expr()}, BoolImm(true), RawBlock(std::move(blk)));
    auto issues = VerifyFunc(Func({A}, s));
    std::string all = Dump(issues);
    EXPECT_THAT(all, HasSubstr("an iter var is null"));
    EXPECT_THAT(all, HasSubstr("the start of the domain of iter var 'vi'"));
    EXPECT_THAT(all, HasSubstr("the read region of buffer '?' has no buffer (null)"));
    EXPECT_THAT(all, HasSubstr("the init of block 'b' is null"));
    EXPECT_THAT(all, HasSubstr("the body of block 'b' is null"));
  }
}

// Replaces the n-th expression (or statement) met in a walk with null.
class NullOut : public IRMutator {
 public:
  NullOut(int target, bool stmts) : target_(target), stmts_(stmts) {}
  bool hit() const { return count_ > target_; }

  Expr VisitExpr(const Expr& e) override {
    if (!stmts_ && e.defined() && count_++ == target_) return Expr();
    return IRMutator::VisitExpr(e);
  }
  Stmt VisitStmt(const Stmt& s) override {
    if (stmts_ && s.defined() && count_++ == target_) return Stmt();
    return IRMutator::VisitStmt(s);
  }

 private:
  int target_, count_ = 0;
  bool stmts_;
};

TEST(VerifyTest, NullingAnyNodeNeverCrashes) {
  Matmul m;
  int checked = 0;
  for (const PrimFunc& base : {m.Build(), TiledCopy(true)}) {
    for (bool stmts : {false, true}) {
      for (int n = 0;; ++n) {
        NullOut mutator(n, stmts);
        PrimFunc f = base;
        try {
          f.body = mutator.VisitStmt(base.body);
        } catch (const IRError&) {
          continue;  // an op.h constructor refused the null child; nothing to verify
        }
        if (!mutator.hit()) break;
        auto issues = VerifyFunc(f);
        // A null expression is always wrong; a dropped statement may leave a
        // valid function (a sequence just gets shorter).
        if (!stmts) {
          EXPECT_FALSE(issues.empty()) << "expression " << n << " nulled";
        }
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 40);  // the walk really produced malformed variants
}

TEST(VerifyTest, VerifyThrowsWithOneIssuePerLine) {
  Copy c;
  PrimFunc f = c.Build([&](BlockNode& b) { b.body = RawStore(c.B, IntImm(1), {c.i}); });
  try {
    Verify(f);
    FAIL() << "Verify accepted a malformed function";
  } catch (const VerifyError& e) {
    ASSERT_EQ(e.issues().size(), 2u) << e.what();
    EXPECT_EQ(std::string(e.what()), "function main is not well-formed (2 issue(s)):\n  " +
                                         e.issues()[0].str() + "\n  " + e.issues()[1].str());
    EXPECT_THAT(e.issues()[0].message, HasSubstr("uses loop variable 'i'"));
    EXPECT_THAT(e.issues()[1].message, HasSubstr("writes a value of type int32"));
  }
}


}  // namespace
}  // namespace kiln::ir
