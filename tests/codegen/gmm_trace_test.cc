// The committed hand schedules for GMM 1024^3 (configs/traces/: one for
// AVX-512, one for AVX2; what bench/gemm_bench times against OpenBLAS) must
// keep applying and keep computing the right thing: replayed on reduced
// GMMs they match the interpreter; replayed on GMM 1024^3 they match a
// double-precision reference on sampled elements and compile, for a CPU of
// their kind, to the register-tiled FMA loop they were written for.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/kernel_abi.h"
#include "codegen/llvm_backend.h"
#include "ir/compare.h"
#include "ir/interpreter.h"
#include "ir/ndarray.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/workloads/suite.h"

namespace kiln::codegen {
namespace {

constexpr const char* kAvx512Trace = "gmm_1024_cpu.json";
constexpr const char* kAvx2Trace = "gmm_1024_avx2.json";

ir::Trace HandTrace(const std::string& file) {
  const std::string path = std::string(KILN_SOURCE_DIR) + "/configs/traces/" + file;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ir::Trace::FromJSONString(ss.str());
}

ir::PrimFunc Apply(const ir::Trace& trace, const ir::PrimFunc& f) {
  ir::Schedule sch(f, 1);
  trace.ApplyToSchedule(&sch, /*remove_postproc=*/false);
  return sch.func();
}

std::vector<ir::NDArray> RunCompiled(const ir::PrimFunc& scheduled, uint64_t seed) {
  std::vector<ir::NDArray> args = ir::MakeRandomArgs(scheduled, seed);
  auto kernel = JitKernel::Load(BuildObject(scheduled, HostTarget()));
  std::vector<void*> ptrs;
  for (auto& a : args) ptrs.push_back(a.data());
  EXPECT_EQ(kernel->Call(ptrs.data()), 0);
  return args;
}

class GmmHandTrace : public ::testing::TestWithParam<const char*> {};

// The trace's outer split factors are inferred, so it replays on any GMM
// whose rows divide by the register tile (4) and columns by the panel (64
// or 16): here 128^3 (GMM config 0), a rectangular case and a batch of two
// (the batch is fused into the parallel loop).
TEST_P(GmmHandTrace, ReducedShapesMatchInterpreter) {
  const ir::Trace trace = HandTrace(GetParam());
  const std::vector<ir::PrimFunc> shapes = {ir::MakeWorkload("GMM", 0), ir::BatchMatmulNKKM(1, 8, 192, 24),
                                            ir::BatchMatmulNKKM(2, 12, 64, 33)};
  for (int threads : {1, 2}) {
    kiln_runtime_set_num_threads(threads);
    for (size_t c = 0; c < shapes.size(); ++c) {
      const ir::PrimFunc& f = shapes[c];
      SCOPED_TRACE("shape " + std::to_string(c) + ", " + std::to_string(threads) + " thread(s)");
      const ir::PrimFunc scheduled = Apply(trace, f);
      std::vector<ir::NDArray> expected = ir::MakeRandomArgs(f, 5);
      ir::Interpret(f, expected);
      std::vector<ir::NDArray> actual = RunCompiled(scheduled, 5);
      ir::CompareResult r = ir::Compare(expected[2], actual[2], ir::Tolerance::For(expected[2].dtype()), "Z");
      EXPECT_TRUE(r.ok) << r.message;
    }
  }
  kiln_runtime_set_num_threads(0);
}

TEST_P(GmmHandTrace, FullSizeMatchesSampledReference) {
  const ir::PrimFunc f = ir::MakeWorkload("GMM", 3);
  const ir::PrimFunc scheduled = Apply(HandTrace(GetParam()), f);
  std::vector<ir::NDArray> args = RunCompiled(scheduled, 7);
  const float* x = args[0].data_as<float>();
  const float* y = args[1].data_as<float>();
  const float* z = args[2].data_as<float>();
  constexpr int64_t n = 1024;
  uint64_t s = 99;
  for (int t = 0; t < 500; ++t) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const int64_t i = static_cast<int64_t>((s >> 33) % n), j = static_cast<int64_t>((s >> 13) % n);
    double ref = 0;
    for (int64_t k = 0; k < n; ++k) ref += double(x[i * n + k]) * double(y[k * n + j]);
    // 1024 float32 products summed in another order than the reference's.
    ASSERT_NEAR(z[i * n + j], ref, 1e-4 * (1 + std::abs(ref))) << "Z[0, " << i << ", " << j << "]";
  }
}

INSTANTIATE_TEST_SUITE_P(Traces, GmmHandTrace, ::testing::Values(kAvx512Trace, kAvx2Trace));

// What makes a schedule fast: its register tile stays in registers, so the
// k loop is FMAs on vector registers of the target's width with no spills
// of the accumulator. Checked on the assembly for a CPU of each kind, so
// on any host.
struct FmaLoop {
  size_t fma = 0;            // vector FMAs in the kernel
  size_t narrower_fma = 0;   // FMAs on other registers than `reg`
  size_t stack_vectors = 0;  // `reg` registers read from or written to the stack
};

FmaLoop ScanAssembly(const std::string& asm_text, const std::string& reg) {
  FmaLoop out;
  std::istringstream lines(asm_text);
  for (std::string line; std::getline(lines, line);) {
    const bool wide = line.find(reg) != std::string::npos;
    // A vector register read from or written to the stack: the accumulator
    // was not promoted to registers, or spilled.
    if (wide && line.find("(%rsp)") != std::string::npos) ++out.stack_vectors;
    if (line.find("vfmadd") == std::string::npos) continue;
    ++out.fma;
    if (!wide) ++out.narrower_fma;
  }
  return out;
}

struct CodeCase {
  const char* trace;
  const char* cpu;
  const char* reg;         // the vector registers its FMAs must use
  size_t fma_per_k_step;   // register tile / vector width
};

class GmmHandTraceCode : public ::testing::TestWithParam<CodeCase> {};

TEST_P(GmmHandTraceCode, InnerLoopIsFmaOnRegisters) {
  const CodeCase& c = GetParam();
  const ir::Target cpu = ResolveTarget(std::string("llvm -mcpu=") + c.cpu + " -num-cores=2");
  const std::string asm_text = EmitAssembly(Apply(HandTrace(c.trace), ir::MakeWorkload("GMM", 3)), cpu);
  const FmaLoop loop = ScanAssembly(asm_text, c.reg);
  EXPECT_EQ(loop.stack_vectors, 0u) << asm_text;
  EXPECT_EQ(loop.narrower_fma, 0u) << asm_text;
  // LLVM may unroll k further.
  EXPECT_GE(loop.fma, c.fma_per_k_step) << asm_text;
  EXPECT_EQ(loop.fma % c.fma_per_k_step, 0u) << asm_text;
}

// 4 rows x 4 zmm: 16 FMAs per k step; 4 rows x 16 floats = 4 x 2 ymm: 8.
INSTANTIATE_TEST_SUITE_P(Cpus, GmmHandTraceCode,
                         ::testing::Values(CodeCase{kAvx512Trace, "sapphirerapids", "zmm", 16},
                                           CodeCase{kAvx2Trace, "znver3", "ymm", 8}));

}  // namespace
}  // namespace kiln::codegen
