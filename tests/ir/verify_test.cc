#include "ir/verify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/parser.h"
#include "ir/workloads/suite.h"

namespace kiln::ir {
namespace {

using ::testing::HasSubstr;

const DataType f32 = DataType::Float32();

Range R(int64_t n) { return Range{IntImm(0), IntImm(n)}; }
Range Pt(Expr e) { return Range{std::move(e), IntImm(1)}; }
IterVar IV(Var v, int64_t n, IterType t = IterType::kDataPar) { return IterVar{v, R(n), t}; }
BufferRegion Region(Buffer b, std::vector<Range> r) { return BufferRegion{b, std::move(r)}; }

PrimFunc Func(std::vector<Buffer> params, Stmt body, std::vector<Buffer> allocs = {}) {
  PrimFunc f;
  f.params = std::move(params);
  f.body = MakeRootBody(std::move(body), std::move(allocs));
  return f;
}

// A For node built directly, so that op.h's checks do not run.
Stmt RawFor(Var v, Expr min, Expr extent, ForKind kind, Stmt body, std::string tag = "") {
  auto n = std::make_shared<ForNode>();
  n->loop_var = std::move(v);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->for_kind = kind;
  n->thread_tag = std::move(tag);
  n->body = std::move(body);
  return Stmt(std::move(n));
}

Stmt RawStore(Buffer b, Expr value, std::vector<Expr> indices) {
  auto n = std::make_shared<BufferStoreNode>();
  n->buffer = std::move(b);
  n->value = std::move(value);
  n->indices = std::move(indices);
  return Stmt(std::move(n));
}

Expr RawLoad(Buffer b, std::vector<Expr> indices) {
  DataType t = b.defined() ? b.dtype() : f32;
  return Expr(std::make_shared<const BufferLoadNode>(t, std::move(b), std::move(indices)));
}

Stmt RawRealize(std::vector<Expr> values, Expr pred, Block block) {
  auto n = std::make_shared<BlockRealizeNode>();
  n->iter_values = std::move(values);
  n->predicate = std::move(pred);
  n->block = std::move(block);
  return Stmt(std::move(n));
}

Block RawBlock(BlockNode node) { return Block(std::make_shared<const BlockNode>(std::move(node))); }

// B[i] = A[i] * 2 over 64 elements, through block "B". `edit` changes the
// block before it is built; `loop_extent` and `value` vary the rest.
struct Copy {
  Buffer A{"A", f32, {IntImm(64)}};
  Buffer B{"B", f32, {IntImm(64)}};
  Var i{"i"};
  Var vi{"vi"};

  PrimFunc Build(const std::function<void(BlockNode&)>& edit = {}, int64_t loop_extent = 64) {
    BlockNode blk;
    blk.name = "B";
    blk.iter_vars = {IV(vi, 64)};
    blk.reads = {Region(A, {Pt(vi)})};
    blk.writes = {Region(B, {Pt(vi)})};
    blk.body = BufferStore(B, BufferLoad(A, {vi}) * FloatImm(2), {vi});
    if (edit) edit(blk);
    Stmt realize = RawRealize({i}, BoolImm(true), RawBlock(std::move(blk)));
    return Func({A, B}, For(i, IntImm(0), IntImm(loop_extent), ForKind::kSerial, realize));
  }
};

// C[i, j] += A[i, k] * B[k, j] with T.init, 16 x 16 x 16.
struct Matmul {
  Buffer A{"A", f32, {IntImm(16), IntImm(16)}};
  Buffer B{"B", f32, {IntImm(16), IntImm(16)}};
  Buffer C{"C", f32, {IntImm(16), IntImm(16)}};
  Var i{"i"}, j{"j"}, k{"k"};
  Var vi{"vi"}, vj{"vj"}, vk{"vk"};

