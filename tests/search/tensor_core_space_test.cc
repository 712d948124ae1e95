// The tensor-core design space: on sm_80 and later an fp16 GEMM's sketch is
// MultiLevelTilingTensorCore's (every stage tensorized with the wmma
// intrinsics), its samples compute the workload, and what the CUDA
// postprocessors accept builds to PTX that NVRTC fills with wmma
// instructions and the toolkit's ptxas accepts for sm_90. Below sm_80, and
// for float32, the plain MultiLevelTiling sketch stays.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

#include "../schedule/schedule_test_util.h"
#include "codegen/cuda/cuda_codegen.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "codegen/llvm_backend.h"
#include "ir/transform/lower.h"
#include "ir/transform/verify_gpu_code.h"
#include "ir/transform/gpu_kernels.h"
#include "ir/tensor_intrin/tensor_intrin.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/workloads/suite.h"
#include "ir/workloads/variants.h"
#include "search/apply_trace.h"
#include "search/postproc.h"
#include "search/space_generator.h"
#include "search_test_util.h"
#include "tests/common/ptxas.h"

namespace kiln::search {
namespace {

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

size_t Tensorizes(const ir::Schedule& sch) {
  size_t n = 0;
  for (const ir::Instruction& inst : sch.trace().insts()) n += inst.kind == "Tensorize";
  return n;
}

// Up to `want` samples of `sketch` that replay and pass the context's
// postprocessors (search/apply_trace.h), drawn with the seeds 7919,
// 2 * 7919, ..., at most `draws` of them; the reasons of the rejected ones
// go to *rejected. A replay error fails the calling test.
std::vector<Candidate> AcceptedSamples(const TuneContext& ctx, const ir::Trace& sketch,
                                       int64_t draws, size_t want, std::string* rejected = nullptr) {
  std::vector<Candidate> out;
  for (int64_t seed = 1; seed <= draws && out.size() < want; ++seed) {
    FailureStats fails;
    std::optional<Candidate> c = ApplyTraceWithPostprocs(ctx, sketch, seed * 7919, &fails);
    EXPECT_EQ(fails.counts.count("replay"), 0u) << "seed " << seed << ": " << fails.Summary();
    if (c) {
      out.push_back(std::move(*c));
    } else if (rejected != nullptr) {
      *rejected += "\n  " + fails.Summary();
    }
  }
  return out;
}


TEST(TensorCoreSpace, Fp16GemmOnSm90IsOneTensorizedSketch) {
  TuneContext ctx = testing::Context(ir::MakeWorkload("GMM_FP16", 0), "cuda -arch=sm_90");
  std::vector<ir::Schedule> spaces = ctx.space_generator->Generate(ctx);
  ASSERT_EQ(spaces.size(), 1u);
  // mma, fill, the two fragment loads and the store.
  EXPECT_EQ(Tensorizes(spaces[0]), 5u) << spaces[0].trace().AsPython();
  std::string text = ir::ToText(spaces[0].func());
  for (const char* scope : {"wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"}) {
    EXPECT_NE(text.find(scope), std::string::npos) << scope;
  }
  EXPECT_TRUE(ir::testing::SameResult(ctx.workload, spaces[0].func(), 3, true));
}

TEST(TensorCoreSpace, BelowSm80AndForFloat32TheSketchHasNoTensorCores) {
  for (const char* target : {"cuda -arch=sm_75", "cuda -arch=sm_70"}) {
    TuneContext ctx = testing::Context(ir::MakeWorkload("GMM_FP16", 0), target);
    std::vector<ir::Schedule> spaces = ctx.space_generator->Generate(ctx);
    ASSERT_EQ(spaces.size(), 1u) << target;
    EXPECT_EQ(Tensorizes(spaces[0]), 0u) << target;
  }
  TuneContext ctx = testing::Context(ir::MakeWorkload("GMM", 0), "cuda -arch=sm_90");
  std::vector<ir::Schedule> spaces = ctx.space_generator->Generate(ctx);
  ASSERT_EQ(spaces.size(), 1u);
  EXPECT_EQ(Tensorizes(spaces[0]), 0u);
}

// Samples of the sketch at fresh decisions: those the postprocessors accept
// compute the GEMM, and their PTX holds the wmma instructions.
TEST(TensorCoreSpace, AcceptedSamplesBuildToWmmaPtxForSm90) {
  const ir::PrimFunc original = ir::BatchMatmulNKKMFp16(1, 64, 64, 64);
  TuneContext ctx = testing::Context(original, "cuda -arch=sm_90", /*seed=*/5);
  std::vector<ir::Schedule> spaces = ctx.space_generator->Generate(ctx);
  ASSERT_EQ(spaces.size(), 1u);
  ir::Trace sketch = spaces[0].trace().Simplified(true).WithoutDecisions();
  int built = 0;
  std::string reasons;
  for (const Candidate& c : AcceptedSamples(ctx, sketch, 64, 3, &reasons)) {
    ASSERT_TRUE(ir::testing::SameResult(original, c.scheduled, 3, true)) << c.trace.AsPython();
    codegen::CudaModule m;
    codegen::CudaBinary bin;
    try {
      m = codegen::BuildCudaSource(c.scheduled, ctx.target);
      bin = codegen::CompileCuda(m.source, "sm_90", "gmm_fp16.cu");
    } catch (const codegen::BuildError& e) {
      FAIL() << e.what() << "\n" << ir::ToText(c.scheduled);
    }
    EXPECT_NE(m.source.find("#include <mma.h>"), std::string::npos);
    EXPECT_NE(m.source.find("nvcuda::wmma::mma_sync("), std::string::npos) << m.source;
    EXPECT_GE(Count(bin.ptx, "wmma.mma.sync.aligned"), 1u) << m.source;
    EXPECT_GE(Count(bin.ptx, "wmma.load.a.sync.aligned"), 1u);
    EXPECT_GE(Count(bin.ptx, "wmma.load.b.sync.aligned"), 1u);
    EXPECT_GE(Count(bin.ptx, "wmma.store.d.sync.aligned"), 1u);
    EXPECT_FALSE(bin.cubin.empty());
    std::string log;
    EXPECT_EQ(kiln::testing::RunPtxas(bin.ptx, "sm_90", &log), 0) << log;
    ++built;
  }
  EXPECT_GE(built, 1) << "no sample passed the postprocessors:" << reasons;
}

// An output buffer wider than the GEMM's domain (rows of 66 floats, padded
// storage) still matches the wmma store, whose leading dimension must be a
// multiple of 16 bytes (4 floats): the CUDA codegen refuses the kernel and
// says why, rather than emit a store the device would get wrong.
TEST(TensorCoreSpace, AStoreWithAnIllegalLeadingDimensionIsRefused) {
  std::string text = ir::ToText(ir::BatchMatmulNKKMFp16(1, 64, 64, 64));
  const std::string out_decl = "Z: T.Buffer((1, 64, 64), \"float32\")";
  const size_t at = text.find(out_decl);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, out_decl.size(), "Z: T.Buffer((1, 64, 66), \"float32\")");
  const ir::PrimFunc padded = ir::ParseFunc(text);
  TuneContext ctx = testing::Context(padded, "cuda -arch=sm_90", /*seed=*/5);
  std::vector<ir::Schedule> spaces = ctx.space_generator->Generate(ctx);
  ASSERT_EQ(spaces.size(), 1u);
  ASSERT_GT(Tensorizes(spaces[0]), 0u) << "the padded output no longer matches the wmma store";
  ir::Trace sketch = spaces[0].trace().Simplified(true).WithoutDecisions();
  int refused = 0;
  for (const Candidate& c : AcceptedSamples(ctx, sketch, 64, 2)) {
    try {
      codegen::BuildCudaSource(c.scheduled, ctx.target);
      ADD_FAILURE() << "built a wmma store with rows of 66 floats:\n" << c.trace.AsPython();
    } catch (const codegen::BuildError& e) {
      EXPECT_NE(std::string(e.what()).find("rows of Z are 66 elements long; wmma needs a leading "
                                           "dimension that is a multiple of 4"),
                std::string::npos)
          << e.what();
      ++refused;
    }
  }
  EXPECT_GE(refused, 1) << "no sample passed the postprocessors";
}

// Rewrites the first tensor-core call of a lowered program: under a
// condition on threadIdx.x, or with its operands depending on it.
class SpoilTensorCall : public ir::IRMutator {
 public:
  SpoilTensorCall(ir::Var tx, bool guard) : tx_(std::move(tx)), guard_(guard) {}

