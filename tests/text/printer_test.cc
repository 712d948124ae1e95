// Printing hand-built functions: golden text, and print -> parse -> print is
// a fixed point.
#include "ir/text/printer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/op.h"
#include "ir/text/parser.h"

namespace kiln::ir {
namespace {

// Prints f, parses the text back and prints again; both prints must agree.
std::string RoundTrip(const PrimFunc& f) {
  std::string text = ToText(f);
  PrimFunc back;
  EXPECT_NO_THROW(back = ParseFunc(text)) << text;
  EXPECT_EQ(ToText(back), text);
  return text;
}

Buffer Buf(const std::string& name, std::vector<int64_t> shape, DataType t = DataType::Float32(),
           const std::string& scope = "global", DataType index = DataType::Int32()) {
  std::vector<Expr> s;
  for (int64_t d : shape) s.push_back(IntImm(d, index));
  return Buffer(name, t, s, scope);
}

Stmt Block(BlockNode node, std::vector<Expr> bindings, Expr pred = Expr()) {
  return BlockRealize(std::move(bindings), pred, MakeBlock(std::move(node)));
}

BufferRegion Point(const Buffer& b, std::vector<Expr> idx) {
  BufferRegion r{b, {}};
  for (auto& i : idx) r.region.push_back(Range{i, IntImm(1, i.dtype())});
  return r;
}

PrimFunc Matmul() {
  Buffer A = Buf("A", {128, 128}), B = Buf("B", {128, 128}), C = Buf("C", {128, 128});
  Buffer D = Buf("D", {128, 128});
  Var i("i"), j("j"), k("k"), vi("v_i"), vj("v_j"), vk("v_k");
  Expr n = IntImm(128);
  BlockNode b;
  b.name = "C";
  b.iter_vars = {{vi, {IntImm(0), n}, IterType::kDataPar},
                 {vj, {IntImm(0), n}, IterType::kDataPar},
                 {vk, {IntImm(0), n}, IterType::kCommReduce}};
  b.reads = {Point(A, {vi, vk}), Point(B, {vk, vj})};
  b.writes = {Point(C, {vi, vj})};
  b.init = BufferStore(C, FloatImm(0.0), {vi, vj});
  b.body = BufferStore(
      C, BufferLoad(C, {vi, vj}) + BufferLoad(A, {vi, vk}) * BufferLoad(B, {vk, vj}), {vi, vj});
  Stmt body = Block(std::move(b), {i, j, k});
  body = For(k, IntImm(0), n, ForKind::kSerial, body);
  body = For(j, IntImm(0), n, ForKind::kSerial, body);
  body = For(i, IntImm(0), n, ForKind::kSerial, body);
  PrimFunc f;
  f.params = {A, B, C};
  f.attrs = {{"tir.noalias", BoolImm(true)}};
  f.body = MakeRootBody(body, {D});
  return f;
}

TEST(Printer, MatmulGolden) {
  EXPECT_EQ(RoundTrip(Matmul()), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    D = T.alloc_buffer((128, 128))
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
}

// Two reductions and two element-wise blocks over intermediate buffers, with
// name clashes the printer must resolve.
PrimFunc SoftmaxLike() {
  Buffer A = Buf("A", {4, 16}), out = Buf("out", {4, 16});
  Buffer mx = Buf("red", {4}), ex = Buf("red", {4, 16}),
         sum = Buf("sum", {4}, DataType::Float32(), "local");
  auto reduce = [&](const std::string& name, const Buffer& dst, Expr init, auto update,
                    const Buffer& src) {
    Var i("i"), k("k"), vi("v"), vk("v");
    BlockNode b;
    b.name = name;
    b.iter_vars = {{vi, {IntImm(0), IntImm(4)}, IterType::kDataPar},
                   {vk, {IntImm(0), IntImm(16)}, IterType::kCommReduce}};
    b.reads = {Point(src, {vi, vk})};
    b.writes = {Point(dst, {vi})};
    b.init = BufferStore(dst, init, {vi});
    b.body = BufferStore(dst, update(BufferLoad(dst, {vi}), BufferLoad(src, {vi, vk})), {vi});
    return For(i, IntImm(0), IntImm(4), ForKind::kSerial,
               For(k, IntImm(0), IntImm(16), ForKind::kSerial, Block(std::move(b), {i, k})));
  };
  auto ewise = [&](const std::string& name, const Buffer& dst, auto value) {
    Var i("i"), j("i"), vi("vi"), vj("vj");
    BlockNode b;
    b.name = name;
    b.iter_vars = {{vi, {IntImm(0), IntImm(4)}, IterType::kDataPar},
                   {vj, {IntImm(0), IntImm(16)}, IterType::kDataPar}};
    b.reads = {BufferRegion{A, {{vi, IntImm(1)}, {IntImm(0), IntImm(16)}}}};
    b.writes = {Point(dst, {vi, vj})};
    b.body = BufferStore(dst, value(vi, vj), {vi, vj});
    return For(i, IntImm(0), IntImm(4), ForKind::kSerial,
               For(j, IntImm(0), IntImm(16), ForKind::kSerial, Block(std::move(b), {i, j})));
  };
  Stmt s1 = reduce(
      "max", mx, MinValue(DataType::Float32()), [](Expr a, Expr b) { return Max(a, b); }, A);
  Stmt s2 = ewise("exp", ex, [&](Expr i, Expr j) {
    return Call(CallOp::kExp, {BufferLoad(A, {i, j}) - BufferLoad(mx, {i})});
  });
  Stmt s3 = reduce(
      "sum", sum, FloatImm(0.0), [](Expr a, Expr b) { return a + b; }, ex);
  Stmt s4 = ewise("norm", out, [&](Expr i, Expr j) {
    return BufferLoad(ex, {i, j}) / BufferLoad(sum, {i});
  });
  PrimFunc f;
  f.name = "softmax";
  f.params = {A, out};
  f.body = MakeRootBody(SeqStmt({s1, s2, s3, s4}), {mx, ex, sum});
  return f;
}

TEST(Printer, SoftmaxGolden) {
  EXPECT_EQ(RoundTrip(SoftmaxLike()), R"(# from tvm.script import tir as T

@T.prim_func
def softmax(A: T.Buffer((4, 16), "float32"), out: T.Buffer((4, 16), "float32")):
    # with T.block("root"):
    red = T.alloc_buffer((4,))
    red_1 = T.alloc_buffer((4, 16))
    sum = T.alloc_buffer((4,), scope="local")
    for i, k in T.grid(4, 16):
        with T.block("max"):
            v, v_1 = T.axis.remap("SR", [i, k])
            T.reads(A[v, v_1])
            T.writes(red[v])
            with T.init():
                red[v] = T.float32(-3.4028234663852886e+38)
            red[v] = T.max(red[v], A[v, v_1])
    for i, i_1 in T.grid(4, 16):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, i_1])
            T.reads(A[vi, 0:16])
            T.writes(red_1[vi, vj])
            red_1[vi, vj] = T.exp(A[vi, vj] - red[vi])
    for i, k in T.grid(4, 16):
        with T.block("sum"):
            v, v_1 = T.axis.remap("SR", [i, k])
            T.reads(red_1[v, v_1])
            T.writes(sum[v])
            with T.init():
                sum[v] = T.float32(0.0)
            sum[v] = sum[v] + red_1[v, v_1]
    for i, i_1 in T.grid(4, 16):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, i_1])
            T.reads(A[vi, 0:16])
            T.writes(out[vi, vj])
            out[vi, vj] = red_1[vi, vj] / sum[vi]
)");
}

