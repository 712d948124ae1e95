// CrossThreadReduction (GPU): a reduction with little spatial parallelism
// and a long reduction gets its reduction loops fused, split by a sampled
// thread count and the inner part bound to threadIdx.x, so that the threads
// of a block share one reduction (ir/transform/lower_cross_thread_reduction.cc
// lowers it). When the block can be computed at its first consumer (which
// must not want tiling), it is moved there, its result kept in shared memory,
// and the consumer's innermost loop is bound to threadIdx.x too. Returns the
// new schedule and the original.
#include <algorithm>

#include "ir/schedule/stmt_path.h"
#include "search/rule_analysis.h"
#include "search/schedule_rule.h"
#include "search/thread_bind.h"
#include "search/tune_context.h"

namespace kiln::search {
namespace {

struct ComputeTarget {
  bool fusible = false;
  ir::LoopRV loop;          // where the reduction is computed at
  ir::BlockRV block;        // the consumer
  ir::LoopRV innermost;     // the consumer's innermost loop
};

ComputeTarget FindComputeTarget(ir::Schedule& sch, ir::BlockRV block) {
  ComputeTarget t;
  if (sch.Get(block).writes.size() != 1) return t;
  std::vector<ir::BlockRV> consumers = sch.GetConsumers(block);
  if (consumers.empty() || NeedsMultiLevelTiling(sch, consumers[0])) return t;
  // The consumers' lowest common ancestor: the consumer itself when there is
  // one; else their deepest common loop (a common block means no fusion).
  std::vector<const ir::ForNode*> common = ir::LoopsAbove(sch.PathOf(consumers[0]));
  const ir::ForNode* lca_loop = nullptr;
  if (consumers.size() > 1) {
    for (size_t c = 1; c < consumers.size(); ++c) {
      std::vector<const ir::ForNode*> other = ir::LoopsAbove(sch.PathOf(consumers[c]));
      size_t n = 0;
      while (n < common.size() && n < other.size() && common[n] == other[n]) ++n;
      common.resize(n);
    }
    if (common.empty()) return t;
    lca_loop = common.back();
  }
  std::vector<ir::LoopRV> own = sch.GetLoops(block);
  std::vector<ir::LoopRV> target = sch.GetLoops(consumers[0]);
  if (target.empty()) return t;
  int pos = static_cast<int>(std::min(own.size(), target.size())) - 1;
  for (size_t i = 0; i < own.size() && i < target.size(); ++i) {
    if (LoopIterType(&sch.Get(own[i])) != ir::IterType::kDataPar) {
      pos = static_cast<int>(i) - 1;
      break;
    }
    if (&sch.Get(target[i]) == lca_loop) {
      pos = static_cast<int>(i);
      break;
    }
  }
  if (pos < 0) return t;
  t.fusible = true;
  t.loop = target[static_cast<size_t>(pos)];
  t.block = consumers[0];
  t.innermost = target.back();
  return t;
}

// The extent of the last loop bound to threadIdx.x in the trace.
int64_t ThreadIdxExtentFromTrace(ir::Schedule& sch) {
  int64_t extent = -1;
  for (const ir::Instruction& inst : sch.trace().insts()) {
    if (inst.kind != "Bind" || inst.inputs.size() != 1 || inst.attrs.size() != 1 ||
        inst.attrs[0].get<std::string>() != "threadIdx.x") {
      continue;
    }
    try {
      const auto* imm = sch.Get(ir::LoopRV{inst.inputs[0].rv.id}).extent.as<ir::IntImmNode>();
      if (imm) extent = imm->value;
    } catch (const std::exception&) {
    }
  }
  return extent;
}

class CrossThreadReduction : public ScheduleRule {
 public:
  explicit CrossThreadReduction(std::vector<int64_t> thread_extents)
      : thread_extents_(std::move(thread_extents)) {}
  std::string Name() const override { return "CrossThreadReduction"; }
  void Initialize(const TuneContext& ctx) override {
    max_threads_ = ctx.target.MaxThreadsPerBlock();
    warp_size_ = ctx.target.WarpSize();
  }

  std::vector<ir::Schedule> Apply(ir::Schedule sch, ir::BlockRV block) override {
    if (IsRootBlock(sch, block) || !NeedsRFactor(sch, block, max_threads_, warp_size_)) {
      return {sch};
    }
    ir::Schedule tmp = sch.Copy();
    tmp.Seed(sch.ForkSeed());
    try {
      ComputeTarget target = FindComputeTarget(tmp, block);
      const size_t n = thread_extents_.size();
      ir::Factor extent =
          tmp.SampleCategorical(thread_extents_, std::vector<double>(n, 1.0 / static_cast<double>(n)));
      if (target.fusible) {
        if (!ThreadScopeOf(tmp, target.block).thread_idx) {
          std::vector<ir::LoopRV> parts = tmp.Split(target.innermost, {std::monostate{}, extent});
          tmp.Bind(parts[1], "threadIdx.x");
          if (target.innermost.id == target.loop.id) target.loop = parts[0];
        } else {
          extent = ThreadIdxExtentFromTrace(tmp);
        }
        tmp.ComputeAt(block, target.loop, /*preserve_unit_loops=*/true);
        tmp.SetScope(block, 0, "shared");
      }
      // Spatial loops first, then the reduction loops, fused into one.
      std::vector<ir::LoopRV> loops = tmp.GetLoops(block), order, reductions;
      for (ir::LoopRV l : loops) {
        if (LoopIterType(&tmp.Get(l)) == ir::IterType::kDataPar) order.push_back(l);
      }
      for (ir::LoopRV l : loops) {
        if (LoopIterType(&tmp.Get(l)) == ir::IterType::kCommReduce) {
          order.push_back(l);
          reductions.push_back(l);
        }
      }
      if (reductions.empty()) return {sch};
      bool reordered = order.size() != loops.size();
      for (size_t i = 0; !reordered && i < loops.size(); ++i) reordered = order[i].id != loops[i].id;
      if (reordered) tmp.Reorder(order);
      ir::LoopRV fused = reductions.size() > 1 ? tmp.Fuse(reductions) : reductions[0];
      std::vector<ir::LoopRV> parts = tmp.Split(fused, {std::monostate{}, extent});
      tmp.Bind(parts[1], "threadIdx.x");
    } catch (const ir::ScheduleError&) {
      return {sch};
    }
    return {tmp, sch};
  }

 private:
  std::vector<int64_t> thread_extents_;
  int64_t max_threads_ = 1024;
  int64_t warp_size_ = 32;
};

}  // namespace

ScheduleRulePtr MakeCrossThreadReduction(std::vector<int64_t> thread_extents) {
  return std::make_shared<CrossThreadReduction>(std::move(thread_extents));
}

}  // namespace kiln::search