 protected:
  ir::Stmt VisitFor(const ir::Stmt& s, const ir::ForNode* op) override {
    if (done_ || op->annotations.count(ir::kTensorIntrinAttr) == 0) {
      return ir::IRMutator::VisitFor(s, op);
    }
    done_ = true;
    if (guard_) return ir::IfThenElseStmt(ir::LT(tx_, ir::IntImm(16, tx_.dtype())), s);
    return ir::For(op->loop_var, op->min, op->extent, op->for_kind,
                   ir::SeqStmt({ir::Evaluate(tx_), op->body}), op->thread_tag, op->annotations);
  }

 private:
  ir::Var tx_;
  bool guard_;
  bool done_ = false;
};

// VerifyGPUCode accepts the rule's tensor-core kernels (a warp's 32 lanes
// make each call together) and refuses one that part of a warp would skip
// or whose lanes would name different tiles.
TEST(TensorCoreSpace, VerifyGpuCodeRefusesTensorCallsThatAreNotWarpWide) {
  const ir::PrimFunc original = ir::BatchMatmulNKKMFp16(1, 64, 64, 64);
  TuneContext ctx = testing::Context(original, "cuda -arch=sm_90", /*seed=*/5);
  std::vector<ir::Schedule> spaces = ctx.space_generator->Generate(ctx);
  ASSERT_EQ(spaces.size(), 1u);
  ir::Trace sketch = spaces[0].trace().Simplified(true).WithoutDecisions();
  const auto limits = ir::transform::GpuLimits::FromTarget(ctx.target);
  int checked = 0;
  for (const Candidate& c : AcceptedSamples(ctx, sketch, 64, 2)) {
    ++checked;
    const ir::PrimFunc lowered = ir::transform::Lower(c.scheduled, ctx.target);
    EXPECT_TRUE(ir::transform::VerifyGPUCode(lowered, limits).empty());
    ir::Var tx;
    const ir::transform::GpuKernels kernels = ir::transform::SplitKernels(lowered);
    for (const auto& a : kernels.kernels.at(0).launch) {
      if (a.tag == "threadIdx.x") tx = a.var;
    }
    ASSERT_TRUE(tx.defined());
    for (bool guard : {true, false}) {
      ir::PrimFunc spoiled = lowered;
      spoiled.body = SpoilTensorCall(tx, guard).VisitStmt(lowered.body);
      std::string all;
      for (const std::string& issue : ir::transform::VerifyGPUCode(spoiled, limits)) {
        all += issue + "\n";
      }
      EXPECT_NE(all.find(guard ? "is under a condition on threadIdx.x"
                               : "names operand tiles that depend on threadIdx.x"),
                std::string::npos)
          << c.trace.AsPython() << "\n" << all;
    }
  }
  EXPECT_GE(checked, 1) << "no sample passed the postprocessors";
}

// Half-precision code without tensor cores (the plain sketch on sm_75)
// compiles too: loads of half, conversions to float, the float accumulator.
TEST(TensorCoreSpace, HalfPrecisionWithoutTensorCoresBuilds) {
  const ir::PrimFunc original = ir::BatchMatmulNKKMFp16(1, 64, 64, 64);
  TuneContext ctx = testing::Context(original, "cuda -arch=sm_75", /*seed=*/5);
  std::vector<ir::Schedule> spaces = ctx.space_generator->Generate(ctx);
  ASSERT_EQ(spaces.size(), 1u);
  ir::Trace sketch = spaces[0].trace().Simplified(true).WithoutDecisions();
  int built = 0;
  for (const Candidate& c : AcceptedSamples(ctx, sketch, 256, 1)) {
    codegen::CudaModule m = codegen::BuildCudaSource(c.scheduled, ctx.target);
    EXPECT_NE(m.source.find("#include <cuda_fp16.h>"), std::string::npos);
    EXPECT_NE(m.source.find("__half2float("), std::string::npos) << m.source;
    codegen::CudaBinary bin = codegen::CompileCuda(m.source, "sm_75", "gmm_fp16_simt.cu");
    EXPECT_EQ(Count(bin.ptx, "wmma."), 0u);
    EXPECT_NE(bin.ptx.find("cvt.f32.f16"), std::string::npos);
    ++built;
  }
  EXPECT_EQ(built, 1);
}

}  // namespace
}  // namespace kiln::search
