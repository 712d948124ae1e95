// The CUDA backend without a GPU: representative hand-scheduled kernels
// (thread-bound matmul, shared-memory tiled GEMM with cooperative fetch and
// barriers, conv2d with a padding kernel, softmax in four kernels, and with
// its reductions across threads) become
// CUDA C++, NVRTC compiles it to PTX for sm_90, nvJitLink assembles a cubin,
// and the ptxas of the toolkit accepts the PTX too. The driver is only ever
// dlopen'ed: on a machine without one, probing it fails with a clear message.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../codegen/gpu_test_kernels.h"
#include "codegen/cuda/cuda_codegen.h"
#include "codegen/cuda/cuda_driver.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "codegen/llvm_backend.h"
#include "ir/target.h"
#include "tests/common/ptxas.h"

namespace kiln::codegen {
namespace {

const ir::Target kSm90 = ir::Target::Parse("cuda -arch=sm_90");

using kiln::testing::RunPtxas;

struct Case {
  const char* name;
  ir::PrimFunc (*make)();
  size_t kernels;
  bool barriers;
  bool shuffles;
};

ir::PrimFunc MatmulCase() { return ir::testing::MatmulPerThread(); }
ir::PrimFunc GemmCase() { return ir::testing::TiledGemm(); }
ir::PrimFunc Conv2dCase() { return ir::testing::Conv2d(); }
ir::PrimFunc SoftmaxCase() { return ir::testing::Softmax(); }
ir::PrimFunc SoftmaxCrossThreadCase() { return ir::testing::SoftmaxCrossThread(); }
ir::PrimFunc SoftmaxTwoStageCase() { return ir::testing::SoftmaxCrossThread(128); }
ir::PrimFunc SoftmaxSharedTreeCase() { return ir::testing::SoftmaxCrossThread(6); }
ir::PrimFunc SoftmaxOneKernelCase() { return ir::testing::SoftmaxOneKernel(64); }
ir::PrimFunc SoftmaxThreadYCase() { return ir::testing::SoftmaxRowsOnThreadY(8); }

// Cross-thread reductions: shuffles within a warp (32 threads; 8 lanes per
// row with rows on threadIdx.y), shuffles and a partial per warp in shared
// memory (128), a tree in shared memory (6), everything in one kernel (64).
const Case kCases[] = {
    {"matmul", MatmulCase, 1, false, false},
    {"tiled_gemm", GemmCase, 1, true, false},
    {"conv2d", Conv2dCase, 2, false, false},
    {"softmax", SoftmaxCase, 4, false, false},
    {"softmax_cross_thread", SoftmaxCrossThreadCase, 4, false, true},
    {"softmax_cross_thread_128", SoftmaxTwoStageCase, 4, true, true},
    {"softmax_cross_thread_6", SoftmaxSharedTreeCase, 4, true, false},
    {"softmax_one_kernel", SoftmaxOneKernelCase, 1, true, true},
    {"softmax_thread_y", SoftmaxThreadYCase, 4, false, true},
};

TEST(CudaCodegen, RepresentativeKernelsCompileToPtxThatPtxasAccepts) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    CudaModule m = BuildCudaSource(c.make(), kSm90);
    EXPECT_EQ(m.launches.size(), c.kernels);
    EXPECT_EQ(m.source.find("__syncthreads()") != std::string::npos, c.barriers) << m.source;
    CudaBinary bin;
    try {
      bin = CompileCuda(m.source, "sm_90", std::string(c.name) + ".cu");
    } catch (const BuildError& e) {
      FAIL() << e.what() << "\n" << m.source;
    }
    EXPECT_NE(bin.ptx.find(".target sm_90"), std::string::npos);
    EXPECT_EQ(bin.ptx.find("shfl.sync.down") != std::string::npos, c.shuffles) << bin.ptx;
    for (const CudaLaunch& l : m.launches) {
      EXPECT_NE(bin.ptx.find(".entry " + l.kernel), std::string::npos) << l.kernel;
    }
    ASSERT_GE(bin.cubin.size(), 4u);
    EXPECT_EQ(bin.cubin.substr(0, 4), "\x7f" "ELF");
    std::string log;
    EXPECT_EQ(RunPtxas(bin.ptx, "sm_90", &log), 0) << log;
  }
}