  PrimFunc Build(const std::function<void(BlockNode&)>& edit = {}) {
    BlockNode blk;
    blk.name = "C";
    blk.iter_vars = {IV(vi, 16), IV(vj, 16), IV(vk, 16, IterType::kCommReduce)};
    blk.reads = {Region(A, {Pt(vi), Pt(vk)}), Region(B, {Pt(vk), Pt(vj)})};
    blk.writes = {Region(C, {Pt(vi), Pt(vj)})};
    blk.init = BufferStore(C, FloatImm(0), {vi, vj});
    blk.body = BufferStore(
        C, BufferLoad(C, {vi, vj}) + BufferLoad(A, {vi, vk}) * BufferLoad(B, {vk, vj}), {vi, vj});
    if (edit) edit(blk);
    Stmt s = BlockRealize({i, j, k}, BoolImm(true), MakeBlock(std::move(blk)));
    s = For(k, IntImm(0), IntImm(16), ForKind::kSerial, s);
    s = For(j, IntImm(0), IntImm(16), ForKind::kSerial, s);
    s = For(i, IntImm(0), IntImm(16), ForKind::kSerial, s);
    return Func({A, B, C}, s);
  }
};

std::string Dump(const std::vector<VerifyIssue>& issues) {
  std::string s;
  for (const auto& i : issues) s += i.str() + "\n";
  return s;
}

// The function has exactly one issue, at `where`, whose message contains `part`.
void ExpectOne(const PrimFunc& f, const std::string& where, const std::string& part) {
  auto issues = VerifyFunc(f);
  ASSERT_EQ(issues.size(), 1u) << Dump(issues);
  EXPECT_EQ(issues[0].where, where);
  EXPECT_THAT(issues[0].message, HasSubstr(part));
}

void ExpectClean(const PrimFunc& f) {
  auto issues = VerifyFunc(f);
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

// Some issue contains `part` (used where one fault causes follow-on issues).
void ExpectSome(const PrimFunc& f, const std::string& part) {
  auto issues = VerifyFunc(f);
  bool found = false;
  for (const auto& i : issues) found = found || i.str().find(part) != std::string::npos;
  EXPECT_TRUE(found) << "no issue mentions \"" << part << "\"; got:\n" << Dump(issues);
}

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

// B[v] = A[v] for v < 10, with the loop split by 4: 3 x 4 iterations and a
// predicate that cuts off the last two.
PrimFunc TiledCopy(bool with_predicate, bool vectorize = false, bool mirrored = false) {
  Buffer A("A", f32, {IntImm(10)}), B("B", f32, {IntImm(10)});
  Var i0("i_0"), i1("i_1"), v("v");
  BlockNode blk;
  blk.name = "B";
  blk.iter_vars = {IV(v, 10)};
  blk.reads = {Region(A, {Pt(v)})};
  blk.writes = {Region(B, {Pt(v)})};
  blk.body = BufferStore(B, BufferLoad(A, {v}), {v});
  Expr fused = i0 * 4 + i1;
  Expr limit = mirrored ? (IntImm(10) > i0 * 4 + i1) : (i0 * 4 + i1 < IntImm(10));
  Expr pred = with_predicate ? (limit && i1 >= IntImm(0)) : BoolImm(true);
  Stmt s = BlockRealize({fused}, pred, MakeBlock(std::move(blk)));
  s = For(i1, IntImm(0), IntImm(4), vectorize ? ForKind::kVectorized : ForKind::kSerial, s);
  s = For(i0, IntImm(0), IntImm(3), ForKind::kSerial, s);
  return Func({A, B}, s);
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

// ---- the workload suite -------------------------------------------------------------------------

std::string ReadText(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(VerifySuiteTest, WorkloadFilesVerifyClean) {
  std::filesystem::path dir = std::filesystem::path(KILN_SOURCE_DIR) / "configs/workloads";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir << " is missing";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".py") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 10u);
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    PrimFunc f;
    ASSERT_NO_THROW(f = ParseFunc(ReadText(path), path.filename().string()));
    ExpectClean(f);
  }
}

TEST(VerifySuiteTest, SuiteWorkloadsVerifyClean) {
  auto configs = SuiteConfigs();
  ASSERT_FALSE(configs.empty());
  for (const auto& c : configs) {
    SCOPED_TRACE(c.name + "_" + std::to_string(c.index));
    ExpectClean(MakeWorkload(c.name, c.index));
  }
}

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