TEST(Printer, VectorRampBroadcast) {
  Buffer A = Buf("A", {64}), B = Buf("B", {64});
  Var i("i");
  Expr idx = Ramp(i * 4, IntImm(1), 4);
  Stmt store = BufferStore(B,
                           BufferLoad(A, {idx}) * Broadcast(FloatImm(2.0), 4) +
                               Cast(DataType::Float(32, 4), Ramp(IntImm(0), IntImm(2), 4)),
                           {idx});
  BlockNode b;
  b.name = "vec";
  b.reads = {BufferRegion{A, {{IntImm(0), IntImm(64)}}}};
  b.writes = {BufferRegion{B, {{IntImm(0), IntImm(64)}}}};
  b.body = For(i, IntImm(0), IntImm(16), ForKind::kSerial, store);
  PrimFunc f;
  f.params = {A, B};
  f.body = MakeRootBody(Block(std::move(b), {}));
  std::string text = RoundTrip(f);
  EXPECT_NE(
      text.find("B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] * T.Broadcast(T.float32(2.0), 4)"
                " + T.Cast(\"float32x4\", T.Ramp(0, 2, 4))"),
      std::string::npos)
      << text;
}

TEST(Printer, ThreadBindingAndAnnotations) {
  Buffer A = Buf("A", {1024}), B = Buf("B", {1024});
  Buffer S = Buf("A_shared", {1024}, DataType::Float32(), "shared");
  Var bx("bx"), tx("tx"), u("u"), v("v0");
  BlockNode b;
  b.name = "copy";
  Expr bind = bx * 256 + tx * 4 + u;
  b.iter_vars = {{v, {IntImm(0), IntImm(1024)}, IterType::kDataPar}};
  b.reads = {Point(A, {v})};
  b.writes = {Point(S, {v})};
  b.annotations = {{"meta_schedule.cooperative_fetch", IntImm(4)},
                   {"note", StringImm("a \"quoted\"\nline")},
                   {"ratio", FloatImm(0.5, DataType::Float64())}};
  b.body = BufferStore(S, BufferLoad(A, {v}), {v});
  Stmt body = Block(std::move(b), {bind});
  body = For(u, IntImm(0), IntImm(4), ForKind::kUnrolled, body, "",
             {{"pragma_auto_unroll_max_step", IntImm(16)}});
  body = For(tx, IntImm(0), IntImm(64), ForKind::kThreadBinding, body, "threadIdx.x");
  body = For(bx, IntImm(0), IntImm(4), ForKind::kThreadBinding, body, "blockIdx.x");
  PrimFunc f;
  f.params = {A, B};
  f.body = MakeRootBody(body, {S}, {{"warp_execution", BoolImm(true)}});
  EXPECT_EQ(RoundTrip(f), R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    with T.block("root"):
        T.reads()
        T.writes()
        T.block_attr({"warp_execution": T.bool(True)})
        A_shared = T.alloc_buffer((1024,), scope="shared")
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                for u in T.unroll(4, annotations={"pragma_auto_unroll_max_step": 16}):
                    with T.block("copy"):
                        v0 = T.axis.spatial(1024, bx * 256 + tx * 4 + u)
                        T.reads(A[v0])
                        T.writes(A_shared[v0])
                        T.block_attr({"meta_schedule.cooperative_fetch": 4, "note": "a \"quoted\"\nline", "ratio": T.float64(0.5)})
                        A_shared[v0] = A[v0]
)");
}

