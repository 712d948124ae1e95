// Hand-scheduled GPU programs for the GPU lowering and CUDA backend tests:
// the shapes of kernels the GPU design space produces (thread-bound matmul,
// a shared-memory tiled GEMM with cooperative fetch, conv2d with its padding
// as a second kernel, softmax as four kernels), small enough for the
// interpreter.
#pragma once

#include <string>
#include <vector>

#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"

namespace kiln::ir::testing {

inline std::vector<BlockRV> Blocks(Schedule& sch) {
  return sch.GetChildBlocks(sch.GetBlock("root"));
}

// Binds a block's loops the way AutoBind does: fuse all, split by `threads`,
// outer to blockIdx.x, inner to threadIdx.x. Spatial loops only when
// `spatial` is given (the rest stay serial inside the thread).
inline void BindFused(Schedule& sch, BlockRV block, int64_t threads, size_t spatial = 0) {
  std::vector<LoopRV> loops = sch.GetLoops(block);
  if (spatial > 0) loops.resize(spatial);
  LoopRV fused = loops.size() == 1 ? loops[0] : sch.Fuse(loops);
  std::vector<LoopRV> parts = sch.Split(fused, {std::monostate{}, threads});
  sch.Bind(parts[0], "blockIdx.x");
  sch.Bind(parts[1], "threadIdx.x");
}

// C[i, j] = sum_k A[i, k] * B[k, j]; one thread per output element, 16x16
// threads per block (blockIdx.y / blockIdx.x / threadIdx.y / threadIdx.x).
inline PrimFunc MatmulPerThread(int64_t n = 64, int64_t m = 48, int64_t k = 32) {
  Schedule sch(Matmul(n, m, k));
  BlockRV c = Blocks(sch)[0];
  std::vector<LoopRV> l = sch.GetLoops(c);
  std::vector<LoopRV> i = sch.Split(l[0], {std::monostate{}, int64_t{16}});
  std::vector<LoopRV> j = sch.Split(l[1], {std::monostate{}, int64_t{16}});
  sch.Reorder({i[0], j[0], i[1], j[1], l[2]});
  sch.Bind(i[0], "blockIdx.y");
  sch.Bind(j[0], "blockIdx.x");
  sch.Bind(i[1], "threadIdx.y");
  sch.Bind(j[1], "threadIdx.x");
  return sch.func();
}

// The SSSRRSRS structure of MetaSchedule's GPU MultiLevelTiling by hand: a
// 32x32 tile of C per block, 8x8 threads computing 4x4 each in a local
// accumulator, A and B tiles of the k-loop fetched into shared memory by all
// 64 threads together (the cooperative fetch).
inline PrimFunc TiledGemm(int64_t n = 64, int64_t m = 64, int64_t k = 64) {
  Schedule sch(Matmul(n, m, k));
  BlockRV c = Blocks(sch)[0];
  std::vector<LoopRV> l = sch.GetLoops(c);
  std::vector<LoopRV> i = sch.Split(l[0], {std::monostate{}, int64_t{8}, int64_t{4}});
  std::vector<LoopRV> j = sch.Split(l[1], {std::monostate{}, int64_t{8}, int64_t{4}});
  std::vector<LoopRV> r = sch.Split(l[2], {std::monostate{}, int64_t{8}});
  sch.Reorder({i[0], j[0], i[1], j[1], r[0], r[1], i[2], j[2]});
  LoopRV bx = sch.Fuse({i[0], j[0]});
  LoopRV tx = sch.Fuse({i[1], j[1]});
  sch.Bind(bx, "blockIdx.x");
  sch.Bind(tx, "threadIdx.x");
  BlockRV local = sch.CacheWrite(c, 0, "local");
  sch.ReverseComputeAt(local, tx);
  for (int operand = 0; operand < 2; ++operand) {
    BlockRV s = sch.CacheRead(c, operand, "shared");
    sch.ComputeAt(s, r[0]);
    std::vector<LoopRV> sl = sch.GetLoops(s);
    LoopRV f = sch.Fuse({sl[sl.size() - 2], sl[sl.size() - 1]});
    std::vector<LoopRV> parts = sch.Split(f, {std::monostate{}, int64_t{64}});
    sch.Bind(parts[1], "threadIdx.x");
  }
  return sch.func();
}

// NHWC conv2d 3x3, padding 1: the padding is its own kernel (writing a
// global workspace buffer), the convolution one thread per output element
// and one output row per block.
inline PrimFunc Conv2d() {
  Schedule sch(Conv2dNHWC(1, 10, 10, 8, 16, 3, 1, 1));
  std::vector<BlockRV> b = Blocks(sch);
  // The convolution first: once the padding's loops are fused, its write
  // region is no longer a provable box, and Bind checks that it covers what
  // the convolution reads.
  BindFused(sch, b[1], 160, 4);  // one output row (w x co) per block
  // The padding: a padded row (w x ci) per block.
  std::vector<LoopRV> pad = sch.GetLoops(b[0]);
  sch.Bind(sch.Fuse({pad[0], pad[1]}), "blockIdx.x");
  sch.Bind(sch.Fuse({pad[2], pad[3]}), "threadIdx.x");
  return sch.func();
}

// Softmax over the rows of a 16x100 matrix: one kernel per stage, a row per
// thread for the two reductions.
inline PrimFunc Softmax() {
  Schedule sch(SoftmaxMN(16, 100));
  std::vector<BlockRV> b = Blocks(sch);
  BindFused(sch, b[0], 8, 1);
  BindFused(sch, b[1], 64);
  BindFused(sch, b[2], 8, 1);
  BindFused(sch, b[3], 64);
  return sch.func();
}

// Softmax with its two row reductions done across threads (what the
// CrossThreadReduction rule makes): a row per block, the row's elements
// split over `threads` threads (the reduce loop bound to threadIdx.x).
inline PrimFunc SoftmaxCrossThread(int64_t threads = 32, int64_t rows = 16, int64_t cols = 100) {
  Schedule sch(SoftmaxMN(rows, cols));
  std::vector<BlockRV> b = Blocks(sch);
  for (size_t r : {size_t{0}, size_t{2}}) {
    std::vector<LoopRV> l = sch.GetLoops(b[r]);
    sch.Bind(l[0], "blockIdx.x");
    std::vector<LoopRV> k = sch.Split(l[1], {std::monostate{}, threads});
    sch.Bind(k[1], "threadIdx.x");
  }
  BindFused(sch, b[1], 64);
  BindFused(sch, b[3], 64);
  return sch.func();
}

// Softmax in one kernel, a row per block: the two reductions across
// `threads` threads and the exponentials computed at the row loop, each with
// its own threadIdx.x loop, their results in shared memory (so the row's
// stages meet in one thread block, through barriers and warp shuffles).
inline PrimFunc SoftmaxOneKernel(int64_t threads = 32, int64_t rows = 4, int64_t cols = 100) {
  Schedule sch(SoftmaxMN(rows, cols));
  std::vector<BlockRV> b = Blocks(sch);
  for (size_t r : {size_t{0}, size_t{1}, size_t{2}}) sch.SetScope(b[r], 0, "shared");
  std::vector<LoopRV> l = sch.GetLoops(b[3]);
  sch.Bind(l[0], "blockIdx.x");
  sch.Bind(sch.Split(l[1], {std::monostate{}, threads})[1], "threadIdx.x");
  for (size_t r : {size_t{2}, size_t{1}, size_t{0}}) {
    sch.ComputeAt(b[r], l[0]);
    std::vector<LoopRV> inner = sch.GetLoops(b[r]);
    sch.Bind(sch.Split(inner.back(), {std::monostate{}, threads})[1], "threadIdx.x");
  }
  return sch.func();
}

// The row maximum and sum of softmax with `rows_per_block` rows per block,
// one per threadIdx.y, and each row reduced across `threads` threads of
// threadIdx.x.
inline PrimFunc SoftmaxRowsOnThreadY(int64_t threads, int64_t rows_per_block = 2,
                                     int64_t rows = 8, int64_t cols = 100) {
  Schedule sch(SoftmaxMN(rows, cols));
  std::vector<BlockRV> b = Blocks(sch);
  for (size_t r : {size_t{0}, size_t{2}}) {
    std::vector<LoopRV> l = sch.GetLoops(b[r]);
    std::vector<LoopRV> i = sch.Split(l[0], {std::monostate{}, rows_per_block});
    sch.Bind(i[0], "blockIdx.x");
    sch.Bind(i[1], "threadIdx.y");
    sch.Bind(sch.Split(l[1], {std::monostate{}, threads})[1], "threadIdx.x");
  }
  BindFused(sch, b[1], 64);
  BindFused(sch, b[3], 64);
  return sch.func();
}

}  // namespace kiln::ir::testing
