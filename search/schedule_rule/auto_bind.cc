// AutoBind (GPU): every block that is neither tiled nor already bound gets
// its leading spatial loops fused and split over blockIdx.x / threadIdx.x,
// the thread count sampled uniformly from the thread extents that fit
// (search/thread_bind.h).
#include <algorithm>

#include "search/schedule_rule.h"
#include "search/thread_bind.h"
#include "search/tune_context.h"

namespace kiln::search {
namespace {

class AutoBind : public ScheduleRule {
 public:
  AutoBind(int64_t max_threadblocks, std::vector<int64_t> thread_extents, int64_t max_threads)
      : max_threadblocks_(max_threadblocks),
        thread_extents_(std::move(thread_extents)),
        max_threads_(max_threads) {}
  std::string Name() const override { return "AutoBind"; }
  void Initialize(const TuneContext& ctx) override {
    if (max_threads_ == -1) max_threads_ = ctx.target.MaxThreadsPerBlock();
  }

  std::vector<ir::Schedule> Apply(ir::Schedule sch, ir::BlockRV block) override {
    BindBlockThreadIdx(sch, block, max_threadblocks_, max_threads_, [&](int64_t max_extent) {
      std::vector<int64_t> candidates;
      for (int64_t e : thread_extents_) {
        if (e <= max_extent) candidates.push_back(e);
      }
      if (candidates.empty()) return ir::Factor{max_extent};
      if (candidates.size() == 1) return ir::Factor{candidates[0]};
      std::vector<double> probs(candidates.size(), 1.0 / static_cast<double>(candidates.size()));
      return ir::Factor{sch.SampleCategorical(candidates, probs)};
    });
    return {sch};
  }

 private:
  int64_t max_threadblocks_;
  std::vector<int64_t> thread_extents_;
  int64_t max_threads_;
};

}  // namespace

ScheduleRulePtr MakeAutoBind(int64_t max_threadblocks, std::vector<int64_t> thread_extents,
                             int64_t max_threads_per_block) {
  return std::make_shared<AutoBind>(max_threadblocks, std::move(thread_extents),
                                    max_threads_per_block);
}

}  // namespace kiln::search
