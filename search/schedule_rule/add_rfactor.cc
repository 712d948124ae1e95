// AddRFactor: for a reduction with too little spatial parallelism, move the
// reduction loops innermost, fuse them, split the fused loop in two, and
// rfactor over each half in turn: up to two new branches, plus the original.
// The original block is annotated so that RandomComputeLocation also places
// the rfactor producer.
#include "search/annotations.h"
#include "search/rule_analysis.h"
#include "search/schedule_rule.h"
#include "search/tune_context.h"

namespace kiln::search {
namespace {

class AddRFactor : public ScheduleRule {
 public:
  AddRFactor(int max_jobs_per_core, int max_innermost_factor)
      : max_jobs_per_core_(max_jobs_per_core), max_innermost_factor_(max_innermost_factor) {}
  std::string Name() const override { return "AddRFactor"; }
  void Initialize(const TuneContext& ctx) override {
    max_parallel_basic_ = ctx.NumCores();
    max_parallel_extent_ = static_cast<int64_t>(ctx.NumCores()) * max_jobs_per_core_;
  }

  std::vector<ir::Schedule> Apply(ir::Schedule sch, ir::BlockRV block) override {
    if (IsRootBlock(sch, block) ||
        !NeedsRFactor(sch, block, max_parallel_extent_, max_parallel_basic_)) {
      return {sch};
    }
    ir::Schedule original = sch.Copy();
    original.Seed(sch.ForkSeed());

    std::vector<ir::LoopRV> loops = sch.GetLoops(block);
    std::vector<ir::LoopRV> order, reductions;
    for (ir::LoopRV l : loops) {
      if (LoopIterType(&sch.Get(l)) == ir::IterType::kDataPar) order.push_back(l);
    }
    const int num_spatial = static_cast<int>(order.size());
    for (ir::LoopRV l : loops) {
      if (LoopIterType(&sch.Get(l)) == ir::IterType::kCommReduce) {
        order.push_back(l);
        reductions.push_back(l);
      }
    }
    bool reordered = false;
    for (size_t i = 0; i < loops.size(); ++i) reordered |= order[i].id != loops[i].id;
    if (reordered) sch.Reorder(order);
    ir::LoopRV fused = reductions.size() > 1 ? sch.Fuse(reductions) : reductions[0];

    std::vector<ir::ExprRV> factors = sch.SamplePerfectTile(fused, 2, max_innermost_factor_);
    std::vector<ir::LoopRV> halves = sch.Split(fused, {factors[0], factors[1]});

    std::vector<ir::Schedule> out;
    for (ir::LoopRV half : halves) {
      ir::Schedule branch = sch.Copy();
      branch.Seed(sch.ForkSeed());
      try {
        branch.RFactor(half, num_spatial);
        branch.Annotate(block, ann::kRandomComputeProducer, int64_t{1});
        out.push_back(std::move(branch));
      } catch (const ir::ScheduleError&) {
        // This half cannot carry the rfactor; the other branches stand.
      }
    }
    out.push_back(std::move(original));
    return out;
  }

 private:
  int max_jobs_per_core_;
  int max_innermost_factor_;
  int64_t max_parallel_extent_ = 16;
  int64_t max_parallel_basic_ = 1;
};

}  // namespace

ScheduleRulePtr MakeAddRFactor(int max_jobs_per_core, int max_innermost_factor) {
  return std::make_shared<AddRFactor>(max_jobs_per_core, max_innermost_factor);
}

}  // namespace kiln::search
