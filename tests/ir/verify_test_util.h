// Builders and expectations shared by the verifier's tests
// (tests/ir/verify_*_test.cc): nodes built directly, so that op.h's checks
// do not run, two small functions to break, and checks on the issues found.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/op.h"
#include "ir/verify.h"

namespace kiln::ir::verify_test {

using ::testing::HasSubstr;

inline const DataType f32 = DataType::Float32();

inline Range R(int64_t n) { return Range{IntImm(0), IntImm(n)}; }
inline Range Pt(Expr e) { return Range{std::move(e), IntImm(1)}; }
inline IterVar IV(Var v, int64_t n, IterType t = IterType::kDataPar) { return IterVar{v, R(n), t}; }
inline BufferRegion Region(Buffer b, std::vector<Range> r) { return BufferRegion{b, std::move(r)}; }

inline PrimFunc Func(std::vector<Buffer> params, Stmt body, std::vector<Buffer> allocs = {}) {
  PrimFunc f;
  f.params = std::move(params);
  f.body = MakeRootBody(std::move(body), std::move(allocs));
  return f;
}

// A For node built directly, so that op.h's checks do not run.
inline Stmt RawFor(Var v, Expr min, Expr extent, ForKind kind, Stmt body, std::string tag = "") {
  auto n = std::make_shared<ForNode>();
  n->loop_var = std::move(v);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->for_kind = kind;
  n->thread_tag = std::move(tag);
  n->body = std::move(body);
  return Stmt(std::move(n));
}

inline Stmt RawStore(Buffer b, Expr value, std::vector<Expr> indices) {
  auto n = std::make_shared<BufferStoreNode>();
  n->buffer = std::move(b);
  n->value = std::move(value);
  n->indices = std::move(indices);
  return Stmt(std::move(n));
}

inline Expr RawLoad(Buffer b, std::vector<Expr> indices) {
  DataType t = b.defined() ? b.dtype() : f32;
  return Expr(std::make_shared<const BufferLoadNode>(t, std::move(b), std::move(indices)));
}

inline Stmt RawRealize(std::vector<Expr> values, Expr pred, Block block) {
  auto n = std::make_shared<BlockRealizeNode>();
  n->iter_values = std::move(values);
  n->predicate = std::move(pred);
  n->block = std::move(block);
  return Stmt(std::move(n));
}

inline Block RawBlock(BlockNode node) { return Block(std::make_shared<const BlockNode>(std::move(node))); }

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

inline std::string Dump(const std::vector<VerifyIssue>& issues) {
  std::string s;
  for (const auto& i : issues) s += i.str() + "\n";
  return s;
}

// The function has exactly one issue, at `where`, whose message contains `part`.
inline void ExpectOne(const PrimFunc& f, const std::string& where, const std::string& part) {
  auto issues = VerifyFunc(f);
  ASSERT_EQ(issues.size(), 1u) << Dump(issues);
  EXPECT_EQ(issues[0].where, where);
  EXPECT_THAT(issues[0].message, HasSubstr(part));
}

inline void ExpectClean(const PrimFunc& f) {
  auto issues = VerifyFunc(f);
  EXPECT_TRUE(issues.empty()) << Dump(issues);
}

// Some issue contains `part` (used where one fault causes follow-on issues).
inline void ExpectSome(const PrimFunc& f, const std::string& part) {
  auto issues = VerifyFunc(f);
  bool found = false;
  for (const auto& i : issues) found = found || i.str().find(part) != std::string::npos;
  EXPECT_TRUE(found) << "no issue mentions \"" << part << "\"; got:\n" << Dump(issues);
}

// B[v] = A[v] for v < 10, with the loop split by 4: 3 x 4 iterations and a
// predicate that cuts off the last two.
inline PrimFunc TiledCopy(bool with_predicate, bool vectorize = false, bool mirrored = false) {
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

}  // namespace kiln::ir::verify_test
