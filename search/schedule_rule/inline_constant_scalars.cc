// InlineConstantScalars: a block that reads nothing and writes one 0-d buffer
// (a constant some frontend materialized) is inlined into its consumers,
// unless it is an output.
#include "ir/schedule/analysis.h"
#include "ir/schedule/primitive/compute_inline.h"
#include "search/schedule_rule.h"

namespace kiln::search {
namespace {

class InlineConstantScalars : public ScheduleRule {
 public:
  std::string Name() const override { return "InlineConstantScalars"; }
  std::vector<ir::Schedule> Apply(ir::Schedule sch, ir::BlockRV block) override {
    const ir::BlockNode& b = sch.Get(block);
    if (b.reads.empty() && b.writes.size() == 1 && b.writes[0].buffer.ndim() == 0) {
      ir::StmtPath path = sch.PathOf(block);
      ir::StmtPath scope = ir::ScopePathOf(path);
      if (!scope.empty() && !ir::IsOutputBlock(scope.back(), &b) &&
          ir::CanComputeInline(sch, block)) {
        sch.ComputeInline(block);
      }
    }
    return {sch};
  }
};

}  // namespace

ScheduleRulePtr MakeInlineConstantScalars() { return std::make_shared<InlineConstantScalars>(); }

}  // namespace kiln::search
