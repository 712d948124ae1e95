#include "ir/interpreter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/compare.h"
#include "ir/ndarray.h"
#include "ir/op.h"

namespace kiln::ir {
namespace {

using ::testing::HasSubstr;

const DataType kF32 = DataType::Float32();

Expr I(int64_t v) { return IntImm(v); }

Buffer Buf(const std::string& name, std::vector<int64_t> shape, DataType t = kF32) {
  std::vector<Expr> dims;
  for (int64_t d : shape) dims.push_back(IntImm(d));
  return Buffer(name, t, std::move(dims));
}

IterVar Iter(const Var& v, int64_t extent, IterType type = IterType::kDataPar) {
  return IterVar{v, Range{I(0), I(extent)}, type};
}

// A block realize with the given iterators bound to `values`.
Stmt Realize(const std::string& name, std::vector<IterVar> iters, std::vector<Expr> values,
             Stmt body, std::optional<Stmt> init = std::nullopt, Expr predicate = Expr(),
             std::vector<Buffer> allocs = {}) {
  BlockNode b;
  b.name = name;
  b.iter_vars = std::move(iters);
  b.body = std::move(body);
  b.init = std::move(init);
  b.alloc_buffers = std::move(allocs);
  return BlockRealize(std::move(values), predicate.defined() ? predicate : BoolImm(true),
                      MakeBlock(std::move(b)));
}

Stmt Loop(const Var& v, int64_t extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return For(v, I(0), I(extent), kind, std::move(body));
}

PrimFunc Func(std::vector<Buffer> params, Stmt body, std::vector<Buffer> allocs = {}) {
  PrimFunc f;
  f.params = std::move(params);
  f.body = MakeRootBody(std::move(body), std::move(allocs));
  return f;
}

// C[i, j] += A[i, k] * B[k, j] with the reduction split as k = ko * kf + ki.
PrimFunc Matmul(int64_t m, int64_t n, int64_t k, int64_t kf = 0) {
  Buffer A = Buf("A", {m, k}), B = Buf("B", {k, n}), C = Buf("C", {m, n});
  Var i("i"), j("j"), ko("ko"), ki("ki"), vi("vi"), vj("vj"), vk("vk");
  Stmt update = BufferStore(
      C, BufferLoad(C, {vi, vj}) + BufferLoad(A, {vi, vk}) * BufferLoad(B, {vk, vj}), {vi, vj});
  Stmt init = BufferStore(C, FloatImm(0), {vi, vj});
  std::vector<IterVar> iters = {Iter(vi, m), Iter(vj, n), Iter(vk, k, IterType::kCommReduce)};
  Stmt nest;
  if (kf == 0) {
    nest = Loop(ko, k, Realize("C", iters, {i, j, ko}, update, init));
  } else {
    nest = Loop(ko, k / kf, Loop(ki, kf, Realize("C", iters, {i, j, ko * kf + ki}, update, init)));
  }
  return Func({A, B, C}, Loop(i, m, Loop(j, n, nest)));
}

NDArray ReferenceMatmul(const NDArray& a, const NDArray& b) {
  int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  NDArray c(kF32, {m, n});
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += a.data_as<float>()[i * k + p] * b.data_as<float>()[p * n + j];
      c.data_as<float>()[i * n + j] = acc;
    }
  }
  return c;
}

