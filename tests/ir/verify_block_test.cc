// VerifyFunc on blocks: bindings and their ranges, names and the root
// block, reductions and init, accesses against regions and shapes (checks
// 6 to 10).
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

// ---- 6. block bindings ------------------------------------------------------------------

TEST(VerifyTest, BindingCountMismatch) {
  Matmul m;
  PrimFunc f = m.Build();
  const auto* realize = f.root_block()
                            .body.as<ForNode>()
                            ->body.as<ForNode>()
                            ->body.as<ForNode>()
                            ->body.as<BlockRealizeNode>();
  Stmt bad = RawRealize({m.i, m.j}, BoolImm(true), realize->block);
  bad = For(m.k, IntImm(0), IntImm(16), ForKind::kSerial, bad);
  bad = For(m.j, IntImm(0), IntImm(16), ForKind::kSerial, bad);
  f.body = MakeRootBody(For(m.i, IntImm(0), IntImm(16), ForKind::kSerial, bad));
  ExpectOne(f, "block 'C'", "the block has 3 iter var(s) but 2 binding(s)");
}

TEST(VerifyTest, BindingTypeMismatch) {
  Buffer A("A", f32, {IntImm(4)});
  Var i("i", DataType::Int64()), vi("vi");
  BlockNode blk;
  blk.name = "A";
  blk.iter_vars = {IV(vi, 4)};
  blk.writes = {Region(A, {Pt(vi)})};
  blk.body = BufferStore(A, FloatImm(0), {vi});
  Stmt s = RawRealize({i}, BoolImm(true), MakeBlock(std::move(blk)));
  s = For(i, IntImm(0, DataType::Int64()), IntImm(4, DataType::Int64()), ForKind::kSerial, s);
  ExpectOne(Func({A}, s), "block 'A'",
            "the binding of iter var 'vi' has type int64 but the iter var is int32");
}

TEST(VerifyTest, BindingUsesOwnIterVar) {
  Copy c;
  PrimFunc f = c.Build();
  const auto* realize = f.root_block().body.as<ForNode>()->body.as<BlockRealizeNode>();
  Stmt bad = RawRealize({c.vi + c.i}, c.vi < IntImm(8), realize->block);
  f.body = MakeRootBody(For(c.i, IntImm(0), IntImm(64), ForKind::kSerial, bad));
  auto issues = VerifyFunc(f);
  ASSERT_EQ(issues.size(), 2u) << Dump(issues);
  EXPECT_EQ(issues[0].str(),
            "block 'B': uses 'vi', an iter var of the same block; bindings and the predicate are "
            "evaluated outside the block and may only use enclosing loop variables (in the "
            "binding of iter var 'vi')");
  EXPECT_THAT(issues[1].str(), HasSubstr("(in the block predicate)"));
}

TEST(VerifyTest, BlockBodyUsesOuterLoopVariable) {
  Copy c;
  ExpectOne(
      c.Build([&](BlockNode& b) { b.body = BufferStore(c.B, BufferLoad(c.A, {c.i}), {c.vi}); }),
      "block 'B'",
      "block 'B' uses loop variable 'i' of a loop outside the block; a block can only see "
      "its own iter vars and variables defined inside it, so bind the loop variable to an "
      "iter var (in index 0 of the load from buffer 'A')");
}

