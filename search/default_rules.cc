// The default rule and postprocessor lists per target (docs/ARCHITECTURE.md §4, §5), and
// the "from-target" space generator.
#include <stdexcept>

#include "search/postproc.h"
#include "search/schedule_rule.h"
#include "search/schedule_rule/multi_level_tiling_tensor_core.h"
#include "search/space_generator.h"

namespace kiln::search {

std::vector<ScheduleRulePtr> DefaultLLVMRules() {
  return {
      MakeInlineConstantScalars(),
      MakeAutoInline(AutoInlineConfig{}),
      MakeAddRFactor(/*max_jobs_per_core=*/16, /*max_innermost_factor=*/64),
      MakeMultiLevelTiling(MultiLevelTilingConfig{}),
      MakeParallelizeVectorizeUnroll(ParallelizeVectorizeUnrollConfig{}),
      MakeRandomComputeLocation(),
  };
}

std::vector<PostprocPtr> DefaultLLVMPostprocs() {
  return {MakeDisallowDynamicLoop(), MakeRewriteParallelVectorizeUnroll(),
          MakeRewriteReductionBlock()};
}

std::vector<ScheduleRulePtr> DefaultCUDARules() {
  MultiLevelTilingConfig mlt;
  mlt.structure = "SSSRRSRS";
  mlt.tile_binds = {"blockIdx.x", "vthread.x", "threadIdx.x"};
  mlt.max_innermost_factor = 64;
  mlt.vector_load_lens = {1, 2, 3, 4, 8, 16};
  mlt.reuse_read = {"must", {4}, "shared"};
  mlt.reuse_write = {"must", {3}, "local"};
  AutoInlineConfig inline_config;
  inline_config.into_producer = true;
  inline_config.into_consumer = true;
  inline_config.inline_const_tensor = true;
  inline_config.disallow_if_then_else = false;
  inline_config.require_injective = false;
  inline_config.require_ordered = false;
  inline_config.disallow_op = {};
  ParallelizeVectorizeUnrollConfig pvu;
  pvu.max_jobs_per_core = -1;
  pvu.max_vectorize_extent = -1;
  pvu.unroll_max_steps = {0, 16, 32, 64, 128, 256, 512, 1024};
  pvu.unroll_explicit = true;
  return {
      // Before MultiLevelTiling, as TVM's cuda-tensorcore rule list has it;
      // it leaves every block that is not an fp16 GEMM (and every target
      // below sm_80) to the rules after it.
      MakeMultiLevelTilingTensorCore(),
      MakeMultiLevelTiling(mlt),
      MakeInlineConstantScalars(),
      MakeAutoInline(inline_config),
      MakeCrossThreadReduction({4, 8, 16, 32, 64, 128, 256, 512}),
      MakeParallelizeVectorizeUnroll(pvu),
      MakeAutoBind(/*max_threadblocks=*/256, {32, 64, 128, 256, 512, 1024}),
  };
}

std::vector<PostprocPtr> DefaultCUDAPostprocs() {
  return {MakeDisallowDynamicLoop(),     MakeRewriteCooperativeFetch(),
          MakeRewriteUnboundBlock(256),  MakeRewriteParallelVectorizeUnroll(),
          MakeRewriteReductionBlock(),   MakeVerifyGPUCode()};
}

std::vector<ScheduleRulePtr> DefaultRulesFor(const ir::Target& target) {
  if (target.kind == ir::Target::Kind::kLLVM) return DefaultLLVMRules();
  if (target.kind == ir::Target::Kind::kCUDA) return DefaultCUDARules();
  throw std::invalid_argument("no default schedule rules for target '" + target.ToString() +
                              "' (llvm and cuda targets have rule sets)");
}

SpaceGeneratorPtr MakeSpaceGenerator(const std::string& kind, const ir::Target& target) {
  if (kind == "post-order-apply" || kind == "from-target") {
    return std::make_shared<PostOrderApply>(DefaultRulesFor(target));
  }
  throw std::invalid_argument("unknown space generator '" + kind +
                              "' (known: post-order-apply, from-target)");
}

}  // namespace kiln::search
