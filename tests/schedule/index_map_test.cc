#include "ir/schedule/index_map.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/op.h"
#include "ir/text/printer.h"

namespace kiln::ir {
namespace {

std::vector<Expr> Consts(const std::vector<int64_t>& v) {
  std::vector<Expr> out;
  for (int64_t x : v) out.push_back(IntImm(x));
  return out;
}

std::vector<int64_t> Ints(const std::vector<Expr>& v) {
  std::vector<int64_t> out;
  for (const Expr& e : v) {
    int64_t x = 0;
    EXPECT_TRUE(AsConstInt(e, &x)) << ToText(e);
    out.push_back(x);
  }
  return out;
}

// inverse(map(p)) == p for every point p of the box, and map hits each point
// of the new box exactly once.
void ExpectInverse(const IndexMap& map, const std::vector<int64_t>& shape) {
  arith::Analyzer an;
  std::vector<Expr> shape_e = Consts(shape);
  IndexMap inv = map.Inverse(shape_e, &an);
  std::vector<int64_t> new_shape = Ints(map.MapShape(shape_e, &an));
  int64_t total = 1;
  for (int64_t s : new_shape) total *= s;
  std::vector<int> hits(total, 0);
  std::vector<int64_t> p(shape.size(), 0);
  for (;;) {
    std::vector<int64_t> q = Ints(map.Apply(Consts(p), &an));
    int64_t flat = 0;
    for (size_t j = 0; j < q.size(); ++j) {
      ASSERT_GE(q[j], 0);
      ASSERT_LT(q[j], new_shape[j]);
      flat = flat * new_shape[j] + q[j];
    }
    ++hits[flat];
    EXPECT_EQ(Ints(inv.Apply(Consts(q), &an)), p) << inv.ToText();
    size_t k = shape.size();
    while (k > 0 && ++p[k - 1] == shape[k - 1]) p[--k] = 0;
    if (k == 0) break;
  }
  for (int h : hits) EXPECT_EQ(h, 1);
}

TEST(IndexMap, ParsesAndPrintsTheLambdaForm) {
  IndexMap m = IndexMap::FromText("lambda i, j: (i // 4, j, i % 4)");
  ASSERT_EQ(m.initial_indices.size(), 2u);
  ASSERT_EQ(m.final_indices.size(), 3u);
  EXPECT_EQ(m.initial_indices[0].name(), "i");
  EXPECT_EQ(m.ToText(), "lambda i, j: (i // 4, j, i % 4)");
  EXPECT_EQ(IndexMap::FromText(m.ToText()).ToText(), m.ToText());
  // One result: a bare expression or a one-tuple; printed as a one-tuple.
  EXPECT_EQ(IndexMap::FromText("lambda i, j: i * 8 + j").ToText(), "lambda i, j: (i * 8 + j,)");
  EXPECT_EQ(IndexMap::FromText("lambda i, j: (i * 8 + j,)").final_indices.size(), 1u);
}

TEST(IndexMap, RefusesMalformedText) {
  EXPECT_THROW(IndexMap::FromText("lambda i: (i // 4"), ParseError);
  EXPECT_THROW(IndexMap::FromText("i: (i,)"), ParseError);
  EXPECT_THROW(IndexMap::FromText("lambda i: (k,)"), ParseError);
  EXPECT_THROW(IndexMap::FromText("lambda i, i: (i,)"), ParseError);
  EXPECT_THROW(IndexMap::FromText("lambda i: (i,) extra"), ParseError);
}

TEST(IndexMap, AppliesToIndices) {
  IndexMap m = IndexMap::FromText("lambda i, j: (i // 4, j, i % 4)");
  arith::Analyzer an;
  Var x("x"), y("y");
  std::vector<Expr> out = m.Apply({x * 4 + 1, y}, &an);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(ToText(out[0]), "x");
  EXPECT_EQ(ToText(out[1]), "y");
  EXPECT_EQ(ToText(out[2]), "1");
  EXPECT_EQ(Ints(m.Apply(Consts({13, 5}), &an)), (std::vector<int64_t>{3, 5, 1}));
  EXPECT_THROW(m.Apply({x}, &an), IRError);
}

TEST(IndexMap, MapsShapes) {
  arith::Analyzer an;
  IndexMap m = IndexMap::FromText("lambda i, j: (i // 4, j, i % 4)");
  EXPECT_EQ(Ints(m.MapShape(Consts({16, 8}), &an)), (std::vector<int64_t>{4, 8, 4}));
  IndexMap fuse = IndexMap::FromText("lambda i, j: (i * 8 + j,)");
  EXPECT_EQ(Ints(fuse.MapShape(Consts({4, 8}), &an)), (std::vector<int64_t>{32}));
  IndexMap swap = IndexMap::FromText("lambda i, j: (j, i)");
  EXPECT_EQ(Ints(swap.MapShape(Consts({3, 5}), &an)), (std::vector<int64_t>{5, 3}));
}

TEST(IndexMap, DecidesBijectivity) {
  arith::Analyzer an;
  auto reason = [&](const char* text, std::vector<int64_t> shape) {
    return IndexMap::FromText(text).NotBijectiveReason(Consts(shape), &an);
  };
  EXPECT_EQ(reason("lambda i, j: (i // 4, j, i % 4)", {16, 8}), "");
  EXPECT_EQ(reason("lambda i, j: (j, i)", {3, 5}), "");
  EXPECT_EQ(reason("lambda i, j: (i * 8 + j,)", {4, 8}), "");
  EXPECT_NE(reason("lambda i, j: (i // 2, j)", {16, 8}), "");        // drops a digit
  EXPECT_NE(reason("lambda i, j: (i, i)", {16, 8}), "");             // drops j, repeats i
  EXPECT_NE(reason("lambda i, j: (i // 3, j, i % 3)", {8, 8}), "");  // padding
  EXPECT_NE(reason("lambda i, j: (i + 1, j)", {8, 8}), "");          // offset
  EXPECT_NE(reason("lambda i: (i,)", {8, 8}), "");                   // arity
}

TEST(IndexMap, InvertsBijectiveAffineMaps) {
  ExpectInverse(IndexMap::FromText("lambda i, j: (i // 4, j, i % 4)"), {16, 8});
  ExpectInverse(IndexMap::FromText("lambda i, j: (j, i)"), {3, 5});
  ExpectInverse(IndexMap::FromText("lambda i, j: (i * 8 + j,)"), {4, 8});
  ExpectInverse(IndexMap::FromText("lambda i, j: (j // 2, i, j % 2)"), {3, 6});
  ExpectInverse(IndexMap::FromText("lambda n, c: (n, c // 4, c % 4)"), {2, 8});
  arith::Analyzer an;
  IndexMap inv =
      IndexMap::FromText("lambda i, j: (i // 4, j, i % 4)").Inverse(Consts({16, 8}), &an);
  EXPECT_EQ(inv.ToText(), "lambda v0, v1, v2: (v0 * 4 + v2, v1)");
  EXPECT_THROW(IndexMap::FromText("lambda i, j: (i // 2, j)").Inverse(Consts({16, 8}), &an),
               IRError);
}

}  // namespace
}  // namespace kiln::ir
