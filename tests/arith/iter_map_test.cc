#include "ir/arith/iter_map.h"

#include <gtest/gtest.h>

#include <set>

#include "ir/functor.h"
#include "ir/op.h"
#include "tests/arith/eval_util.h"

namespace kiln::ir::arith {
namespace {

using testing::Str;

Expr C(int64_t v) { return IntImm(v); }
Range R(int64_t min, int64_t extent) { return {C(min), C(extent)}; }

using Iters = std::vector<std::pair<Var, Range>>;

std::string Errors(const IterMapResult& r) {
  std::string s;
  for (const auto& e : r.errors) s += e + "\n";
  return s;
}

// Brute force over the iterator space (points satisfying the predicate):
// the normalized form equals the input index everywhere, and whether the
// map is injective.
bool CheckAgainstBruteForce(const std::vector<Expr>& indices, const Iters& iters, const Expr& pred,
                            const IterMapResult& r, size_t* image) {
  std::vector<Var> vars;
  std::vector<int64_t> lo, hi;
  for (const auto& [v, rg] : iters) {
    int64_t m, e;
    EXPECT_TRUE(AsConstInt(rg.min, &m) && AsConstInt(rg.extent, &e));
    vars.push_back(v);
    lo.push_back(m);
    hi.push_back(m + e - 1);
  }
  std::vector<Expr> norm;
  for (const auto& s : r.indices) norm.push_back(NormalizeIterMapToExpr(s));
  std::set<std::vector<int64_t>> seen;
  bool injective = true;
  testing::ForEachPoint(vars, lo, hi, [&](const testing::Env& env) {
    if (pred.defined() && !*testing::Eval(pred, env)) return;
    std::vector<int64_t> tuple;
    for (size_t i = 0; i < indices.size(); ++i) {
      auto want = testing::Eval(indices[i], env);
      tuple.push_back(*want);
      if (i < norm.size()) {
        auto got = testing::Eval(norm[i], env);
        EXPECT_TRUE(got && *got == *want)
            << "normalized " << Str(norm[i]) << " != " << Str(indices[i]);
      }
    }
    injective = seen.insert(tuple).second && injective;
  });
  *image = seen.size();
  return injective;
}

IterMapResult Detect(const std::vector<Expr>& idx, const Iters& iters, Expr pred = Expr(),
                     IterMapLevel level = IterMapLevel::kBijective) {
  Analyzer an;
  IterMapResult r = DetectIterMap(idx, iters, pred, level, &an);
  size_t image = 0;
  bool injective = CheckAgainstBruteForce(idx, iters, pred, r, &image);
  if (r.ok()) {
    if (level == IterMapLevel::kBijective) {
      EXPECT_TRUE(injective) << "accepted a non-injective map";
    }
    // Either way the image is the whole box of the index extents.
    size_t box = 1;
    for (const auto& s : r.indices)
      box *= s.args.empty() ? 1 : static_cast<size_t>(s.args[0].extent);
    EXPECT_EQ(image, box);
  }
  return r;
}

TEST(IterMap, SingleAndUnitIterators) {
  Var i("i"), u("u");
  IterMapResult r = Detect({i}, {{i, R(0, 8)}});
  ASSERT_TRUE(r.ok()) << Errors(r);
  ASSERT_EQ(r.indices[0].args.size(), 1u);
  EXPECT_EQ(r.indices[0].args[0].source->var.get(), i.get());
  EXPECT_EQ(r.indices[0].args[0].extent, 8);
  // A unit iterator contributes nothing and need not appear.
  r = Detect({i + u}, {{i, R(0, 8)}, {u, R(0, 1)}});
  ASSERT_TRUE(r.ok()) << Errors(r);
  r = Detect({i}, {{i, R(0, 8)}, {u, R(0, 1)}});
  ASSERT_TRUE(r.ok()) << Errors(r);
}

TEST(IterMap, FusedIndex) {
  Var i("i"), j("j");
  IterMapResult r = Detect({i * 16 + j}, {{i, R(0, 4)}, {j, R(0, 16)}});
  ASSERT_TRUE(r.ok()) << Errors(r);
  const IterSplitExpr& s = r.indices[0].args[0];
  EXPECT_EQ(s.extent, 64);
  EXPECT_EQ(s.scale, 1);
  ASSERT_FALSE(s.source->var.defined());
  ASSERT_EQ(s.source->sum.args.size(), 2u);
  EXPECT_EQ(s.source->sum.args[0].scale, 16);  // outer first
  EXPECT_EQ(s.source->sum.args[1].scale, 1);
  // Written in any order, with constant offsets.
  r = Detect({j + 3 + i * 16}, {{i, R(0, 4)}, {j, R(0, 16)}});
  ASSERT_TRUE(r.ok()) << Errors(r);
  EXPECT_TRUE(IsConstInt(r.indices[0].base, 3));
}

TEST(IterMap, SplitIndices) {
  Var i("i");
  IterMapResult r = Detect({FloorDiv(i, C(4)), FloorMod(i, C(4))}, {{i, R(0, 32)}});
  ASSERT_TRUE(r.ok()) << Errors(r);
  EXPECT_EQ(r.indices[0].args[0].lower_factor, 4);
  EXPECT_EQ(r.indices[0].args[0].extent, 8);
  EXPECT_EQ(r.indices[1].args[0].lower_factor, 1);
  EXPECT_EQ(r.indices[1].args[0].extent, 4);
  // Three-way split; the pieces recombine to i.
  r = Detect({FloorDiv(i, C(8)), FloorMod(FloorDiv(i, C(2)), C(4)), FloorMod(i, C(2))},
             {{i, R(0, 32)}});
  ASSERT_TRUE(r.ok()) << Errors(r);
  r = Detect({FloorDiv(i, C(4)) * 4 + FloorMod(i, C(4))}, {{i, R(0, 32)}});
  ASSERT_TRUE(r.ok()) << Errors(r);
  EXPECT_EQ(r.indices[0].args[0].source->var.get(), i.get());
  EXPECT_EQ(r.indices[0].args[0].extent, 32);
}

TEST(IterMap, SplitOfFused) {
  Var i("i"), j("j");
  Iters iters = {{i, R(0, 4)}, {j, R(0, 16)}};
  Expr f = i * 16 + j;
  IterMapResult r = Detect({FloorDiv(f, C(8)), FloorMod(f, C(8))}, iters);
  ASSERT_TRUE(r.ok()) << Errors(r);
  // (i*16 + j) // 8 is i*2 + j//8, a fusion of i with the top of j.
  EXPECT_EQ(r.indices[0].args[0].extent, 8);
  EXPECT_EQ(r.indices[1].args[0].extent, 8);
  EXPECT_EQ(r.indices[1].args[0].source->var.get(), j.get());
  // A fusion used in part by one index and in part by another.
  Expr g = i * 3 + FloorMod(j, C(3));
  Iters iters3 = {{i, R(0, 4)}, {j, R(0, 3)}};
  r = Detect({FloorDiv(g, C(3)), FloorMod(g, C(3))}, iters3);
  ASSERT_TRUE(r.ok()) << Errors(r);
  r = Detect({FloorDiv(i * 16 + j, C(4)), FloorMod(i * 16 + j, C(8))}, iters);
  ASSERT_FALSE(r.ok());  // digits 4..8 used twice
  // A reorder after split: [j // 4, i, j % 4].
  r = Detect({FloorDiv(j, C(4)), i, FloorMod(j, C(4))}, iters);
  ASSERT_TRUE(r.ok()) << Errors(r);
  // Fuse of an outer and a split piece: i * 4 + j // 4, j % 4.
  r = Detect({i * 4 + FloorDiv(j, C(4)), FloorMod(j, C(4))}, iters);
  ASSERT_TRUE(r.ok()) << Errors(r);
  // Truncating division of non-negative iterators behaves like flooring.
  r = Detect({Div(f, C(8)), TruncMod(f, C(8))}, iters);
  ASSERT_TRUE(r.ok()) << Errors(r);
}

TEST(IterMap, NonZeroMinAndSymbolicBase) {
  Var i("i"), j("j"), io("io");
  // i in [2, 6): the split is of (i - 2).
  IterMapResult r = Detect({i}, {{i, R(2, 4)}});
  ASSERT_TRUE(r.ok()) << Errors(r);
  EXPECT_TRUE(IsConstInt(r.indices[0].base, 2));
  // compute_at style: an outer loop variable that is not an iterator.
  Analyzer an;
  r = DetectIterMap({io * 8 + j}, {{j, R(0, 8)}}, Expr(), IterMapLevel::kBijective, &an);
  ASSERT_TRUE(r.ok()) << Errors(r);
  EXPECT_EQ(r.indices[0].base.kind(), ExprKind::kMul);
}

TEST(IterMap, PredicateForNonDivisibleSplit) {
  Var i0("i0"), i1("i1");
  Iters iters = {{i0, R(0, 3)}, {i1, R(0, 4)}};
  Expr pred = i0 * 4 + i1 < C(10);
  IterMapResult r = Detect({i0 * 4 + i1}, iters, pred);
  ASSERT_TRUE(r.ok()) << Errors(r);
  EXPECT_EQ(r.indices[0].args[0].extent, 10);
  Analyzer an;
  r = DetectIterMap({i0 * 4 + i1}, iters, Or(i0 < C(2), i1 < C(2)), IterMapLevel::kBijective, &an);
  EXPECT_FALSE(r.ok());
}

TEST(IterMap, RejectsOverlap) {
  Var i("i"), j("j");
  Iters iters = {{i, R(0, 4)}, {j, R(0, 16)}};
  IterMapResult r = Detect({i * 8 + j}, iters);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(Errors(r).find("overlap or leave gaps"), std::string::npos) << Errors(r);
  // The same iterator in two indices.
  r = Detect({i, i}, iters);
  EXPECT_FALSE(r.ok());
  r = Detect({j, FloorMod(j, C(4))}, iters);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(Errors(r).find("used twice"), std::string::npos) << Errors(r);
  // Same scale twice.
  r = Detect({i + j}, iters);
  EXPECT_FALSE(r.ok());
}

TEST(IterMap, RejectsGapsAndUnused) {
  Var i("i"), j("j");
  Iters iters = {{i, R(0, 4)}, {j, R(0, 16)}};
  IterMapResult r = Detect({i * 32 + j}, iters);  // a gap between the terms
  EXPECT_FALSE(r.ok());
  r = Detect({i}, iters);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(Errors(r).find("iterator j is not used"), std::string::npos) << Errors(r);
  r = Detect({FloorDiv(j, C(4))}, {{j, R(0, 16)}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(Errors(r).find("not fully used"), std::string::npos) << Errors(r);
  // ... which a surjective check accepts.
  r = Detect({FloorDiv(j, C(4))}, {{j, R(0, 16)}}, Expr(), IterMapLevel::kSurjective);
  EXPECT_TRUE(r.ok()) << Errors(r);
  r = Detect({i}, iters, Expr(), IterMapLevel::kSurjective);
  EXPECT_TRUE(r.ok()) << Errors(r);
  // Overlap is rejected at every level.
  r = Detect({j, FloorMod(j, C(4))}, iters, Expr(), IterMapLevel::kSurjective);
  EXPECT_FALSE(r.ok());
}

TEST(IterMap, RejectsNonAffine) {
  Var i("i"), j("j"), n("n");
  Iters iters = {{i, R(0, 4)}, {j, R(0, 16)}};
  IterMapResult r = Detect({i * j}, iters);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(Errors(r).find("not affine"), std::string::npos) << Errors(r);
  r = Detect({Min(i, j)}, iters);
  EXPECT_FALSE(r.ok());
  r = Detect({FloorDiv(j, C(3))}, {{j, R(0, 16)}});  // 16 is not divisible by 3
  ASSERT_FALSE(r.ok());
  EXPECT_NE(Errors(r).find("not divisible by 3"), std::string::npos) << Errors(r);
  r = Detect({C(15) - j}, {{j, R(0, 16)}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(Errors(r).find("non-positive coefficient"), std::string::npos) << Errors(r);
  Analyzer an;
  r = DetectIterMap({i}, {{i, {C(0), n}}}, Expr(), IterMapLevel::kBijective, &an);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(Errors(r).find("non-constant extent"), std::string::npos) << Errors(r);
  r = DetectIterMap({FloorMod(j + 1, C(4)), FloorDiv(j, C(4))}, {{j, R(0, 16)}}, Expr(),
                    IterMapLevel::kBijective, &an);
  ASSERT_FALSE(r.ok());  // offset inside the modulus
}

TEST(IterMap, Int64Indices) {
  DataType i64 = DataType::Int64();
  Var i("i", i64), j("j", i64);
  Iters iters = {{i, {IntImm(0, i64), IntImm(4, i64)}}, {j, {IntImm(0, i64), IntImm(8, i64)}}};
  Expr f = i * 8 + j;
  IterMapResult r = Detect({FloorDiv(f, IntImm(4, i64)), FloorMod(f, IntImm(4, i64))}, iters);
  ASSERT_TRUE(r.ok()) << Errors(r);
  EXPECT_EQ(NormalizeIterMapToExpr(r.indices[0], i64).dtype(), i64);
}

bool Mentions(const Expr& e, const std::vector<Var>& vars) {
  struct Finder : IRVisitor {
    const std::vector<Var>* vars;
    bool found = false;
    void VisitVar(const VarNode* v) override {
      for (const auto& x : *vars) found = found || x.get() == v;
    }
  } f;
  f.vars = &vars;
  f.VisitExpr(e);
  return f.found;
}

// Checks a division by brute force: recombination, ranges and separation.
void CheckDivision(const std::vector<Expr>& idx, const Iters& iters, const std::vector<Var>& sub,
                   const SubspaceDivision& d) {
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d.indices.size(), idx.size());
  std::vector<Var> vars, outer_vars;
  std::vector<int64_t> lo, hi;
  for (const auto& [v, rg] : iters) {
    int64_t e = 0;
    ASSERT_TRUE(AsConstInt(rg.extent, &e));
    vars.push_back(v);
    lo.push_back(0);
    hi.push_back(e - 1);
    bool is_sub = false;
    for (const auto& x : sub) is_sub = is_sub || x.get() == v.get();
    if (!is_sub) outer_vars.push_back(v);
  }
  for (const auto& di : d.indices) {
    EXPECT_FALSE(Mentions(di.outer, sub)) << Str(di.outer);
    EXPECT_FALSE(Mentions(di.inner, outer_vars)) << Str(di.inner);
  }
  testing::ForEachPoint(vars, lo, hi, [&](const testing::Env& env) {
    for (size_t i = 0; i < idx.size(); ++i) {
      const DividedIndex& di = d.indices[i];
      int64_t o = *testing::Eval(di.outer, env), in = *testing::Eval(di.inner, env);
      int64_t b = *testing::Eval(di.base, env);
      EXPECT_EQ(o * di.inner_extent + in + b, *testing::Eval(idx[i], env));
      EXPECT_TRUE(o >= 0 && o < di.outer_extent && in >= 0 && in < di.inner_extent);
    }
  });
}

TEST(SubspaceDivide, SplitsFusedAndTiledBindings) {
  Var i("i"), j("j");
  Iters iters = {{i, R(0, 4)}, {j, R(0, 16)}};
  Analyzer an;
  std::vector<Expr> idx = {i * 16 + j};
  SubspaceDivision d = SubspaceDivide(idx, iters, {j}, Expr(), IterMapLevel::kBijective, &an);
  ASSERT_TRUE(d.ok()) << d.errors[0];
  EXPECT_EQ(d.indices[0].outer_extent, 4);
  EXPECT_EQ(d.indices[0].inner_extent, 16);
  CheckDivision(idx, iters, {j}, d);

  Var io("io"), ii("ii"), jo("jo"), ji("ji");
  Iters tiled = {{io, R(0, 4)}, {jo, R(0, 2)}, {ii, R(0, 8)}, {ji, R(0, 8)}};
  idx = {io * 8 + ii, jo * 8 + ji, C(3)};
  d = SubspaceDivide(idx, tiled, {ii, ji}, Expr(), IterMapLevel::kBijective, &an);
  ASSERT_TRUE(d.ok()) << d.errors[0];
  CheckDivision(idx, tiled, {ii, ji}, d);
  EXPECT_EQ(d.indices[1].inner_extent, 8);
  EXPECT_EQ(d.indices[1].outer_extent, 2);
  EXPECT_TRUE(IsConstInt(d.indices[2].base, 3));

  // Pure indices: wholly outer or wholly inner.
  idx = {i, j};
  d = SubspaceDivide(idx, iters, {j}, Expr(), IterMapLevel::kBijective, &an);
  ASSERT_TRUE(d.ok()) << d.errors[0];
  CheckDivision(idx, iters, {j}, d);
  EXPECT_EQ(d.indices[0].inner_extent, 1);
  EXPECT_EQ(d.indices[1].outer_extent, 1);
}

TEST(SubspaceDivide, RejectsInterleavedIterators) {
  Var i("i"), j("j");
  Iters iters = {{i, R(0, 4)}, {j, R(0, 16)}};
  Analyzer an;
  SubspaceDivision d =
      SubspaceDivide({i * 16 + j}, iters, {i}, Expr(), IterMapLevel::kBijective, &an);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.errors[0].find("interleaves"), std::string::npos) << d.errors[0];
  EXPECT_TRUE(d.indices.empty());
  // Split pieces of a fusion divide along their parts.
  std::vector<Expr> idx = {FloorDiv(i * 16 + j, C(8)), FloorMod(i * 16 + j, C(8))};
  d = SubspaceDivide(idx, iters, {j}, Expr(), IterMapLevel::kBijective, &an);
  ASSERT_TRUE(d.ok()) << d.errors[0];
  CheckDivision(idx, iters, {j}, d);
  // Inner above outer inside one index.
  d = SubspaceDivide({j * 4 + i}, iters, {j}, Expr(), IterMapLevel::kBijective, &an);
  EXPECT_FALSE(d.ok());
  // Errors of the map itself come through.
  d = SubspaceDivide({i * 8 + j}, iters, {j}, Expr(), IterMapLevel::kBijective, &an);
  EXPECT_FALSE(d.ok());
}

// Random split / fuse / reorder sequences produce bijective maps, which must
// be accepted; dropping or duplicating an index must be rejected.
TEST(IterMap, RandomScheduleLikeMaps) {
  std::mt19937_64 rng(42);
  int accepted = 0;
  for (int iter = 0; iter < 60; ++iter) {
    Var a("a"), b("b");
    int64_t ea = 2 << (rng() % 3), eb = 2 << (rng() % 3);  // 2, 4 or 8
    Iters iters = {{a, R(0, ea)}, {b, R(0, eb)}};
    // Loops as (expr, extent) pairs; the block's indices are a and b again.
    std::vector<Expr> indices;
    int shape = static_cast<int>(rng() % 4);
    Expr fused = a * eb + b;
    int64_t total = ea * eb;
    int64_t f = 2;
    switch (shape) {
      case 0:
        indices = {FloorDiv(fused, C(f)), FloorMod(fused, C(f))};
        break;
      case 1:
        indices = {FloorMod(b, C(2)), a, FloorDiv(b, C(2))};
        break;
      case 2:
        indices = {FloorDiv(fused, C(total / 2)), FloorMod(FloorDiv(fused, C(2)), C(total / 4)),
                   FloorMod(fused, C(2))};
        break;
      default:
        indices = {b, a};
        break;
    }
    IterMapResult r = Detect(indices, iters);
    EXPECT_TRUE(r.ok()) << "shape " << shape << " ea=" << ea << " eb=" << eb << "\n" << Errors(r);
    accepted += r.ok();
    std::vector<Expr> dup = indices;
    dup.back() = dup.front();
    EXPECT_FALSE(Detect(dup, iters).ok()) << "duplicated index accepted, shape " << shape;
  }
  EXPECT_EQ(accepted, 60);
}

// Random affine-looking index sets: whatever is accepted must be a bijection
// onto its box (checked by brute force inside Detect).
TEST(IterMap, RandomIndexSetsAreSoundlyClassified) {
  std::mt19937_64 rng(7);
  auto pick = [&](int n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  const int64_t kExtents[] = {1, 2, 3, 4, 6, 8};
  int accepted = 0, surjective = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    Var a("a"), b("b"), c("c");
    std::vector<Var> vars = {a, b, c};
    Iters iters;
    for (const auto& v : vars) iters.push_back({v, R(0, kExtents[pick(6)])});
    auto piece = [&]() -> Expr {
      const Var& v = vars[static_cast<size_t>(pick(3))];
      switch (pick(4)) {
        case 0:
          return FloorDiv(v, C(pick(3) + 1));
        case 1:
          return FloorMod(v, C(pick(3) + 1));
        default:
          return v;
      }
    };
    std::vector<Expr> idx;
    int n = static_cast<int>(pick(3)) + 1;
    for (int k = 0; k < n; ++k) {
      Expr e = piece();
      if (pick(2)) e = e * C(kExtents[pick(6)]) + piece();
      if (pick(3) == 0) e = pick(2) ? FloorDiv(e, C(pick(4) + 1)) : FloorMod(e, C(pick(4) + 1));
      if (pick(4) == 0) e = e + C(pick(5));
      idx.push_back(e);
    }
    IterMapResult r = Detect(idx, iters);
    accepted += r.ok();
    IterMapResult sr = Detect(idx, iters, Expr(), IterMapLevel::kSurjective);
    if (r.ok()) {
      EXPECT_TRUE(sr.ok()) << "bijective but not surjective: " << Errors(sr);
    }
    surjective += sr.ok();
    if (!r.ok()) {
      EXPECT_FALSE(r.errors[0].empty());
    }
  }
  EXPECT_GT(accepted, 20);
  EXPECT_GT(surjective, accepted);
}

}  // namespace
}  // namespace kiln::ir::arith