TEST(InterpreterTest, MatmulMatchesPlainLoops) {
  PrimFunc f = Matmul(16, 12, 20);
  std::vector<NDArray> args = MakeRandomArgs(f, 7);
  FillRandom(&args[2], 99);  // the init must overwrite whatever C held
  Interpret(f, args);
  NDArray want = ReferenceMatmul(args[0], args[1]);
  CompareResult r = Compare(want, args[2], Tolerance{0, 0}, "C");
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(InterpreterTest, SplitReductionRunsInitOnlyAtFirstStep) {
  PrimFunc f = Matmul(8, 9, 24, 4);  // k = ko * 4 + ki
  std::vector<NDArray> args = MakeRandomArgs(f, 3);
  FillRandom(&args[2], 5);
  Interpret(f, args);
  CompareResult r = Compare(ReferenceMatmul(args[0], args[1]), args[2], Tolerance{0, 0}, "C");
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(InterpreterTest, InitRunsForBlocksWithoutReduction) {
  // No reduction variable: the init holds vacuously and runs every time.
  Buffer B = Buf("B", {4});
  Var i("i"), vi("vi");
  Stmt body = BufferStore(B, BufferLoad(B, {vi}) + FloatImm(1), {vi});
  Stmt init = BufferStore(B, FloatImm(10), {vi});
  PrimFunc f = Func({B}, Loop(i, 4, Realize("B", {Iter(vi, 4)}, {i}, body, init)));
  std::vector<NDArray> args = MakeArgs(f);
  Interpret(f, args);
  for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(args[0].GetAsDouble(k), 11);
}

TEST(InterpreterTest, IfThenElsePaddingEvaluatesOnlyTheTakenBranch) {
  // B[i] = A[i - 2] for 2 <= i < 10, else 0; A[i - 2] would be out of bounds
  // outside that range.
  Buffer A = Buf("A", {8}), B = Buf("B", {12});
  Var i("i"), vi("vi");
  Expr inside = (vi >= I(2)) && (vi < I(10));
  Stmt store = BufferStore(B, IfThenElse(inside, BufferLoad(A, {vi - 2}), FloatImm(0)), {vi});
  PrimFunc f = Func({A, B}, Loop(i, 12, Realize("B", {Iter(vi, 12)}, {i}, store)));
  std::vector<NDArray> args = MakeRandomArgs(f, 1);
  Interpret(f, args);
  for (int64_t k = 0; k < 12; ++k) {
    float want = (k >= 2 && k < 10) ? args[0].data_as<float>()[k - 2] : 0.0f;
    EXPECT_EQ(args[1].data_as<float>()[k], want) << k;
  }
}

TEST(InterpreterTest, SelectEvaluatesBothBranches) {
  Buffer A = Buf("A", {8}), B = Buf("B", {12});
  Var i("i"), vi("vi");
  Stmt store = BufferStore(B, Select(vi < I(8), BufferLoad(A, {vi}), FloatImm(0)), {vi});
  PrimFunc f = Func({A, B}, Loop(i, 12, Realize("B", {Iter(vi, 12)}, {i}, store)));
  std::vector<NDArray> args = MakeArgs(f);
  try {
    Interpret(f, args);
    FAIL() << "expected an out-of-bounds error";
  } catch (const InterpreterError& e) {
    EXPECT_STREQ(e.what(), "block 'B': load A[8] is out of bounds of shape (8)");
  }
}

TEST(InterpreterTest, ProducerConsumerThroughIntermediate) {
  Buffer A = Buf("A", {16}), T = Buf("T", {16}), C = Buf("C", {16});
  Var i("i"), j("j"), vi("vi"), vj("vj");
  Stmt produce = Loop(
      i, 16,
      Realize("T", {Iter(vi, 16)}, {i}, BufferStore(T, BufferLoad(A, {vi}) * FloatImm(2), {vi})));
  Stmt consume = Loop(
      j, 16,
      Realize("C", {Iter(vj, 16)}, {j}, BufferStore(C, BufferLoad(T, {vj}) + FloatImm(1), {vj})));
  PrimFunc f = Func({A, C}, SeqStmt({produce, consume}), {T});
  std::vector<NDArray> args = MakeRandomArgs(f, 2);
  Interpret(f, args);
  for (int64_t k = 0; k < 16; ++k) {
    EXPECT_EQ(args[1].data_as<float>()[k], args[0].data_as<float>()[k] * 2.0f + 1.0f) << k;
  }
}

TEST(InterpreterTest, ReadingUninitializedIntermediateGivesNaN) {
  Buffer T = Buf("T", {4}), C = Buf("C", {4});
  Buffer TI = Buf("TI", {4}, DataType::Int32()), CI = Buf("CI", {4}, DataType::Int32());
  Var i("i"), vi("vi");
  Stmt body = SeqStmt(
      {BufferStore(C, BufferLoad(T, {vi}), {vi}), BufferStore(CI, BufferLoad(TI, {vi}), {vi})});
  PrimFunc f = Func({C, CI}, Loop(i, 4, Realize("C", {Iter(vi, 4)}, {i}, body)), {T, TI});
  std::vector<NDArray> args = MakeArgs(f);
  Interpret(f, args);
  for (int64_t k = 0; k < 4; ++k) {
    EXPECT_TRUE(std::isnan(args[0].GetAsDouble(k))) << k;
    EXPECT_EQ(static_cast<uint32_t>(args[1].data_as<int32_t>()[k]), 0xA5A5A5A5u) << k;
  }
}

TEST(InterpreterTest, BlockAllocBufferLivesPerEntry) {
  // An inner block allocates a 2-element scratch buffer on every entry.
  Buffer A = Buf("A", {6}), B = Buf("B", {3}), S = Buf("S", {2}, kF32);
  Var i("i"), vi("vi");
  Stmt body = SeqStmt({BufferStore(S, BufferLoad(A, {vi * 2}), {I(0)}),
                       BufferStore(S, BufferLoad(A, {vi * 2 + 1}), {I(1)}),
                       BufferStore(B, BufferLoad(S, {I(0)}) + BufferLoad(S, {I(1)}), {vi})});
  PrimFunc f =
      Func({A, B}, Loop(i, 3, Realize("B", {Iter(vi, 3)}, {i}, body, std::nullopt, Expr(), {S})));
  std::vector<NDArray> args = MakeRandomArgs(f, 9);
  Interpret(f, args);
  const float* a = args[0].data_as<float>();
  for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(args[1].data_as<float>()[k], a[2 * k] + a[2 * k + 1]);
}

TEST(InterpreterTest, StridedIntermediateAndEmptyLoop) {
  // T is (4, 4) padded to a row stride of 5, as storage_align would leave it.
  Buffer A = Buf("A", {4, 4}), C = Buf("C", {4, 4});
  Buffer T("T", kF32, {I(4), I(4)}, "global", {I(5), I(1)});
  Var i("i"), j("j"), e("e");
  Stmt copy_in = Loop(i, 4, Loop(j, 4, BufferStore(T, BufferLoad(A, {i, j}), {i, j})));
  Stmt copy_out = Loop(i, 4, Loop(j, 4, BufferStore(C, BufferLoad(T, {j, i}), {i, j})));
  Stmt never = For(e, I(0), I(0), ForKind::kSerial, BufferStore(C, FloatImm(9), {I(0), I(0)}));
  PrimFunc f = Func({A, C}, SeqStmt({copy_in, copy_out, never}), {T});
  std::vector<NDArray> args = MakeRandomArgs(f, 10);
  Interpret(f, args);
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t c = 0; c < 4; ++c) {
      EXPECT_EQ(args[1].data_as<float>()[r * 4 + c], args[0].data_as<float>()[c * 4 + r]);
    }
  }
}

