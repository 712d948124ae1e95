// Tests for StructuralEqual, StructuralMismatch and StructuralHash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"

namespace kiln::ir {
namespace {

using ::testing::HasSubstr;

Expr I(int64_t v) { return IntImm(v); }
Expr F(double v) { return FloatImm(v); }

Range Rng(int64_t min, int64_t extent) { return Range{I(min), I(extent)}; }

// Every knob of the function built by Build(); each mismatch test flips one.
struct Knobs {
  std::string prefix;                    // prepended to every variable and buffer name
  DataType dtype = DataType::Float32();  // element type of A, B and C
  int64_t n = 16;
  double scale = 2.0;  // the float constant in block T
  ForKind j_kind = ForKind::kSerial;
  std::string j_tag;
  Annotations j_annots;
  std::string t_block_name = "T";
  bool swap_t_bindings = false;    // T binds (vi, vj) to (j, i) instead of (i, j)
  bool transpose_t_store = false;  // T stores T[vj, vi]: uses map to other definitions
  bool t_load_from_b = false;      // T reads B instead of A (same layout)
  IterType k_iter_type = IterType::kCommReduce;
  int64_t k_dom_extent = 16;
  bool c_predicate = false;          // i < n instead of True
  bool c_read_offset = false;        // reads T[vi, vk + 1] instead of T[vi, vk]
  bool c_write_region_wide = false;  // writes C[vi:vi+2, vj] instead of C[vi, vj]
  bool c_init = true;
  double c_init_value = 0.0;
  ExprKind c_update = ExprKind::kAdd;
  Annotations c_annots;
  Annotations attrs = {{"tir.noalias", BoolImm(true)}};
  DataType t_dtype = DataType::Float32();
  std::vector<int64_t> t_shape = {16, 16};
  std::vector<int64_t> t_strides;
  std::string t_scope = "global";
  int64_t t_align = 0;
  bool swap_nests = false;  // statement order of the two loop nests
  std::string func_name = "main";
};

// T[i, j] = A[i, j] * scale; C[i, j] = sum_k T[i, k] * B[k, j] (with init).
PrimFunc Build(const Knobs& k) {
  const std::string& p = k.prefix;
  const int64_t n = k.n;
  Buffer a(p + "A", k.dtype, {I(n), I(n)});
  Buffer b(p + "B", k.dtype, {I(n), I(n)});
  Buffer c(p + "C", k.dtype, {I(n), I(n)});
  std::vector<Expr> t_shape, t_strides;
  for (int64_t d : k.t_shape) t_shape.push_back(I(d));
  for (int64_t s : k.t_strides) t_strides.push_back(I(s));
  Buffer t(p + "T", k.t_dtype, t_shape, k.t_scope, t_strides);
  if (k.t_align != 0) {
    auto node = std::make_shared<BufferNode>(*t.get());
    node->align = k.t_align;
    t = Buffer(std::move(node));
  }

  // Nest 1: block T.
  Var i(p + "i"), j(p + "j");
  Stmt nest1;
  {
    Var vi(p + "vi"), vj(p + "vj");
    BlockNode blk;
    blk.name = k.t_block_name;
    blk.iter_vars = {{vi, Rng(0, n), IterType::kDataPar}, {vj, Rng(0, n), IterType::kDataPar}};
    Buffer src = k.t_load_from_b ? b : a;
    blk.reads = {{src, {{vi, I(1)}, {vj, I(1)}}}};
    blk.writes = {{t, {{vi, I(1)}, {vj, I(1)}}}};
    std::vector<Expr> store_idx =
        k.transpose_t_store ? std::vector<Expr>{vj, vi} : std::vector<Expr>{vi, vj};
    blk.body = BufferStore(
        t, Cast(k.t_dtype, BufferLoad(src, {vi, vj}) * FloatImm(k.scale, k.dtype)), store_idx);
    std::vector<Expr> binds = k.swap_t_bindings ? std::vector<Expr>{j, i} : std::vector<Expr>{i, j};
    Stmt realize = BlockRealize(binds, BoolImm(true), MakeBlock(std::move(blk)));
    nest1 = For(i, I(0), I(n), ForKind::kSerial,
                For(j, I(0), I(n), k.j_kind, realize, k.j_tag, k.j_annots));
  }

  // Nest 2: block C.
  Var i2(p + "i"), j2(p + "j"), kk(p + "k");
  Stmt nest2;
  {
    Var vi(p + "vi"), vj(p + "vj"), vk(p + "vk");
    BlockNode blk;
    blk.name = "C";
    blk.iter_vars = {{vi, Rng(0, n), IterType::kDataPar},
                     {vj, Rng(0, n), IterType::kDataPar},
                     {vk, Rng(0, k.k_dom_extent), k.k_iter_type}};
    Expr t_k = k.c_read_offset ? vk + 1 : Expr(vk);
    blk.reads = {{t, {{vi, I(1)}, {t_k, I(1)}}}, {b, {{vk, I(1)}, {vj, I(1)}}}};
    blk.writes = {{c, {{vi, I(k.c_write_region_wide ? 2 : 1)}, {vj, I(1)}}}};
    if (k.c_init) blk.init = BufferStore(c, FloatImm(k.c_init_value, k.dtype), {vi, vj});
    Expr prod = Cast(k.dtype, BufferLoad(t, {vi, vk})) * BufferLoad(b, {vk, vj});
    blk.body = BufferStore(c, Binary(k.c_update, BufferLoad(c, {vi, vj}), prod), {vi, vj});
    blk.annotations = k.c_annots;
    Expr pred = k.c_predicate ? Expr(i2 < I(n)) : BoolImm(true);
    Stmt realize = BlockRealize({i2, j2, kk}, pred, MakeBlock(std::move(blk)));
    nest2 =
        For(i2, I(0), I(n), ForKind::kSerial,
            For(j2, I(0), I(n), ForKind::kSerial, For(kk, I(0), I(n), ForKind::kSerial, realize)));
  }

  PrimFunc f;
  f.name = k.func_name;
  f.params = {a, b, c};
  f.body = MakeRootBody(k.swap_nests ? SeqStmt({nest2, nest1}) : SeqStmt({nest1, nest2}), {t});
  f.attrs = k.attrs;
  return f;
}

std::string Mismatch(const PrimFunc& a, const PrimFunc& b) {
  return StructuralMismatch(a, b).value_or("<equal>");
}

TEST(StructuralEqual, EqualUnderRenamingOfVariablesAndBuffers) {
  Knobs x, y;
  x.prefix = "x_";
  y.prefix = "renamed_";
  PrimFunc a = Build(x), b = Build(y);
  EXPECT_TRUE(StructuralEqual(a, b)) << Mismatch(a, b);
  EXPECT_EQ(StructuralMismatch(a, b), std::nullopt);
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
}

TEST(StructuralEqual, FunctionNameDoesNotMatter) {
  Knobs x, y;
  y.func_name = "other";
  EXPECT_TRUE(StructuralEqual(Build(x), Build(y)));
  EXPECT_EQ(StructuralHash(Build(x)), StructuralHash(Build(y)));
}

TEST(StructuralEqual, IndependentBuildsAreEqualAndHashEqual) {
  PrimFunc a = Build({}), b = Build({});
  EXPECT_TRUE(StructuralEqual(a, b)) << Mismatch(a, b);
  EXPECT_EQ(StructuralHashHex(a), StructuralHashHex(b));
  EXPECT_TRUE(StructuralEqual(a, a));
}

// One difference of each kind: unequal, named by StructuralMismatch, and
// (with overwhelming probability) a different hash.
struct DiffCase {
  std::string name;
  std::function<void(Knobs&)> change;
  std::string expected;  // must appear in the mismatch text
};

void PrintTo(const DiffCase& c, std::ostream* os) { *os << c.name; }

class StructuralDiff : public ::testing::TestWithParam<DiffCase> {};

TEST_P(StructuralDiff, IsUnequalNamedAndHashesDifferently) {
  const DiffCase& c = GetParam();
  Knobs changed;
  c.change(changed);
  PrimFunc a = Build({}), b = Build(changed);
  EXPECT_FALSE(StructuralEqual(a, b));
  EXPECT_FALSE(StructuralEqual(b, a));
  std::optional<std::string> m = StructuralMismatch(a, b);
  ASSERT_TRUE(m.has_value());
  EXPECT_THAT(*m, HasSubstr(c.expected));
  EXPECT_NE(StructuralHash(a), StructuralHash(b)) << *m;
}

Annotations Ann(const std::string& key, Expr value) { return {{key, std::move(value)}}; }

const DiffCase kDiffCases[] = {
    {"ParamDtype", [](Knobs& k) { k.dtype = DataType::Float(16); },
     "params[0]: parameter A dtype: float32 vs float16"},
    {"ParamShape", [](Knobs& k) { k.n = 8; }, "params[0]/shape[0]: IntImm value: 16 vs 8"},
    {"FloatConstant", [](Knobs& k) { k.scale = 3.0; }, "FloatImm value: 2 vs 3"},
    {"LoopKind", [](Knobs& k) { k.j_kind = ForKind::kParallel; },
     "for j: loop kind: serial vs parallel"},
    {"ThreadBinding",
     [](Knobs& k) {
       k.j_kind = ForKind::kThreadBinding;
       k.j_tag = "threadIdx.x";
     },
     "loop kind: serial vs thread_binding"},
    {"LoopAnnotation", [](Knobs& k) { k.j_annots = Ann("pragma_unroll", I(1)); },
     "for j/annotations: annotation count: 0 vs 1"},
    {"BlockName", [](Knobs& k) { k.t_block_name = "T2"; }, "block name: 'T' vs 'T2'"},
    {"Bindings", [](Knobs& k) { k.swap_t_bindings = true; },
     "block 'T'/iter_values[0]: variable i vs j: they refer to different definitions"},
    {"UseMapsToOtherDefinition", [](Knobs& k) { k.transpose_t_store = true; },
     "store T/indices[0]: variable vi vs vj"},
    {"UseOfOtherBuffer", [](Knobs& k) { k.t_load_from_b = true; },
     "reads[0]/buffer: buffer A vs B: they refer to different definitions"},
    {"IterType", [](Knobs& k) { k.k_iter_type = IterType::kDataPar; },
     "block 'C'/iter_vars[2]: iter type: R (reduction) vs S (spatial)"},
    {"IterDomain", [](Knobs& k) { k.k_dom_extent = 8; },
     "block 'C'/iter_vars[2].dom.extent: IntImm value: 16 vs 8"},
    {"Predicate", [](Knobs& k) { k.c_predicate = true; },
     "block 'C'/predicate: expression kind: IntImm vs LT"},
    {"ReadRegion", [](Knobs& k) { k.c_read_offset = true; },
     "block 'C'/reads[0]/region[1].min: expression kind: Var vs Add"},
    {"WriteRegion", [](Knobs& k) { k.c_write_region_wide = true; },
     "block 'C'/writes[0]/region[0].extent: IntImm value: 1 vs 2"},
    {"InitPresence", [](Knobs& k) { k.c_init = false; }, "block 'C': init: present vs absent"},
    {"InitValue", [](Knobs& k) { k.c_init_value = 1.0; },
     "block 'C'/init/store C/value: FloatImm value: 0 vs 1"},
    {"Operator", [](Knobs& k) { k.c_update = ExprKind::kMax; },
     "block 'C'/body/store C/value: expression kind: Add vs Max"},
    {"BlockAnnotationValue",
     [](Knobs& k) { k.c_annots = Ann("meta_schedule.tiling_structure", StringImm("SSRSRS")); },
     "block 'C'/annotations: annotation count: 0 vs 1"},
    {"FunctionAttrValue", [](Knobs& k) { k.attrs = Ann("tir.noalias", BoolImm(false)); },
     "attrs/annotation 'tir.noalias': IntImm value: 1 vs 0"},
    {"FunctionAttrKey", [](Knobs& k) { k.attrs = Ann("global_symbol", StringImm("main")); },
     "attrs: annotation key: 'tir.noalias' vs 'global_symbol'"},
    {"AllocDtype", [](Knobs& k) { k.t_dtype = DataType::Float(16); },
     "alloc_buffers[0]: alloc buffer T dtype: float32 vs float16"},
    {"AllocShape",
     [](Knobs& k) {
       k.t_shape = {16, 17};
     },
     "alloc_buffers[0]/shape[1]: IntImm value: 16 vs 17"},
    {"AllocStrides",
     [](Knobs& k) {
       k.t_strides = {16, 1};
     },
     "alloc buffer T strides rank: 0 vs 2"},
    {"AllocScope", [](Knobs& k) { k.t_scope = "shared"; },
     "alloc buffer T scope: 'global' vs 'shared'"},
    {"AllocAlign", [](Knobs& k) { k.t_align = 64; }, "alloc buffer T align: 0 vs 64"},
    {"StatementOrder", [](Knobs& k) { k.swap_nests = true; },
     "block 'root'/body/seq[0]/for i/body/for j/body: statement kind: BlockRealize vs For"},
};

INSTANTIATE_TEST_SUITE_P(AllKinds, StructuralDiff, ::testing::ValuesIn(kDiffCases),
                         [](const auto& info) { return info.param.name; });

TEST(StructuralEqual, BufferRankMatters) {
  auto make = [](std::vector<Expr> shape) {
    PrimFunc f;
    f.params = {Buffer("A", DataType::Float32(), std::move(shape))};
    f.body = MakeRootBody(Evaluate(I(0)));
    return f;
  };
  PrimFunc a = make({I(8)}), b = make({I(8), I(1)});
  EXPECT_FALSE(StructuralEqual(a, b));
  EXPECT_THAT(Mismatch(a, b), HasSubstr("params[0]: parameter A shape rank: 1 vs 2"));
  EXPECT_NE(StructuralHash(a), StructuralHash(b));
}

TEST(StructuralEqual, AnnotationValuesAndKeysMatter) {
  Knobs x, y, z;
  x.j_annots = Ann("pragma_unroll", I(1));
  y.j_annots = Ann("pragma_unroll", I(2));
  z.j_annots = Ann("pragma_auto_unroll", I(1));
  EXPECT_THAT(Mismatch(Build(x), Build(y)),
              HasSubstr("for j/annotations/annotation 'pragma_unroll': IntImm value: 1 vs 2"));
  EXPECT_THAT(Mismatch(Build(x), Build(z)),
              HasSubstr("annotation key: 'pragma_unroll' vs 'pragma_auto_unroll'"));
  EXPECT_NE(StructuralHash(Build(x)), StructuralHash(Build(y)));
  EXPECT_NE(StructuralHash(Build(x)), StructuralHash(Build(z)));
}

TEST(StructuralEqual, ThreadTagMatters) {
  Knobs x, y;
  x.j_kind = y.j_kind = ForKind::kThreadBinding;
  x.j_tag = "threadIdx.x";
  y.j_tag = "threadIdx.y";
  EXPECT_THAT(Mismatch(Build(x), Build(y)),
              HasSubstr("for j: thread tag: 'threadIdx.x' vs 'threadIdx.y'"));
  EXPECT_NE(StructuralHash(Build(x)), StructuralHash(Build(y)));
}

TEST(StructuralEqual, FullMismatchPath) {
  Knobs y;
  y.c_update = ExprKind::kMul;
  EXPECT_EQ(Mismatch(Build({}), Build(y)),
            "body/block 'root'/body/seq[1]/for i/body/for j/body/for k/body/block 'C'/body/"
            "store C/value: expression kind: Add vs Mul");
  Knobs z;
  z.scale = 3.0;
  EXPECT_EQ(Mismatch(Build({}), Build(z)),
            "body/block 'root'/body/seq[0]/for i/body/for j/body/block 'T'/body/store T/value/"
            "Mul.b: FloatImm value: 2 vs 3");
}

TEST(StructuralEqual, IntConstantsCompareExactlyWithTheirType) {
  EXPECT_TRUE(StructuralEqual(I(7), I(7)));
  EXPECT_FALSE(StructuralEqual(I(7), I(8)));
  EXPECT_THAT(StructuralMismatch(I(7), IntImm(7, DataType::Int64())).value_or(""),
              HasSubstr("IntImm dtype: int32 vs int64"));
  EXPECT_FALSE(StructuralEqual(IntImm(int64_t{1} << 40, DataType::Int64()),
                               IntImm((int64_t{1} << 40) + 1, DataType::Int64())));
  EXPECT_NE(StructuralHash(I(7)), StructuralHash(IntImm(7, DataType::Int64())));
  EXPECT_NE(StructuralHash(I(7)), StructuralHash(I(8)));
}

TEST(StructuralEqual, FloatsByBitPatternWithOneNaN) {
  double nan1 = std::numeric_limits<double>::quiet_NaN();
  double nan2 = -std::nan("0x123");  // another payload and sign
  ASSERT_TRUE(std::isnan(nan2));
  EXPECT_TRUE(StructuralEqual(F(nan1), F(nan2)));
  EXPECT_EQ(StructuralHash(F(nan1)), StructuralHash(F(nan2)));
  EXPECT_FALSE(StructuralEqual(F(0.0), F(-0.0)));
  EXPECT_THAT(StructuralMismatch(F(0.0), F(-0.0)).value_or(""),
              HasSubstr("FloatImm value: 0 vs -0"));
  EXPECT_NE(StructuralHash(F(0.0)), StructuralHash(F(-0.0)));
  EXPECT_FALSE(StructuralEqual(F(1.0), F(std::nextafter(1.0, 2.0))));
  EXPECT_FALSE(StructuralEqual(F(1.0), FloatImm(1.0, DataType::Float64())));
}

TEST(StructuralEqual, ExpressionFreeVariablesCompareByIdentity) {
  Var x("x"), y("x");  // same name, different variables
  EXPECT_TRUE(StructuralEqual(x + 1, x + 1));
  EXPECT_FALSE(StructuralEqual(x + 1, y + 1));
  EXPECT_THAT(StructuralMismatch(x + 1, y + 1).value_or(""),
              HasSubstr("Add.a: free variable x vs x: different variables"));
  // The hash numbers free variables by first use, so it cannot tell these
  // apart; equality is the arbiter.
  EXPECT_EQ(StructuralHash(x + 1), StructuralHash(y + 1));
  EXPECT_NE(StructuralHash(x + x), StructuralHash(x + y));
  EXPECT_FALSE(StructuralEqual(x, Var("x", DataType::Int64())));
}

TEST(StructuralEqual, StatementFreeBuffersCompareByIdentityDefinedOnesByPosition) {
  Buffer a("A", DataType::Float32(), {I(8)});
  Buffer a2("A", DataType::Float32(), {I(8)});
  Var i("i"), j("j");
  Stmt s1 = For(i, I(0), I(8), ForKind::kSerial, BufferStore(a, F(1), {i}));
  Stmt s2 = For(j, I(0), I(8), ForKind::kSerial, BufferStore(a, F(1), {j}));
  Stmt s3 = For(j, I(0), I(8), ForKind::kSerial, BufferStore(a2, F(1), {j}));
  EXPECT_TRUE(StructuralEqual(s1, s2)) << StructuralMismatch(s1, s2).value_or("");
  EXPECT_EQ(StructuralHash(s1), StructuralHash(s2));
  EXPECT_FALSE(StructuralEqual(s1, s3));
  EXPECT_THAT(StructuralMismatch(s1, s3).value_or(""),
              HasSubstr("for i/body/store A/buffer: free buffer A vs A: different buffers"));

  // As parameters of functions the same buffers are matched by position.
  PrimFunc f1, f3;
  f1.params = {a};
  f1.body = MakeRootBody(s1);
  f3.params = {a2};
  f3.body = MakeRootBody(s3);
  EXPECT_TRUE(StructuralEqual(f1, f3)) << Mismatch(f1, f3);
  EXPECT_EQ(StructuralHash(f1), StructuralHash(f3));
}

TEST(StructuralEqual, BoundAndFreeUsesDiffer) {
  Buffer a("A", DataType::Float32(), {I(8)});
  Var i("i"), j("j"), free("n");
  Stmt bound = For(i, I(0), I(8), ForKind::kSerial, BufferStore(a, F(1), {i}));
  Stmt unbound = For(j, I(0), I(8), ForKind::kSerial, BufferStore(a, F(1), {free}));
  EXPECT_THAT(StructuralMismatch(bound, unbound).value_or(""),
              HasSubstr("variable i vs n: i is defined here but n is free"));
  EXPECT_NE(StructuralHash(bound), StructuralHash(unbound));
}

TEST(StructuralEqual, ShadowedDefinitionsAreScoped) {
  Buffer a("A", DataType::Float32(), {I(8)});
  Var x("x"), x2("x2"), y("y");
  // a: for x: for x2: A[x] = 1      b: for y: for y: A[y] = 1 (inner y shadows)
  Stmt sa = For(x, I(0), I(8), ForKind::kSerial,
                For(x2, I(0), I(8), ForKind::kSerial, BufferStore(a, F(1), {x})));
  Stmt sb = For(y, I(0), I(8), ForKind::kSerial,
                For(y, I(0), I(8), ForKind::kSerial, BufferStore(a, F(1), {y})));
  EXPECT_FALSE(StructuralEqual(sa, sb));
  EXPECT_FALSE(StructuralEqual(sb, sa));
  EXPECT_THAT(StructuralMismatch(sa, sb).value_or(""), HasSubstr("different definitions"));
  EXPECT_NE(StructuralHash(sa), StructuralHash(sb));
  // Using the inner variable is what b does.
  Stmt sc = For(x, I(0), I(8), ForKind::kSerial,
                For(x2, I(0), I(8), ForKind::kSerial, BufferStore(a, F(1), {x2})));
  EXPECT_TRUE(StructuralEqual(sc, sb)) << StructuralMismatch(sc, sb).value_or("");
  EXPECT_EQ(StructuralHash(sc), StructuralHash(sb));

  // The same loop variable reused by two sibling loops is like two variables.
  Var p("p"), q("q");
  Stmt shared = SeqStmt({For(p, I(0), I(8), ForKind::kSerial, BufferStore(a, F(1), {p})),
                         For(p, I(0), I(8), ForKind::kSerial, BufferStore(a, F(2), {p}))});
  Stmt distinct = SeqStmt({For(p, I(0), I(8), ForKind::kSerial, BufferStore(a, F(1), {p})),
                           For(q, I(0), I(8), ForKind::kSerial, BufferStore(a, F(2), {q}))});
  EXPECT_TRUE(StructuralEqual(shared, distinct));
  EXPECT_EQ(StructuralHash(shared), StructuralHash(distinct));
}

// Scopes deeper than a few dozen definitions are looked up through an index
// instead of a scan; both must agree, including on shadowing and on scopes
// closing again.
TEST(StructuralEqual, DeepScopesBehaveLikeShallowOnes) {
  constexpr int kDepth = 40;
  // for v0: for v1: ... for v39: { A[v_use(0)] = 0; ...; A[v_use(39)] = 39 }
  // followed by one more store using a free variable; the nest is repeated so
  // that its scope opens and closes twice. inner_repeat makes the innermost
  // loop rebind v0, shadowing the outermost one.
  auto make = [](const std::string& p, int swap_use, bool inner_repeat) {
    Buffer a(p + "A", DataType::Float32(), {I(kDepth)});
    std::vector<Var> vars;
    for (int d = 0; d < kDepth; ++d) vars.emplace_back(p + "v" + std::to_string(d));
    if (inner_repeat) vars.back() = vars.front();
    std::vector<Stmt> nests;
    for (int rep = 0; rep < 2; ++rep) {
      std::vector<Stmt> stores;
      for (int d = 0; d < kDepth; ++d) {
        int use = d == swap_use ? d + 1 : d;
        stores.push_back(BufferStore(a, F(d), {vars[use]}));
      }
      Stmt body = SeqStmt(std::move(stores));
      for (int d = kDepth - 1; d >= 0; --d) {
        body = For(vars[d], I(0), I(2), ForKind::kSerial, body);
      }
      nests.push_back(body);
    }
    PrimFunc f;
    f.params = {a};
    f.body = MakeRootBody(SeqStmt(std::move(nests)));
    return f;
  };
  EXPECT_TRUE(StructuralEqual(make("x", -1, false), make("y", -1, false)));
  EXPECT_EQ(StructuralHash(make("x", -1, false)), StructuralHash(make("y", -1, false)));
  for (int swap : {0, 20, 38}) {
    SCOPED_TRACE(swap);
    PrimFunc a = make("x", -1, false), b = make("y", swap, false);
    EXPECT_THAT(Mismatch(a, b), HasSubstr("they refer to different definitions"));
    EXPECT_NE(StructuralHash(a), StructuralHash(b));
  }
  // With v39 == v0, the stores of v0 and v39 both refer to the innermost loop.
  PrimFunc shadow = make("x", -1, true);
  EXPECT_FALSE(StructuralEqual(make("x", -1, false), shadow));
  EXPECT_NE(StructuralHash(make("x", -1, false)), StructuralHash(shadow));
  EXPECT_TRUE(StructuralEqual(shadow, make("y", -1, true)));
  EXPECT_EQ(StructuralHash(shadow), StructuralHash(make("y", -1, true)));
}

TEST(StructuralEqual, SymbolicShapeVariablesOfFunctionsMatchByFirstUse) {
  auto make = [](const Var& n, const Var& m) {
    Buffer a("A", DataType::Float32(), {n, m});
    Var i("i"), j("j");
    PrimFunc f;
    f.params = {a};
    f.body = MakeRootBody(For(i, I(0), n, ForKind::kSerial,
                              For(j, I(0), m, ForKind::kSerial, BufferStore(a, F(0), {i, j}))));
    return f;
  };
  Var n("n"), m("m"), p("p"), q("q");
  EXPECT_TRUE(StructuralEqual(make(n, m), make(p, q)));
  EXPECT_EQ(StructuralHash(make(n, m)), StructuralHash(make(p, q)));
  // One symbol used for both extents is not the same program as two symbols.
  EXPECT_FALSE(StructuralEqual(make(n, m), make(p, p)));
  EXPECT_THAT(Mismatch(make(n, m), make(p, p)),
              HasSubstr("params[0]/shape[1]: free variable m vs p: each was matched to another "
                        "before"));
  EXPECT_NE(StructuralHash(make(n, m)), StructuralHash(make(p, p)));
}

TEST(StructuralHash, SharedSubexpressionHashesLikeUnsharedCopy) {
  Buffer a("A", DataType::Float32(), {I(8)});
  Var i("i");
  Expr shared = BufferLoad(a, {i}) * F(2);
  Stmt s1 = For(i, I(0), I(8), ForKind::kSerial, BufferStore(a, shared + shared, {i}));
  Stmt s2 = For(i, I(0), I(8), ForKind::kSerial,
                BufferStore(a, BufferLoad(a, {i}) * F(2) + BufferLoad(a, {i}) * F(2), {i}));
  EXPECT_TRUE(StructuralEqual(s1, s2));
  EXPECT_EQ(StructuralHash(s1), StructuralHash(s2));
  EXPECT_EQ(StructuralHash(shared + shared),
            StructuralHash(BufferLoad(a, {i}) * F(2) + BufferLoad(a, {i}) * F(2)));
}

TEST(StructuralHash, HexIsSixteenLowercaseDigits) {
  EXPECT_EQ(StructuralHashHex(uint64_t{0}), "0000000000000000");
  EXPECT_EQ(StructuralHashHex(uint64_t{0x1a}), "000000000000001a");
  EXPECT_EQ(StructuralHashHex(~uint64_t{0}), "ffffffffffffffff");
  std::string h = StructuralHashHex(Build({}));
  EXPECT_EQ(h, StructuralHashHex(StructuralHash(Build({}))));
  EXPECT_THAT(h, ::testing::MatchesRegex("[0-9a-f]{16}"));
}

TEST(StructuralHash, ExprStmtAndFunctionRootsAreDistinct) {
  Buffer a("A", DataType::Float32(), {I(8)});
  Stmt s = Evaluate(I(1));
  EXPECT_NE(StructuralHash(I(1)), StructuralHash(s));
  PrimFunc f;
  f.body = MakeRootBody(s);
  EXPECT_NE(StructuralHash(f), StructuralHash(f.body));
}

// A function whose hash stream is far longer than the hasher's internal
// buffer, so the streamed (chunked) path is exercised.
PrimFunc ManyStores(int count, double last_value, const std::string& prefix) {
  Buffer a(prefix + "A", DataType::Float32(), {I(count)});
  std::vector<Stmt> seq;
  for (int s = 0; s < count; ++s) {
    seq.push_back(BufferStore(a, F(s + 1 == count ? last_value : s), {I(s)}));
  }
  PrimFunc f;
  f.params = {a};
  f.body = MakeRootBody(SeqStmt(std::move(seq)));
  return f;
}

TEST(StructuralHash, LongStreamsHashEveryByte) {
  PrimFunc a = ManyStores(4000, 1.0, "a"), b = ManyStores(4000, 1.0, "b");
  PrimFunc c = ManyStores(4000, 2.0, "c");
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_NE(StructuralHash(a), StructuralHash(c));
  EXPECT_THAT(Mismatch(a, c), HasSubstr("seq[3999]/store aA/value: FloatImm value: 1 vs 2"));
}

// ---- The documented stream ------------------------------------------------
//
// An independent XXH64 (from the public xxHash specification) over streams
// written out by hand from the format comment in structural_hash.cc: if the
// code and its documentation ever disagree, this fails.

uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t ReferenceXxh64(const std::vector<uint8_t>& in) {
  constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL, kP2 = 0xC2B2AE3D27D4EB4FULL,
                     kP3 = 0x165667B19E3779F9ULL, kP4 = 0x85EBCA77C2B2AE63ULL,
                     kP5 = 0x27D4EB2F165667C5ULL;
  auto read = [&](size_t at, int bytes) {
    uint64_t v = 0;
    for (int k = 0; k < bytes; ++k) v |= uint64_t{in[at + k]} << (8 * k);
    return v;
  };
  auto round = [&](uint64_t acc, uint64_t lane) { return Rotl(acc + lane * kP2, 31) * kP1; };
  const size_t len = in.size();
  size_t at = 0;
  uint64_t h;
  if (len >= 32) {
    uint64_t v[4] = {kP1 + kP2, kP2, 0, 0 - kP1};
    for (; at + 32 <= len; at += 32) {
      for (int k = 0; k < 4; ++k) v[k] = round(v[k], read(at + 8 * k, 8));
    }
    h = Rotl(v[0], 1) + Rotl(v[1], 7) + Rotl(v[2], 12) + Rotl(v[3], 18);
    for (uint64_t lane : v) h = (h ^ round(0, lane)) * kP1 + kP4;
  } else {
    h = kP5;
  }
  h += len;
  for (; at + 8 <= len; at += 8) h = Rotl(h ^ round(0, read(at, 8)), 27) * kP1 + kP4;
  if (at + 4 <= len) {
    h = Rotl(h ^ (read(at, 4) * kP1), 23) * kP2 + kP3;
    at += 4;
  }
  for (; at < len; ++at) h = Rotl(h ^ (in[at] * kP5), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

TEST(StructuralHash, ReferenceXxh64MatchesPublishedVectors) {
  EXPECT_EQ(ReferenceXxh64({}), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(ReferenceXxh64({'a', 'b', 'c'}), 0x44BC2CF5AD770999ULL);
}

// Writes stream primitives as the format comment defines them.
struct StreamWriter {
  std::vector<uint8_t> bytes;
  StreamWriter& Le(uint64_t v, int n) {
    for (int k = 0; k < n; ++k) bytes.push_back(static_cast<uint8_t>(v >> (8 * k)));
    return *this;
  }
  StreamWriter& U8(uint8_t v) { return Le(v, 1); }
  StreamWriter& U32(uint32_t v) { return Le(v, 4); }
  StreamWriter& I64(int64_t v) { return Le(static_cast<uint64_t>(v), 8); }
  StreamWriter& Str(const std::string& s) {
    U32(static_cast<uint32_t>(s.size()));
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  StreamWriter& DType(uint8_t code, uint8_t bits, uint16_t lanes = 1) {
    return U8(code).U8(bits).Le(lanes, 2);
  }
  StreamWriter& Int32() { return DType(0, 32); }
  StreamWriter& Header(uint8_t root) {
    for (char c : std::string("KILNSH01")) bytes.push_back(static_cast<uint8_t>(c));
    return U8(root);
  }
  StreamWriter& IntImm32(int64_t v) { return U8(0x10).Int32().I64(v); }
};

TEST(StructuralHash, StreamIsTheDocumentedOne) {
  Var x("x");
  StreamWriter e;
  e.Header(0x02);
  e.U8(0x20).Int32();         // Add
  e.U8(0x22).Int32();         //   Mul
  e.U8(0x14).Int32().U32(0);  //     free variable #0
  e.IntImm32(4);              //     4
  e.IntImm32(1);              //   1
  EXPECT_EQ(StructuralHash(x * 4 + 1), ReferenceXxh64(e.bytes));

  // for i in 0..4: A[i] = 1.5, in a function with parameter A: float32[4].
  Buffer a("A", DataType::Float32(), {I(4)});
  Var i("i");
  PrimFunc f;
  f.params = {a};
  f.body = MakeRootBody(For(i, I(0), I(4), ForKind::kSerial, BufferStore(a, F(1.5), {i})));
  StreamWriter s;
  s.Header(0x01).U32(1);                                    // one parameter
  s.U8(0x61).DType(2, 32).U32(1).IntImm32(4).U32(0);        //   float32, shape [4], no strides
  s.Str("global").I64(0);                                   //   scope, align
  s.U32(0);                                                 // no attrs
  s.U8(0x51).U8(0x01).Str("root").U32(0).U32(0);            // root realize: no iter vars/bindings
  s.U8(0x10).DType(4, 1).I64(1);                            //   predicate True
  s.U32(0).U32(0).U32(0).U8(0);                             //   no allocs, reads, writes, init
  s.U8(0x50).IntImm32(0).IntImm32(4).U8(0).Str("").U32(0);  // for: min, extent, serial, "", {}
  s.U8(0x60).Int32();                                       //   loop variable #0
  s.U8(0x52).U8(0x62).U32(0);                               //   store to buffer #0
  s.U8(0x11).DType(2, 32).Le(0x3FF8000000000000ULL, 8);     //     1.5
  s.U32(1).U8(0x13).Int32().U32(0);                         //     [variable #0]
  s.U32(0);                                                 //   root block annotations
  EXPECT_EQ(StructuralHash(f), ReferenceXxh64(s.bytes));
}

// ---- Golden values --------------------------------------------------------
//
// These hashes are database keys: tuning records are stored and looked up by
// them. A test failure here means the canonical stream in structural_hash.cc
// changed, which is a database FORMAT CHANGE — existing databases would stop
// matching their workloads. Change the expected values only together with a
// deliberate format bump (kFormatMagic) and a migration plan.

// C[i, j] += A[i, k] * B[k, j] with init, 64x64x64 float32.
PrimFunc GoldenMatmul(const std::string& p) {
  Buffer a(p + "A", DataType::Float32(), {I(64), I(64)});
  Buffer b(p + "B", DataType::Float32(), {I(64), I(64)});
  Buffer c(p + "C", DataType::Float32(), {I(64), I(64)});
  Var i(p + "i"), j(p + "j"), k(p + "k"), vi(p + "vi"), vj(p + "vj"), vk(p + "vk");
  BlockNode blk;
  blk.name = "C";
  blk.iter_vars = {{vi, Rng(0, 64), IterType::kDataPar},
                   {vj, Rng(0, 64), IterType::kDataPar},
                   {vk, Rng(0, 64), IterType::kCommReduce}};
  blk.reads = {{a, {{vi, I(1)}, {vk, I(1)}}}, {b, {{vk, I(1)}, {vj, I(1)}}}};
  blk.writes = {{c, {{vi, I(1)}, {vj, I(1)}}}};
  blk.init = BufferStore(c, F(0), {vi, vj});
  blk.body = BufferStore(
      c, BufferLoad(c, {vi, vj}) + BufferLoad(a, {vi, vk}) * BufferLoad(b, {vk, vj}), {vi, vj});
  Stmt realize = BlockRealize({i, j, k}, BoolImm(true), MakeBlock(std::move(blk)));
  PrimFunc f;
  f.name = "matmul";
  f.params = {a, b, c};
  f.body = MakeRootBody(
      For(i, I(0), I(64), ForKind::kSerial,
          For(j, I(0), I(64), ForKind::kSerial, For(k, I(0), I(64), ForKind::kSerial, realize))));
  f.attrs = {{"tir.noalias", BoolImm(true)}};
  return f;
}

// B = exp(A) through a shared-scope intermediate T allocated in the root block.
PrimFunc GoldenTwoBlocks(const std::string& p) {
  Buffer a(p + "A", DataType::Float(16), {I(32), I(8)});
  Buffer b(p + "B", DataType::Float32(), {I(32), I(8)});
  Buffer t(p + "T", DataType::Float32(), {I(32), I(8)}, "shared", {I(8), I(1)});
  auto block = [&](const std::string& name, const Buffer& src, const Buffer& dst, bool exp) {
    Var i(p + "i"), j(p + "j"), vi(p + "vi"), vj(p + "vj");
    BlockNode blk;
    blk.name = name;
    blk.iter_vars = {{vi, Rng(0, 32), IterType::kDataPar}, {vj, Rng(0, 8), IterType::kDataPar}};
    blk.reads = {{src, {{vi, I(1)}, {vj, I(1)}}}};
    blk.writes = {{dst, {{vi, I(1)}, {vj, I(1)}}}};
    Expr v = BufferLoad(src, {vi, vj});
    if (exp) {
      v = Call(CallOp::kExp, {Cast(DataType::Float32(), v)});
    } else {
      v = Select(v > F(0), v, F(0));
    }
    blk.body = BufferStore(dst, v, {vi, vj});
    return For(i, I(0), I(32), ForKind::kParallel,
               For(j, I(0), I(8), ForKind::kUnrolled,
                   BlockRealize({i, j}, BoolImm(true), MakeBlock(std::move(blk)))));
  };
  PrimFunc f;
  f.params = {a, b};
  f.body = MakeRootBody(SeqStmt({block("T", a, t, true), block("B", t, b, false)}), {t});
  return f;
}

// A vectorized copy with a ramp index, a broadcast and annotations.
PrimFunc GoldenVectorized(const std::string& p) {
  Buffer a(p + "A", DataType::Float32(), {I(1024)});
  Buffer b(p + "B", DataType::Float32(), {I(1024)});
  Var io(p + "io"), vio(p + "vio");
  BlockNode blk;
  blk.name = "B";
  blk.iter_vars = {{vio, Rng(0, 128), IterType::kDataPar}};
  blk.reads = {{a, {{vio * 8, I(8)}}}};
  blk.writes = {{b, {{vio * 8, I(8)}}}};
  Expr idx = Ramp(vio * 8, I(1), 8);
  blk.body = BufferStore(b, BufferLoad(a, {idx}) + Broadcast(F(1.5), 8), {idx});
  blk.annotations = {{"meta_schedule.vectorize", I(8)},
                     {"schedule_rule", StringImm("vectorized-copy")}};
  PrimFunc f;
  f.params = {a, b};
  f.body =
      MakeRootBody(For(io, I(0), I(128), ForKind::kVectorized,
                       BlockRealize({io}, BoolImm(true), MakeBlock(std::move(blk))), "",
                       {{"pragma_auto_unroll_max_step", I(16)}, {"software_pipeline", F(0.25)}}));
  f.attrs = {{"global_symbol", StringImm("vcopy")}, {"tir.noalias", BoolImm(true)}};
  return f;
}

// A GPU-style kernel: thread-bound loops, a guard, an evaluate, int64 math.
PrimFunc GoldenThreadBound(const std::string& p) {
  Buffer a(p + "A", DataType::Int(8), {I(4096)});
  Buffer b(p + "B", DataType::Int64(), {I(4096)});
  Var bx(p + "bx"), tx(p + "tx"), v(p + "v");
  Expr g = bx * 256 + tx;
  BlockNode blk;
  blk.name = "B";
  blk.iter_vars = {{v, Rng(0, 4096), IterType::kDataPar}};
  blk.reads = {{a, {{v, I(1)}}}};
  blk.writes = {{b, {{v, I(1)}}}};
  Expr x = Cast(DataType::Int64(), BufferLoad(a, {v}));
  auto l = [](int64_t c) { return IntImm(c, DataType::Int64()); };
  Expr odd_or_negative = x < l(0) || !EQ(FloorMod(x, l(2)), l(0));
  blk.body = SeqStmt({IfThenElseStmt(odd_or_negative, BufferStore(b, FloorDiv(x, l(2)) - x, {v}),
                                     BufferStore(b, Min(x, Max(x, l(-7))), {v})),
                      Evaluate(I(0))});
  PrimFunc f;
  f.params = {a, b};
  f.body = MakeRootBody(
      For(bx, I(0), I(16), ForKind::kThreadBinding,
          For(tx, I(0), I(256), ForKind::kThreadBinding,
              BlockRealize({g}, g < I(4096), MakeBlock(std::move(blk))), "threadIdx.x"),
          "blockIdx.x"));
  return f;
}

TEST(StructuralHash, GoldenValues) {
  EXPECT_EQ(StructuralHashHex(GoldenMatmul("")), "ac79f35d98108b43");
  EXPECT_EQ(StructuralHashHex(GoldenTwoBlocks("")), "340010f559b5028a");
  EXPECT_EQ(StructuralHashHex(GoldenVectorized("")), "16682e9661d815ce");
  EXPECT_EQ(StructuralHashHex(GoldenThreadBound("")), "b4f63c8d59ebf891");
  Var x("x");
  EXPECT_EQ(StructuralHashHex(StructuralHash(x * 4 + 1)), "52f5853e20f55521");
}

TEST(StructuralHash, GoldenFunctionsIgnoreNames) {
  EXPECT_EQ(StructuralHash(GoldenMatmul("")), StructuralHash(GoldenMatmul("other_")));
  EXPECT_EQ(StructuralHash(GoldenTwoBlocks("")), StructuralHash(GoldenTwoBlocks("other_")));
  EXPECT_EQ(StructuralHash(GoldenVectorized("")), StructuralHash(GoldenVectorized("other_")));
  EXPECT_EQ(StructuralHash(GoldenThreadBound("")), StructuralHash(GoldenThreadBound("other_")));
  EXPECT_TRUE(StructuralEqual(GoldenThreadBound(""), GoldenThreadBound("other_")));
  EXPECT_FALSE(StructuralEqual(GoldenMatmul(""), GoldenTwoBlocks("")));
  EXPECT_NE(StructuralHash(GoldenMatmul("")), StructuralHash(GoldenVectorized("")));
}

}  // namespace
}  // namespace kiln::ir
