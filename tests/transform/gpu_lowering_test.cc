// The GPU lowering passes: launch grids from thread-bound loops (one extent
// per axis and kernel), storage scopes (where shared and local buffers are
// allocated), barrier insertion (golden text), and VerifyGPUCode's limits.
// The hand-scheduled programs are checked against the unscheduled workload
// with the interpreter first, so the lowering starts from correct schedules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include <regex>

#include "../codegen/gpu_test_kernels.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/interpreter.h"
#include "ir/op.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/target.h"
#include "ir/transform/gpu_kernels.h"
#include "ir/transform/lower.h"
#include "ir/transform/passes.h"
#include "ir/transform/verify_gpu_code.h"
#include "ir/transform/verify_lowered.h"
#include "lower_test_util.h"

namespace kiln::ir {
namespace {

const Target kSm90 = Target::Parse("cuda -arch=sm_90");

PrimFunc LowerGpu(const PrimFunc& f) { return transform::Lower(f, kSm90); }

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The scheduled program computes what the workload computes (the interpreter
// runs thread-bound loops one iteration after another, which is a valid order
// for a schedule in block form).
::testing::AssertionResult SameAsWorkload(const PrimFunc& workload, const PrimFunc& scheduled) {
  std::vector<NDArray> want = MakeRandomArgs(workload, 3), got = MakeRandomArgs(workload, 3);
  Interpret(workload, want);
  Interpret(scheduled, got);
  for (size_t i = 0; i < want.size(); ++i) {
    CompareResult r = Compare(want[i], got[i], Tolerance::For(want[i].dtype()), "param");
    if (!r.ok) return ::testing::AssertionFailure() << r.message;
  }
  return ::testing::AssertionSuccess();
}

TEST(GpuLowering, HandSchedulesComputeTheWorkload) {
  EXPECT_TRUE(SameAsWorkload(Matmul(64, 48, 32), testing::MatmulPerThread()));
  EXPECT_TRUE(SameAsWorkload(Matmul(64, 64, 64), testing::TiledGemm()));
  EXPECT_TRUE(SameAsWorkload(Conv2dNHWC(1, 10, 10, 8, 16, 3, 1, 1), testing::Conv2d()));
  EXPECT_TRUE(SameAsWorkload(SoftmaxMN(16, 100), testing::Softmax()));
}

TEST(GpuLowering, CpuPipelineIsUnchangedAndCudaAddsTheGpuPasses) {
  std::vector<std::string> cpu, llvm, cuda;
  for (const auto& p : transform::LoweringPipeline()) cpu.push_back(p.name);
  for (const auto& p : transform::LoweringPipeline(Target::Parse("llvm"))) llvm.push_back(p.name);
  for (const auto& p : transform::LoweringPipeline(kSm90)) cuda.push_back(p.name);
  EXPECT_EQ(cpu, llvm);
  ASSERT_EQ(cuda.size(), cpu.size() + 4);
  EXPECT_EQ(cuda[0], "lower_tensor_intrin");
  EXPECT_EQ(cuda[1], "lower_cross_thread_reduction");
  EXPECT_EQ(std::vector<std::string>(cuda.begin() + 2, cuda.end() - 2), cpu);
  EXPECT_EQ(cuda[cpu.size() + 2], "lower_thread_binding");
  EXPECT_EQ(cuda[cpu.size() + 3], "inject_storage_sync");
}

TEST(GpuLowering, ThreadBoundLoopsBecomeTheLaunchGrid) {
  PrimFunc low = LowerGpu(testing::MatmulPerThread(64, 48, 32));
  EXPECT_TRUE(transform::VerifyLowered(low).empty());
  transform::GpuKernels ks = transform::SplitKernels(low);
  ASSERT_EQ(ks.kernels.size(), 1u);
  const auto& k = ks.kernels[0];
  EXPECT_EQ(k.grid, (std::array<int64_t, 3>{3, 4, 1}));
  EXPECT_EQ(k.block, (std::array<int64_t, 3>{16, 16, 1}));
  ASSERT_EQ(k.launch.size(), 4u);
  EXPECT_EQ(k.launch[0].tag, "blockIdx.x");
  EXPECT_EQ(k.launch[3].tag, "threadIdx.y");
  EXPECT_TRUE(ks.workspace.empty());
  EXPECT_TRUE(k.shared.empty());
  EXPECT_TRUE(testing::RoundTrips(low));
}

TEST(GpuLowering, OneThreadExtentPerAxisAndKernel) {
  // threadIdx.x is bound three times in the schedule (the compute and the two
  // cooperative fetches) and once in the kernel.
  std::string sched = ToText(testing::TiledGemm());
  EXPECT_EQ(Count(sched, "thread=\"threadIdx.x\""), 3u);
  PrimFunc low = LowerGpu(testing::TiledGemm());
  std::string text = ToText(low);
  EXPECT_EQ(Count(text, "thread=\"threadIdx.x\""), 1u) << text;
  EXPECT_EQ(Count(text, "thread=\"blockIdx.x\""), 1u) << text;
  transform::GpuKernels ks = transform::SplitKernels(low);
  ASSERT_EQ(ks.kernels.size(), 1u);
  EXPECT_EQ(ks.kernels[0].grid, (std::array<int64_t, 3>{4, 1, 1}));
  EXPECT_EQ(ks.kernels[0].block, (std::array<int64_t, 3>{64, 1, 1}));
}

TEST(GpuLowering, SharedTilesAreAllocatedPerBlockAndLocalPerThread) {
  PrimFunc low = LowerGpu(testing::TiledGemm());
  transform::GpuKernels ks = transform::SplitKernels(low);
  ASSERT_EQ(ks.kernels.size(), 1u);
  // Each k-step tile: 32 rows x 8 of A and 8 x 32 columns of B, for the
  // whole block (above the threadIdx loops, not one per thread).
  ASSERT_EQ(ks.kernels[0].shared.size(), 2u);
  for (const Buffer& b : ks.kernels[0].shared) {
    ASSERT_EQ(b.ndim(), 1u);
    EXPECT_TRUE(IsConstInt(b.shape()[0], 256)) << b.name() << ": " << ToText(b.shape()[0]);
  }
  // The accumulator: 4x4 per thread.
  std::string text = ToText(low);
  EXPECT_NE(text.find("T.alloc_buffer((16,), scope=\"local\")"), std::string::npos) << text;
}

TEST(GpuLowering, KernelsRunInOrderAndIntermediatesAreWorkspace) {
  transform::GpuKernels conv = transform::SplitKernels(LowerGpu(testing::Conv2d()));
  EXPECT_EQ(conv.kernels.size(), 2u);
  ASSERT_EQ(conv.workspace.size(), 1u);  // the padded input
  EXPECT_EQ(conv.workspace[0].scope(), "global");
  transform::GpuKernels sfm = transform::SplitKernels(LowerGpu(testing::Softmax()));
  EXPECT_EQ(sfm.kernels.size(), 4u);
  EXPECT_EQ(sfm.workspace.size(), 3u);  // max, exp, sum
}

TEST(GpuLowering, UnequalExtentsOfOneAxisAreAnError) {
  Schedule sch(Matmul(64, 64, 64));
  BlockRV c = testing::Blocks(sch)[0];
  std::vector<LoopRV> l = sch.GetLoops(c);
  std::vector<LoopRV> i = sch.Split(l[0], {std::monostate{}, int64_t{32}});
  sch.Bind(i[0], "blockIdx.x");
  sch.Bind(i[1], "threadIdx.x");
  BlockRV s = sch.CacheRead(c, 0, "shared");
  sch.ComputeAt(s, i[0]);
  std::vector<LoopRV> sl = sch.GetLoops(s);
  LoopRV f = sch.Fuse({sl[sl.size() - 2], sl[sl.size() - 1]});
  sch.Bind(sch.Split(f, {std::monostate{}, int64_t{64}})[1], "threadIdx.x");
  try {
    LowerGpu(sch.func());
    FAIL() << "lowering accepted threadIdx.x extents 32 and 64 in one kernel";
  } catch (const IRError& e) {
    EXPECT_NE(std::string(e.what()).find("lower_thread_binding"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("extents 64 and 32"), std::string::npos) << e.what();
  }
}

TEST(GpuLowering, StatementsOutsideThreadLoopsAreAnError) {
  try {
    LowerGpu(Matmul(8, 8, 8));
    FAIL() << "an unbound matmul lowered for a GPU";
  } catch (const IRError& e) {
    EXPECT_NE(std::string(e.what()).find("not bound to GPU threads"), std::string::npos)
        << e.what();
  }
}

TEST(GpuLowering, NoBarrierWithoutSharedMemory) {
  EXPECT_EQ(Count(ToText(LowerGpu(testing::MatmulPerThread())), "tvm_storage_sync"), 0u);
  EXPECT_EQ(Count(ToText(LowerGpu(testing::Softmax())), "tvm_storage_sync"), 0u);
}

TEST(GpuLowering, VerifyGpuCodeTakesItsLimitsFromTheTarget) {
  PrimFunc low = LowerGpu(testing::TiledGemm());
  EXPECT_TRUE(transform::VerifyGPUCode(low, transform::GpuLimits::FromTarget(kSm90)).empty());
  transform::GpuLimits small =
      transform::GpuLimits::FromTarget(Target::Parse("cuda -arch=sm_90 -max_threads_per_block=32 "
                                                     "-max_shared_memory_per_block=1024"));
  EXPECT_EQ(small.max_threads_per_block, 32);
  std::vector<std::string> issues = transform::VerifyGPUCode(low, small);
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0], "kernel 0: 64 threads per block exceed 32");
  EXPECT_EQ(issues[1], "kernel 0: 2048 bytes of shared memory per block exceed 1024");
  // A function not lowered for a GPU is reported, not crashed on.
  issues = transform::VerifyGPUCode(transform::Lower(Matmul(8, 8, 8)), small);
  ASSERT_EQ(issues.size(), 1u);
}

// Golden text: the tiled GEMM after the whole GPU pipeline. One barrier at
// the top of the k-loop body (iteration k+1's fetch must not overwrite the
// tiles iteration k still reads) and one between the cooperative fetches and
// the compute (all of a tile must be in shared memory before any thread reads
// it); none around the local accumulator or the global write-back. The tiles
// are 32x8 and 8x32 for the whole block, the accumulator 4x4 per thread.
TEST(GpuLowering, StorageSyncGolden) {
  EXPECT_EQ(ToText(LowerGpu(testing::TiledGemm())), R"__(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32"), C: T.Buffer((4096,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for blockIdx_x in T.thread_binding(4, thread="blockIdx.x"):
        for threadIdx_x in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("i_1_j_1_fused_alloc"):
                T.reads()
                T.writes()
                C_local = T.alloc_buffer((16,), scope="local")
                for k_0 in range(8):
                    T.evaluate(T.tvm_storage_sync("shared"))
                    with T.block("k_0_alloc"):
                        T.reads()
                        T.writes()
                        A_shared = T.alloc_buffer((256,), scope="shared")
                        B_shared = T.alloc_buffer((256,), scope="shared")
                        for ax0_ax1_fused_0 in range(4):
                            A_shared[ax0_ax1_fused_0 * 64 + threadIdx_x] = A[ax0_ax1_fused_0 * 512 + k_0 * 8 + threadIdx_x // 8 * 64 + blockIdx_x // 2 * 2048 + threadIdx_x % 8]
                        for ax0_ax1_fused_0 in range(4):
                            B_shared[ax0_ax1_fused_0 * 64 + threadIdx_x] = B[ax0_ax1_fused_0 * 128 + k_0 * 512 + threadIdx_x // 32 * 64 + threadIdx_x % 32 + blockIdx_x % 2 * 32]
                        T.evaluate(T.tvm_storage_sync("shared"))
                        for k_1, i_2, j_2 in T.grid(8, 4, 4):
                            if k_0 * 8 + k_1 == 0:
                                C_local[i_2 * 4 + j_2] = T.float32(0.0)
                            C_local[i_2 * 4 + j_2] = C_local[i_2 * 4 + j_2] + A_shared[i_2 * 8 + k_1 + threadIdx_x // 8 * 32] * B_shared[j_2 + k_1 * 32 + threadIdx_x % 8 * 4]
                for ax0, ax1 in T.grid(4, 4):
                    C[ax0 * 64 + ax1 + blockIdx_x // 2 * 2048 + threadIdx_x // 8 * 256 + blockIdx_x % 2 * 32 + threadIdx_x % 8 * 4] = C_local[ax0 * 4 + ax1]
)__");
}

// The first kernel's text (the first line of each kernel starts with
// "    for blockIdx_x").
std::string FirstKernel(const std::string& text) {
  size_t a = text.find("    for blockIdx_x");
  size_t b = text.find("    for blockIdx_x", a + 1);
  return text.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

// Golden text: a row maximum reduced across 8 threads. Each thread folds its
// strided share of the row into a local partial; the 8 partials are lanes of
// one warp, so three shuffles halve them (no shared memory, no barrier) and
// thread 0 stores the result.
TEST(GpuLowering, CrossThreadReductionGolden) {
  PrimFunc sched = testing::SoftmaxCrossThread(8, 2, 20);
  EXPECT_TRUE(SameAsWorkload(SoftmaxMN(2, 20), sched));
  EXPECT_EQ(FirstKernel(ToText(LowerGpu(sched))), R"__(    for blockIdx_x in T.thread_binding(2, thread="blockIdx.x"):
        for threadIdx_x in T.thread_binding(8, thread="threadIdx.x"):
            with T.block("k_1_alloc"):
                T.reads()
                T.writes()
                T_softmax_maxelem_normal = T.alloc_buffer((1,), scope="local")
                T_softmax_maxelem_shfl = T.alloc_buffer((1,), scope="local")
                T_softmax_maxelem_normal[0] = T.float32(-3.4028234663852886e+38)
                for k_0 in range(3):
                    if k_0 * 8 + threadIdx_x < 20:
                        T_softmax_maxelem_normal[0] = T.max(T_softmax_maxelem_normal[0], A[blockIdx_x * 20 + k_0 * 8 + threadIdx_x])
                T_softmax_maxelem_shfl[0] = T.tvm_warp_shuffle_down(T_softmax_maxelem_normal[0], 4, 8)
                T_softmax_maxelem_normal[0] = T.max(T_softmax_maxelem_normal[0], T_softmax_maxelem_shfl[0])
                T_softmax_maxelem_shfl[0] = T.tvm_warp_shuffle_down(T_softmax_maxelem_normal[0], 2, 8)
                T_softmax_maxelem_normal[0] = T.max(T_softmax_maxelem_normal[0], T_softmax_maxelem_shfl[0])
                T_softmax_maxelem_shfl[0] = T.tvm_warp_shuffle_down(T_softmax_maxelem_normal[0], 1, 8)
                T_softmax_maxelem_normal[0] = T.max(T_softmax_maxelem_normal[0], T_softmax_maxelem_shfl[0])
                if threadIdx_x == 0:
                    T_softmax_maxelem[blockIdx_x] = T_softmax_maxelem_normal[0]
)__");
}

// Golden text: across 64 threads, two warps. Each warp shuffles its 32
// partials down to its lane 0, which puts the warp's partial in shared
// memory; after one barrier the first warp shuffles the two partials (lanes
// past them bring the identity) and thread 0 stores the result.
TEST(GpuLowering, CrossThreadReductionAcrossWarpsGolden) {
  PrimFunc sched = testing::SoftmaxCrossThread(64, 2, 100);
  EXPECT_TRUE(SameAsWorkload(SoftmaxMN(2, 100), sched));
  EXPECT_EQ(FirstKernel(ToText(LowerGpu(sched))), R"__(    for blockIdx_x in T.thread_binding(2, thread="blockIdx.x"):
        for threadIdx_x in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("k_1_alloc"):
                T.reads()
                T.writes()
                T_softmax_maxelem_normal = T.alloc_buffer((1,), scope="local")
                T_softmax_maxelem_shfl = T.alloc_buffer((1,), scope="local")
                T_softmax_maxelem_red = T.alloc_buffer((2,), scope="shared")
                T_softmax_maxelem_normal[0] = T.float32(-3.4028234663852886e+38)
                for k_0 in range(2):
                    if k_0 * 64 + threadIdx_x < 100:
                        T_softmax_maxelem_normal[0] = T.max(T_softmax_maxelem_normal[0], A[blockIdx_x * 100 + k_0 * 64 + threadIdx_x])
                T_softmax_maxelem_shfl[0] = T.tvm_warp_shuffle_down(T_softmax_maxelem_normal[0], 16, 32)
                T_softmax_maxelem_normal[0] = T.max(T_softmax_maxelem_normal[0], T_softmax_maxelem_shfl[0])
                T_softmax_maxelem_shfl[0] = T.tvm_warp_shuffle_down(T_softmax_maxelem_normal[0], 8, 32)
                T_softmax_maxelem_normal[0] = T.max(T_softmax_maxelem_normal[0], T_softmax_maxelem_shfl[0])
                T_softmax_maxelem_shfl[0] = T.tvm_warp_shuffle_down(T_softmax_maxelem_normal[0], 4, 32)
                T_softmax_maxelem_normal[0] = T.max(T_softmax_maxelem_normal[0], T_softmax_maxelem_shfl[0])
                T_softmax_maxelem_shfl[0] = T.tvm_warp_shuffle_down(T_softmax_maxelem_normal[0], 2, 32)
                T_softmax_maxelem_normal[0] = T.max(T_softmax_maxelem_normal[0], T_softmax_maxelem_shfl[0])
                T_softmax_maxelem_shfl[0] = T.tvm_warp_shuffle_down(T_softmax_maxelem_normal[0], 1, 32)
                T_softmax_maxelem_normal[0] = T.max(T_softmax_maxelem_normal[0], T_softmax_maxelem_shfl[0])
                if threadIdx_x % 32 == 0:
                    T_softmax_maxelem_red[threadIdx_x // 32] = T_softmax_maxelem_normal[0]
                T.evaluate(T.tvm_storage_sync("shared"))
                if threadIdx_x < 32:
                    T_softmax_maxelem_normal[0] = T.if_then_else(threadIdx_x < 2, T_softmax_maxelem_red[threadIdx_x], T.float32(-3.4028234663852886e+38))
                    T_softmax_maxelem_shfl[0] = T.tvm_warp_shuffle_down(T_softmax_maxelem_normal[0], 1, 2)
                    T_softmax_maxelem_normal[0] = T.max(T_softmax_maxelem_normal[0], T_softmax_maxelem_shfl[0])
                if threadIdx_x == 0:
                    T_softmax_maxelem[blockIdx_x] = T_softmax_maxelem_normal[0]
)__");
}

TEST(GpuLowering, CrossThreadReductionWithAThreadCountNotAPowerOfTwo) {
  // 6 threads: the tree starts at 4 and leaves out the partners past 5.
  std::string k = FirstKernel(ToText(LowerGpu(testing::SoftmaxCrossThread(6, 2, 20))));
  EXPECT_NE(k.find("T_softmax_maxelem_red = T.alloc_buffer((6,), scope=\"shared\")"),
            std::string::npos) << k;
  EXPECT_NE(k.find("if threadIdx_x < 4 and threadIdx_x < 2:"), std::string::npos) << k;
  EXPECT_EQ(Count(k, "T.tvm_storage_sync"), 4u) << k;
}

TEST(GpuLowering, LoweredGpuTextRoundTrips) {
  EXPECT_TRUE(testing::RoundTrips(LowerGpu(testing::TiledGemm())));
  EXPECT_TRUE(testing::RoundTrips(LowerGpu(testing::SoftmaxCrossThread())));
  EXPECT_TRUE(testing::RoundTrips(LowerGpu(testing::SoftmaxCrossThread(128))));
}

// Lowered GPU programs run in the interpreter as thread blocks, with shared
// memory, barriers and warp shuffles (ir/interpreter/thread_block.h), and
// compute what the schedule computes. The cases take each way of combining
// the partials of a cross-thread reduction: shuffles within a segment of a
// warp (8, 32 threads), shuffles then one partial per warp through shared
// memory (64, 96, 128), a tree in shared memory (6, 12 threads: not a
// power of two), with other thread axes around the reduction (threadIdx.y)
// and with the whole softmax in one kernel (the threads' steps meet in one
// thread block).
TEST(GpuLowering, LoweredKernelsRunAsThreadBlocks) {
  struct Case {
    std::string name;
    PrimFunc workload, sched;
    bool shuffles;
  };
  const std::vector<Case> cases = {
      {"tiled gemm", Matmul(64, 64, 64), testing::TiledGemm(), false},
      {"conv2d", Conv2dNHWC(1, 10, 10, 8, 16, 3, 1, 1), testing::Conv2d(), false},
      {"softmax, 6 threads", SoftmaxMN(16, 100), testing::SoftmaxCrossThread(6), false},
      {"softmax, 8 threads", SoftmaxMN(16, 100), testing::SoftmaxCrossThread(8), true},
      {"softmax, 32 threads", SoftmaxMN(16, 100), testing::SoftmaxCrossThread(32), true},
      {"softmax, 64 threads", SoftmaxMN(16, 100), testing::SoftmaxCrossThread(64), true},
      {"softmax, 96 threads", SoftmaxMN(4, 300), testing::SoftmaxCrossThread(96, 4, 300), true},
      {"softmax, 128 threads", SoftmaxMN(4, 300), testing::SoftmaxCrossThread(128, 4, 300), true},
      {"one kernel, 12 threads", SoftmaxMN(4, 100), testing::SoftmaxOneKernel(12), false},
      {"one kernel, 32 threads", SoftmaxMN(4, 100), testing::SoftmaxOneKernel(32), true},
      {"one kernel, 64 threads", SoftmaxMN(4, 100), testing::SoftmaxOneKernel(64), true},
      {"rows on threadIdx.y, 6 threads", SoftmaxMN(8, 100), testing::SoftmaxRowsOnThreadY(6),
       false},
      {"rows on threadIdx.y, 8 threads", SoftmaxMN(8, 100), testing::SoftmaxRowsOnThreadY(8),
       true},
      {"rows on threadIdx.y, 64 threads", SoftmaxMN(8, 100), testing::SoftmaxRowsOnThreadY(64),
       true},
      // 3 rows per block over 8 rows: the last block's third row is past the
      // end, and its threads must not write back.
      {"3 rows on threadIdx.y, 8 threads", SoftmaxMN(8, 100),
       testing::SoftmaxRowsOnThreadY(8, 3), true},
      {"3 rows on threadIdx.y, 6 threads", SoftmaxMN(8, 100),
       testing::SoftmaxRowsOnThreadY(6, 3), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(SameAsWorkload(c.workload, c.sched));
    PrimFunc low = LowerGpu(c.sched);
    const std::string text = ToText(low);
    EXPECT_EQ(text.find("T.tvm_warp_shuffle_down") != std::string::npos, c.shuffles) << text;
    EXPECT_TRUE(testing::SameAsLowered(c.sched, low));
  }
}

// A kernel whose last stage binds threadIdx.y next to (not around) a
// reduction across threadIdx.x: every threadIdx.y thread would run the
// reduction at once, with nothing to tell their shared partials apart.
TEST(GpuLowering, AReductionThatAnotherThreadAxisDoesNotEncloseIsAnError) {
  Schedule sch(SoftmaxMN(4, 100));
  std::vector<BlockRV> b = testing::Blocks(sch);
  for (size_t r : {size_t{0}, size_t{1}, size_t{2}}) sch.SetScope(b[r], 0, "shared");
  std::vector<LoopRV> l = sch.GetLoops(b[3]);
  sch.Bind(l[0], "blockIdx.x");
  std::vector<LoopRV> j = sch.Split(l[1], {int64_t{4}, int64_t{25}});
  sch.Bind(j[0], "threadIdx.y");
  sch.Bind(j[1], "threadIdx.x");
  for (size_t r : {size_t{2}, size_t{1}, size_t{0}}) {
    sch.ComputeAt(b[r], l[0]);
    std::vector<LoopRV> inner = sch.GetLoops(b[r]);
    sch.Bind(sch.Split(inner.back(), {std::monostate{}, int64_t{25}})[1], "threadIdx.x");
  }
  ASSERT_TRUE(SameAsWorkload(SoftmaxMN(4, 100), sch.func()));
  try {
    LowerGpu(sch.func());
    FAIL() << "lowered a reduction that threadIdx.y does not enclose";
  } catch (const IRError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("the kernel also binds threadIdx.y (extent 4)"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("block 'T_softmax_maxelem'"));
  }
}

// Drops the n-th barrier (in program order) of a lowered function.
PrimFunc WithoutBarrier(const PrimFunc& f, int n) {
  struct Dropper : IRMutator {
    int n, seen = 0;
    explicit Dropper(int k) : n(k) {}
    Stmt VisitEvaluate(const Stmt& s, const EvaluateNode* op) override {
      const auto* c = op->value.as<CallNode>();
      if (c != nullptr && c->op == CallOp::kStorageSync && seen++ == n) return Evaluate(IntImm(0));
      return s;
    }
  } d(n);
  PrimFunc out = f;
  out.body = d.VisitStmt(f.body);
  EXPECT_GT(d.seen, n) << "there is no barrier " << n;
  return out;
}

// The storage-sync pass's barriers are needed: without either one of the
// tiled GEMM's two, running its thread blocks gives wrong results (thread 0
// reads tiles the others have not fetched yet, or overwrites a tile before
// they have read it).
TEST(GpuLowering, AMissingBarrierIsCaughtByRunningTheThreadBlocks) {
  const PrimFunc sched = testing::TiledGemm();
  const PrimFunc low = LowerGpu(sched);
  ASSERT_TRUE(testing::SameAsLowered(sched, low));
  for (int n : {0, 1}) {
    EXPECT_FALSE(testing::SameAsLowered(sched, WithoutBarrier(low, n))) << "without barrier " << n;
  }
}

// Puts the n-th statement found by `pick` under `if threadIdx_x < bound`.
PrimFunc UnderThreadCondition(const PrimFunc& f, const std::function<bool(const Stmt&)>& pick,
                              int64_t bound) {
  struct Wrapper : IRMutator {
    const std::function<bool(const Stmt&)>& pick;
    int64_t bound;
    Var tx;
    bool done = false;
    Wrapper(const std::function<bool(const Stmt&)>& p, int64_t b) : pick(p), bound(b) {}
    Stmt VisitFor(const Stmt& s, const ForNode* op) override {
      if (op->thread_tag == "threadIdx.x") tx = op->loop_var;
      return IRMutator::VisitFor(s, op);
    }
    Stmt VisitEvaluate(const Stmt& s, const EvaluateNode*) override { return Wrap(s); }
    Stmt VisitBufferStore(const Stmt& s, const BufferStoreNode*) override { return Wrap(s); }
    Stmt Wrap(const Stmt& s) {
      if (done || !pick(s)) return s;
      done = true;
      return IfThenElseStmt(LT(tx, IntImm(bound, tx.dtype())), s);
    }
  } w(pick, bound);
  PrimFunc out = f;
  out.body = w.VisitStmt(f.body);
  EXPECT_TRUE(w.done);
  return out;
}

// What a GPU would hang on or leave undefined is an error of the run, named.
TEST(GpuLowering, BarriersAndShufflesThatOnlySomeThreadsReachAreErrors) {
  auto error_of = [](const PrimFunc& f, const PrimFunc& low) {
    std::vector<NDArray> args = MakeRandomArgs(f, 1);
    for (NDArray& a : args) a = testing::Flattened(a);
    try {
      Interpret(low, args);
    } catch (const InterpreterError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto is_call = [](CallOp op) {
    return [op](const Stmt& s) {
      const Expr* v = nullptr;
      if (const auto* e = s.as<EvaluateNode>()) v = &e->value;
      if (const auto* st = s.as<BufferStoreNode>()) v = &st->value;
      const auto* c = v == nullptr ? nullptr : v->as<CallNode>();
      return c != nullptr && c->op == op;
    };
  };
  const PrimFunc gemm = testing::TiledGemm();
  EXPECT_THAT(error_of(gemm, UnderThreadCondition(LowerGpu(gemm), is_call(CallOp::kStorageSync), 32)),
              ::testing::HasSubstr("wait at different barriers"));
  const PrimFunc softmax = testing::SoftmaxCrossThread(8, 2, 20);
  EXPECT_THAT(
      error_of(softmax, UnderThreadCondition(LowerGpu(softmax), is_call(CallOp::kWarpShuffleDown), 4)),
      ::testing::HasSubstr("wait at different warp shuffles"));
}

}  // namespace
}  // namespace kiln::ir
