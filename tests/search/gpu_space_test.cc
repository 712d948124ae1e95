// The GPU design space: sketch counts equal TVM's CUDA space tests (1 for
// every suite workload at config 0, NRM 2, SFM 4; docs/ARCHITECTURE.md §4),
// and on the reduced suite every sketch computes the workload,
// the CUDA postprocessors accept samples of it, and what they accept computes
// the workload too, before and after lowering for sm_90 (the lowered kernels
// run as GPU thread blocks in the interpreter: ir/interpreter/thread_block.h),
// and builds: emitted as CUDA C++, compiled by NVRTC and assembled by
// nvJitLink.
#include <gtest/gtest.h>

#include <optional>

#include "../schedule/schedule_test_util.h"
#include "../transform/lower_test_util.h"
#include "codegen/cuda/cuda_codegen.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "codegen/llvm_backend.h"
#include "ir/text/printer.h"
#include "search/apply_trace.h"
#include "search/postproc.h"
#include "search/space_generator.h"
#include "search_test_util.h"

namespace kiln::search {
namespace {

constexpr const char* kCuda = "cuda -arch=sm_90";

struct Parity {
  const char* name;
  size_t sketches;
};

class GpuSpaceParity : public ::testing::TestWithParam<Parity> {};

TEST_P(GpuSpaceParity, SketchCountMatchesTVM) {
  const Parity p = GetParam();
  TuneContext ctx = testing::Context(ir::MakeWorkload(p.name, 0), kCuda);
  std::vector<ir::Schedule> spaces = ctx.space_generator->Generate(ctx);
  ASSERT_EQ(spaces.size(), p.sketches) << p.name;
}

INSTANTIATE_TEST_SUITE_P(
    CUDA, GpuSpaceParity,
    ::testing::Values(Parity{"C1D", 1}, Parity{"C2D", 1}, Parity{"C3D", 1}, Parity{"CAP", 1},
                      Parity{"DEP", 1}, Parity{"DIL", 1}, Parity{"GMM", 1}, Parity{"NRM", 2},
                      Parity{"SFM", 4}, Parity{"CBR", 1}, Parity{"TBG", 1},
                      Parity{"GRP", 1}, Parity{"T2D", 1}),
    [](const ::testing::TestParamInfo<Parity>& info) { return std::string(info.param.name); });

class GpuSpaceSoundness : public ::testing::TestWithParam<int> {};

TEST_P(GpuSpaceSoundness, SamplesComputeTheWorkloadAndBuildForSm90) {
  const testing::ReducedCase c = testing::ReducedSuite()[GetParam()];
  const ir::PrimFunc original = c.make();
  TuneContext ctx = testing::Context(original, kCuda, /*seed=*/7);
  std::vector<ir::Schedule> spaces = ctx.space_generator->Generate(ctx);
  ASSERT_FALSE(spaces.empty());
  int built = 0;
  std::string reasons;
  for (size_t i = 0; i < spaces.size(); ++i) {
    SCOPED_TRACE(std::string(c.name) + ", sketch " + std::to_string(i) + "\n" +
                 spaces[i].trace().AsPython());
    ASSERT_TRUE(ir::testing::SameResult(original, spaces[i].func(), 3, true));
    ir::Trace sketch = spaces[i].trace().Simplified(true).WithoutDecisions();
    // Six samples of each sketch; more (up to 1024) while none has been
    // accepted: on the reduced convolutions most samples have fewer threads
    // than VerifyGPUCode's lower bound of 32, a right rejection.
    for (int64_t seed = 1; seed <= 1024 && (seed <= 6 || built == 0); ++seed) {
      FailureStats fails;
      std::optional<Candidate> sample = ApplyTraceWithPostprocs(ctx, sketch, seed * 7919, &fails);
      ASSERT_EQ(fails.counts.count("replay"), 0u) << "seed " << seed << ": " << fails.Summary();
      if (!sample) {
        reasons += "\n  " + fails.Summary();
        continue;
      }
      ASSERT_TRUE(ir::testing::SameResult(original, sample->scheduled, 3, true)) << "seed " << seed;
      EXPECT_TRUE(ir::testing::SameAsLowered(sample->scheduled,
                                             ir::transform::Lower(sample->scheduled, ctx.target)))
          << "seed " << seed;
      try {
        codegen::CudaModule m = codegen::BuildCudaSource(sample->scheduled, ctx.target);
        codegen::CudaBinary bin = codegen::CompileCuda(m.source, "sm_90", std::string(c.name) + ".cu");
        EXPECT_FALSE(bin.cubin.empty());
      } catch (const codegen::BuildError& e) {
        FAIL() << "seed " << seed << ": " << e.what() << "\n" << ir::ToText(sample->scheduled);
      }
      ++built;
    }
  }
  EXPECT_GE(built, 1) << "no sample passed the postprocessors:" << reasons;
}

INSTANTIATE_TEST_SUITE_P(Reduced, GpuSpaceSoundness,
                         ::testing::Range(0, static_cast<int>(testing::ReducedSuite().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(testing::ReducedSuite()[info.param].name);
                         });

}  // namespace
}  // namespace kiln::search
