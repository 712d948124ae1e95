// The default rule and postprocessor lists per target (reference §4, §5), and
// the "from-target" space generator.
#include <stdexcept>

#include "search/postproc.h"
#include "search/schedule_rule.h"
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

std::vector<ScheduleRulePtr> DefaultRulesFor(const ir::Target& target) {
  if (target.kind == ir::Target::Kind::kLLVM) return DefaultLLVMRules();
  throw std::invalid_argument("no default schedule rules for target '" + target.ToString() +
                              "' (only llvm targets have a rule set so far)");
}

SpaceGeneratorPtr MakeSpaceGenerator(const std::string& kind, const ir::Target& target) {
  if (kind == "post-order-apply" || kind == "from-target") {
    return std::make_shared<PostOrderApply>(DefaultRulesFor(target));
  }
  throw std::invalid_argument("unknown space generator '" + kind +
                              "' (known: post-order-apply, from-target)");
}

}  // namespace kiln::search