// 10 elements computed as 4 x 3 with the tail masked by the block predicate.
PrimFunc ImperfectSplit(bool with_predicate) {
  Buffer A = Buf("A", {10}), B = Buf("B", {10});
  Var io("io"), ii("ii"), vi("vi");
  Expr index = io * 3 + ii;
  Stmt store = BufferStore(B, BufferLoad(A, {vi}) + FloatImm(1), {vi});
  Stmt realize = Realize("B", {Iter(vi, 10)}, {index}, store, std::nullopt,
                         with_predicate ? index < I(10) : Expr());
  return Func({A, B}, Loop(io, 4, Loop(ii, 3, realize)));
}

TEST(InterpreterTest, PredicateMasksImperfectSplit) {
  PrimFunc f = ImperfectSplit(true);
  std::vector<NDArray> args = MakeRandomArgs(f, 4);
  Interpret(f, args);
  for (int64_t k = 0; k < 10; ++k) {
    EXPECT_EQ(args[1].data_as<float>()[k], args[0].data_as<float>()[k] + 1.0f) << k;
  }
}

TEST(InterpreterTest, IterValueOutsideDomainIsAnError) {
  PrimFunc f = ImperfectSplit(false);
  std::vector<NDArray> args = MakeArgs(f);
  try {
    Interpret(f, args);
    FAIL() << "expected an error";
  } catch (const InterpreterError& e) {
    EXPECT_STREQ(e.what(), "block 'B': iteration variable 'vi' = 10 is outside its domain [0, 10)");
  }
}

TEST(InterpreterTest, VectorizedRampStoreWritesLanes) {
  // B[io*4 : io*4+4] = A[io*4 : io*4+4] * 2 for io < 2; B[8:12] untouched.
  Buffer A = Buf("A", {12}), B = Buf("B", {12});
  Var io("io");
  Expr ramp = Ramp(io * 4, I(1), 4);
  Stmt store = BufferStore(B, BufferLoad(A, {ramp}) * Broadcast(FloatImm(2), 4), {ramp});
  PrimFunc f = Func({A, B}, For(io, I(0), I(2), ForKind::kVectorized, store));
  std::vector<NDArray> args = MakeRandomArgs(f, 8);
  FillRandom(&args[1], 12);
  NDArray before = args[1];
  Interpret(f, args);
  for (int64_t k = 0; k < 12; ++k) {
    float want = k < 8 ? args[0].data_as<float>()[k] * 2.0f : before.data_as<float>()[k];
    EXPECT_EQ(args[1].data_as<float>()[k], want) << k;
  }
}

TEST(InterpreterTest, StridedRampAndScalarBroadcastStore) {
  // B[0, 2, 4, 6] = 1 (scalar value broadcast across a stride-2 ramp).
  Buffer B = Buf("B", {8});
  PrimFunc f = Func({B}, BufferStore(B, FloatImm(1), {Ramp(I(0), I(2), 4)}));
  std::vector<NDArray> args = MakeArgs(f);
  Interpret(f, args);
  for (int64_t k = 0; k < 8; ++k) EXPECT_EQ(args[0].GetAsDouble(k), k % 2 == 0 ? 1 : 0) << k;
}

