// RandomComputeLocation: an untiled block directly under the root, with a
// consumer and a loop nest of its own, gets a sampled compute-at location
// (inline, root, or a loop of its consumer). An rfactor producer AddRFactor
// flagged gets the same treatment afterwards.
#include "ir/schedule/analysis.h"
#include "ir/schedule/stmt_path.h"
#include "search/annotations.h"
#include "search/rule_analysis.h"
#include "search/schedule_rule.h"

namespace kiln::search {
namespace {

class RandomComputeLocation : public ScheduleRule {
 public:
  std::string Name() const override { return "RandomComputeLocation"; }

  std::vector<ir::Schedule> Apply(ir::Schedule sch, ir::BlockRV block) override {
    if (!Applies(sch, block)) return {sch};
    std::optional<ir::BlockRV> producer;
    if (HasAnn(sch.Get(block), ann::kRandomComputeProducer)) {
      // Collected first: the block itself may be inlined by its own sample.
      std::vector<ir::BlockRV> producers = sch.GetProducers(block);
      sch.Unannotate(block, ann::kRandomComputeProducer);
      if (producers.size() == 1) producer = producers[0];
    }
    RandomlyComputeAt(sch, block);
    if (producer) RandomlyComputeAt(sch, *producer);
    return {sch};
  }

 private:
  static void RandomlyComputeAt(ir::Schedule& sch, ir::BlockRV block) {
    ir::LoopRV loc = sch.SampleComputeLocation(block);
    sch.ComputeAt(block, loc, true);
  }

  static bool Applies(const ir::Schedule& sch, ir::BlockRV block) {
    ir::StmtPath path = sch.PathOf(block);
    if (path.size() == 1) return false;  // the root
    ir::StmtPath scope = ir::ScopePathOf(path);
    if (scope.size() != 1) return false;  // not a direct child of the root
    std::vector<const ir::ForNode*> loops = ir::LoopsAbove(path);
    if (loops.empty()) return false;
    if (ir::ChildBlockRealizes(loops[0]->body).size() > 1) return false;
    const ir::BlockNode& b = sch.Get(block);
    if (HasAnn(b, ann::kTilingStructure)) return false;
    return !ir::ConsumersOf(scope.back(), &b).empty();
  }
};

}  // namespace

ScheduleRulePtr MakeRandomComputeLocation() { return std::make_shared<RandomComputeLocation>(); }

}  // namespace kiln::search
