// ParallelizeVectorizeUnroll: on the root block only, record the limits the
// postprocessor RewriteParallelVectorizeUnroll will work to — the parallel
// extent (cores × max_jobs_per_core), the vectorize extent — and, unless the
// function is purely spatial, a uniformly sampled unroll step.
#include "search/annotations.h"
#include "search/rule_analysis.h"
#include "search/schedule_rule.h"
#include "search/tune_context.h"

namespace kiln::search {
namespace {

class ParallelizeVectorizeUnroll : public ScheduleRule {
 public:
  explicit ParallelizeVectorizeUnroll(ParallelizeVectorizeUnrollConfig c) : c_(std::move(c)) {}
  std::string Name() const override { return "ParallelizeVectorizeUnroll"; }
  void Initialize(const TuneContext& ctx) override {
    max_parallel_extent_ = static_cast<int64_t>(ctx.NumCores()) * c_.max_jobs_per_core;
  }

  std::vector<ir::Schedule> Apply(ir::Schedule sch, ir::BlockRV root) override {
    if (!IsRootBlock(sch, root)) return {sch};
    if (c_.max_jobs_per_core != -1) sch.Annotate(root, ann::kParallel, max_parallel_extent_);
    if (c_.max_vectorize_extent != -1) {
      sch.Annotate(root, ann::kVectorize, int64_t{c_.max_vectorize_extent});
    }
    if (!c_.unroll_max_steps.empty() && !IsSpatialFunc(sch.func())) {
      const size_t n = c_.unroll_max_steps.size();
      std::vector<double> probs(n, 1.0 / static_cast<double>(n));
      ir::ExprRV step = sch.SampleCategorical(c_.unroll_max_steps, probs);
      sch.Annotate(root, c_.unroll_explicit ? ann::kUnrollExplicit : ann::kUnrollImplicit, step);
    }
    return {sch};
  }

 private:
  ParallelizeVectorizeUnrollConfig c_;
  int64_t max_parallel_extent_ = 16;
};

}  // namespace

ScheduleRulePtr MakeParallelizeVectorizeUnroll(ParallelizeVectorizeUnrollConfig config) {
  return std::make_shared<ParallelizeVectorizeUnroll>(std::move(config));
}

}  // namespace kiln::search