TEST(InterpreterTest, VectorIfThenElseMasksPerLane) {
  // Lanes 6 and 7 of the second vector lie past A's end and take the else branch.
  Buffer A = Buf("A", {6}), B = Buf("B", {8});
  Var io("io");
  Expr ramp = Ramp(io * 4, I(1), 4);
  Expr value =
      IfThenElse(ramp < Broadcast(I(6), 4), BufferLoad(A, {ramp}), Broadcast(FloatImm(-1), 4));
  PrimFunc f =
      Func({A, B}, For(io, I(0), I(2), ForKind::kVectorized, BufferStore(B, value, {ramp})));
  std::vector<NDArray> args = MakeRandomArgs(f, 3);
  Interpret(f, args);
  for (int64_t k = 0; k < 8; ++k) {
    EXPECT_EQ(args[1].data_as<float>()[k], k < 6 ? args[0].data_as<float>()[k] : -1.0f) << k;
  }
}

TEST(InterpreterTest, VectorLoadOutOfBoundsNamesLane) {
  Buffer A = Buf("A", {6}), B = Buf("B", {8});
  Expr ramp = Ramp(I(4), I(1), 4);
  PrimFunc f = Func({A, B}, BufferStore(B, BufferLoad(A, {ramp}), {Ramp(I(0), I(1), 4)}));
  std::vector<NDArray> args = MakeArgs(f);
  try {
    Interpret(f, args);
    FAIL() << "expected an error";
  } catch (const InterpreterError& e) {
    EXPECT_STREQ(e.what(), "block 'root': load A[6] (lane 2) is out of bounds of shape (6)");
  }
}

// Applies `op` to int32 inputs a and b elementwise: C[i] = op(A[i], B[i]).
NDArray IntBinaryOp(DataType t, Expr (*op)(Expr, Expr), std::vector<int64_t> a,
                    std::vector<int64_t> b) {
  const int64_t n = static_cast<int64_t>(a.size());
  Buffer A = Buf("A", {n}, t), B = Buf("B", {n}, t), C = Buf("C", {n}, t);
  Var i("i"), vi("vi");
  Stmt store = BufferStore(C, op(BufferLoad(A, {vi}), BufferLoad(B, {vi})), {vi});
  PrimFunc f = Func({A, B, C}, Loop(i, n, Realize("C", {Iter(vi, n)}, {i}, store)));
  std::vector<NDArray> args = MakeArgs(f);
  for (int64_t k = 0; k < n; ++k) {
    args[0].SetFromInt64(k, a[k]);
    args[1].SetFromInt64(k, b[k]);
  }
  Interpret(f, args);
  return args[2];
}

std::vector<int64_t> Ints(const NDArray& a) {
  std::vector<int64_t> v;
  for (int64_t k = 0; k < a.size(); ++k) v.push_back(a.GetAsInt64(k));
  return v;
}

TEST(InterpreterTest, IntegerArithmeticWraps) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(Ints(IntBinaryOp(DataType::Int(8), Add, {127, -128, 100}, {1, -1, 100})),
            (V{-128, 127, -56}));
  EXPECT_EQ(Ints(IntBinaryOp(DataType::UInt(8), Sub, {0, 5}, {1, 10})), (V{255, 251}));
  EXPECT_EQ(Ints(IntBinaryOp(DataType::Int32(), Mul, {65536, 2147483647}, {65536, 2})), (V{0, -2}));
  const int64_t min64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(Ints(IntBinaryOp(DataType::Int64(), Add, {std::numeric_limits<int64_t>::max()}, {1})),
            (V{min64}));
  EXPECT_EQ(Ints(IntBinaryOp(DataType::Int64(), Div, {min64}, {-1})), (V{min64}));
  EXPECT_EQ(Ints(IntBinaryOp(DataType::Int64(), FloorMod, {min64}, {-1})), (V{0}));
  EXPECT_EQ(Ints(IntBinaryOp(DataType::Int32(), Div, {-2147483648}, {-1})), (V{-2147483648}));
}

TEST(InterpreterTest, DivisionRoundingOfNegatives) {
  using V = std::vector<int64_t>;
  const V a = {-7, 7, -7, 7, 6, -6};
  const V b = {2, -2, -2, 2, 3, 3};
  const DataType t = DataType::Int32();
  EXPECT_EQ(Ints(IntBinaryOp(t, FloorDiv, a, b)), (V{-4, -4, 3, 3, 2, -2}));
  EXPECT_EQ(Ints(IntBinaryOp(t, FloorMod, a, b)), (V{1, -1, -1, 1, 0, 0}));
  EXPECT_EQ(Ints(IntBinaryOp(t, Div, a, b)), (V{-3, -3, 3, 3, 2, -2}));
  EXPECT_EQ(Ints(IntBinaryOp(t, TruncMod, a, b)), (V{-1, 1, -1, 1, 0, 0}));
  // Unsigned operands divide as unsigned.
  EXPECT_EQ(Ints(IntBinaryOp(DataType::UInt(32), FloorDiv, {4294967295}, {2})), (V{2147483647}));
  EXPECT_EQ(Ints(IntBinaryOp(DataType::UInt(8), Max, {200}, {100})), (V{200}));
  EXPECT_EQ(Ints(IntBinaryOp(DataType::Int(8), Max, {-56}, {100})), (V{100}));
}