TEST(VerifyTest, OpaqueBlockSeesOuterLoopVariable) {
  Buffer A("A", f32, {IntImm(4)});
  Var i("i");
  BlockNode blk;
  blk.name = "opaque";
  blk.writes = {Region(A, {Range{IntImm(0), IntImm(4)}})};
  blk.body = BufferStore(A, FloatImm(0), {i});
  Stmt s = For(i, IntImm(0), IntImm(4), ForKind::kSerial,
               BlockRealize({}, BoolImm(true), MakeBlock(std::move(blk))));
  auto issues = VerifyFunc(Func({A}, s));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

// ---- 7. binding ranges ----------------------------------------------------------------------

TEST(VerifyTest, BindingRangeExceedsDomain) {
  Copy c;
  ExpectOne(c.Build({}, /*loop_extent=*/80), "block 'B'",
            "the binding of iter var 'vi' ranges over [0, 79] under the enclosing loops, outside "
            "its domain [0, 63]; shrink the loops or guard the block with a predicate");
}

TEST(VerifyTest, ImperfectSplitNeedsPredicate) {
  ExpectOne(TiledCopy(/*with_predicate=*/false), "block 'B'",
            "the binding of iter var 'v' ranges over [0, 11] under the enclosing loops, outside "
            "its domain [0, 9]");
}

// ---- 8. block names and the root block -----------------------------------------------------

TEST(VerifyTest, DuplicateBlockNames) {
  Buffer A("A", f32, {IntImm(4)});
  auto block = [&]() {
    Var i("i"), vi("vi");
    BlockNode blk;
    blk.name = "init";
    blk.iter_vars = {IV(vi, 4)};
    blk.writes = {Region(A, {Pt(vi)})};
    blk.body = BufferStore(A, FloatImm(0), {vi});
    return For(i, IntImm(0), IntImm(4), ForKind::kSerial,
               BlockRealize({i}, BoolImm(true), MakeBlock(std::move(blk))));
  };
  ExpectOne(Func({A}, SeqStmt({block(), block()})), "block 'init'",
            "block name 'init' is used by more than one block; block names must be unique in a "
            "function");
}

TEST(VerifyTest, RootBlockMustBeNamedRootWithoutIterVars) {
  Buffer A("A", f32, {IntImm(4)});
  Var vi("vi");
  BlockNode root;
  root.name = "main_block";
  root.iter_vars = {IV(vi, 4)};
  root.body = BufferStore(A, FloatImm(0), {vi});
  PrimFunc f;
  f.params = {A};
  f.body = RawRealize({IntImm(0)}, BoolImm(true), MakeBlock(std::move(root)));
  auto issues = VerifyFunc(f);
  std::string all = Dump(issues);
  EXPECT_THAT(all, HasSubstr("block 'main_block': the root block must be named \"root\", not "
                             "'main_block'"));
  EXPECT_THAT(all,
              HasSubstr("block 'main_block': the root block must have no iter vars, it has 1"));
}

TEST(VerifyTest, FunctionBodyMustBeRootBlock) {
  Buffer A("A", f32, {IntImm(4)});
  PrimFunc f;
  f.params = {A};
  f.body = BufferStore(A, FloatImm(0), {IntImm(0)});
  ExpectOne(f, "function main", "the function body must be the root block realize");
}

// ---- 9. reductions and init ------------------------------------------------------------------

TEST(VerifyTest, ReductionWithoutInit) {
  Matmul m;
  ExpectOne(m.Build([&](BlockNode& b) {
    b.init.reset();
    b.reads.push_back(Region(m.C, {Pt(m.vi), Pt(m.vj)}));
  }),
            "block 'C'",
            "the block reduces into buffer 'C' (which it also reads) over reduction iter vars but "
            "has no init; add T.init");
}

TEST(VerifyTest, ReductionInitialisedByEarlierBlock) {
  // decompose_reduction: C_init zeroes C, then C_update accumulates without
  // an init of its own.
  Matmul m;
  auto build = [&](bool init_first) {
    Var ii("ii"), jj("jj"), vii("vii"), vjj("vjj");
    BlockNode init;
    init.name = "C_init";
    init.iter_vars = {IV(vii, 16), IV(vjj, 16)};
    init.writes = {Region(m.C, {Pt(vii), Pt(vjj)})};
    init.body = BufferStore(m.C, FloatImm(0), {vii, vjj});
    Stmt zero = BlockRealize({ii, jj}, BoolImm(true), MakeBlock(std::move(init)));
    zero = For(jj, IntImm(0), IntImm(16), ForKind::kSerial, zero);
    zero = For(ii, IntImm(0), IntImm(16), ForKind::kSerial, zero);
    PrimFunc update = m.Build([&](BlockNode& b) {
      b.name = "C_update";
      b.init.reset();
      b.reads.push_back(Region(m.C, {Pt(m.vi), Pt(m.vj)}));
    });
    Stmt body = update.body.as<BlockRealizeNode>()->block->body;
    return Func({m.A, m.B, m.C}, init_first ? SeqStmt({zero, body}) : SeqStmt({body, zero}));
  };
  ExpectClean(build(/*init_first=*/true));
  ExpectOne(build(/*init_first=*/false), "block 'C_update'",
            "the block reduces into buffer 'C' (which it also reads) over reduction iter vars but "
            "has no init; add T.init");
}

TEST(VerifyTest, InitWithoutReductionIterVars) {
  Copy c;
  ExpectOne(c.Build([&](BlockNode& b) { b.init = BufferStore(c.B, FloatImm(0), {c.vi}); }),
            "block 'B'",
            "the block has an init but no reduction iter vars; an init only makes sense for a "
            "reduction");
}

TEST(VerifyTest, InitWritesBufferNotInWrites) {
  Matmul m;
  ExpectOne(m.Build([&](BlockNode& b) {
    b.init = BufferStore(m.A, FloatImm(0), {m.vi, m.vj});
  }),
            "block 'C'",
            "the init writes buffer 'A', which is not among the block's writes; add it to "
            "T.writes");
}

// ---- 10. accesses against regions and shapes --------------------------------------------------

TEST(VerifyTest, LoadOutsideReadRegion) {
  Copy c;
  // Reading A[vi + 1] while declaring A[vi]: one element past the region, and
  // past the end of A.
  Buffer A("A", f32, {IntImm(65)});
  c.A = A;
  ExpectOne(c.Build([&](BlockNode& b) {
    b.body = BufferStore(c.B, BufferLoad(c.A, {c.vi + 1}), {c.vi});
  }),
            "block 'B'",
            "load from buffer 'A' reaches A[1:65], outside the block's read region(s) A[0:64]; "
            "widen T.reads or fix the index (in the value stored to buffer 'B')");
}

TEST(VerifyTest, StoreWithoutWriteRegion) {
  Copy c;
  ExpectOne(c.Build([&](BlockNode& b) { b.writes.clear(); }), "block 'B'",
            "store to buffer 'B', but the block declares no write region for 'B'; add it to "
            "T.writes");
}

TEST(VerifyTest, RegionPastBufferShapeIsAllowed) {
  // Regions describe, they do not access: TVM's padding blocks declare
  // regions past the buffer and guard the accesses.
  Copy c;
  auto issues = VerifyFunc(c.Build([&](BlockNode& b) {
    b.reads = {Region(c.A, {Range{c.vi - 1, IntImm(3)}})};
  }));
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

TEST(VerifyTest, RegionWithNegativeExtent) {
  Copy c;
  ExpectSome(c.Build([&](BlockNode& b) {
    b.reads = {Region(c.A, {Range{c.vi, IntImm(-2)}})};
  }),
             "block 'B': the read region of buffer 'A' in dimension 0 has non-positive extent");
}

TEST(VerifyTest, AccessOutsideShapeInsideRegion) {
  // The region covers A[vi + 1], the buffer does not.
  Copy c;
  ExpectOne(c.Build([&](BlockNode& b) {
    b.reads = {Region(c.A, {Range{c.vi, IntImm(2)}})};
    b.body = BufferStore(c.B, BufferLoad(c.A, {c.vi + 1}), {c.vi});
  }),
            "block 'B'",
            "load from buffer 'A' reaches A[1:65] in dimension 0, outside the buffer's extent 64 "
            "(in the value stored to buffer 'B')");
}

TEST(VerifyTest, AccessOutsideShapeOutsideBlocks) {
  Buffer A("A", f32, {IntImm(4)});
  Var i("i");
  ExpectOne(
      Func({A}, For(i, IntImm(0), IntImm(5), ForKind::kSerial, BufferStore(A, FloatImm(0), {i}))),
      "block 'root'",
      "store to buffer 'A' reaches A[0:5] in dimension 0, outside the buffer's extent 4");
}


}  // namespace
}  // namespace kiln::ir
