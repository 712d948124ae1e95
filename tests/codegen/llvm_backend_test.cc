// The LLVM CPU backend against the reference interpreter: every suite
// workload unscheduled, under random schedules, and under candidates of the
// real design space (parallel, vectorized and unrolled loops, caches under
// parallel loops), compiled at O3, loaded through the JIT and run on the same
// seeded inputs. Plus the emitted forms (IR, assembly, object) and the
// backend's refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "codegen/llvm_backend.h"
#include "codegen/target_features.h"
#include "ir/compare.h"
#include "ir/interpreter.h"
#include "ir/ndarray.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/workloads/suite.h"
#include "search/replay_trace.h"
#include "search/tune_context.h"
#include "tests/common/random_schedule.h"
#include "tests/common/reduced_suite.h"

namespace kiln::codegen {
namespace {

using ir::NDArray;
using ir::PrimFunc;

ir::Target Host() {
  static const ir::Target t = HostTarget();
  return t;
}

// Runs a compiled `scheduled` on random inputs and compares every parameter
// with the interpreter's run of `reference`.
::testing::AssertionResult SameAsInterpreter(const PrimFunc& reference, const PrimFunc& scheduled,
                                             uint64_t seed = 3) {
  std::vector<NDArray> expected = ir::MakeRandomArgs(reference, seed);
  std::vector<NDArray> actual = expected;
  ir::Interpret(reference, expected);
  std::unique_ptr<JitKernel> kernel;
  try {
    kernel = JitKernel::Load(BuildObject(scheduled, Host()));
  } catch (const BuildError& e) {
    return ::testing::AssertionFailure() << "build failed: " << e.what() << "\n" << ir::ToText(scheduled);
  }
  std::vector<void*> args;
  for (auto& a : actual) args.push_back(a.data());
  if (int rc = kernel->Call(args.data()); rc != 0)
    return ::testing::AssertionFailure() << "kernel returned " << rc;
  for (size_t i = 0; i < expected.size(); ++i) {
    ir::CompareResult r = ir::Compare(expected[i], actual[i], ir::Tolerance::For(expected[i].dtype()),
                                      reference.params[i].name());
    if (!r.ok) return ::testing::AssertionFailure() << r.message << "\n" << ir::ToText(scheduled);
  }
  return ::testing::AssertionSuccess();
}

TEST(HostTarget, DetectsCpuFeaturesAndCores) {
  ir::Target host = Host();
  EXPECT_EQ(host.kind, ir::Target::Kind::kLLVM);
  EXPECT_FALSE(host.mcpu.empty());
  EXPECT_GE(host.num_cores, 1);
  EXPECT_EQ(ResolveTarget("host"), host);
  EXPECT_EQ(ResolveTarget(" host "), host);
  // The spelled-out form means the same target.
  EXPECT_EQ(ResolveTarget(host.ToString()), host);
  EXPECT_EQ(ResolveTarget("llvm -mcpu=skylake -num-cores=2").mcpu, "skylake");
  EXPECT_THROW(ResolveTarget("llvm -bogus=1"), ir::TargetError);
}

class SuiteBackend : public ::testing::TestWithParam<int> {};

TEST_P(SuiteBackend, UnscheduledMatchesInterpreter) {
  const auto c = kiln::testing::ReducedSuite()[GetParam()];
  SCOPED_TRACE(c.name);
  EXPECT_TRUE(SameAsInterpreter(c.make(), c.make()));
}

TEST_P(SuiteBackend, RandomSchedulesMatchInterpreter) {
  const auto c = kiln::testing::ReducedSuite()[GetParam()];
  const PrimFunc original = c.make();
  ir::RandomEngine rng(9100 + GetParam());
  for (int trial = 0; trial < 12; ++trial) {
    ir::Schedule sch(original, rng.ForkSeed());
    const int steps = static_cast<int>(rng.SampleInt(2, 9));
    for (int s = 0; s < steps; ++s) {
      try {
        kiln::testing::RandomStep(sch, rng);
      } catch (const ir::ScheduleError&) {
      }
    }
    SCOPED_TRACE(std::string(c.name) + " trial " + std::to_string(trial) + "\n" + sch.trace().AsPython());
    ASSERT_TRUE(SameAsInterpreter(original, sch.func(), 20 + trial));
  }
}

// Candidates from the real CPU design space, postprocessed as the tuner
// measures them: multi-level tiles, caches, parallel/vectorize/unroll.
TEST_P(SuiteBackend, DesignSpaceCandidatesMatchInterpreter) {
  const auto c = kiln::testing::ReducedSuite()[GetParam()];
  const PrimFunc original = c.make();
  search::ReplayTrace search(search::MakeDefaultTuneContext(original, Host(), 17 + GetParam()));
  std::vector<search::Candidate> batch = search.NextBatch(6);
  ASSERT_FALSE(batch.empty()) << c.name << ": " << search.failures().Summary();
  for (const auto& cand : batch) {
    SCOPED_TRACE(std::string(c.name) + "\n" + cand.trace.AsPython());
    ASSERT_TRUE(SameAsInterpreter(original, cand.scheduled));
  }
}

INSTANTIATE_TEST_SUITE_P(Reduced, SuiteBackend,
                         ::testing::Range(0, static_cast<int>(kiln::testing::ReducedSuite().size())),
                         [](const auto& info) {
                           return std::string(kiln::testing::ReducedSuite()[info.param].name);
                         });

// Every suite workload at its real shapes compiles; the smallest config of
// each runs and writes every output element (no NaN left by missed stores:
// NDArray inputs are finite, so the outputs of these programs are too).
TEST(SuiteBackendFullSize, EveryConfigCompilesAndIndexZeroRuns) {
  for (const auto& cfg : ir::SuiteConfigs()) {
    SCOPED_TRACE(cfg.name + ":" + std::to_string(cfg.index));
    PrimFunc f = ir::MakeWorkload(cfg.name, cfg.index);
    ObjectCode code;
    ASSERT_NO_THROW(code = BuildObject(f, Host()));
    ASSERT_GE(code.object.size(), 4u);
    EXPECT_EQ(code.object.substr(0, 4), "\x7f" "ELF");
    if (cfg.index != 0 || ir::DescribeWorkload(cfg.name, 0).flops > 2e9) continue;
    std::vector<NDArray> args = ir::MakeRandomArgs(f, 1);
    NDArray& out = args.back();
    for (int64_t i = 0; i < out.size(); ++i) out.SetFromDouble(i, std::nan(""));
    auto kernel = JitKernel::Load(code);
    std::vector<void*> ptrs;
    for (auto& a : args) ptrs.push_back(a.data());
    ASSERT_EQ(kernel->Call(ptrs.data()), 0);
    for (int64_t i = 0; i < out.size(); ++i) ASSERT_FALSE(std::isnan(out.GetAsDouble(i))) << "element " << i;
  }
}

// A program with a parallel outer loop, a vectorized inner loop and a local
// accumulator under the parallel loop, its reduction decomposed as the
// tuner's RewriteReductionBlock postprocessor leaves it (so the vector loop
// holds no init branch). With `cache` false it is only split, parallel and
// vectorized, which also holds for splits that leave a guarded tail.
PrimFunc TiledMatmul(int64_t n, int split_inner, bool cache = true) {
  PrimFunc f = ir::Matmul(n, n, n);
  ir::Schedule sch(f, 1);
  ir::BlockRV c = sch.GetBlock("C");
  std::vector<ir::LoopRV> l = sch.GetLoops(c);
  auto i = sch.Split(l[0], {std::monostate{}, int64_t{4}});
  auto j = sch.Split(l[1], {std::monostate{}, int64_t{split_inner}});
  sch.Reorder({i[0], j[0], l[2], i[1], j[1]});
  if (cache) {
    ir::BlockRV local = sch.CacheWrite(c, 0, "local");
    sch.ReverseComputeAt(local, j[0], true);
  }
  sch.Parallel(sch.Fuse({i[0], j[0]}));
  sch.Vectorize(j[1]);
  if (cache) sch.DecomposeReduction(c, l[2]);
  return sch.func();
}

TEST(EmittedCode, VectorAndParallelLoopsReachTheMachine) {
  PrimFunc f = TiledMatmul(64, 16);
  EXPECT_TRUE(SameAsInterpreter(ir::Matmul(64, 64, 64), f));
  const std::string ir_text = EmitLLVMIR(f, Host());
  EXPECT_NE(ir_text.find("kiln_parallel_for"), std::string::npos) << ir_text;
  EXPECT_NE(ir_text.find("<16 x float>"), std::string::npos) << ir_text;
  EXPECT_NE(ir_text.find("noalias"), std::string::npos);
  const std::string asm_text = EmitAssembly(f, Host());
  EXPECT_NE(asm_text.find("main:"), std::string::npos);
  if (TargetHasFeature(Host(), "avx512f")) {
    EXPECT_NE(asm_text.find("zmm"), std::string::npos);
  }
}

// LLVM's own loop vectorizer (a cache copy, a loop we did not widen) picks
// 256-bit vectors on AVX-512 CPUs unless asked for 512; the backend asks
// exactly when the target CPU (or -mattr) has AVX-512.
TEST(EmittedCode, AsksForWideVectorsOnlyOnAvx512) {
  const PrimFunc f = ir::Matmul(64, 64, 64);
  const std::string wide = "\"prefer-vector-width\"=\"512\"";
  EXPECT_NE(EmitLLVMIR(f, ResolveTarget("llvm -mcpu=skylake-avx512")).find(wide), std::string::npos);
  EXPECT_EQ(EmitLLVMIR(f, ResolveTarget("llvm -mcpu=haswell")).find(wide), std::string::npos);
  EXPECT_EQ(EmitLLVMIR(f, Host()).find(wide) != std::string::npos, TargetHasFeature(Host(), "avx512f"));
  // An i-k-j matmul whose j loop is not vectorized in the schedule: LLVM's
  // vectorizer gets it.
  if (TargetHasFeature(Host(), "avx512f")) {
    ir::Schedule sch(f, 1);
    ir::BlockRV c = sch.GetBlock("C");
    std::vector<ir::LoopRV> l = sch.GetLoops(c);
    sch.Reorder({l[0], l[2], l[1]});
    sch.DecomposeReduction(c, l[2]);
    EXPECT_TRUE(SameAsInterpreter(f, sch.func()));
    const std::string asm_text = EmitAssembly(sch.func(), Host());
    const size_t fma = asm_text.find("vfmadd231ps");
    ASSERT_NE(fma, std::string::npos) << asm_text;
    const std::string line = asm_text.substr(fma, asm_text.find('\n', fma) - fma);
    EXPECT_NE(line.find("zmm"), std::string::npos) << line;
  }
}

TEST(EmittedCode, ImperfectVectorSplitMatchesInterpreter) {
  // 60 = 4 * 15: the vector loop has 15 lanes, a non-power-of-two width.
  EXPECT_TRUE(SameAsInterpreter(ir::Matmul(60, 60, 60), TiledMatmul(60, 15)));
  // 100 % 16 != 0: the split leaves a guarded tail; the loop stays scalar.
  EXPECT_TRUE(SameAsInterpreter(ir::Matmul(100, 100, 100), TiledMatmul(100, 16, false)));
}

// Indices the backend computes in 64 bits (codegen/index_range.h) next to
// ones it must not: loops that start below zero, floor division and modulo
// of negative values, a parallel loop whose variable is offset, and a loop
// that ends just below INT32_MAX.
TEST(EmittedCode, IndexArithmeticMatchesInterpreterAcrossSigns) {
  const PrimFunc f = ir::ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"), C: T.Buffer((8,), "int32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i in range(-16, 16):
        for j in range(2):
            B[(i + 16) * 2 + j] = A[(i * 2 + j) % 64] + i // 3 + (i - 5) % 7 + T.min(i, j) * 2 - T.max(i * 3, j) + A[(i + 16) // 4 * 8 + (i + 16) % 4]
    for p in T.parallel(4, 8):
        C[p - 4] = A[p * 8 - 32 + p % 3] * 2
    for k in range(2147483640, 2147483647):
        C[k - 2147483640] = C[k - 2147483640] + A[(k - 2147483640) * 9]
)");
  EXPECT_TRUE(SameAsInterpreter(f, f));
}

// The emitter reuses index arithmetic it has already computed
// (value_numbering.h). Each expression here is first computed inside a loop
// body or a branch of an if or of T.if_then_else, and then again after it,
// where the first result does not dominate: reusing it there would fail
// LLVM's verifier. The parallel body (its own LLVM function) and the loop
// after it repeat the same arithmetic on other variables.
TEST(EmittedCode, RepeatedIndexArithmeticAcrossControlFlow) {
  const PrimFunc f = ir::ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"), C: T.Buffer((64,), "int32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for n in range(-8, 8):
        for m in range(3):
            B[(n + 8) * 3 + m] = A[n * 5 // 3 + 16] + A[n * 5 % 7 + m]
        C[n + 8] = A[n * 5 // 3 + 16] + A[n * 5 % 7]
        if n % 2 == 0:
            C[n + 24] = A[n * 5 // 3 + 20]
        else:
            C[n + 24] = A[n * 5 // 3 + 21]
        C[n + 40] = T.if_then_else(n < 0, A[n * 5 % 7 + 30], 0) + A[n * 5 // 3 + 20]
        C[n + 40] = C[n + 40] + A[n * 5 % 7 + 30]
    for p in T.parallel(8):
        for q in T.vectorized(8):
            B[p * 8 + q] = B[p * 8 + q] + A[p * 8 + q] * (p // 3) + A[p * 8 // 3 + q]
        C[56 + p] = A[p * 8 // 3] + p // 3
    for r in range(8):
        C[56 + r] = C[56 + r] + A[r * 8 // 3] + r // 3
)");
  EXPECT_TRUE(SameAsInterpreter(f, f));
}

// T.if_then_else in a vectorized loop: a condition the same for every lane
// is one branch per group of lanes, one that differs keeps a scalar loop.
// Either way only the taken arm is evaluated: the arms guarded by i != 3
// divide by zero when i is 3, which traps (SIGFPE) if they are evaluated
// anyway, and the loop is too long for LLVM to unroll and fold them away.
TEST(EmittedCode, IfThenElseInVectorizedLoopsEvaluatesOnlyTheTakenArm) {
  const PrimFunc f = ir::ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((8000,), "int32"), B: T.Buffer((8000,), "int32"), C: T.Buffer((64,), "int32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i in range(1000):
        for c in T.vectorized(8):
            B[i * 8 + c] = T.if_then_else(i != 3, 1000 // (i - 3), 5) + X[i * 8 + c]
    for i in range(1000):
        for c in T.vectorized(8):
            B[i * 8 + c] = B[i * 8 + c] + T.if_then_else(X[i] > 0, X[i * 8 + c], X[c] * 2)
    for j in range(8):
        for c in T.vectorized(8):
            C[j * 8 + c] = T.if_then_else(X[j * 8 + c] != 0, 1000 // X[j * 8 + c], 7)
    for j in range(8):
        for c in T.vectorized(8):
            C[j * 8 + c] = C[j * 8 + c] + T.if_then_else(j < 4, T.if_then_else(c < 3, X[c * 8 + j], X[c]), 1)
)");
  EXPECT_TRUE(SameAsInterpreter(f, f));
}

TEST(EmittedCode, KernelRunsOnEveryThreadCount) {
  PrimFunc f = TiledMatmul(64, 16);
  for (int threads : {1, 2, 3, 8}) {
    kiln_runtime_set_num_threads(threads);
    EXPECT_TRUE(SameAsInterpreter(ir::Matmul(64, 64, 64), f)) << threads << " threads";
  }
  kiln_runtime_set_num_threads(0);
}

// A convolution whose padding is computed under the parallel row loop, each
// iteration padding the rows it needs (neighbours share a halo): the padded
// buffer is private to each iteration (ir/transform/plan_buffer_allocation.cc),
// so the loop runs on threads and every thread count computes the same.
TEST(EmittedCode, PaddingUnderAParallelLoopRunsOnEveryThreadCount) {
  const PrimFunc conv = ir::Conv2dNHWC(1, 16, 16, 3, 8, 3, /*stride=*/1, /*padding=*/1);
  ir::Schedule sch(conv, 1);
  std::vector<ir::LoopRV> l = sch.GetLoops(sch.GetBlock("conv2d_nhwc"));  // n h w co rh rw rc
  auto h = sch.Split(l[1], {int64_t{8}, int64_t{2}});
  sch.Parallel(h[0]);
  sch.ComputeAt(sch.GetBlock("PadInput"), h[0], true);
  const PrimFunc f = sch.func();
  EXPECT_NE(EmitLLVMIR(f, Host()).find("kiln_parallel_for"), std::string::npos);
  for (int threads : {1, 2, 3, 8}) {
    kiln_runtime_set_num_threads(threads);
    EXPECT_TRUE(SameAsInterpreter(conv, f)) << threads << " threads";
  }
  kiln_runtime_set_num_threads(0);
}

TEST(BackendErrors, RefusesWhatItCannotCompile) {
  PrimFunc f = ir::Matmul(8, 8, 8);
  f.name = "not a name";
  try {
    BuildObject(f, Host());
    FAIL() << "accepted a kernel name with spaces";
  } catch (const BuildError& e) {
    EXPECT_NE(std::string(e.what()).find("not a C identifier"), std::string::npos) << e.what();
  }

  ir::Schedule sch(ir::Matmul(8, 8, 8), 1);
  sch.Bind(sch.GetLoops(sch.GetBlock("C"))[0], "threadIdx.x");
  try {
    BuildObject(sch.func(), Host());
    FAIL() << "accepted a thread binding on the CPU";
  } catch (const BuildError& e) {
    EXPECT_NE(std::string(e.what()).find("threadIdx.x"), std::string::npos) << e.what();
  }

  EXPECT_THROW(BuildObject(ir::Matmul(8, 8, 8), ir::Target::Parse("cuda -arch=sm_90")), BuildError);
  EXPECT_THROW(BuildObject(ir::Matmul(8, 8, 8), ir::Target::Parse("llvm -mtriple=nonsense-unknown-none")),
               BuildError);

  ObjectCode junk{"main", "not an object file", Host().ToString()};
  EXPECT_THROW(JitKernel::Load(junk), BuildError);
  ObjectCode good = BuildObject(ir::Matmul(8, 8, 8), Host());
  good.symbol = "missing_symbol";
  try {
    JitKernel::Load(good);
    FAIL() << "loaded a kernel under a symbol the object does not define";
  } catch (const BuildError& e) {
    EXPECT_NE(std::string(e.what()).find("missing_symbol"), std::string::npos) << e.what();
  }
}

TEST(Jit, SameSymbolLoadsTwiceAndUnloads) {
  PrimFunc f = ir::Matmul(16, 16, 16);
  ObjectCode code = BuildObject(f, Host());
  auto a = JitKernel::Load(code);
  auto b = JitKernel::Load(code);
  EXPECT_NE(a->entry(), nullptr);
  EXPECT_NE(b->entry(), nullptr);
  a.reset();
  std::vector<NDArray> args = ir::MakeRandomArgs(f, 2), expected = args;
  ir::Interpret(f, expected);
  std::vector<void*> ptrs;
  for (auto& x : args) ptrs.push_back(x.data());
  ASSERT_EQ(b->Call(ptrs.data()), 0);
  EXPECT_TRUE(ir::Compare(expected[2], args[2], ir::Tolerance::For(args[2].dtype())).ok);
}

}  // namespace
}  // namespace kiln::codegen
