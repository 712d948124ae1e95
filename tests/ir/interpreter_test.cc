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
      for (int64_t p = 0; p < k; ++p) acc += a.data_as<float>()[i * k + p] * b.data_as<float>()[p * n + j];
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

}  // namespace
}  // namespace kiln::ir