TEST(CudaCodegen, TiledGemmSourceIsReadable) {
  CudaModule m = BuildCudaSource(ir::testing::TiledGemm(), kSm90);
  const std::string& s = m.source;
  EXPECT_NE(s.find("extern \"C\" __global__ void __launch_bounds__(64) main_kernel0("),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("const int blockIdx_x = blockIdx.x;"), std::string::npos) << s;
  EXPECT_NE(s.find("const int threadIdx_x = threadIdx.x;"), std::string::npos) << s;
  EXPECT_NE(s.find("__shared__ __align__(16) float"), std::string::npos) << s;
  EXPECT_NE(s.find("float C_local[16];"), std::string::npos) << s;
  // Inputs are read only; the output is written.
  EXPECT_NE(s.find("const float* __restrict__ A"), std::string::npos) << s;
  EXPECT_NE(s.find("float* __restrict__ C)"), std::string::npos) << s;
  ASSERT_EQ(m.launches.size(), 1u);
  const CudaLaunch& l = m.launches[0];
  EXPECT_EQ(l.grid, (std::array<int64_t, 3>{4, 1, 1}));
  EXPECT_EQ(l.block, (std::array<int64_t, 3>{64, 1, 1}));
  EXPECT_EQ(l.static_shared_bytes, 2048);
  EXPECT_EQ(l.dynamic_shared_bytes, 0);
  EXPECT_EQ(l.args, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(m.LaunchText(),
            "// launch main_kernel0<<<dim3(4, 1, 1), dim3(64, 1, 1), 0>>>(A, B, C)\n");
}

TEST(CudaCodegen, WorkspaceBuffersFollowTheParameters) {
  CudaModule m = BuildCudaSource(ir::testing::Softmax(), kSm90);
  ASSERT_EQ(m.buffers.size(), 5u);  // input, output, then max, exp, sum
  EXPECT_FALSE(m.buffers[0].workspace);
  EXPECT_FALSE(m.buffers[1].workspace);
  for (size_t i = 2; i < 5; ++i) EXPECT_TRUE(m.buffers[i].workspace) << m.buffers[i].name;
  EXPECT_EQ(m.buffers[2].elements, 16);
  ASSERT_EQ(m.launches.size(), 4u);
  // The first kernel (row maximum) reads the input and writes the maximum.
  EXPECT_EQ(m.launches[0].args, (std::vector<int>{0, 2}));
}

TEST(CudaCodegen, CpuTargetsAndOversizedKernelsAreRefused) {
  EXPECT_THROW(BuildCudaSource(ir::testing::TiledGemm(), ir::Target::Parse("llvm")), BuildError);
  try {
    BuildCudaSource(ir::testing::TiledGemm(),
                    ir::Target::Parse("cuda -arch=sm_90 -max_threads_per_block=32"));
    FAIL() << "a 64-thread block passed a 32-thread limit";
  } catch (const BuildError& e) {
    EXPECT_NE(std::string(e.what()).find("64 threads per block exceed 32"), std::string::npos)
        << e.what();
  }
}

TEST(CudaCodegen, CompileErrorsCarryTheNvrtcLog) {
  try {
    CompileCuda("extern \"C\" __global__ void k(float* a) { a[0] = undeclared; }", "sm_90",
                "broken.cu");
    FAIL() << "NVRTC accepted an undeclared identifier";
  } catch (const BuildError& e) {
    EXPECT_NE(std::string(e.what()).find("undeclared"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("broken.cu"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CompileCuda("", "sm90", "x.cu"), BuildError);
  EXPECT_THROW(AssemblePtx("not ptx", "sm_90"), BuildError);
}

TEST(CudaDriver, MissingDriverIsAClearError) {
  try {
    CudaDeviceInfo info = ProbeCudaDevice();
    // A machine with a GPU: the probe describes it.
    EXPECT_GT(info.count, 0);
    EXPECT_EQ(info.arch.rfind("sm_", 0), 0u);
    GTEST_SKIP() << "a GPU is present (" << info.name << ", " << info.arch
                 << "); the no-driver message is not reachable here";
  } catch (const CudaUnavailable& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("CUDA driver"), std::string::npos) << msg;
    EXPECT_NE(msg.find(CudaDriverLibrary()), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace kiln::codegen