TEST(Printer, Int64ShapesAndBounds) {
  DataType i64 = DataType::Int64();
  Buffer A = Buf("A", {256, 130}, DataType::Float(16), "global", i64);
  Buffer B = Buf("B", {256, 128}, DataType::Float(16), "global", i64);
  Var i("i", i64), j("j", i64), vi("vi", i64), vj("vj", i64);
  BlockNode b;
  b.name = "B";
  b.iter_vars = {{vi, {IntImm(0, i64), IntImm(256, i64)}, IterType::kDataPar},
                 {vj, {IntImm(1, i64), IntImm(128, i64)}, IterType::kDataPar}};
  b.reads = {BufferRegion{A, {{vi, IntImm(1, i64)}, {vj - 1, IntImm(3, i64)}}}};
  b.writes = {Point(B, {vi, vj - 1})};
  b.body =
      BufferStore(B, BufferLoad(A, {vi, vj}) + FloatImm(1.5, DataType::Float(16)), {vi, vj - 1});
  Stmt body = Block(std::move(b), {i, j});
  body = For(j, IntImm(1, i64), IntImm(128, i64), ForKind::kParallel, body);
  body = For(i, IntImm(0, i64), IntImm(256, i64), ForKind::kSerial, body);
  PrimFunc f;
  f.params = {A, B};
  std::string text = RoundTrip((f.body = MakeRootBody(body), f));
  EXPECT_NE(
      text.find(
          "for i in range(T.int64(256)):\n        for j in T.parallel(T.int64(1), T.int64(129)):"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("vi = T.axis.spatial(T.int64(256), i)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("vj = T.axis.spatial((T.int64(1), T.int64(129)), j)\n"), std::string::npos);
  EXPECT_NE(text.find("T.reads(A[vi, vj - T.int64(1):vj - T.int64(1) + T.int64(3)])"),
            std::string::npos)
      << text;
  // The loop variable's type follows the extent.
  PrimFunc back = ParseFunc(text);
  const auto* loop = back.root_block().body.as<ForNode>();
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->loop_var.dtype(), i64);
}

// One function using every expression kind and statement kind.
TEST(Printer, EveryExpressionKind) {
  Buffer A = Buf("A", {8}), I = Buf("I", {8}, DataType::Int32()),
         M = Buf("M", {8}, DataType::Bool());
  Var i("i"), x("x");
  Expr a = BufferLoad(A, {i}), n = BufferLoad(I, {i});
  std::vector<Stmt> stores;
  auto st = [&](const Buffer& b, Expr v) { stores.push_back(BufferStore(b, v, {i})); };
  st(I, Sub(n, Sub(IntImm(1), n)));          // a - (b - c)
  st(I, Add(Add(n, IntImm(2)), IntImm(3)));  // a + b + c
  st(I, Mul(Add(n, IntImm(1)), IntImm(3)));
  st(I, Div(n, IntImm(3)));
  st(I, TruncMod(n, IntImm(3)));
  st(I, FloorDiv(n, IntImm(3)));
  st(I, FloorMod(n, Sub(IntImm(0), IntImm(3))));
  st(I, Min(n, IntImm(-4)));
  st(I, Max(n, IntImm(4, DataType::Int32())));
  st(I, Cast(DataType::Int32(), Add(Cast(DataType::Int64(), n), IntImm(5, DataType::Int64()))));
  st(A, Div(a, FloatImm(3.0)));
  st(A, Select(LT(a, FloatImm(0.0)), Neg(a), a));
  st(A, IfThenElse(And(GE(n, IntImm(0)), Not(Or(EQ(n, IntImm(1)), NE(n, IntImm(2))))), a,
                   FloatImm(std::numeric_limits<double>::infinity())));
  st(M,
     And(Not(LE(a, FloatImm(1e-05))), GT(a, FloatImm(-std::numeric_limits<double>::infinity()))));
  st(M, EQ(LT(n, IntImm(2)), BoolImm(false)));
  st(A, FloatImm(std::nan("")));
  st(I, Cast(DataType::Int32(), Cast(DataType::UInt(8), n) + IntImm(255, DataType::UInt(8))));
  st(A, Cast(DataType::Float32(),
             Cast(DataType::BFloat16(), a) * FloatImm(0.1, DataType::BFloat16())));
  st(A, Cast(DataType::Float32(),
             Cast(DataType::Float64(), a) + FloatImm(1e300, DataType::Float64())));
  for (int op = 1; op < static_cast<int>(CallOp::kCount_); ++op) {
    CallOp c = static_cast<CallOp>(op);
    // Not math: a scope string; lanes of a warp (tested with the GPU lowering).
    if (c == CallOp::kStorageSync || c == CallOp::kWarpShuffleDown) continue;
    std::vector<Expr> args(static_cast<size_t>(CallOpArity(c)), a);
    Expr call = Call(c, args);
    if (call.dtype().is_bool()) {
      st(M, call);
    } else {
      st(A, call);
    }
  }
  Stmt seq = SeqStmt(stores);
  Stmt body = IfThenElseStmt(LT(i, IntImm(4)), seq, Evaluate(IntImm(0)));
  body = For(i, IntImm(0), IntImm(8), ForKind::kSerial, body);
  BlockNode b;
  b.name = "all";
  b.body = body;
  PrimFunc f;
  f.params = {A, I, M};
  f.body = MakeRootBody(Block(std::move(b), {}));
  std::string text = RoundTrip(f);
  for (const char* want : {
           "I[i] = I[i] - (1 - I[i])\n",
           "I[i] = I[i] + 2 + 3\n",
           "I[i] = (I[i] + 1) * 3\n",
           "I[i] = T.truncdiv(I[i], 3)\n",
           "I[i] = T.truncmod(I[i], 3)\n",
           "I[i] = I[i] // 3\n",
           "I[i] = I[i] % (0 - 3)\n",
           "I[i] = T.min(I[i], -4)\n",
           "I[i] = T.Cast(\"int32\", T.Cast(\"int64\", I[i]) + T.int64(5))\n",
           "A[i] = A[i] / T.float32(3.0)\n",
           "A[i] = T.Select(A[i] < T.float32(0.0), T.float32(0.0) - A[i], A[i])\n",
           "A[i] = T.if_then_else(I[i] >= 0 and not (I[i] == 1 or I[i] != 2), A[i], "
           "T.float32(\"inf\"))\n",
           "M[i] = not A[i] <= T.float32(1e-05) and A[i] > T.float32(\"-inf\")\n",
           "M[i] = (I[i] < 2) == False\n",
           "A[i] = T.float32(\"nan\")\n",
           "T.uint8(255)",
           "T.bfloat16(0.1)",
           "T.float64(1e+300)",
           "A[i] = T.pow(A[i], A[i])\n",
           "M[i] = T.isnan(A[i])\n",
           "else:\n                T.evaluate(0)\n",
       }) {
    EXPECT_NE(text.find(want), std::string::npos) << "missing: " << want << "\n" << text;
  }
  // Parsing keeps the structure as written (no constant folding).
  PrimFunc back = ParseFunc(text);
  const auto* loop = back.root_block().body.as<BlockRealizeNode>()->block->body.as<ForNode>();
  const auto* seq_back = loop->body.as<IfThenElseNode>()->then_case.as<SeqStmtNode>();
  const auto* first = seq_back->seq[0].as<BufferStoreNode>();
  ASSERT_EQ(first->value.kind(), ExprKind::kSub);
  EXPECT_EQ(first->value.as<BinaryNode>()->b.kind(), ExprKind::kSub);
  const auto* neg =
      seq_back->seq[6].as<BufferStoreNode>()->value.as<BinaryNode>()->b.as<BinaryNode>();
  ASSERT_NE(neg, nullptr);  // 0 - 3 stays a subtraction
  EXPECT_EQ(neg->a.kind(), ExprKind::kIntImm);
}

TEST(Printer, FloatRepr) {
  EXPECT_EQ(PyFloatRepr(0.0), "0.0");
  EXPECT_EQ(PyFloatRepr(-0.0), "-0.0");
  EXPECT_EQ(PyFloatRepr(1.0), "1.0");
  EXPECT_EQ(PyFloatRepr(0.1), "0.1");
  EXPECT_EQ(PyFloatRepr(1e-05), "1e-05");
  EXPECT_EQ(PyFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(PyFloatRepr(1e16), "1e+16");
  EXPECT_EQ(PyFloatRepr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(PyFloatRepr(-3.4028234663852886e+38), "-3.4028234663852886e+38");
  EXPECT_EQ(PyFloatRepr(1.5e-300), "1.5e-300");
  EXPECT_EQ(PyFloatRepr(123.456), "123.456");
  EXPECT_EQ(PyFloatRepr(static_cast<double>(3.4028235e38f)), "3.4028234663852886e+38");
}

TEST(Printer, Names) {
  // Invalid, reserved and clashing hints become unique identifiers.
  Buffer a = Buf("in", {4}), b = Buf("in", {4}), c = Buf("T", {4}), d = Buf("2x.y", {4});
  Var i("for"), j("");
  Stmt body =
      For(i, IntImm(0), IntImm(4), ForKind::kSerial,
          For(j, IntImm(0), IntImm(4), ForKind::kSerial,
              BufferStore(d, BufferLoad(a, {i}) + BufferLoad(b, {j}) + BufferLoad(c, {i}), {j})));
  PrimFunc f;
  f.params = {a, b, c, d};
  f.body = MakeRootBody(body);
  std::string text = RoundTrip(f);
  EXPECT_NE(
      text.find("def main(in_1: T.Buffer((4,), \"float32\"), in_2: T.Buffer((4,), \"float32\"), "
                "T_1: T.Buffer((4,), \"float32\"), _2x_y: T.Buffer((4,), \"float32\")):"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "for for_1, i in T.grid(4, 4):\n        _2x_y[i] = in_1[for_1] + in_2[i] + T_1[for_1]"),
      std::string::npos)
      << text;
}

TEST(Printer, ExprAndStmtText) {
  Var x("x");
  EXPECT_EQ(ToText(Sub(x, Sub(x, IntImm(1)))), "x - (x - 1)");
  EXPECT_EQ(ToText(Mul(Add(x, IntImm(1)), x)), "(x + 1) * x");
  EXPECT_EQ(ToText(Not(Not(LT(x, IntImm(1))))), "not not x < 1");
  EXPECT_EQ(ToText(LT(Not(BoolImm(true)), BoolImm(false))), "(not True) < False");
  EXPECT_EQ(ToText(IntImm(-5)), "-5");
  EXPECT_EQ(ToText(Mul(x, IntImm(-5))), "x * -5");
  EXPECT_EQ(ToText(IntImm(7, DataType::Int64())), "T.int64(7)");
  EXPECT_EQ(ToText(IntImm(-1, DataType::UInt(64))), "T.uint64(18446744073709551615)");
  EXPECT_EQ(ToText(Evaluate(x)), "T.evaluate(x)\n");
}

}  // namespace
}  // namespace kiln::ir
