// Times the reference interpreter on square float32 matmuls and compares it
// with a plain C++ triple loop measured in the same run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench/bench_util.h"
#include "ir/compare.h"
#include "ir/interpreter.h"
#include "ir/ndarray.h"
#include "ir/op.h"

namespace {

using namespace kiln::ir;

PrimFunc Matmul(int64_t n) {
  const DataType f32 = DataType::Float32();
  Buffer A("A", f32, {IntImm(n), IntImm(n)}), B("B", f32, {IntImm(n), IntImm(n)}),
      C("C", f32, {IntImm(n), IntImm(n)});
  Var i("i"), j("j"), k("k"), vi("vi"), vj("vj"), vk("vk");
  BlockNode blk;
  blk.name = "C";
  blk.iter_vars = {IterVar{vi, Range{IntImm(0), IntImm(n)}, IterType::kDataPar},
                   IterVar{vj, Range{IntImm(0), IntImm(n)}, IterType::kDataPar},
                   IterVar{vk, Range{IntImm(0), IntImm(n)}, IterType::kCommReduce}};
  blk.init = BufferStore(C, FloatImm(0), {vi, vj});
  blk.body = BufferStore(
      C, BufferLoad(C, {vi, vj}) + BufferLoad(A, {vi, vk}) * BufferLoad(B, {vk, vj}), {vi, vj});
  Stmt realize = BlockRealize({i, j, k}, BoolImm(true), MakeBlock(std::move(blk)));
  Stmt nest = For(i, IntImm(0), IntImm(n), ForKind::kSerial,
                  For(j, IntImm(0), IntImm(n), ForKind::kSerial,
                      For(k, IntImm(0), IntImm(n), ForKind::kSerial, realize)));
  PrimFunc f;
  f.name = "matmul";
  f.params = {A, B, C};
  f.body = MakeRootBody(nest);
  return f;
}

void PlainMatmul(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t k = 0; k < n; ++k) acc += a[i * n + k] * b[k * n + j];
      c[i * n + j] = acc;
    }
  }
}

using kiln::bench::BestSeconds;

}  // namespace

int main() {
  std::printf("%-10s %14s %14s %10s\n", "matmul", "interpreter", "plain C++", "ratio");
  for (int64_t n : {64, 128}) {
    PrimFunc f = Matmul(n);
    std::vector<NDArray> args = MakeRandomArgs(f, 1);
    NDArray plain(DataType::Float32(), {n, n});
    const int reps = n <= 64 ? 5 : 3;
    double interp = BestSeconds(reps, [&] { Interpret(f, args); });
    double native = BestSeconds(reps * 20, [&] {
      PlainMatmul(args[0].data_as<float>(), args[1].data_as<float>(), plain.data_as<float>(), n);
    });
    CompareResult check = Compare(plain, args[2], Tolerance{0, 0}, "C");
    std::printf("%3lldx%-3lldx%-3lld %11.3f ms %11.3f ms %9.0fx%s\n", static_cast<long long>(n),
                static_cast<long long>(n), static_cast<long long>(n), interp * 1e3, native * 1e3,
                interp / native, check.ok ? "" : "  MISMATCH");
    if (!check.ok) std::printf("  %s\n", check.message.c_str());
  }
  return 0;
}