TEST(InterpreterTest, IntegerComparisonsAndLogic) {
  using V = std::vector<int64_t>;
  const DataType t = DataType::Int32();
  auto lt = [](Expr a, Expr b) { return Cast(DataType::Int32(), LT(a, b)); };
  auto ne_and = [](Expr a, Expr b) {
    return Cast(DataType::Int32(), NE(a, b) && GE(a, IntImm(0)));
  };
  EXPECT_EQ(Ints(IntBinaryOp(t, +lt, {1, 2, -3}, {2, 2, 0})), (V{1, 0, 1}));
  EXPECT_EQ(Ints(IntBinaryOp(t, +ne_and, {1, 2, -3}, {2, 2, 0})), (V{1, 0, 0}));
  // uint32 4294967295 is not below 1.
  EXPECT_EQ(Ints(IntBinaryOp(DataType::UInt(32),
                             +[](Expr a, Expr b) { return Cast(DataType::UInt(32), LT(a, b)); },
                             {4294967295}, {1})),
            (V{0}));
}

TEST(InterpreterTest, IntegerDivisionByZeroIsAnError) {
  for (Expr (*op)(Expr, Expr) : {Div, TruncMod, FloorDiv, FloorMod}) {
    try {
      IntBinaryOp(DataType::Int32(), op, {1, 7}, {1, 0});
      FAIL() << "expected an error";
    } catch (const InterpreterError& e) {
      EXPECT_THAT(e.what(), HasSubstr("block 'C': integer division by zero in "));
      EXPECT_THAT(e.what(), HasSubstr("(7, 0)"));
    }
  }
}

TEST(InterpreterTest, OutOfBoundsMessageNamesBlockBufferAndShape) {
  Buffer A = Buf("A", {128, 128}), C = Buf("C", {128, 128});
  Var i("i"), j("j"), vi("vi"), vj("vj");
  Stmt store = BufferStore(C, BufferLoad(A, {vi + 1, vj}), {vi, vj});
  PrimFunc f =
      Func({A, C},
           Loop(i, 128, Loop(j, 128, Realize("C", {Iter(vi, 128), Iter(vj, 128)}, {i, j}, store))));
  std::vector<NDArray> args = MakeArgs(f);
  try {
    Interpret(f, args);
    FAIL() << "expected an error";
  } catch (const InterpreterError& e) {
    EXPECT_STREQ(e.what(), "block 'C': load A[128, 0] is out of bounds of shape (128, 128)");
  }
}

TEST(InterpreterTest, OutOfBoundsStoreAndNegativeIndex) {
  Buffer B = Buf("B", {4, 4});
  Var i("i"), vi("vi");
  PrimFunc f = Func(
      {B}, Loop(i, 4, Realize("S", {Iter(vi, 4)}, {i}, BufferStore(B, FloatImm(0), {vi - 1, vi}))));
  std::vector<NDArray> args = MakeArgs(f);
  try {
    Interpret(f, args);
    FAIL() << "expected an error";
  } catch (const InterpreterError& e) {
    EXPECT_STREQ(e.what(), "block 'S': store B[-1, 0] is out of bounds of shape (4, 4)");
  }
}

TEST(InterpreterTest, UndefinedVariableAndBufferAreErrors) {
  Buffer B = Buf("B", {4}), Other = Buf("Other", {4});
  Var i("i"), stray("stray");
  PrimFunc f = Func({B}, Loop(i, 4, BufferStore(B, FloatImm(0), {stray})));
  std::vector<NDArray> args = MakeArgs(f);
  EXPECT_THROW(
      {
        try {
          Interpret(f, args);
        } catch (const InterpreterError& e) {
          EXPECT_THAT(e.what(), HasSubstr("variable 'stray' is not defined"));
          throw;
        }
      },
      InterpreterError);
  PrimFunc g = Func({B}, BufferStore(B, BufferLoad(Other, {I(0)}), {I(0)}));
  EXPECT_THROW(
      {
        try {
          Interpret(g, args);
        } catch (const InterpreterError& e) {
          EXPECT_THAT(e.what(), HasSubstr("buffer 'Other' is neither a parameter nor allocated"));
          throw;
        }
      },
      InterpreterError);
}

