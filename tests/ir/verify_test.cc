// VerifyFunc: well-formed functions pass; variables, buffers, ranks and
// dtypes (checks 1 to 5) are reported where they go wrong.
#include "ir/verify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/parser.h"
#include "tests/ir/verify_test_util.h"

namespace kiln::ir {
namespace {

using namespace verify_test;  // NOLINT(build/namespaces): the shared builders
using ::testing::HasSubstr;

// ---- well-formed functions -------------------------------------------------

TEST(VerifyTest, MatmulWithInitIsClean) {
  Matmul m;
  auto issues = VerifyFunc(m.Build());
  EXPECT_TRUE(issues.empty()) << Dump(issues);
  EXPECT_NO_THROW(Verify(m.Build()));
}

TEST(VerifyTest, MultiBlockWithAllocBufferIsClean) {
  // T = A + 1 (T allocated by root), then B = T * 2; B's block writes the same
  // region twice, and a block writes the input A in place, both allowed.
  Buffer A("A", f32, {IntImm(8), IntImm(8)}), B("B", f32, {IntImm(8), IntImm(8)});
  Buffer T("T", f32, {IntImm(8), IntImm(8)}, "local");
  auto stage = [](const std::string& name, Buffer in, Buffer out, Expr scale) {
    Var i(name + "_i"), j(name + "_j"), vi(name + "_vi"), vj(name + "_vj");
    BlockNode blk;
    blk.name = name;
    blk.iter_vars = {IV(vi, 8), IV(vj, 8)};
    blk.reads = {Region(in, {Pt(vi), Pt(vj)})};
    blk.writes = {Region(out, {Pt(vi), Pt(vj)})};
    Expr v = BufferLoad(in, {vi, vj}) * scale;
    blk.body = SeqStmt({BufferStore(out, v, {vi, vj}), BufferStore(out, v, {vi, vj})});
    Stmt s = BlockRealize({i, j}, BoolImm(true), MakeBlock(std::move(blk)));
    s = For(j, IntImm(0), IntImm(8), ForKind::kSerial, s);
    return For(i, IntImm(0), IntImm(8), ForKind::kParallel, s);
  };
  PrimFunc f = Func({A, B},
                    SeqStmt({stage("T", A, T, FloatImm(1)), stage("B", T, B, FloatImm(2)),
                             stage("A_inplace", A, A, FloatImm(3))}),
                    {T});
  auto issues = VerifyFunc(f);
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, TiledBlockWithPredicateIsClean) {
  auto issues = VerifyFunc(TiledCopy(/*with_predicate=*/true, /*vectorize=*/true));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, MirroredPredicateIsUnderstood) {
  auto issues = VerifyFunc(TiledCopy(/*with_predicate=*/true, false, /*mirrored=*/true));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, SymbolicShapeVariablesAreDefined) {
  Var n("n");
  Buffer A("A", f32, {n});
  Var i("i");
  PrimFunc f = Func({A}, For(i, IntImm(0), n, ForKind::kSerial, BufferStore(A, FloatImm(0), {i})));
  auto issues = VerifyFunc(f);
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

// ---- 1. undefined variables ---------------------------------------------------

TEST(VerifyTest, UndefinedVariable) {
  Copy c;
  Var x("x");
  ExpectOne(c.Build([&](BlockNode& b) { b.body = BufferStore(c.B, BufferLoad(c.A, {x}), {c.vi}); }),
            "block 'B'",
            "variable 'x' is used but never defined: it is not a loop variable, block iter var "
            "or buffer shape variable in scope (in index 0 of the load from buffer 'A')");
}

TEST(VerifyTest, VariableUsedOutsideItsLoop) {
  Buffer A("A", f32, {IntImm(4)});
  Var i("i"), j("j");
  Stmt first = For(i, IntImm(0), IntImm(4), ForKind::kSerial, BufferStore(A, FloatImm(0), {i}));
  Stmt second = For(j, IntImm(0), IntImm(4), ForKind::kSerial, BufferStore(A, FloatImm(1), {i}));
  ExpectOne(Func({A}, SeqStmt({first, second})), "block 'root'",
            "variable 'i' is used outside the scope of its definition by loop i in block 'root'");
}

// ---- 2. variables defined twice -------------------------------------------------

TEST(VerifyTest, LoopVariableRedefinedWhileInScope) {
  Buffer A("A", f32, {IntImm(4)});
  Var i("i");
  Stmt inner = For(i, IntImm(0), IntImm(4), ForKind::kSerial, BufferStore(A, FloatImm(0), {i}));
  ExpectOne(Func({A}, For(i, IntImm(0), IntImm(4), ForKind::kSerial, inner)),
            "loop i in block 'root'",
            "variable 'i' is defined again by loop i in block 'root' while its definition by "
            "loop i in block 'root' is still in scope; use a fresh Var");
}

TEST(VerifyTest, SameVarBoundBySiblingLoops) {
  Buffer A("A", f32, {IntImm(4)});
  Var i("i");
  Stmt loop = For(i, IntImm(0), IntImm(4), ForKind::kSerial, BufferStore(A, FloatImm(0), {i}));
  ExpectOne(Func({A}, SeqStmt({loop, loop})), "loop i in block 'root'",
            "variable 'i' is bound a second time by loop i in block 'root' (it was already bound "
            "by loop i in block 'root'); every loop and iter var needs its own Var object");
}

TEST(VerifyTest, IterVarReusedByNestedBlock) {
  Matmul m;
  // The init is replaced by a nested block that reuses the iter var vi.
  ExpectSome(m.Build([&](BlockNode& b) {
    BlockNode inner;
    inner.name = "inner";
    inner.iter_vars = {IV(m.vi, 16)};
    inner.writes = {Region(m.C, {Pt(m.vi), Pt(IntImm(0))})};
    inner.body = BufferStore(m.C, FloatImm(0), {m.vi, IntImm(0)});
    b.body = SeqStmt(
        {b.body, BlockRealize({b.iter_vars[0].var}, BoolImm(true), MakeBlock(std::move(inner)))});
  }),
             "block 'inner': variable 'vi' is defined again by block 'inner' while its "
             "definition by block 'C' is still in scope");
}

// ---- 3. undeclared buffers --------------------------------------------------------

TEST(VerifyTest, BufferNotDeclared) {
  Copy c;
  Buffer X("X", f32, {IntImm(64)});
  ExpectSome(
      c.Build([&](BlockNode& b) { b.body = BufferStore(c.B, BufferLoad(X, {c.vi}), {c.vi}); }),
      "block 'B': buffer 'X' is used but not declared: it is neither a function parameter "
      "nor allocated by an enclosing block (in the load from buffer 'X')");
}

TEST(VerifyTest, SameNamedBufferObjectIsNotTheParameter) {
  Copy c;
  Buffer other("A", f32, {IntImm(64)});
  ExpectSome(c.Build([&](BlockNode& b) { b.reads = {Region(other, {Pt(c.vi)})}; }),
             "a different buffer object with that name is declared by the function parameters");
}

TEST(VerifyTest, AllocatedBufferUsedOutsideItsBlock) {
  Buffer A("A", f32, {IntImm(4)});
  Buffer T("T", f32, {IntImm(4)});
  Var vi("vi"), i("i"), j("j");
  BlockNode blk;
  blk.name = "alloc";
  blk.alloc_buffers = {T};
  blk.body = For(j, IntImm(0), IntImm(4), ForKind::kSerial, BufferStore(T, FloatImm(0), {j}));
  Stmt first = BlockRealize({}, BoolImm(true), MakeBlock(std::move(blk)));
  Stmt second =
      For(i, IntImm(0), IntImm(4), ForKind::kSerial, BufferStore(A, BufferLoad(T, {i}), {i}));
  ExpectOne(Func({A}, SeqStmt({first, second})), "block 'root'",
            "buffer 'T' is used outside block 'alloc', which allocates it");
}

// ---- 4. rank mismatches -------------------------------------------------------------

TEST(VerifyTest, LoadRankMismatch) {
  Matmul m;
  ExpectSome(m.Build([&](BlockNode& b) {
    b.body = BufferStore(m.C, RawLoad(m.A, {m.vi}), {m.vi, m.vj});
  }),
             "block 'C': the load from buffer 'A' has 1 index(es) but buffer 'A' has 2 "
             "dimension(s)");
}

TEST(VerifyTest, StoreAndRegionRankMismatch) {
  Matmul m;
  auto issues = VerifyFunc(m.Build([&](BlockNode& b) {
    b.writes = {Region(m.C, {Pt(m.vi)})};
    b.init = RawStore(m.C, FloatImm(0), {m.vi});
  }));
  std::string all = Dump(issues);
  EXPECT_THAT(all, HasSubstr("block 'C': the write region of buffer 'C' has 1 range(s) but the "
                             "buffer has 2 dimension(s)"));
  EXPECT_THAT(all, HasSubstr("block 'C': the store to buffer 'C' has 1 index(es) but buffer 'C' "
                             "has 2 dimension(s)"));
}

// ---- 5. dtype mismatches --------------------------------------------------------------

TEST(VerifyTest, StoredValueTypeDiffersFromBuffer) {
  Copy c;
  ExpectOne(c.Build([&](BlockNode& b) { b.body = RawStore(c.B, IntImm(1), {c.vi}); }), "block 'B'",
            "the store to buffer 'B' writes a value of type int32 but the buffer holds float32; "
            "cast the value");
}

TEST(VerifyTest, VectorStoreOfMatchingElementTypeIsAllowed) {
  Buffer A("A", f32, {IntImm(8)});
  PrimFunc f = Func({A}, RawStore(A, Broadcast(FloatImm(0), 8), {Ramp(IntImm(0), IntImm(1), 8)}));
  auto issues = VerifyFunc(f);
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, NonBoolPredicate) {
  Copy c;
  PrimFunc f = c.Build();
  // Rebuild the realize with an int32 predicate.
  const auto* loop = f.root_block().body.as<ForNode>();
  const auto* realize = loop->body.as<BlockRealizeNode>();
  Stmt bad = RawRealize(realize->iter_values, IntImm(1), realize->block);
  f.body = MakeRootBody(For(c.i, IntImm(0), IntImm(64), ForKind::kSerial, bad));
  ExpectOne(f, "block 'B'", "the block predicate has type int32; it must be bool");
}

TEST(VerifyTest, NonIntegerIndexAndIfCondition) {
  Buffer A("A", f32, {IntImm(4)});
  auto cond = std::make_shared<IfThenElseNode>();
  cond->condition = IntImm(1);
  cond->then_case = RawStore(A, FloatImm(0), {FloatImm(1)});
  auto issues = VerifyFunc(Func({A}, Stmt(cond)));
  std::string all = Dump(issues);
  EXPECT_THAT(all, HasSubstr("the condition of an if statement has type int32; it must be bool"));
  EXPECT_THAT(all, HasSubstr("index 0 of the store to buffer 'A' has type float32; indices must "
                             "be integers"));
}


}  // namespace
}  // namespace kiln::ir
