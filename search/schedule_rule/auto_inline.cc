// AutoInline: inline elementwise blocks into their consumers (or, when
// enabled, into their single producer), under TVM's conditions: one write;
// constants always; otherwise — unless the whole function is spatial — no
// disallowed op, no if-then-else, and an injective, ordered read→write index
// mapping.
#include "ir/schedule/analysis.h"
#include "ir/schedule/primitive/compute_inline.h"
#include "search/annotations.h"
#include "search/rule_analysis.h"
#include "search/schedule_rule.h"

namespace kiln::search {
namespace {

class AutoInline : public ScheduleRule {
 public:
  explicit AutoInline(AutoInlineConfig c) : c_(std::move(c)) {}
  std::string Name() const override { return "AutoInline"; }

  std::vector<ir::Schedule> Apply(ir::Schedule sch, ir::BlockRV block) override {
    switch (Decide(sch, block)) {
      case kIntoConsumer: sch.ComputeInline(block); break;
      case kIntoProducer: sch.ReverseComputeInline(block); break;
      case kNo: break;
    }
    return {sch};
  }

 private:
  enum Kind { kNo, kIntoConsumer, kIntoProducer };

  Kind Decide(ir::Schedule& sch, ir::BlockRV block) const {
    ir::StmtPath path = sch.PathOf(block);
    if (path.size() == 1) return kNo;  // the root
    const ir::BlockRealizeNode& realize = sch.GetRealize(block);
    const ir::BlockNode& b = *realize.block.get();
    auto rule = b.annotations.find(ann::kInlineRule);
    if (rule != b.annotations.end()) {
      const auto* s = rule->second.as<ir::StringImmNode>();
      if (s && s->value == "disable") return kNo;
    }
    if (b.writes.size() != 1) return kNo;
    ir::StmtPath scope = ir::ScopePathOf(path);
    if (c_.inline_const_tensor && b.reads.empty() && !ir::IsOutputBlock(scope.back(), &b)) {
      return ir::CanComputeInline(sch, block) ? kIntoConsumer : kNo;
    }
    if (!IsSpatialFunc(sch.func())) {
      if (HasOp(realize, c_.disallow_op)) return kNo;
      if (c_.disallow_if_then_else && HasIfThenElse(realize)) return kNo;
      if (c_.require_injective || c_.require_ordered) {
        for (const ir::BufferRegion& read : b.reads) {
          ReadWritePattern p = AnalyzeReadWritePattern(read, b.writes[0]);
          if (c_.require_injective && !p.injective) return kNo;
          if (c_.require_ordered && !p.ordered) return kNo;
        }
      }
    }
    if (c_.into_consumer && !ir::ConsumersOf(scope.back(), &b).empty() &&
        ir::CanComputeInline(sch, block)) {
      return kIntoConsumer;
    }
    if (c_.into_producer) {
      auto producers = ir::ProducersOf(scope.back(), &b);
      if (producers.size() == 1 && ir::CanReverseComputeInline(sch, block)) return kIntoProducer;
    }
    return kNo;
  }

  AutoInlineConfig c_;
};

}  // namespace

ScheduleRulePtr MakeAutoInline(AutoInlineConfig config) {
  return std::make_shared<AutoInline>(std::move(config));
}

}  // namespace kiln::search