TEST(InterpreterTest, ArgumentsAreChecked) {
  PrimFunc f = Matmul(4, 4, 4);
  std::vector<NDArray> args = MakeArgs(f);
  auto message = [&](std::vector<NDArray*> a) {
    try {
      Interpret(f, std::move(a));
    } catch (const InterpreterError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({&args[0], &args[1]}), "function 'main': takes 3 argument(s), got 2");
  NDArray half(DataType::Float(16), {4, 4});
  EXPECT_EQ(message({&args[0], &half, &args[2]}),
            "function 'main': argument 1 (B) has dtype float16; the parameter is float32");
  NDArray wide(kF32, {4, 5});
  EXPECT_EQ(message({&args[0], &args[1], &wide}),
            "function 'main': argument 2 (C) has shape (4, 5); the parameter has shape (4, 4)");
  NDArray flat(kF32, {16});
  EXPECT_EQ(message({&flat, &args[1], &args[2]}),
            "function 'main': argument 0 (A) has 1 dimension(s); the parameter has 2");
}

TEST(InterpreterTest, SymbolicExtentsBindFromArguments) {
  Var n("n");
  Buffer A("A", kF32, {n}), B("B", kF32, {n});
  Var i("i");
  PrimFunc f = Func({A, B}, For(i, I(0), n, ForKind::kSerial,
                                BufferStore(B, BufferLoad(A, {i}) + FloatImm(1), {i})));
  NDArray a(kF32, {5}), b(kF32, {5});
  FillRandom(&a, 1);
  Interpret(f, {&a, &b});
  for (int64_t k = 0; k < 5; ++k) EXPECT_EQ(b.data_as<float>()[k], a.data_as<float>()[k] + 1.0f);
  NDArray c(kF32, {6});
  EXPECT_THROW(Interpret(f, {&a, &c}), InterpreterError);
}

TEST(InterpreterTest, AllLoopKindsRunSerially) {
  Buffer A = Buf("A", {2, 3, 4}), B = Buf("B", {2, 3, 4});
  Var bx("bx"), tx("tx"), p("p"), u("u");
  Stmt store = BufferStore(B, BufferLoad(A, {bx, tx, u}) * FloatImm(3), {bx, tx, u});
  Stmt nest =
      For(bx, I(0), I(2), ForKind::kThreadBinding,
          For(tx, I(0), I(3), ForKind::kParallel, For(u, I(0), I(4), ForKind::kUnrolled, store)),
          "blockIdx.x");
  PrimFunc f = Func({A, B}, nest);
  std::vector<NDArray> args = MakeRandomArgs(f, 6);
  Interpret(f, args);
  for (int64_t k = 0; k < 24; ++k) {
    EXPECT_EQ(args[1].data_as<float>()[k], args[0].data_as<float>()[k] * 3.0f);
  }
}

TEST(InterpreterTest, IfThenElseStatementAndEvaluate) {
  Buffer B = Buf("B", {6});
  Var i("i");
  Stmt body = SeqStmt({Evaluate(IntImm(0)),
                       IfThenElseStmt(EQ(FloorMod(i, I(2)), I(0)), BufferStore(B, FloatImm(1), {i}),
                                      BufferStore(B, FloatImm(2), {i})),
                       IfThenElseStmt(EQ(i, I(5)), BufferStore(B, FloatImm(7), {i}))});
  PrimFunc f = Func({B}, Loop(i, 6, body));
  std::vector<NDArray> args = MakeArgs(f);
  Interpret(f, args);
  const double want[] = {1, 2, 1, 2, 1, 7};
  for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(args[0].GetAsDouble(k), want[k]) << k;
}

// B[i] = cast(to, A[i]) for values given as doubles.
NDArray CastValues(DataType from, DataType to, const std::vector<double>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  Buffer A = Buf("A", {n}, from), B = Buf("B", {n}, to);
  Var i("i");
  PrimFunc f = Func({A, B}, Loop(i, n, BufferStore(B, Cast(to, BufferLoad(A, {i})), {i})));
  std::vector<NDArray> args = MakeArgs(f);
  for (int64_t k = 0; k < n; ++k) args[0].SetFromDouble(k, values[k]);
  Interpret(f, args);
  return args[1];
}

std::vector<double> Doubles(const NDArray& a) {
  std::vector<double> v;
  for (int64_t k = 0; k < a.size(); ++k) v.push_back(a.GetAsDouble(k));
  return v;
}

TEST(InterpreterTest, CastsSaturateAndRound) {
  using V = std::vector<double>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(Doubles(CastValues(kF32, DataType::Int(8), {300.5, -1e10, nan, 3.9, -3.9})),
            (V{127, -128, 0, 3, -3}));
  EXPECT_EQ(Doubles(CastValues(kF32, DataType::UInt(8), {-1, 255.5, 1e10})), (V{0, 255, 255}));
  EXPECT_EQ(Doubles(CastValues(DataType::Int32(), DataType::Int(8), {300, -129})), (V{44, 127}));
  EXPECT_EQ(Doubles(CastValues(DataType::Int32(), kF32, {16777217})), (V{16777216}));
  EXPECT_EQ(Doubles(CastValues(DataType::Int32(), DataType::Bool(), {0, 5, -1})), (V{0, 1, 1}));
  EXPECT_EQ(Doubles(CastValues(DataType::Float64(), DataType::Float(16), {0.1, 1e6})),
            (V{0.0999755859375, std::numeric_limits<double>::infinity()}));
  EXPECT_EQ(Doubles(CastValues(DataType::Float64(), DataType::BFloat16(), {3.14159})),
            (V{3.140625}));
}

TEST(InterpreterTest, Float16ArithmeticRoundsEveryOperation) {
  const DataType f16 = DataType::Float(16);
  Buffer A = Buf("A", {1}, f16), B = Buf("B", {1}, f16);
  // (1 + 2^-11) + 2^-11: each addition ties to even and drops the increment.
  Expr tiny = FloatImm(std::ldexp(1.0, -11), f16);
  PrimFunc f = Func({A, B}, BufferStore(B, (BufferLoad(A, {I(0)}) + tiny) + tiny, {I(0)}));
  std::vector<NDArray> args = MakeArgs(f);
  args[0].SetFromDouble(0, 1.0);
  Interpret(f, args);
  EXPECT_EQ(args[1].GetAsDouble(0), 1.0);

  // float32: 2^24 + 1 is not representable; the sum rounds each time.
  Buffer C = Buf("C", {1}), D = Buf("D", {1});
  PrimFunc g = Func(
      {C, D}, BufferStore(D, (BufferLoad(C, {I(0)}) + FloatImm(1)) - FloatImm(16777216), {I(0)}));
  std::vector<NDArray> gargs = MakeArgs(g);
  gargs[0].SetFromDouble(0, 16777216.0);
  Interpret(g, gargs);
  EXPECT_EQ(gargs[1].GetAsDouble(0), 0.0);
}

struct Intrinsic {
  CallOp op;
  double (*ref)(double);
};

TEST(InterpreterTest, EveryUnaryIntrinsic) {
  const Intrinsic ops[] = {
      {CallOp::kExp, [](double v) { return std::exp(v); }},
      {CallOp::kExp2, [](double v) { return std::exp2(v); }},
      {CallOp::kExp10, [](double v) { return std::pow(10.0, v); }},
      {CallOp::kLog, [](double v) { return std::log(v); }},
      {CallOp::kLog2, [](double v) { return std::log2(v); }},
      {CallOp::kLog10, [](double v) { return std::log10(v); }},
      {CallOp::kLog1p, [](double v) { return std::log1p(v); }},
      {CallOp::kSqrt, [](double v) { return std::sqrt(v); }},
      {CallOp::kRsqrt, [](double v) { return 1.0 / std::sqrt(v); }},
      {CallOp::kTanh, [](double v) { return std::tanh(v); }},
      {CallOp::kSigmoid, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
      {CallOp::kFabs, [](double v) { return std::fabs(v); }},
      {CallOp::kErf, [](double v) { return std::erf(v); }},
      {CallOp::kFloor, [](double v) { return std::floor(v); }},
      {CallOp::kCeil, [](double v) { return std::ceil(v); }},
      {CallOp::kTrunc, [](double v) { return std::trunc(v); }},
      {CallOp::kSin, [](double v) { return std::sin(v); }},
      {CallOp::kCos, [](double v) { return std::cos(v); }},
      {CallOp::kTan, [](double v) { return std::tan(v); }},
      {CallOp::kAtan, [](double v) { return std::atan(v); }},
  };
  const std::vector<double> inputs = {-2.5, -0.75, 0.0, 0.3, 1.5, 4.0};
  for (const Intrinsic& it : ops) {
    for (DataType t : {kF32, DataType::Float64()}) {
      const int64_t n = static_cast<int64_t>(inputs.size());
      Buffer A = Buf("A", {n}, t), B = Buf("B", {n}, t);
      Var i("i");
      PrimFunc f = Func({A, B}, Loop(i, n, BufferStore(B, Call(it.op, {BufferLoad(A, {i})}), {i})));
      std::vector<NDArray> args = MakeArgs(f);
      for (int64_t k = 0; k < n; ++k) args[0].SetFromDouble(k, inputs[k]);
      Interpret(f, args);
      for (int64_t k = 0; k < n; ++k) {
        double want = RoundToFloatType(it.ref(args[0].GetAsDouble(k)), t);
        double got = args[1].GetAsDouble(k);
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got)) << CallOpName(it.op) << "(" << inputs[k] << ")";
        } else {
          EXPECT_EQ(got, want) << CallOpName(it.op) << "(" << inputs[k] << ") " << t.str();
        }
      }
    }
  }
}

TEST(InterpreterTest, RoundBinaryAndPredicateIntrinsics) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> x = {2.5, 3.5, -2.5, 0.4, nan, inf};
  const std::vector<double> y = {2.0, 0.5, 3.0, -1.0, 1.0, 2.0};
  const int64_t n = static_cast<int64_t>(x.size());
  Buffer A = Buf("A", {n}), B = Buf("B", {n}), R = Buf("R", {n}), P = Buf("P", {n}),
         M = Buf("M", {n}), Q = Buf("Q", {n, 3}, DataType::Bool());
  Var i("i");
  Expr a = BufferLoad(A, {i}), b = BufferLoad(B, {i});
  Stmt body = SeqStmt({
      BufferStore(R, Call(CallOp::kRound, {a}), {i}),
      BufferStore(P, Call(CallOp::kPow, {a, b}), {i}),
      BufferStore(M, Call(CallOp::kFmod, {a, b}), {i}),
      BufferStore(Q, Call(CallOp::kIsNan, {a}), {i, I(0)}),
      BufferStore(Q, Call(CallOp::kIsInf, {a}), {i, I(1)}),
      BufferStore(Q, Call(CallOp::kIsFinite, {a}), {i, I(2)}),
  });
  PrimFunc f = Func({A, B, R, P, M, Q}, Loop(i, n, body));
  std::vector<NDArray> args = MakeArgs(f);
  for (int64_t k = 0; k < n; ++k) {
    args[0].SetFromDouble(k, x[k]);
    args[1].SetFromDouble(k, y[k]);
  }
  Interpret(f, args);
  const std::vector<double> want_round = {2, 4, -2, 0};  // halfway cases go to even
  for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(args[2].GetAsDouble(k), want_round[k]) << k;
  for (int64_t k = 0; k < n; ++k) {
    double p = RoundToFloatType(std::pow(static_cast<float>(x[k]), y[k]), kF32);
    double m = RoundToFloatType(std::fmod(static_cast<float>(x[k]), y[k]), kF32);
    double gp = args[3].GetAsDouble(k), gm = args[4].GetAsDouble(k);
    EXPECT_TRUE(gp == p || (std::isnan(gp) && std::isnan(p))) << k;
    EXPECT_TRUE(gm == m || (std::isnan(gm) && std::isnan(m))) << k;
    EXPECT_EQ(args[5].GetAsInt64(k * 3 + 0), std::isnan(x[k]) ? 1 : 0) << k;
    EXPECT_EQ(args[5].GetAsInt64(k * 3 + 1), std::isinf(x[k]) ? 1 : 0) << k;
    EXPECT_EQ(args[5].GetAsInt64(k * 3 + 2), std::isfinite(x[k]) ? 1 : 0) << k;
  }
}

TEST(InterpreterTest, FloatFloorDivAndFloorMod) {
  Buffer A = Buf("A", {3}), B = Buf("B", {3}), C = Buf("C", {3}), D = Buf("D", {3});
  Var i("i");
  Expr a = BufferLoad(A, {i}), b = BufferLoad(B, {i});
  PrimFunc f = Func(
      {A, B, C, D},
      Loop(i, 3,
           SeqStmt({BufferStore(C, FloorDiv(a, b), {i}), BufferStore(D, FloorMod(a, b), {i})})));
  std::vector<NDArray> args = MakeArgs(f);
  const double av[] = {-7, 7.5, 1}, bv[] = {2, -2, 0.1f};
  for (int k = 0; k < 3; ++k) {
    args[0].SetFromDouble(k, av[k]);
    args[1].SetFromDouble(k, bv[k]);
  }
  Interpret(f, args);
  // 1 / 0.1f is 9.99999985 in double but exactly 10 in float32.
  EXPECT_EQ(Doubles(args[2]), (std::vector<double>{-4, -4, 10}));
  EXPECT_EQ(args[3].GetAsDouble(0), 1);
  EXPECT_EQ(args[3].GetAsDouble(1), -0.5);
}

TEST(InterpreterTest, VectorValueAtScalarIndexIsAnError) {
  Buffer B = Buf("B", {8});
  PrimFunc f = Func({B}, BufferStore(B, Broadcast(FloatImm(1), 4), {I(0)}));
  std::vector<NDArray> args = MakeArgs(f);
  EXPECT_THROW(Interpret(f, args), InterpreterError);
}

TEST(InterpreterTest, FloatMinMaxAndComparisons) {
  Buffer A = Buf("A", {3}), B = Buf("B", {3}), C = Buf("C", {3}), D = Buf("D", {3}),
         E = Buf("E", {3}, DataType::Int32());
  Var i("i");
  Expr a = BufferLoad(A, {i}), b = BufferLoad(B, {i});
  Stmt body = SeqStmt({BufferStore(C, Min(a, b), {i}), BufferStore(D, Max(a, b), {i}),
                       BufferStore(E, Cast(DataType::Int32(), a <= b), {i})});
  PrimFunc f = Func({A, B, C, D, E}, Loop(i, 3, body));
  std::vector<NDArray> args = MakeArgs(f);
  const double av[] = {1, -2, 5}, bv[] = {2, -3, 5};
  for (int k = 0; k < 3; ++k) {
    args[0].SetFromDouble(k, av[k]);
    args[1].SetFromDouble(k, bv[k]);
  }
  Interpret(f, args);
  EXPECT_EQ(Doubles(args[2]), (std::vector<double>{1, -3, 5}));
  EXPECT_EQ(Doubles(args[3]), (std::vector<double>{2, -2, 5}));
  EXPECT_EQ(Ints(args[4]), (std::vector<int64_t>{1, 0, 1}));
}

}  // namespace
}  // namespace kiln::ir
